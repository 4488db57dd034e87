"""Here (no GPU): a copy of libcutensor.so.2 whose CUDA code only an sm_90 GPU (H100, H200) can use,
for a GPU host that receives cuTENSOR in parts (../shared/gpu-host/pack.sh, unpack.sh): the smaller
the library compresses, the fewer device calls carry it.

The library keeps its size and layout. Every fatbin in it (the .nv_fatbin section and those inside
cuTENSOR's kernel store) is a header and entries, each an ELF (SASS for one architecture) or PTX. The
entries an sm_90 GPU never loads are dropped: the kept ones move up, the header's size shrinks to
them, and the freed bytes at the fatbin's end become zeros, which compress to nothing. Each fatbin
starts where it did, so whatever points at it still does. Kept: ELF entries for arch 90 (sm_90,
sm_90a); in a fatbin without one, PTX entries for an arch <= 90 (the driver may compile those for
sm_90). Nothing else is touched. (Zeroing the payloads in place is not enough: cuobjdump, and perhaps
the driver, decompress entries they do not run, and fail on zeros.)

    python3 scripts/gpu-host/slim_cutensor.py IN OUT [--arch 90]
prints what it dropped and kept; exits 1 when no entry is for that arch. Four bytes that look like a
fatbin's magic but do not start a whole, well-formed one are left alone."""
import argparse
import collections
import struct
import sys

MAGIC = b"\x50\xed\x55\xba"  # fatbin header magic 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2


def fatbin_entries(buf, pos):
    """Entries (offset, kind, header size, payload size, arch) of the fatbin at pos, and its end."""
    _magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", buf, pos)
    p, end = pos + header_size, pos + header_size + fat_size
    if header_size < 16 or end > len(buf):
        raise ValueError("header")
    out = []
    while p < end:
        kind, _ver, ehs, psize = struct.unpack_from("<HHIQ", buf, p)
        if kind not in (KIND_PTX, KIND_ELF) or ehs < 32 or p + ehs + psize > end:
            raise ValueError("entry")
        arch = struct.unpack_from("<I", buf, p + 28)[0]
        out.append((p, kind, ehs, psize, arch))
        p += ehs + psize
    if p != end or not out:
        raise ValueError("size")
    return out, end


def fatbins(buf):
    """(start, entries, end) of every fatbin in buf."""
    pos = 0
    while True:
        j = buf.find(MAGIC, pos)
        if j < 0:
            return
        try:
            es, end = fatbin_entries(buf, j)
        except (ValueError, struct.error):
            pos = j + 4  # four bytes that only look like a header (inside some payload)
            continue
        yield j, es, end
        pos = end


def smallest_foreign_elf(buf, arch):
    """The smallest ELF entry (header and payload) of another major architecture than sm_<arch>: a
    stand-in for a fatbin of which an sm_<arch> GPU loads nothing (no SASS runs across majors)."""
    best = None
    for _, es, _ in fatbins(buf):
        for p, kind, ehs, psize, a in es:
            if kind == KIND_ELF and a // 10 != arch // 10 and (best is None or ehs + psize < len(best)):
                best = bytes(buf[p:p + ehs + psize])
    if best is None:
        raise ValueError("no ELF entry of another architecture to stand in")
    return best


def slim(buf, arch):
    """Drop the entries an sm_<arch> GPU never loads, in place; returns the bytes dropped and kept by
    (kind, arch), the number of fatbins given the stand-in, and the stand-in's size."""
    dropped, kept = collections.Counter(), collections.Counter()
    donor, stand_ins = None, 0
    for j, es, end in fatbins(buf):  # each fatbin changes only its own bytes, [j, end)
        has_sass = any(k == KIND_ELF and a == arch for _, k, _, _, a in es)
        keep = [(kind == KIND_ELF and a == arch) or (kind == KIND_PTX and not has_sass and a <= arch)
                for _, kind, _, _, a in es]
        body = bytearray()
        for (p, kind, ehs, psize, a), k in zip(es, keep):
            (kept if k else dropped)[("ptx" if kind == KIND_PTX else "elf", a)] += psize
            if k:
                body += buf[p:p + ehs + psize]
        if not body:  # nothing an sm_<arch> GPU loads, before or after: the donor, to stay a valid fatbin
            donor = donor or smallest_foreign_elf(buf, arch)
            body = bytearray(donor)
            stand_ins += 1
        start = es[0][0]  # the first entry: just past the header
        buf[start:start + len(body)] = body
        buf[start + len(body):end] = bytes(end - start - len(body))
        struct.pack_into("<Q", buf, j + 8, len(body))
    return dropped, kept, stand_ins, len(donor or b"")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--arch", type=int, default=90)
    a = ap.parse_args(argv)
    buf = bytearray(open(a.src, "rb").read())
    dropped, kept, stand_ins, donor_bytes = slim(buf, a.arch)
    if not kept:
        print(f"slim_cutensor: no entry for arch {a.arch} in {a.src}", file=sys.stderr)
        return 1
    with open(a.dst, "wb") as f:
        f.write(buf)
    for name, c in (("dropped", dropped), ("kept", kept)):
        print(f"{name}: " + ", ".join(f"{k} {a_} {v / 1e6:.1f} MB" for (k, a_), v in sorted(c.items())))
    print(f"stand-ins: {stand_ins} fatbins with nothing an sm_{a.arch} GPU loads now hold one {donor_bytes}-byte ELF entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
