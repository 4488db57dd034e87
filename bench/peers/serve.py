"""One long-lived process that runs a peer's jobs one after another (bench/harness.py --peer-server).

Each peer job started as its own process pays Python's start, the imports (torch, cuQuantum) and a
CUDA context before it times milliseconds of work. On an H100 GPU host (2026-12-06) the families
suite's 90 peer jobs took 4.9-10.6 s each, 625 s in all, for 2.2 s of timed runs
(bench/results/2026-12-06n-h100-final/peer-wall.md). Served, a variant's start, imports and context
are paid once per harness run.

Protocol (the harness writes, this process answers), one JSON object a line:
  in:  {"script": PATH, "argv": [ARG, ...], "stdout": PATH, "stderr": PATH}
  out: {"rc": INT}
For each job, file descriptors 1 and 2 point at the job's two files while the script's
main(argv) runs (so what C libraries print lands there too); rc is what main returned, or the
SystemExit code, or 1 after an uncaught exception (its traceback in the job's stderr). Between jobs
the process drops what the job left: garbage, and torch's and CuPy's cached device memory, so that
each job starts with the allocator state of a fresh process, less the CUDA context.

A job that calls os._exit (jax_tree.py after a compile timeout) ends this process; the harness
reads the exit status as the job's and starts another process for the next job. The harness kills
this process (its whole session) when a job runs past its timeout. EOF on stdin ends it.
"""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys
import traceback


def load(script: str, cache: dict):
    mod = cache.get(script)
    if mod is None:
        name = "_served_" + os.path.splitext(os.path.basename(script))[0]
        spec = importlib.util.spec_from_file_location(name, script)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {script}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        if not callable(getattr(mod, "main", None)):
            raise ImportError(f"{script} has no main(argv)")
        cache[script] = mod
    return mod


def exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): printed, status 1, as the interpreter does
    return 1


def drop_device_caches() -> None:
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
        except Exception:  # a job that broke the context: the next job reports it
            pass
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            cupy.get_default_memory_pool().free_all_blocks()
            cupy.get_default_pinned_memory_pool().free_all_blocks()
        except Exception:
            pass


def run_job(job: dict, cache: dict) -> int:
    try:
        return exit_code(load(job["script"], cache).main(list(job["argv"])))
    except SystemExit as exc:
        return exit_code(exc.code)
    except BaseException:  # noqa: BLE001 - the job's failure (or its script's), not this process's
        traceback.print_exc()
        return 1


def main() -> int:
    reply = os.dup(1)
    saved_err = os.dup(2)
    cache: dict = {}
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        with open(job["stdout"], "w", encoding="utf-8") as out, open(job["stderr"], "w", encoding="utf-8") as err:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                rc = run_job(job, cache)
                drop_device_caches()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(reply, 1)
                os.dup2(saved_err, 2)
        os.write(reply, (json.dumps({"rc": rc}) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
