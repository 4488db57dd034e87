"""scripts/gpu-host/slim_cutensor.py on synthetic fatbins, no GPU: what an sm_90 GPU loads stays byte
for byte, everything else goes, each fatbin stays where it was and well formed, and bytes that only
look like a fatbin's magic are left alone."""
from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu-host"))
import slim_cutensor as sc  # noqa: E402

PTX, ELF = sc.KIND_PTX, sc.KIND_ELF


def entry(kind: int, arch: int, payload: bytes) -> bytes:
    """A fatbin entry as the parser reads it: kind, version, header size (64), payload size, arch at 28."""
    head = bytearray(64)
    struct.pack_into("<HHIQ", head, 0, kind, 0x0101, 64, len(payload))
    struct.pack_into("<I", head, 28, arch)
    return bytes(head) + payload


def fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def parsed(buf: bytes, pos: int):
    es, end = sc.fatbin_entries(buf, pos)
    return [(k, a, bytes(buf[p + h:p + h + n])) for p, k, h, n, a in es], end


def test_keeps_sm90_sass_and_drops_the_rest():
    e90, e90b = entry(ELF, 90, b"S90-" * 8), entry(ELF, 90, b"S90a" * 4)
    fb = fatbin(entry(ELF, 75, b"x" * 40), e90, entry(ELF, 100, b"y" * 24), entry(PTX, 75, b"p" * 16), e90b)
    donor_fb = fatbin(entry(ELF, 80, b"d" * 8))  # the smallest foreign ELF: the stand-in
    buf = bytearray(b"HOST" * 5 + fb + b"TEXT" + donor_fb)
    before = bytes(buf)
    dropped, kept, stand_ins, donor = sc.slim(buf, 90)
    assert len(buf) == len(before)  # the library keeps its size and layout
    es, end = parsed(buf, 20)
    assert [(k, a) for k, a, _ in es] == [(ELF, 90), (ELF, 90)]  # PTX goes where SASS is kept
    assert [p for _, _, p in es] == [b"S90-" * 8, b"S90a" * 4]
    assert end == 20 + 16 + len(e90) + len(e90b)
    assert bytes(buf[end:20 + len(fb)]) == bytes(20 + len(fb) - end)  # the freed tail is zeros
    assert bytes(buf[:20]) == before[:20] and bytes(buf[20 + len(fb):20 + len(fb) + 4]) == b"TEXT"
    assert kept[("elf", 90)] == 48 and dropped[("elf", 75)] == 40 and dropped[("ptx", 75)] == 16
    assert stand_ins == 1 and donor == 64 + 8  # the donor's own fatbin loads nothing on sm_90 either


def test_ptx_kept_only_where_no_sass_and_only_when_sm90_can_compile_it():
    fb = fatbin(entry(PTX, 75, b"p75-" * 4), entry(ELF, 75, b"e" * 32), entry(PTX, 100, b"q" * 12))
    buf = bytearray(fb + fatbin(entry(ELF, 120, b"z" * 4)))
    sc.slim(buf, 90)
    es, _ = parsed(buf, 0)
    assert [(k, a, p) for k, a, p in es] == [(PTX, 75, b"p75-" * 4)]


def test_a_fatbin_nothing_loads_gets_the_stand_in_and_stays_well_formed():
    fb = fatbin(entry(ELF, 100, b"a" * 64), entry(PTX, 100, b"b" * 64), entry(ELF, 120, b"c" * 64))
    donor = entry(ELF, 75, b"tiny")
    buf = bytearray(fb + fatbin(donor))
    _, _, stand_ins, size = sc.slim(buf, 90)
    es, end = parsed(buf, 0)
    assert [(k, a, p) for k, a, p in es] == [(ELF, 75, b"tiny")]
    assert end == 16 + len(donor) and size == len(donor) and stand_ins == 2


def test_magic_that_starts_no_whole_fatbin_is_left_alone():
    bogus = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 10**9)  # its size runs past the buffer
    broken = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 70) + entry(7, 90, b"k" * 6)  # kind 7 is no entry
    good = fatbin(entry(ELF, 90, b"ok" * 4), entry(ELF, 80, b"n" * 8))
    buf = bytearray(bogus + broken + good)
    before = bytes(buf)
    sc.slim(buf, 90)
    assert bytes(buf[:len(bogus) + len(broken)]) == before[:len(bogus) + len(broken)]
    es, _ = parsed(buf, len(bogus) + len(broken))
    assert [(k, a) for k, a, _ in es] == [(ELF, 90)]


def test_command_line_writes_the_copy_and_refuses_a_library_without_the_arch(tmp_path):
    src, dst = tmp_path / "lib.so", tmp_path / "slim.so"
    src.write_bytes(b"\0" * 8 + fatbin(entry(ELF, 90, b"s" * 8), entry(ELF, 80, b"t" * 8)))
    script = os.path.join(ROOT, "scripts", "gpu-host", "slim_cutensor.py")
    r = subprocess.run([sys.executable, script, str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "elf 90" in r.stdout and dst.stat().st_size == src.stat().st_size
    src.write_bytes(fatbin(entry(ELF, 80, b"t" * 8)))
    other = tmp_path / "none.so"
    r = subprocess.run([sys.executable, script, str(src), str(other)], capture_output=True, text=True)
    assert r.returncode == 1 and "no entry for arch 90" in r.stderr and not other.exists()


def test_a_stand_in_is_needed_only_where_nothing_loads():
    buf = bytearray(fatbin(entry(ELF, 90, b"s" * 8), entry(PTX, 90, b"p" * 8)))
    _, _, stand_ins, size = sc.slim(buf, 90)  # no foreign ELF anywhere, and none needed
    assert stand_ins == 0 and size == 0
    with pytest.raises(ValueError, match="stand in"):
        sc.slim(bytearray(fatbin(entry(PTX, 100, b"q" * 8))), 90)
