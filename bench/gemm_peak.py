"""GEMM peak per precision, the denominator of the benchmark's flop floor (bench/roofline.py).

Square N x N matrices multiplied with torch.matmul (CuPy's cupy.matmul when torch is absent),
timed with CUDA events: warm-ups, then --repeats products; the median is reported (and the best).
Flops per product: 2 N^3 for a real dtype (a multiply-add is 2 flops), 8 N^3 for a complex one (a
complex multiply-add is 4 real multiplies and 4 adds). Precisions:

  f32   float32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False, matmul precision
        "highest"): what tnrt's f32 contractions use (cuTENSOR's CUTENSOR_COMPUTE_DESC_32F)
  f64   float64
  c64   complex64 (TF32 off)
  c128  complex128
  tf32  float32 inputs with TF32 tensor cores allowed: a separate, labelled entry, for comparison
        only (no tnrt dtype uses it; it is never the floor of an f32 problem)

--device cpu runs the same products with torch on the host (tiny sizes; plumbing for tests, no GPU
figure). Without torch and CuPy (or without a GPU for CuPy) it writes {"status": "not_supported"}
and exits 10, like tnrt's "not supported".

    python3 bench/gemm_peak.py [--device cuda] [--size 8192] [--repeats 10] [--dtypes f32,f64,c64,c128,tf32] [--json FILE]

The JSON: status, method, device, size, peaks_tflops {dtype: TFLOP/s of the median}, and per dtype
the times, the flops per product, median and best TFLOP/s (entries).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (emit: the report written atomically, or to stdout)

ALL = ("f32", "f64", "c64", "c128", "tf32")
EXIT_NOT_SUPPORTED = 10
COMPLEX = {"c64", "c128"}


def gemm_flops(n: int, dtype: str) -> int:
    """Flops of one N x N by N x N product: 2 N^3 real, 8 N^3 complex."""
    return (8 if dtype in COMPLEX else 2) * n ** 3


def entry(times_ms: list[float], n: int, dtype: str) -> dict:
    f = gemm_flops(n, dtype)
    med = statistics.median(times_ms)
    return {"status": "ok", "size": n, "flops": f, "times_ms": times_ms, "median_ms": med,
            "min_ms": min(times_ms), "max_ms": max(times_ms),
            "tflops": f / (med * 1e-3) / 1e12, "best_tflops": f / (min(times_ms) * 1e-3) / 1e12}


def with_torch(dtypes: list[str], n: int, warmups: int, repeats: int, device: str) -> dict:
    import torch
    cpu = device == "cpu"
    dev = torch.device(device)
    if not cpu:
        if not torch.cuda.is_available():
            raise NotSupported("torch sees no CUDA device")
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(dev)
    tdt = {"f32": torch.float32, "tf32": torch.float32, "f64": torch.float64,
           "c64": torch.complex64, "c128": torch.complex128}
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    entries = {}
    gen = torch.Generator(device=dev).manual_seed(0)
    try:
        for d in dtypes:
            tf32 = d == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.set_float32_matmul_precision("high" if tf32 else "highest")

            def operand():
                # uniform in [0.5, 1) (both parts when complex): no zeros, no denormals
                real = torch.float64 if d == "c128" else torch.float32
                x = torch.rand((n, n), dtype=real, device=dev, generator=gen) * 0.5 + 0.5
                if d in COMPLEX:
                    x = torch.complex(x, torch.rand((n, n), dtype=real, device=dev, generator=gen) * 0.5 + 0.5)
                return x.to(tdt[d])

            try:
                a, b = operand(), operand()
                c = torch.empty((n, n), dtype=tdt[d], device=dev)
                times = []
                if cpu:
                    for i in range(warmups + repeats):
                        t0 = time.perf_counter()
                        torch.matmul(a, b, out=c)
                        dt = (time.perf_counter() - t0) * 1e3
                        if i >= warmups:
                            times.append(dt)
                else:
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    for i in range(warmups + repeats):
                        torch.cuda.synchronize(dev)
                        start.record()
                        torch.matmul(a, b, out=c)
                        stop.record()
                        stop.synchronize()
                        if i >= warmups:
                            times.append(start.elapsed_time(stop))
                # one element checked against a float64 dot product on the host (catches a no-op)
                want = (a[0, :].double() * b[:, 0].double()).sum() if d not in COMPLEX else \
                    (a[0, :].to(torch.complex128) * b[:, 0].to(torch.complex128)).sum()
                got = c[0, 0].to(want.dtype)
                if abs(complex(got.item()) - complex(want.item())) > 1e-2 * abs(complex(want.item())):
                    raise RuntimeError(f"product check failed: {got.item()} vs {want.item()}")
                entries[d] = entry(times, n, d)
                del a, b, c
            except Exception as exc:  # one precision failing (memory, no kernel) leaves the others
                entries[d] = {"status": "failed", "size": n, "error": f"{type(exc).__name__}: {exc}"}
            if not cpu:
                torch.cuda.empty_cache()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved[0]
        torch.set_float32_matmul_precision(saved[1])
    out = {"method": f"torch.matmul, {n}x{n} square, " + ("perf_counter on the host (plumbing only)" if cpu
                                                            else "CUDA events"),
           "entries": entries, "versions": {"torch": torch.__version__, "cuda": torch.version.cuda}}
    if not cpu:
        props = torch.cuda.get_device_properties(dev)
        out["gpu"] = props.name
    return out


def with_cupy(dtypes: list[str], n: int, warmups: int, repeats: int, device: str) -> dict:
    import cupy
    dev_id = int(device.split(":", 1)[1]) if ":" in device else 0
    try:
        cupy.cuda.Device(dev_id).use()
    except Exception as exc:
        raise NotSupported(f"CuPy: {exc}") from exc
    cdt = {"f32": cupy.float32, "f64": cupy.float64, "c64": cupy.complex64, "c128": cupy.complex128}
    entries = {}
    for d in dtypes:
        if d == "tf32":  # CuPy picks TF32 from CUPY_TF32 at import time: not switchable here
            entries[d] = {"status": "not_supported", "size": n, "error": "CuPy: TF32 is set by CUPY_TF32 at import"}
            continue
        try:
            rs = cupy.random.RandomState(0)
            a = (rs.random_sample((n, n)) * 0.5 + 0.5).astype(cdt[d])
            b = (rs.random_sample((n, n)) * 0.5 + 0.5).astype(cdt[d])
            c = cupy.empty((n, n), dtype=cdt[d])
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            times = []
            for i in range(warmups + repeats):
                cupy.cuda.Device(dev_id).synchronize()
                start.record()
                cupy.matmul(a, b, out=c)
                stop.record()
                stop.synchronize()
                if i >= warmups:
                    times.append(cupy.cuda.get_elapsed_time(start, stop))
            entries[d] = entry(times, n, d)
            del a, b, c
        except Exception as exc:
            entries[d] = {"status": "failed", "size": n, "error": f"{type(exc).__name__}: {exc}"}
        cupy.get_default_memory_pool().free_all_blocks()
    name = cupy.cuda.runtime.getDeviceProperties(dev_id).get("name", b"")
    return {"method": f"cupy.matmul, {n}x{n} square, CUDA events (TF32 as CUPY_TF32 says: "
                      f"{os.environ.get('CUPY_TF32', 'unset')})",
            "entries": entries, "gpu": name.decode() if isinstance(name, bytes) else str(name),
            "versions": {"cupy": cupy.__version__}}


class NotSupported(Exception):
    pass


def measure(dtypes: list[str], n: int, warmups: int, repeats: int, device: str) -> dict:
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    if have_torch:
        return with_torch(dtypes, n, warmups, repeats, device)
    if device == "cpu":
        raise NotSupported("torch is not importable (CuPy has no CPU matmul)")
    try:
        import cupy  # noqa: F401
    except ImportError as exc:
        raise NotSupported("neither torch nor CuPy is importable") from exc
    return with_cupy(dtypes, n, warmups, repeats, device)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
    ap.add_argument("--size", type=int, help="N of the N x N matrices (8192; 256 with --device cpu)")
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--repeats", type=int, help="timed products per precision (10; 3 with --device cpu)")
    ap.add_argument("--dtypes", default=",".join(ALL), help="comma-separated, of " + ", ".join(ALL))
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    cpu = args.device == "cpu"
    n = args.size or (256 if cpu else 8192)
    repeats = args.repeats or (3 if cpu else 10)
    dtypes = [d.strip().lower() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in ALL]
    if bad or not dtypes or n < 1 or repeats < 1:
        ap.error(f"--dtypes: one or more of {', '.join(ALL)} (got {args.dtypes!r}); --size and --repeats >= 1")
    base = {"device": args.device, "size": n, "warmups": args.warmups, "repeats": repeats, "dtypes": dtypes,
            "flop_convention": "2 flops per real multiply-add, 8 per complex one; 2N^3 or 8N^3 per product"}
    try:
        out = dict(base, **measure(dtypes, n, args.warmups, repeats, args.device))
        out["peaks_tflops"] = {d: e["tflops"] for d, e in out["entries"].items() if e.get("status") == "ok"}
        out["status"] = "ok" if out["peaks_tflops"] else "failed"
        if not out["peaks_tflops"]:
            out["error"] = "; ".join(f"{d}: {e.get('error')}" for d, e in out["entries"].items())
        rc = 0 if out["status"] == "ok" else 1
    except NotSupported as exc:
        out = dict(base, status="not_supported", error=str(exc), peaks_tflops={})
        rc = EXIT_NOT_SUPPORTED
    except Exception as exc:
        out = dict(base, status="failed", error=f"{type(exc).__name__}: {exc}", peaks_tflops={})
        rc = 1
    common.emit(out, args.json_out)
    if out["status"] == "ok":
        for d in dtypes:
            e = out["entries"].get(d, {})
            if e.get("status") == "ok":
                print(f"gemm peak {d:>4}: {e['tflops']:9.2f} TFLOP/s (median of {repeats}, best {e['best_tflops']:.2f}; "
                      f"{n}x{n}, {e['median_ms']:.3f} ms)", file=sys.stderr)
            else:
                print(f"gemm peak {d:>4}: {e.get('status')}: {e.get('error')}", file=sys.stderr)
    else:
        print(f"gemm peak: {out['status']}: {out['error']}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
