"""Device-to-device copy bandwidth, the denominator of the benchmark's floor.

One large buffer copied into another with torch (`dst.copy_(src)`), timed with CUDA events; the
bandwidth of one copy is (bytes read + bytes written) / time = 2 * size / time. Warm-ups, then
--repeats copies; the median is reported (and min/max). Falls back to CuPy when torch is absent;
--device cpu times a NumPy copy (plumbing tests only; no GPU figure).

    python3 bench/bandwidth.py [--size-mib 4096] [--repeats 20] [--device cuda] [--json FILE]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (emit: the report written atomically, or to stdout)


def stats(times_ms: list[float], moved: int) -> dict:
    med = statistics.median(times_ms)
    return {"times_ms": times_ms, "median_ms": med, "min_ms": min(times_ms), "max_ms": max(times_ms),
            "bytes_read_written": moved,
            "bandwidth_bytes_per_s": moved / (med * 1e-3),
            "bandwidth_GBps": moved / (med * 1e-3) / 1e9,
            "best_GBps": moved / (min(times_ms) * 1e-3) / 1e9}


def with_torch(size: int, warmups: int, repeats: int, device: str) -> dict:
    import torch
    dev = torch.device(device)
    if dev.index is None:  # set_device() needs an index
        dev = torch.device("cuda", torch.cuda.current_device())
    torch.cuda.set_device(dev)
    n = size // 4
    src = torch.full((n,), 0.5, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(warmups + repeats):
        torch.cuda.synchronize(dev)
        start.record()
        dst.copy_(src)
        stop.record()
        stop.synchronize()
        if i >= warmups:
            times.append(start.elapsed_time(stop))
    if not bool((dst[:16] == 0.5).all()):
        raise RuntimeError("copy check failed")
    props = torch.cuda.get_device_properties(dev)
    out = stats(times, 2 * n * 4)
    out.update(method="torch dst.copy_(src), float32, CUDA events", gpu=props.name,
               gpu_memory_bytes=props.total_memory,
               versions={"torch": torch.__version__, "cuda": torch.version.cuda})
    return out


def with_cupy(size: int, warmups: int, repeats: int, device: str) -> dict:
    import cupy
    dev_id = int(device.split(":", 1)[1]) if ":" in device else 0
    cupy.cuda.Device(dev_id).use()
    n = size // 4
    src = cupy.full((n,), 0.5, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for i in range(warmups + repeats):
        cupy.cuda.Device(dev_id).synchronize()
        start.record()
        cupy.copyto(dst, src)
        stop.record()
        stop.synchronize()
        if i >= warmups:
            times.append(cupy.cuda.get_elapsed_time(start, stop))
    name = cupy.cuda.runtime.getDeviceProperties(dev_id).get("name", b"")
    out = stats(times, 2 * n * 4)
    out.update(method="cupy.copyto, float32, CUDA events",
               gpu=name.decode() if isinstance(name, bytes) else str(name),
               versions={"cupy": cupy.__version__})
    return out


def with_numpy(size: int, warmups: int, repeats: int) -> dict:
    import numpy as np
    n = size // 4
    src = np.full(n, 0.5, dtype=np.float32)
    dst = np.empty_like(src)
    times = []
    for i in range(warmups + repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        dt = (time.perf_counter() - t0) * 1e3
        if i >= warmups:
            times.append(dt)
    out = stats(times, 2 * n * 4)
    out.update(method="numpy.copyto on the host (plumbing only)", gpu=None, versions={"numpy": np.__version__})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=int, default=4096, help="bytes per buffer, MiB (4096)")
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    size = args.size_mib << 20
    try:
        if args.device == "cpu":
            out = with_numpy(size, args.warmups, args.repeats)
        else:
            try:
                import torch  # noqa: F401
                out = with_torch(size, args.warmups, args.repeats, args.device)
            except ImportError:
                out = with_cupy(size, args.warmups, args.repeats, args.device)
        out.update(status="ok", size_bytes=size, warmups=args.warmups, repeats=args.repeats, device=args.device)
        rc = 0
    except Exception as exc:
        out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "device": args.device}
        rc = 1
    common.emit(out, args.json_out)
    if rc == 0:
        print(f"bandwidth: {out['bandwidth_GBps']:.1f} GB/s (median of {args.repeats}, "
              f"{size >> 20} MiB copies, {out['method']})", file=sys.stderr)
    else:
        print(f"bandwidth: {out['error']}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
