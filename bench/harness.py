"""The benchmark harness: runs a suite (tnrt variants and peers, each in its own process, on the same
GPU in the same sitting), measures the copy bandwidth for the floor, repeats the whole suite --reps
times, and writes results.json, results.csv, README.md and plots to one folder.

    python3 bench/harness.py bench/suites/reference.json [--out DIR] [--tnrt PATH] [--reps 3] [--profile]

DIR defaults to bench/results/<UTC date>-<gpu>/ (a suffix -2, -3, ... if it exists). Every job's
JSON, stdout and stderr are kept under DIR/raw/. A job that fails or times out is recorded with its
stderr tail and the suite goes on; results are rewritten after every job, so a run cut short still
leaves everything it measured. Python 3.11+ standard library only (plots need matplotlib).

Profiling: a variant with "profile": true (or every variant, with the suite's "profile": true or
--profile; a variant's own "profile": false wins) runs `tnrt contract ... --profile`, which records
every kernel and synchronization of its timed runs through CUPTI into counters.profile. Its rows are
marked "profiled" (the times carry CUPTI's overhead: not speed figures), README.md gets a profile
table, and report.py draws the histogram of the gaps between kernels.

Floors (bench/roofline.py): before the jobs the harness also measures the GEMM peak of every dtype
the suite uses (bench/gemm_peak.py; --skip-peak skips it, --peaks FILE reuses an earlier JSON). Each
problem gets a byte floor (bytes read+written over all steps / copy bandwidth) and a flop floor
(flops / the dtype's peak); the larger is the floor, and ×floor is time / that floor. --roofline
adds, for every compiled tnrt variant, one `tnrt contract ... --step-profile CSV` job per problem
and folds where its time goes (memory-bound launches, compute-bound launches, overhead) into the
tables.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import fnmatch
import hashlib
import json
import os
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
sys.path.insert(0, HERE)
import common  # noqa: E402
import roofline  # noqa: E402

AGREEMENT = 0.05  # the medians of the reps should agree within 5%
TNRT_EXIT_NOT_SUPPORTED = 10  # apps/tnrt/main.cpp: "10 not supported"
CUTENSOR_STAGED = "/opt/tnrt-deps/lib"

DEFAULT_TNRT = {
    # What `tnrt contract` (apps/tnrt/contract.cpp) is called with. {placeholders} are filled per
    # job; a list-valued placeholder standing alone ({problem_args}, {fill_args}, {options}) expands
    # into several arguments. tnrt's --random SEED draws input i from stream i, uniform in
    # [0.9*fill, 1.1*fill): a suite's random fill gives "value" and the peers derive lo/hi the same way.
    "command": ["{tnrt}", "contract", "{file}", "{problem_args}", "--device", "{device}", "--dtype", "{dtype}",
                "{fill_args}", "--mode", "{mode}", "--warmup", "{warmups}", "--repeat", "{runs}",
                "{options}", "--json", "{json}", "--quiet"],
    "fill_args": {"constant": ["--fill={value}"],
                  "random": ["--fill={value}", "--random", "{seed}"]},
}


# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------
def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def tail(text: str, n: int = 2000) -> str:
    return text[-n:] if text else ""


def get_path(d, *paths, default=None):
    """First present value among dotted paths ("counters.plan_cache.misses")."""
    for p in paths:
        cur = d
        ok = True
        for part in p.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                ok = False
                break
        if ok and cur is not None:
            return cur
    return default


def run_quiet(cmd: list[str], timeout: float = 20) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        return r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def last_json_object(text: str):
    """The JSON object a tool printed on stdout (the whole text, else the last {...} block)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
        return obj if isinstance(obj, dict) else None
    except json.JSONDecodeError:
        pass
    for m in reversed([m.start() for m in re.finditer(r"(?m)^\{", text)]):
        try:
            obj = json.loads(text[m:])
            if isinstance(obj, dict):
                return obj
        except json.JSONDecodeError:
            continue
    return None


# --------------------------------------------------------------------------------------------------
# the machine
# --------------------------------------------------------------------------------------------------
def gpu_info() -> dict:
    info: dict = {}
    if not shutil.which("nvidia-smi"):
        info["nvidia_smi"] = "not found"
        return info
    q = run_quiet(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.mem,"
                   "clocks.max.sm,clocks.max.mem,power.limit,pci.bus_id", "--format=csv,noheader"])
    gpus = []
    for line in q.splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) >= 10:
            gpus.append(dict(zip(["index", "name", "driver_version", "memory_total", "clocks_sm",
                                  "clocks_mem", "clocks_max_sm", "clocks_max_mem", "power_limit",
                                  "pci_bus_id"], f)))
    info["gpus"] = gpus
    if gpus:
        info["name"] = gpus[0]["name"]
        info["driver_version"] = gpus[0]["driver_version"]
    # exactly the query the method names, kept verbatim
    info["clocks_csv"] = run_quiet(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem", "--format=csv"])
    head = run_quiet(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([0-9.]+)", head)
    if m:
        info["cuda_driver_api_version"] = m.group(1)
    return info


def git_info() -> dict:
    rev = run_quiet(["git", "-C", ROOT, "rev-parse", "HEAD"])
    dirty = run_quiet(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    return {"commit": rev or None, "dirty": bool(dirty) if rev else None}


def find_tnrt(explicit: str | None) -> str | None:
    if explicit:
        return os.path.abspath(explicit) if os.sep in explicit else (shutil.which(explicit) or explicit)
    cands = [os.path.join(ROOT, "build", "tnrt")]
    for d in sorted(os.listdir(ROOT)):
        if d.startswith("build") and d != "build":
            cands.append(os.path.join(ROOT, d, "tnrt"))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return shutil.which("tnrt")


# --------------------------------------------------------------------------------------------------
# the suite
# --------------------------------------------------------------------------------------------------
def load_suite(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        suite = json.load(f)
    suite.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    suite.setdefault("warmups", 3)
    suite.setdefault("runs", 10)
    suite.setdefault("timeout_s", 600)
    suite.setdefault("device", "cuda")
    suite.setdefault("profile", False)
    tn = dict(DEFAULT_TNRT)
    tn.update(suite.get("tnrt", {}))
    suite["tnrt"] = tn
    names = set()
    for p in suite.get("problems", []):
        if "name" not in p:
            raise ValueError(f"{path}: every problem needs a name")
        if p["name"] in names:
            raise ValueError(f"{path}: problem {p['name']!r} twice")
        names.add(p["name"])
        p["dtype"] = common.canonical_dtype(p.get("dtype", "f32"))
        fill = p.setdefault("fill", {"kind": "constant"})
        fill.setdefault("kind", "constant")
        fill.setdefault("value", common.REFERENCE_FILL)
        if fill["kind"] == "random":
            # tnrt's convention (contract.cpp): uniform in [0.9*value, 1.1*value), stream = input index
            fill.setdefault("seed", 0)
            fill.setdefault("lo", float(fill["value"]) * 0.9)
            fill.setdefault("hi", float(fill["value"]) * 1.1)
            fill.setdefault("stream_base", 0)
    vnames = set()
    for kind in ("variants", "peers"):
        for v in suite.get(kind, []):
            if v["name"] in vnames:
                raise ValueError(f"{path}: variant/peer name {v['name']!r} twice")
            vnames.add(v["name"])
            for pn in v.get("problems", []):
                if not any(fnmatch.fnmatch(n, pn) for n in names):
                    raise ValueError(f"{path}: {v['name']!r} names no problem matching {pn!r}")
    return suite


def profiled(suite: dict, variant: dict) -> bool:
    """Whether a tnrt variant runs with --profile: its own "profile" key, else the suite's."""
    return bool(variant.get("profile", suite.get("profile", False)))


def applies(entry: dict, problem: dict) -> bool:
    """A variant or peer runs on the problems its "problems" globs match (all when absent), except
    those its "skip_problems" globs match."""
    pats = entry.get("problems")
    if any(fnmatch.fnmatch(problem["name"], p) for p in entry.get("skip_problems", [])):
        return False
    return not pats or any(fnmatch.fnmatch(problem["name"], p) for p in pats)


def resolve(path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def problem_object(p: dict) -> common.Problem:
    if p.get("expression"):
        return common.load_problem(None, p["expression"], p.get("shapes", ""))
    return common.load_problem(resolve(p["file"]), bond_dim=int(p.get("bond_dim", 2)))


def fill_values(p: dict) -> dict:
    f = p["fill"]
    return {"value": repr(float(f.get("value", common.REFERENCE_FILL))), "seed": str(f.get("seed", 0)),
            "lo": repr(float(f.get("lo", 0.0))), "hi": repr(float(f.get("hi", 1.0))),
            "stream_base": str(f.get("stream_base", 0))}


def expand(template: list, values: dict) -> list[str]:
    out: list[str] = []
    for item in template:
        m = re.fullmatch(r"\{(\w+)\}", item) if isinstance(item, str) else None
        if m and isinstance(values.get(m.group(1)), list):
            out += [str(x) for x in values[m.group(1)]]
        else:
            out.append(str(item).format(**{k: v for k, v in values.items() if not isinstance(v, list)}))
    return out


def peer_problem_args(p: dict) -> list[str]:
    args = ["--expr", p["expression"], "--shapes", p.get("shapes", "")] if p.get("expression") \
        else [resolve(p["file"])]
    if "bond_dim" in p:
        args += ["--bond-dim", str(p["bond_dim"])]
    f = fill_values(p)
    if p["fill"]["kind"] == "constant":
        args += ["--fill", "constant", f"--value={f['value']}"]
    else:  # "--lo=-1.0": a value starting with '-' never reads as an option
        args += ["--fill", "random", "--seed", f["seed"], f"--lo={f['lo']}", f"--hi={f['hi']}",
                 "--stream-base", f["stream_base"]]
    return args + ["--dtype", p["dtype"], "--label", p["name"]]


# --------------------------------------------------------------------------------------------------
# jobs
# --------------------------------------------------------------------------------------------------
class Runner:
    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self.stopping = False
        self.servers: dict[str, subprocess.Popen] = {}  # --peer-server: one peers/serve.py per variant

    def serve(self, key: str, cmd: list[str], timeout: float, stdout_path: str, stderr_path: str,
              env=None) -> dict:
        """Run cmd ([python, script, args...]) as a job of the long-lived server `key`
        (bench/peers/serve.py), started on first use with cmd's python and env. The result has
        Runner.run's keys plus the server's pid (server_pid); a job past its timeout kills the
        server (the next job starts another), and a server that exits mid-job (os._exit) gives
        its exit status as the job's."""
        t0 = time.monotonic()
        srv = self.servers.get(key)
        if srv is None or srv.poll() is not None:
            log = os.path.join(os.path.dirname(stdout_path), f"server-{slug(key)}.log")
            try:
                with open(log, "a", encoding="utf-8") as err:
                    srv = subprocess.Popen([cmd[0], os.path.join(HERE, "peers", "serve.py")], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=err, cwd=ROOT, env=env,
                                           start_new_session=True, bufsize=0)
            except OSError as exc:
                return {"rc": None, "timed_out": False, "wall_s": 0.0, "spawn_error": str(exc)}
            self.servers[key] = srv
        job = {"script": cmd[1], "argv": cmd[2:], "stdout": os.path.abspath(stdout_path),
               "stderr": os.path.abspath(stderr_path)}
        self.child = srv
        rc, timed_out = None, False
        try:
            srv.stdin.write((json.dumps(job) + "\n").encode())
            deadline = t0 + timeout
            buf = b""
            while rc is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    self.kill()
                    break
                ready, _, _ = select.select([srv.stdout], [], [], min(left, 1.0))
                if not ready:
                    if self.stopping:
                        break
                    continue
                chunk = os.read(srv.stdout.fileno(), 4096)
                if not chunk:  # the server ended during the job
                    rc = srv.wait()
                    break
                buf += chunk
                while b"\n" in buf and rc is None:
                    line, buf = buf.split(b"\n", 1)
                    try:
                        rc = int(json.loads(line)["rc"])
                    except (ValueError, KeyError, TypeError):
                        pass  # not a reply: a stray line on the server's stdout
        except OSError:  # a broken pipe: the server is gone
            rc = srv.poll()
        finally:
            self.child = None
        if timed_out or srv.poll() is not None:
            self.servers.pop(key, None)
        return {"rc": rc, "timed_out": timed_out, "wall_s": time.monotonic() - t0, "server_pid": srv.pid}

    def close_servers(self) -> None:
        for srv in self.servers.values():
            try:
                srv.stdin.close()
                srv.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._killpg(srv)
        self.servers.clear()

    def run(self, cmd: list[str], timeout: float, stdout_path: str, stderr_path: str, env=None) -> dict:
        t0 = time.monotonic()
        with open(stdout_path, "w", encoding="utf-8") as out, open(stderr_path, "w", encoding="utf-8") as err:
            try:
                self.child = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, env=env,
                                              start_new_session=True, text=True)
            except OSError as exc:
                return {"rc": None, "timed_out": False, "wall_s": 0.0, "spawn_error": str(exc)}
            timed_out = False
            try:
                rc = self.child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                self.kill()
                rc = self.child.wait()
            finally:
                self.child = None
        return {"rc": rc, "timed_out": timed_out, "wall_s": time.monotonic() - t0}

    def kill(self) -> None:
        self._killpg(self.child)

    def kill_all(self) -> None:
        """On a signal: the job running and every server."""
        self.kill()
        for srv in list(self.servers.values()):
            self._killpg(srv)

    @staticmethod
    def _killpg(c: subprocess.Popen | None) -> None:
        if c is None or c.poll() is not None:
            return
        try:
            os.killpg(c.pid, signal.SIGTERM)
            try:
                c.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(c.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def collect(job: dict, res: dict, json_path: str, stdout_path: str, stderr_path: str) -> dict:
    """One record per job: the tool's report (tolerant of missing keys) plus the harness's view."""
    report = None
    if os.path.exists(json_path):
        try:
            with open(json_path, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, json.JSONDecodeError) as exc:
            report = None
            res["json_error"] = str(exc)
    if report is None:
        report = last_json_object(read_text(stdout_path))
    err_tail = tail(read_text(stderr_path))
    rec = dict(job)
    rec.update(rc=res.get("rc"), wall_s=res.get("wall_s"), timed_out=res.get("timed_out", False))
    if res.get("spawn_error"):
        rec.update(status="failed", error=f"cannot start: {res['spawn_error']}")
        return rec
    if res.get("timed_out"):
        rec.update(status="timeout", error=f"killed after {job['timeout_s']} s", stderr_tail=err_tail)
    elif report is None:
        last = [x for x in err_tail.splitlines() if x.strip()][-1:] or [""]
        if job.get("kind") in ("tnrt", "roofline") and res.get("rc") == TNRT_EXIT_NOT_SUPPORTED:
            rec.update(status="not_supported", error=last[0][:300], stderr_tail=err_tail)
            return rec
        rec.update(status="failed", error=f"exit {res.get('rc')}, no JSON report; stderr: {last[0][:300]}",
                   stderr_tail=err_tail)
    else:
        st = report.get("status")
        if st is None:  # tnrt writes no status: timed runs present means it ran
            st = "ok" if report.get("times_ms") else "failed"
        rec["status"] = st
        if st != "ok":
            rec["error"] = report.get("error") or f"exit {res.get('rc')}"
            rec["stderr_tail"] = err_tail
        elif res.get("rc") not in (0, None):  # e.g. tnrt's exit 11 (its own --verify failed)
            last = [x for x in err_tail.splitlines() if x.strip()][-1:] or [""]
            rec["note"] = f"exit {res.get('rc')}: {last[0][:300]}"
    if report is not None:
        rec["report"] = report
        times = [float(t) for t in (report.get("times_ms") or []) if isinstance(t, (int, float))]
        rec["times_ms"] = times
        rec["median_ms"] = report.get("median_ms", statistics.median(times) if times else None)
        rec["min_ms"] = report.get("min_ms", min(times) if times else None)
        rec["max_ms"] = report.get("max_ms", max(times) if times else None)
        tv = report.get("verified")
        if tv is None:  # tnrt: "verification": {"status": "passed" | "failed" | "not_run"}
            vs = get_path(report, "verification.status")
            tv = {"passed": True, "failed": False}.get(vs) if isinstance(vs, str) else None
        rec["tool_verified"] = tv
        rec["result"] = report.get("result")
    return rec


def reference_for(p: dict, out_dir: str, runner: Runner, python: str, timeout: float) -> dict:
    """The value results are verified against: the suite's number, or a NumPy run in f64/c128 of the
    same inputs (cached under ~/.cache/tnrt-bench by file hash, dtype and fill)."""
    ref = p.get("reference")
    if ref is None or ref == "none":
        return {"value": None, "source": "none"}
    if isinstance(ref, (int, float, list)):
        return {"value": ref, "source": p.get("reference_source", "suite")}
    if isinstance(ref, dict) and ("scalar" in ref or "norm" in ref):
        return {"value": ref, "source": p.get("reference_source", "suite")}
    if ref != "numpy":
        return {"value": None, "source": f"unknown reference {ref!r}"}
    src = p.get("expression", "") + p.get("shapes", "") if p.get("expression") else common.file_sha256(resolve(p["file"]))
    key = hashlib.sha256(json.dumps([src, p["dtype"], p["fill"], p.get("bond_dim", 2)], sort_keys=True).encode()).hexdigest()[:20]
    cache_dir = os.path.join(os.path.expanduser("~"), ".cache", "tnrt-bench")
    cache = os.path.join(cache_dir, f"reference-{key}.json")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            doc = json.load(f)
        return {"value": doc["result"], "source": f"numpy {doc.get('compute_dtype')} (cached {cache})"}
    os.makedirs(cache_dir, exist_ok=True)
    compute = "c128" if p["dtype"] in ("c64", "c128") else "f64"
    raw = os.path.join(out_dir, "raw")
    jpath = os.path.join(raw, f"reference-{slug(p['name'])}.json")
    cmd = [python, os.path.join(HERE, "peers", "common.py")] + peer_problem_args(p) + \
        ["--compute-dtype", compute, "--device", "cpu", "--warmups", "0", "--runs", "1", "--json", jpath]
    sys.stderr.write(f"harness: computing the reference of {p['name']} with NumPy ({compute}) ...\n")
    res = runner.run(cmd, timeout, jpath + ".stdout", jpath + ".stderr")
    if res.get("rc") == 0 and os.path.exists(jpath):
        with open(jpath, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("status") == "ok":
            shutil.copyfile(jpath, cache)
            return {"value": doc["result"], "source": f"numpy {compute}, {doc.get('median_ms', 0) / 1e3:.1f} s"}
    return {"value": None, "source": "numpy reference failed: " + tail(read_text(jpath + ".stderr"), 500)}


# --------------------------------------------------------------------------------------------------
# the flop floor's peaks and the per-step roofline
# --------------------------------------------------------------------------------------------------
def measure_peaks(runner: Runner, python: str, device: str, dtypes: list[str], suite: dict, raw: str,
                  timeout: float) -> dict:
    """bench/gemm_peak.py once, for the suite's dtypes (and TF32, labelled, beside f32)."""
    want = list(dtypes) + (["tf32"] if "f32" in dtypes else [])
    gpath = os.path.join(raw, "gemm_peak.json")
    gcmd = [python, os.path.join(HERE, "gemm_peak.py"), "--device", device, "--dtypes", ",".join(want),
            "--json", gpath]
    gcmd += [str(x) for x in suite.get("gemm_peak_args", [])] if device != "cpu" else ["--size", "128", "--repeats", "3"]
    sys.stderr.write("harness: measuring the GEMM peaks ...\n")
    r = runner.run(gcmd, min(timeout, 300), gpath + ".stdout", gpath + ".stderr")
    gp = None
    if os.path.exists(gpath):
        try:
            with open(gpath, encoding="utf-8") as f:
                gp = json.load(f)
        except (OSError, json.JSONDecodeError):
            gp = None
    if gp is None:
        gp = {"status": "failed", "error": f"exit {r.get('rc')}: " + tail(read_text(gpath + ".stderr"), 500)}
    gp["command"] = shlex.join(gcmd)
    if gp.get("status") == "ok":
        sys.stderr.write("harness: GEMM peaks " + ", ".join(f"{d} {v:.1f}" for d, v in gp["peaks_tflops"].items())
                         + " TFLOP/s\n")
    else:
        sys.stderr.write(f"harness: GEMM peaks {gp.get('status')}: {gp.get('error')} (no flop floor)\n")
    return gp


def load_peaks(path: str) -> dict:
    """--peaks FILE: a bench/gemm_peak.py JSON, or a results.json holding one (its gemm_peak)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        return {"status": "failed", "error": f"--peaks {path}: {exc}"}
    if "peaks_tflops" not in doc and isinstance(doc.get("gemm_peak"), dict):
        doc = doc["gemm_peak"]
    doc = dict(doc, source=os.path.abspath(path))
    if doc.get("peaks_tflops"):
        doc.setdefault("status", "ok")
    else:
        doc.setdefault("status", "failed")
        doc.setdefault("error", f"--peaks {path}: no peaks_tflops")
    return doc


def fold_roofline(rec: dict, prob: common.Problem, p: dict, doc: dict, csv_path: str) -> dict:
    """A --roofline job's record plus bench/roofline.py's summary of its step profile."""
    out = {k: rec.get(k) for k in ("kind", "problem", "dtype", "variant", "mode", "command", "status", "error",
                                   "rc", "wall_s", "median_ms", "stderr_tail") if rec.get(k) is not None}
    out["step_profile"] = csv_path
    if rec.get("status") != "ok":
        return out
    if not os.path.exists(csv_path):
        out.update(status="failed", error=f"tnrt wrote no step profile ({os.path.basename(csv_path)})")
        return out
    bw = doc.get("bandwidth") or {}
    gp = doc.get("gemm_peak") or {}
    try:
        rows = roofline.read_step_profile(csv_path)
        full = roofline.summarize(prob, p["dtype"], rows,
                                  bw.get("bandwidth_bytes_per_s") if bw.get("status") == "ok" else None,
                                  roofline.peak_for(gp.get("peaks_tflops") if gp.get("status") == "ok" else None,
                                                    p["dtype"]),
                                  rec.get("median_ms"))
    except (OSError, ValueError, KeyError) as exc:
        out.update(status="failed", error=f"roofline: {type(exc).__name__}: {exc}")
        return out
    out["summary"] = roofline.compact(full)
    out["text"] = roofline.summary_text(full)
    with open(csv_path[:-len(".csv")] + ".roofline.json", "w", encoding="utf-8") as f:
        json.dump(full, f, indent=1)
    return out


# --------------------------------------------------------------------------------------------------
# aggregation and output
# --------------------------------------------------------------------------------------------------
def syncs_per_call(report: dict):
    v = get_path(report, "counters.syncs_per_call", "syncs_per_call")
    if v is not None:
        return v
    inside = get_path(report, "counters.syncs_inside_calls", "syncs_inside_calls")
    n = len(report.get("times_ms") or [])
    if inside is not None and n:
        return inside / n
    return None


def counter_summary(report: dict) -> dict:
    g = lambda *p: get_path(report, *p)  # noqa: E731
    return {
        "syncs_per_call": syncs_per_call(report),
        "plan_hits": g("counters.plan_cache.hits"),
        "plan_misses": g("counters.plan_cache.misses"),
        "plan_evictions": g("counters.plan_cache.evictions"),
        "retire_deferred": g("counters.retirement.deferred"),
        "retire_immediate": g("counters.retirement.immediate"),
        "retire_barrier_fallbacks": g("counters.retirement.barrier_fallbacks"),
        "retire_capacity_waits": g("counters.retirement.capacity_waits"),
        "retire_leaked": g("counters.retirement.leaked"),
        "retire_stream_syncs": g("counters.retirement.stream_syncs"),
        "retire_event_syncs": g("counters.retirement.event_syncs"),
        "peak_device_bytes": g("peak_device_bytes", "counters.peak_device_bytes", "counters.peak_device_bytes_sampled"),
        "compile_ms": g("compile_ms"),
        **profile_summary(report),
    }


def profile_summary(report: dict) -> dict:
    """Per-call figures of counters.profile (tnrt --profile), None where the report has none."""
    p = get_path(report, "counters.profile") or {}
    per = p.get("per_call") or {}
    inside = per.get("syncs_inside_calls") or {}
    runtime = [inside.get(k) for k in ("cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceSynchronize")]
    driver = [inside.get(k) for k in ("cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize")]
    total = lambda xs: sum(xs) if xs and all(isinstance(x, (int, float)) for x in xs) else None  # noqa: E731
    return {
        "profiled": bool(report.get("profiled")),
        "kernels_per_call": per.get("kernels"),
        "busy_ms_per_call": per.get("busy_ms"),
        "span_ms_per_call": per.get("span_ms"),
        "busy_fraction": p.get("busy_fraction"),
        "gap_median_us": p.get("gap_median_us"),
        "gap_p90_us": p.get("gap_p90_us"),
        "gap_max_us": p.get("gap_max_us"),
        "profiled_syncs_per_call_runtime": total(runtime),
        "profiled_syncs_per_call_driver": total(driver),
    }


def problem_floors(p: dict, bandwidth: dict | None, gemm_peak: dict | None) -> dict:
    """The problem's byte floor, flop floor, the larger ("the floor") and which one it is."""
    bw = bandwidth.get("bandwidth_bytes_per_s") if bandwidth and bandwidth.get("status") == "ok" else None
    peaks = (gemm_peak or {}).get("peaks_tflops") if (gemm_peak or {}).get("status") == "ok" else None
    peak = roofline.peak_for(peaks, p["dtype"])
    nbytes, flops = p.get("bytes_read_written"), p.get("flops")
    f = roofline.floor_of(nbytes or 0, flops or 0, bw if nbytes else None, peak if flops else None)
    return {"byte_floor_ms": f["byte_floor_ms"], "flop_floor_ms": f["flop_floor_ms"], "floor_ms": f["floor_ms"],
            "floor_bound": f["bound"], "peak_tflops": peak / 1e12 if peak else None}


def aggregate(records: list[dict], problems: list[dict], bandwidth: dict | None, order: list[str],
              gemm_peak: dict | None = None, rooflines: list[dict] | None = None) -> list[dict]:
    rows = []
    by_key: dict[tuple, list[dict]] = {}
    for r in records:
        by_key.setdefault((r["problem"], r["variant"]), []).append(r)
    roof = {(x["problem"], x["variant"]): x for x in rooflines or [] if x.get("summary")}
    for p in problems:
        floors = problem_floors(p, bandwidth, gemm_peak)
        p["floors"] = floors
        floor_ms = floors["floor_ms"]
        torch_med = None
        for name in order:
            recs = by_key.get((p["name"], name))
            if not recs:
                continue
            ok = [r for r in recs if r.get("status") == "ok" and r.get("median_ms") is not None]
            meds = [float(r["median_ms"]) for r in ok]
            row = {"problem": p["name"], "dtype": p["dtype"], "variant": name, "kind": recs[0]["kind"],
                   "mode": recs[0].get("mode"), "reps": len(recs), "reps_ok": len(ok),
                   "statuses": sorted({r.get("status", "?") for r in recs}),
                   "rep_medians_ms": meds,
                   "median_ms": statistics.median(meds) if meds else None,
                   "min_ms": min(float(r["min_ms"]) for r in ok) if ok else None,
                   "max_ms": max(float(r["max_ms"]) for r in ok) if ok else None,
                   "floor_ms": floor_ms, "byte_floor_ms": floors["byte_floor_ms"],
                   "flop_floor_ms": floors["flop_floor_ms"], "floor_bound": floors["floor_bound"]}
            row["x_floor"] = row["median_ms"] / floor_ms if row["median_ms"] and floor_ms else None
            row["rep_spread"] = (max(meds) - min(meds)) / min(meds) if len(meds) > 1 and min(meds) > 0 else None
            row["reps_agree"] = row["rep_spread"] <= AGREEMENT if row["rep_spread"] is not None else None
            vs = [r.get("verified") for r in recs if r.get("status") == "ok"]
            row["verified"] = (False if False in vs else True if vs and all(v is True for v in vs) else None)
            row["abs_err"] = max((r.get("verification", {}).get("abs_err") or 0.0 for r in ok), default=None)
            row["errors"] = [r.get("error") or r.get("note") for r in recs if r.get("error") or r.get("note")][:3]
            last = ok[-1] if ok else recs[-1]
            row.update(counter_summary(last.get("report") or {}))
            row["profiled"] = row["profiled"] or any(r.get("profiled") for r in recs)
            rf = roof.get((p["name"], name))
            if rf:
                c = rf["summary"]
                row.update(roofline_e2e_ms=c.get("total_ms"), roofline_kernel_ms=c.get("kernel_ms"),
                           roofline_memory_ms=c.get("memory_ms"), roofline_memory_floor_ms=c.get("memory_floor_ms"),
                           roofline_compute_ms=c.get("compute_ms"),
                           roofline_compute_floor_ms=c.get("compute_floor_ms"),
                           roofline_overhead_ms=c.get("overhead_ms"))
            if name == "torch" and row["median_ms"]:
                torch_med = row["median_ms"]
            rows.append(row)
        for row in rows:
            if row["problem"] == p["name"]:
                row["speedup_vs_torch"] = torch_med / row["median_ms"] if torch_med and row["median_ms"] else None
    return rows


def fmt(v, spec: str = "", none: str = "—") -> str:
    if v is None:
        return none
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if spec:
            return format(v, spec)
        a = abs(v)
        return format(v, ".1f" if a >= 100 else ".2f" if a >= 1 else ".3g")
    return str(v)


def verdict(row: dict) -> str:
    if row["reps_ok"] == 0:
        return "/".join(row["statuses"])
    return {True: "pass", False: "FAIL", None: "unverified"}[row["verified"]]


def write_csv(path: str, rows: list[dict]) -> None:
    keys = ["problem", "dtype", "variant", "kind", "mode", "reps", "reps_ok", "median_ms", "min_ms", "max_ms",
            "floor_ms", "x_floor", "byte_floor_ms", "flop_floor_ms", "floor_bound", "speedup_vs_torch", "rep_spread", "reps_agree", "verified", "abs_err",
            "syncs_per_call", "plan_hits", "plan_misses", "plan_evictions", "retire_deferred",
            "retire_immediate", "retire_barrier_fallbacks", "retire_capacity_waits", "retire_leaked",
            "retire_stream_syncs", "retire_event_syncs", "peak_device_bytes", "compile_ms", "profiled",
            "kernels_per_call", "busy_ms_per_call", "span_ms_per_call", "busy_fraction", "gap_median_us",
            "gap_p90_us", "gap_max_us", "profiled_syncs_per_call_runtime", "profiled_syncs_per_call_driver",
            "roofline_e2e_ms", "roofline_kernel_ms", "roofline_memory_ms", "roofline_memory_floor_ms",
            "roofline_compute_ms", "roofline_compute_floor_ms", "roofline_overhead_ms", "statuses"]
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (";".join(r[k]) if isinstance(r.get(k), list) else r.get(k)) for k in keys})
    os.replace(path + ".tmp", path)


def where_text(r: dict) -> str:
    """'3.10 (2.95) / 0.20 (0.10) / 1.00': memory-bound, compute-bound launches (floors), overhead."""
    if r.get("roofline_kernel_ms") is None:
        return "—"
    return (f"{fmt(r.get('roofline_memory_ms'))} ({fmt(r.get('roofline_memory_floor_ms'))}) / "
            f"{fmt(r.get('roofline_compute_ms'))} ({fmt(r.get('roofline_compute_floor_ms'))}) / "
            f"{fmt(r.get('roofline_overhead_ms'))}")


def write_readme(path: str, doc: dict, rows: list[dict]) -> None:
    env = doc["environment"]
    gpu = env.get("gpu", {})
    bw = doc.get("bandwidth") or {}
    lines = [f"# {doc['suite']['name']}: {doc['started_utc'][:10]} on {gpu.get('name') or doc['device']}", ""]
    lines.append(f"Produced by: `{doc['command']}` (in `{doc['cwd']}`)")
    lines.append("")
    lines.append(f"- GPU: {gpu.get('name', '—')}, driver {gpu.get('driver_version', '—')}, "
                 f"CUDA (driver API) {gpu.get('cuda_driver_api_version', '—')}")
    lines.append(f"- clocks at start: `{' | '.join((gpu.get('clocks_csv') or '—').splitlines())}`")
    vers = doc.get("versions", {})
    lines.append("- versions: " + (", ".join(f"{k} {v}" for k, v in sorted(vers.items()) if v) or "—"))
    lines.append(f"- tnrt: `{doc.get('tnrt') or 'not found'}`, git {env.get('git', {}).get('commit') or '—'}"
                 f"{' (dirty)' if env.get('git', {}).get('dirty') else ''}")
    if bw.get("status") == "ok":
        lines.append(f"- copy bandwidth: {bw['bandwidth_GBps']:.1f} GB/s (median of {bw.get('repeats')}, "
                     f"{bw.get('size_bytes', 0) >> 20} MiB, {bw.get('method')}); byte floor = bytes read+written "
                     "over all steps / this bandwidth")
    else:
        lines.append(f"- copy bandwidth: not measured ({bw.get('error', 'skipped')}); no byte floor")
    gp = doc.get("gemm_peak") or {}
    if gp.get("status") == "ok":
        pk = gp.get("peaks_tflops") or {}
        used = ", ".join(f"{d} {pk[d]:.1f}" for d in ("f32", "f64", "c64", "c128") if d in pk)
        extra = f" (tf32 {pk['tf32']:.1f}: TF32 on, for comparison only)" if "tf32" in pk else ""
        lines.append(f"- GEMM peaks: {used} TFLOP/s{extra} ({gp.get('method')}, median of {gp.get('repeats')}; "
                     "f32 with TF32 off); flop floor = flops over all steps (2 per real multiply-add, 8 per "
                     "complex) / the dtype's peak; the floor is the larger of the two, ×floor = median / floor")
    else:
        lines.append(f"- GEMM peaks: not measured ({gp.get('status', 'skipped')}"
                     f"{': ' + str(gp.get('error'))[:200] if gp.get('error') else ''}); no flop floor, "
                     "the floor is the byte floor")
    if env.get("pinned_cpus"):
        lines.append(f"- every job pinned to CPU(s) {', '.join(map(str, env['pinned_cpus']))} (`--pin-cpu`)")
    lines.append(f"- {doc['suite'].get('warmups')} warm-ups, {doc['suite'].get('runs')} timed runs per job, "
                 f"{doc['reps']} reps of the whole suite; median of the rep medians, min/max over all runs")
    lines.append("")
    for p in doc["problems"]:
        prow = [r for r in rows if r["problem"] == p["name"]]
        if not prow:
            continue
        lines.append(f"## {p['name']} ({p['dtype']}, {p.get('fill_text')}; reference {fmt(p.get('reference_text'))})")
        lines.append("")
        lines.append(f"{p.get('summary_text', '')}")
        lines.append("")
        fl = p.get("floors") or {}
        if fl.get("floor_ms") is not None and fl.get("flop_floor_ms") is None:
            lines.append(f"Floors: byte {fmt(fl.get('byte_floor_ms'))} ms; no flop floor (no GEMM peak for "
                         f"{p['dtype']}): the floor is the byte floor.")
            lines.append("")
        elif fl.get("floor_ms") is not None:
            lines.append(f"Floors: byte {fmt(fl.get('byte_floor_ms'))} ms, flop {fmt(fl.get('flop_floor_ms'))} ms"
                         f"{' (' + format(fl['peak_tflops'], '.1f') + ' TFLOP/s)' if fl.get('peak_tflops') else ''}: "
                         f"the floor is the {'byte' if fl.get('floor_bound') == 'memory' else 'flop'} floor "
                         f"({fl.get('floor_bound')}-bound).")
            lines.append("")
        roof_rows = [r for r in prow if r.get("roofline_kernel_ms") is not None]
        lines.append("| variant | median ms | min ms | max ms | floor ms | ×floor | vs torch | verified | "
                     "syncs/call | plan misses/evictions | retire deferred/immediate/fallbacks/leaked | reps agree |"
                     + (" mem / compute / overhead ms |" if roof_rows else ""))
        lines.append("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|" + ("---:|" if roof_rows else ""))
        for r in prow:
            agree = "—" if r["reps_agree"] is None else ("yes" if r["reps_agree"] else "NO") + f" ({r['rep_spread'] * 100:.1f}%)"
            retire = "/".join(fmt(r.get(k)) for k in ("retire_deferred", "retire_immediate",
                                                     "retire_barrier_fallbacks", "retire_leaked"))
            name = r["variant"] + (" (profiled)" if r.get("profiled") else "")
            lines.append(f"| {name} | {fmt(r['median_ms'])} | {fmt(r['min_ms'])} | {fmt(r['max_ms'])} | "
                         f"{fmt(r['floor_ms'])} | {fmt(r['x_floor'])} | {fmt(r.get('speedup_vs_torch'))} | "
                         f"{verdict(r)} | {fmt(r['syncs_per_call'])} | {fmt(r['plan_misses'])}/{fmt(r['plan_evictions'])} | "
                         f"{retire} | {agree} |" + (f" {where_text(r)} |" if roof_rows else ""))
        lines.append("")
        if roof_rows:
            lines.append("Where the time goes (`--roofline`: one `tnrt contract --step-profile` job, its launches "
                         "timed event to event; memory- and compute-bound launches' ms with their floors in "
                         "brackets, overhead = its end-to-end median − the sum of its launches):")
            lines.append("")
            for rf in doc.get("rooflines") or []:
                if rf.get("problem") != p["name"] or not rf.get("summary"):
                    continue
                c = rf["summary"]
                tops = "; ".join(f"op {o['op']} (step {o['step']}, {o['bound']}) {fmt(o['ms'])} ms, "
                                 f"×{fmt(o['x_floor'])} its floor" for o in c.get("top") or [])
                lines.append(f"- {rf['variant']}: {c.get('ops')} launches, end-to-end {fmt(c.get('total_ms'))} ms, "
                             f"launches {fmt(c.get('kernel_ms'))} ms; most over their floors: {tops or '—'}"
                             + "".join(f"; warning: {w}" for w in c.get("warnings") or []))
            lines.append("")
        prof = [r for r in prow if r.get("profiled")]
        if prof:
            lines.append("Profiled with CUPTI (`tnrt contract --profile`; the times above of these variants include "
                         "its overhead, so they are not speed figures). Per call: kernels, GPU busy time (union of "
                         "kernel intervals), span (first kernel start to last end), gaps between consecutive kernels "
                         "within a call, host synchronizations inside the calls (runtime domain; driver domain).")
            lines.append("")
            lines.append("| variant | kernels | busy ms | span ms | busy % | gap median µs | gap p90 µs | gap max µs | "
                         "syncs inside calls |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for r in prof:
                bf = r.get("busy_fraction")
                lines.append(f"| {r['variant']} | {fmt(r.get('kernels_per_call'))} | {fmt(r.get('busy_ms_per_call'))} | "
                             f"{fmt(r.get('span_ms_per_call'))} | {fmt(bf * 100 if bf is not None else None)} | "
                             f"{fmt(r.get('gap_median_us'))} | {fmt(r.get('gap_p90_us'))} | {fmt(r.get('gap_max_us'))} | "
                             f"{fmt(r.get('profiled_syncs_per_call_runtime'))}; {fmt(r.get('profiled_syncs_per_call_driver'))} |")
            lines.append("")
        errs = []
        for r in prow:
            for e in r["errors"]:
                line = (r["variant"], str(e).splitlines()[0][:300] if e else "")
                if line not in errs:
                    errs.append(line)
        if errs:
            lines.append("Failures and notes:")
            lines.append("")
            for v, e in errs:
                lines.append(f"- {v}: {e}")
            lines.append("")
    plots = doc.get("plots") or []
    if plots:
        lines.append("Plots: " + ", ".join(f"[{os.path.basename(x)}]({os.path.basename(x)})" for x in plots))
        lines.append("")
    if doc.get("plots_note"):
        lines.append(doc["plots_note"])
        lines.append("")
    lines.append(f"Rep agreement (medians within {AGREEMENT * 100:.0f}%): {doc.get('agreement_text', '—')}")
    lines.append("")
    lines.append(f"Host speed: {doc.get('host_text', '—')}")
    lines.append("")
    lines.append("Raw per-job reports, stdout and stderr: `raw/`. Method: docs/benchmarks.md.")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def host_probe_ms() -> float:
    """A fixed CPU-bound workload in the harness (on the jobs' CPUs when pinned): how fast the host
    runs right now. Recorded before every job, so that drift of the host between repetitions (which
    host-bound variants and peers follow) shows in the report."""
    t0 = time.perf_counter()
    x = 0
    for i in range(300_000):
        x += (i * i) % 7
    return (time.perf_counter() - t0) * 1e3


def host_text(records: list[dict]) -> str:
    per_rep: dict[int, list[float]] = {}
    for r in records:
        if r.get("host_probe_ms") is not None:
            per_rep.setdefault(r["rep"], []).append(r["host_probe_ms"])
    if not per_rep:
        return "—"
    meds = {k: statistics.median(v) for k, v in sorted(per_rep.items())}
    lo, hi = min(meds.values()), max(meds.values())
    return (", ".join(f"rep {k} {m:.2f} ms" for k, m in meds.items()) +
            f" (median per rep of a fixed CPU workload timed before each job; spread {(hi - lo) / lo * 100:.1f}%)")


def agreement_text(rows: list[dict]) -> tuple[str, bool]:
    checked = [r for r in rows if r["reps_agree"] is not None]
    bad = [r for r in checked if not r["reps_agree"]]
    if not checked:
        return "not checked (fewer than 2 successful reps)", True
    if not bad:
        worst = max(checked, key=lambda r: r["rep_spread"])
        return (f"all {len(checked)} agree (largest spread {worst['rep_spread'] * 100:.1f}%: "
                f"{worst['problem']} / {worst['variant']})"), True
    return (f"{len(bad)} of {len(checked)} do NOT agree: " +
            "; ".join(f"{r['problem']} / {r['variant']} {r['rep_spread'] * 100:.1f}%" for r in bad)), False


def write_outputs(doc: dict, out_dir: str, order: list[str], final: bool = False) -> None:
    """results.json, results.csv, README.md (and, when final, the plots) from doc's records."""
    rows = aggregate(doc["records"], doc["problems"], doc["bandwidth"], order, doc.get("gemm_peak"),
                     doc.get("rooflines"))
    doc["rows"] = rows
    doc["order"] = order
    doc["agreement_text"], doc["agreement_ok"] = agreement_text(rows)
    doc["host_text"] = host_text(doc["records"])
    doc["finished_utc"] = utc_now().isoformat(timespec="seconds") if final else None
    if final:
        try:
            sys.path.insert(0, HERE)
            import report as plotter  # noqa: PLC0415
            doc["plots"], doc["plots_note"] = plotter.make_plots(doc, out_dir)
        except Exception as exc:  # plots are a bonus; never lose the results for them
            doc["plots"], doc["plots_note"] = [], f"plots skipped: {type(exc).__name__}: {exc}"
    with open(os.path.join(out_dir, "results.json.tmp"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
    os.replace(os.path.join(out_dir, "results.json.tmp"), os.path.join(out_dir, "results.json"))
    write_csv(os.path.join(out_dir, "results.csv"), rows)
    write_readme(os.path.join(out_dir, "README.md"), doc, rows)


def print_summary(doc: dict, out_dir: str) -> None:
    rows = doc["rows"]
    written = ["results.json", "results.csv", "README.md"] + [os.path.basename(x) for x in doc.get("plots") or []]
    sys.stderr.write(f"\nharness: wrote {out_dir}/ ({', '.join(written)})\n")
    if doc.get("plots_note"):
        sys.stderr.write(f"harness: {doc['plots_note']}\n")
    width = max((len(r["variant"]) for r in rows), default=8)
    for p in doc["problems"]:
        sys.stderr.write(f"\n{p['name']}:\n")
        for r in [r for r in rows if r["problem"] == p["name"]]:
            bound = {"memory": " (bytes)", "compute": " (flops)"}.get(r.get("floor_bound"), "")
            sys.stderr.write(f"  {r['variant']:<{width}}  {fmt(r['median_ms']):>9} ms  x{fmt(r['x_floor'])} floor{bound}"
                             f"  {verdict(r)}\n")
        for rf in doc.get("rooflines") or []:
            if rf.get("problem") == p["name"]:
                sys.stderr.write(f"  roofline of {rf['variant']}: " + (("\n    " + rf["text"].replace("\n", "\n    "))
                                 if rf.get("text") else f"{rf.get('status')}: {str(rf.get('error', ''))[:120]}") + "\n")
    sys.stderr.write(f"\ncheck: rep medians within {AGREEMENT * 100:.0f}%: {doc['agreement_text']}\n")
    sys.stderr.write(f"host speed: {doc.get('host_text', '—')}\n")


def merge(dirs: list[str], out_dir: str, command: str) -> int:
    """Combines harness folders (e.g. parts of one suite run as separate commands on the same GPU)
    into one: records are pooled per problem and variant (each part's reps count as reps), the
    floor uses the median of the parts' bandwidths. Raw files stay in the parts' folders."""
    docs = []
    for d in dirs:
        with open(os.path.join(d, "results.json"), encoding="utf-8") as f:
            docs.append(json.load(f))
    names = {(x.get("environment") or {}).get("gpu", {}).get("name") for x in docs}
    if len(names) > 1:
        sys.stderr.write(f"harness: warning: merging runs from different GPUs: {sorted(map(str, names))}\n")
    first = docs[0]
    problems, seen, order, records, bws, peaks, rooflines = [], set(), [], [], [], [], []
    for d, x in zip(dirs, docs):
        for p in x["problems"]:
            if p["name"] not in seen:
                seen.add(p["name"])
                problems.append(p)
        for name in x.get("order") or [r["variant"] for r in x["rows"]]:
            if name not in order:
                order.append(name)
        for r in x["records"]:
            records.append(dict(r, part=d))
        if (x.get("bandwidth") or {}).get("status") == "ok":
            bws.append(x["bandwidth"])
        if (x.get("gemm_peak") or {}).get("status") == "ok":
            peaks.append(x["gemm_peak"])
        rooflines += [dict(r, part=d) for r in x.get("rooflines") or []]
    bandwidth = None
    if bws:
        per_s = statistics.median(b["bandwidth_bytes_per_s"] for b in bws)
        bandwidth = dict(bws[0], bandwidth_bytes_per_s=per_s, bandwidth_GBps=per_s / 1e9,
                         parts=[b.get("bandwidth_GBps") for b in bws],
                         method=f"median over {len(bws)} parts of: {bws[0].get('method')}")
    gemm_peak = None
    if peaks:  # per dtype, the median over the parts that measured it
        dts = sorted({d for g in peaks for d in g["peaks_tflops"]})
        gemm_peak = dict(peaks[0], peaks_tflops={d: statistics.median(g["peaks_tflops"][d] for g in peaks
                                                                      if d in g["peaks_tflops"]) for d in dts},
                         parts=[g.get("peaks_tflops") for g in peaks],
                         method=f"median over {len(peaks)} parts of: {peaks[0].get('method')}")
    versions = {}
    for x in docs:
        for k, v in (x.get("versions") or {}).items():
            versions.setdefault(k, v)
    doc = dict(first, problems=problems, records=records, bandwidth=bandwidth, versions=versions,
               gemm_peak=gemm_peak, rooflines=rooflines,
               command=command + "  # merging: " + " ; ".join(x.get("command", "?") for x in docs),
               parts=dirs, reps=max(x.get("reps", 1) for x in docs))
    os.makedirs(out_dir, exist_ok=True)
    write_outputs(doc, out_dir, order, final=True)
    print_summary(doc, out_dir)
    return 0


# --------------------------------------------------------------------------------------------------
# progress bar
# --------------------------------------------------------------------------------------------------
class Progress:
    def __init__(self, total: int) -> None:
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()

    def show(self, label: str, finished: bool = False, status: str = "") -> None:
        if finished:
            self.done += 1
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else 0
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{el:5.0f}s eta {eta:4.0f}s {label} {status}")
        if self.tty:
            sys.stderr.write("\r\033[K" + line[:160])
            if finished and self.done == self.total:
                sys.stderr.write("\n")
        elif finished:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


# --------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", help="suite JSON, e.g. bench/suites/reference.json")
    ap.add_argument("--merge", nargs="+", metavar="DIR", help="combine earlier output folders into --out "
                    "(no suite, no GPU): their reps are pooled, the floor uses their bandwidths' median")
    ap.add_argument("--out", help="output folder (default bench/results/<UTC date>-<gpu>)")
    ap.add_argument("--tnrt", help="the tnrt binary (default: build*/tnrt, then PATH)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the whole suite (3)")
    ap.add_argument("--device", help="override the suite's device (cuda, cuda:N, cpu)")
    ap.add_argument("--only", action="append", default=[], help="run only variants/peers matching this glob "
                    "(repeatable); problems with --problem")
    ap.add_argument("--problem", action="append", default=[], help="run only problems matching this glob")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--peer-server", action="append", default=[], metavar="GLOB",
                    help="run the jobs of the peers matching this glob (repeatable) in one long-lived process "
                         "per peer (bench/peers/serve.py) instead of a process per job: Python's start, the "
                         "imports and the CUDA context are paid once; each job's device caches are dropped "
                         "after it. Not for peers that preallocate the GPU (JAX) beside others")
    ap.add_argument("--skip-tnrt", action="store_true")
    ap.add_argument("--no-bandwidth", action="store_true", help="do not measure bandwidth (no byte floor)")
    ap.add_argument("--skip-peak", action="store_true", help="do not measure the GEMM peaks (no flop floor)")
    ap.add_argument("--peaks", metavar="FILE", help="take the GEMM peaks from this bench/gemm_peak.py JSON "
                    "(or an earlier results.json) instead of measuring them")
    ap.add_argument("--roofline", action="store_true", help="for every compiled tnrt variant, one extra "
                    "`tnrt contract ... --step-profile CSV` job per problem: where the time goes (bench/roofline.py)")
    ap.add_argument("--timeout", type=float, help="per-job timeout, s (default: the suite's timeout_s)")
    ap.add_argument("--budget", type=float, help="stop starting jobs after this many seconds (the rest is "
                    "recorded as skipped)")
    ap.add_argument("--warmups", type=int, help="override the suite's warm-ups")
    ap.add_argument("--runs", type=int, help="override the suite's timed runs")
    ap.add_argument("--python", default=sys.executable, help="interpreter for peers (this one)")
    ap.add_argument("--profile", action="store_true", help="run every tnrt variant with --profile (CUPTI kernel "
                    "timeline and synchronization counts; the times are then profiled, not speed figures)")
    ap.add_argument("--pin-cpu", metavar="LIST", help="pin every job to these CPUs (e.g. 2 or 2,3): host-bound "
                    "peers such as torch.einsum otherwise drift with where the scheduler puts them")
    ap.add_argument("--dry-run", action="store_true", help="print the jobs' command lines and exit")
    args = ap.parse_args(argv)

    started = utc_now()
    if args.merge:
        if not args.out:
            ap.error("--merge needs --out")
        return merge(args.merge, args.out, shlex.join(["python3", "bench/harness.py"] + list(argv or sys.argv[1:])))
    if not args.suite:
        ap.error("a suite is needed (or --merge DIR...)")
    if argv is None:
        command = shlex.join(["python3", os.path.relpath(os.path.abspath(sys.argv[0]), os.getcwd())] + sys.argv[1:])
    else:
        command = shlex.join(["python3", "bench/harness.py"] + list(argv))
    suite = load_suite(args.suite)
    if args.warmups is not None:
        suite["warmups"] = args.warmups
    if args.runs is not None:
        suite["runs"] = args.runs
    if args.profile:
        suite["profile"] = True
    device = args.device or suite["device"]
    timeout = args.timeout or float(suite["timeout_s"])
    tnrt = find_tnrt(args.tnrt)

    problems = [p for p in suite.get("problems", [])
                if not args.problem or any(fnmatch.fnmatch(p["name"], g) for g in args.problem)]
    selected = lambda name: not args.only or any(fnmatch.fnmatch(name, g) for g in args.only)  # noqa: E731
    variants = [] if args.skip_tnrt else [v for v in suite.get("variants", []) if selected(v["name"])]
    peers = [] if args.skip_peers else [v for v in suite.get("peers", []) if selected(v["name"])]
    order = [v["name"] for v in variants] + [v["name"] for v in peers]

    prob_objects: dict[str, common.Problem] = {}
    for p in problems:
        prob = problem_object(p)
        prob_objects[p["name"]] = prob
        s = prob.summary(p["dtype"])
        p["bytes_read_written"] = s["bytes_read_written"]
        p["flops"] = roofline.total_flops(prob, p["dtype"])
        p["summary"] = s
        p["summary_text"] = (f"{s['inputs']} inputs, {s['labels']} labels, {s['steps']} steps, up to "
                             f"{s['max_labels_per_step']} labels per step, largest intermediate "
                             f"{s['largest_intermediate_elements']} elements; "
                             f"{s['bytes_read_written'] / 1e9:.3f} GB read+written and "
                             f"{p['flops'] / 1e12:.4g} TFLOP over all steps")
        f = p["fill"]
        p["fill_text"] = common.Fill(f["kind"], float(f.get("value", common.REFERENCE_FILL)), int(f.get("seed", 0)),
                                     float(f.get("lo", 0)), float(f.get("hi", 1)), int(f.get("stream_base", 0))).describe()

    # the jobs: every rep runs every variant and peer on every problem it applies to
    jobs = []
    for rep in range(1, args.reps + 1):
        for p in problems:
            for v in variants:
                if applies(v, p):
                    jobs.append(("tnrt", rep, p, v))
            for v in peers:
                if applies(v, p):
                    jobs.append(("peer", rep, p, v))
    # --roofline: one step-profile job per problem and compiled variant, after the timed reps
    if args.roofline:
        for p in problems:
            for v in variants:
                if applies(v, p) and v.get("mode") == "compiled":
                    jobs.append(("roofline", 0, p, v))

    gpu = gpu_info() if device != "cpu" else {"name": "cpu"}
    gpu_slug = slug(gpu.get("name") or "")
    out_dir = args.out
    if not out_dir:
        base = os.path.join(HERE, "results", f"{started:%Y-%m-%d}-{gpu_slug if gpu.get('name') else 'nogpu'}")
        out_dir, k = base, 2
        while os.path.exists(out_dir) and not args.dry_run:
            out_dir, k = f"{base}-{k}", k + 1
    raw = os.path.join(out_dir, "raw")

    def job_command(kind, rep, p, v, jpath):
        if kind == "roofline":  # the variant's own command, profiled per launch, never under CUPTI
            cmd = job_command("tnrt", rep, dict(p), dict(v, profile=False), jpath)
            return cmd + ["--step-profile", jpath[:-len(".json")] + ".csv"] if jpath.endswith(".json") else \
                cmd + ["--step-profile", jpath + ".csv"]
        if kind == "tnrt":
            fv = fill_values(p)
            fill_args = expand(suite["tnrt"]["fill_args"][p["fill"]["kind"]], fv)
            file_arg = resolve(p["file"]) if p.get("file") else p["expression"]
            problem_args = ["--shapes", p.get("shapes", "")] if p.get("expression") else []
            if "bond_dim" in p:
                problem_args += ["--bond-dim", str(p["bond_dim"])]
            values = dict(fv, tnrt=tnrt or "tnrt", file=file_arg, shapes=p.get("shapes", ""),
                          problem_args=problem_args,
                          device=device, dtype=p["dtype"], mode=v.get("mode", "eager"),
                          warmups=str(suite["warmups"]), runs=str(suite["runs"]), json=jpath,
                          fill_args=fill_args,
                          options=[str(x) for x in v.get("options", [])] + (["--profile"] if profiled(suite, v) else []),
                          problem=p["name"])
            template = p.get("tnrt_command") or suite["tnrt"]["command"]
            return expand(template, values)
        script = resolve(v["script"])
        return ([args.python, script] + peer_problem_args(p) + [str(x) for x in v.get("args", [])] +
                ["--device", device, "--warmups", str(suite["warmups"]), "--runs", str(suite["runs"]),
                 "--json", jpath])

    if args.dry_run:
        for kind, rep, p, v in jobs:
            print(shlex.join(job_command(kind, rep, p, v, f"<{slug(p['name'])}-{slug(v['name'])}.json>")))
        return 0

    os.makedirs(raw, exist_ok=True)
    cpus = None
    if args.pin_cpu:
        try:
            cpus = {int(c) for c in args.pin_cpu.split(",")}
            os.sched_getaffinity(0)
        except (ValueError, AttributeError) as exc:
            ap.error(f"--pin-cpu {args.pin_cpu}: {exc}")
        if not cpus <= os.sched_getaffinity(0):
            ap.error(f"--pin-cpu {args.pin_cpu}: not among this process's CPUs {sorted(os.sched_getaffinity(0))}")
        # The harness itself: every job it starts inherits the affinity, and its host probe runs where
        # the jobs run.
        os.sched_setaffinity(0, cpus)
    runner = Runner()

    def on_signal(signum, _frame):
        runner.stopping = True
        runner.kill_all()
        sys.stderr.write(f"\nharness: signal {signum}: stopping after writing what was measured\n")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    doc = {"suite": {k: suite[k] for k in suite if k not in ("problems",)}, "suite_file": args.suite,
           "command": command, "cwd": os.getcwd(), "started_utc": started.isoformat(timespec="seconds"),
           "device": device, "reps": args.reps, "tnrt": tnrt, "problems": problems,
           "environment": {"gpu": gpu, "git": git_info(), "host": os.uname().nodename,
                           "python": sys.version.split()[0], "pinned_cpus": sorted(cpus) if cpus else None},
           "versions": {}, "bandwidth": None, "gemm_peak": None, "records": [], "rooflines": [], "rows": []}
    if args.peer_server:
        doc["peer_server"] = list(args.peer_server)
    if tnrt is None and variants:
        sys.stderr.write("harness: no tnrt binary found (build it, or pass --tnrt); its variants will fail\n")

    def write_all(final: bool = False) -> None:
        write_outputs(doc, out_dir, order, final)

    t_start = time.monotonic()
    # bandwidth, once, before everything else
    if not args.no_bandwidth:
        bpath = os.path.join(raw, "bandwidth.json")
        bcmd = [args.python, os.path.join(HERE, "bandwidth.py"), "--device", device, "--json", bpath]
        bcmd += suite.get("bandwidth_args", []) if device != "cpu" else ["--size-mib", "64", "--repeats", "5"]
        sys.stderr.write("harness: measuring copy bandwidth ...\n")
        r = runner.run(bcmd, min(timeout, 300), bpath + ".stdout", bpath + ".stderr")
        bw = None
        if os.path.exists(bpath):
            with open(bpath, encoding="utf-8") as f:
                bw = json.load(f)
        if bw is None:
            bw = {"status": "failed", "error": f"exit {r.get('rc')}: " + tail(read_text(bpath + ".stderr"), 500)}
        bw["command"] = shlex.join(bcmd)
        doc["bandwidth"] = bw
        doc["versions"].update({f"bandwidth:{k}": v for k, v in (bw.get("versions") or {}).items()})
        sys.stderr.write(f"harness: bandwidth {bw.get('bandwidth_GBps', 0):.1f} GB/s\n" if bw.get("status") == "ok"
                         else f"harness: bandwidth failed: {bw.get('error')}\n")
    # the GEMM peaks of the dtypes used, once, before the jobs (the flop floor)
    if args.peaks:
        doc["gemm_peak"] = load_peaks(args.peaks)
    elif not args.skip_peak and not runner.stopping:
        doc["gemm_peak"] = measure_peaks(runner, args.python, device, sorted({p["dtype"] for p in problems}),
                                         suite, raw, timeout)

    for p in problems:
        if runner.stopping:
            break
        ref = reference_for(p, out_dir, runner, args.python, timeout)
        p["reference_value"] = ref["value"]
        p["reference_source"] = ref["source"]
        v = ref["value"]
        p["reference_text"] = (None if v is None else (json.dumps(v) if not isinstance(v, dict) else
                               json.dumps(v.get("scalar", v.get("norm")))) + f" ({ref['source']})")
    write_all()

    bar = Progress(len(jobs))
    for kind, rep, p, v in jobs:
        name = f"{'roofline' if kind == 'roofline' else f'r{rep}'} {p['name']} / {v['name']}"
        base = {"kind": kind, "rep": rep, "problem": p["name"], "dtype": p["dtype"], "variant": v["name"],
                "mode": v.get("mode") if kind in ("tnrt", "roofline") else None, "timeout_s": timeout,
                "profiled": kind == "tnrt" and profiled(suite, v)}
        if runner.stopping or (args.budget and time.monotonic() - t_start > args.budget):
            rec = dict(base, status="skipped", error="stopped by signal" if runner.stopping else
                       f"budget of {args.budget:.0f} s spent")
            doc["rooflines" if kind == "roofline" else "records"].append(rec)
            bar.show(name, True, "skipped")
            continue
        stem = os.path.join(raw, f"roofline-{slug(p['name'])}-{slug(v['name'])}" if kind == "roofline"
                            else f"rep{rep}-{slug(p['name'])}-{slug(v['name'])}")
        jpath = stem + ".json"
        for old in (jpath, stem + ".csv"):
            if os.path.exists(old):
                os.remove(old)
        cmd = job_command(kind, rep, p, v, jpath)
        base["command"] = shlex.join(cmd)
        bar.show(name)
        env = dict(os.environ)
        if kind in ("tnrt", "roofline") and os.path.isdir(CUTENSOR_STAGED):  # where ../shared/gpu-host/unpack.sh puts cuTENSOR
            env["LD_LIBRARY_PATH"] = CUTENSOR_STAGED + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        env.update({str(k): str(val) for k, val in (v.get("env") or {}).items()})
        base["host_probe_ms"] = host_probe_ms()
        if kind in ("tnrt", "roofline") and not tnrt:
            res = {"spawn_error": "no tnrt binary (pass --tnrt)"}
        elif kind == "peer" and any(fnmatch.fnmatch(v["name"], g) for g in args.peer_server):
            res = runner.serve(v["name"], cmd, timeout, stem + ".stdout", stem + ".stderr", env=env)
        else:
            res = runner.run(cmd, timeout, stem + ".stdout", stem + ".stderr", env=env)
        rec = collect(base, res, jpath, stem + ".stdout", stem + ".stderr")
        if "server_pid" in res:
            rec["served_by_pid"] = res["server_pid"]
        if runner.stopping and rec.get("status") != "ok":
            rec.update(status="interrupted", error="stopped by signal while running")
        # the harness's own verification against the problem's reference (tolerance rule of the method)
        if rec.get("status") == "ok":
            ver = common.verify(rec.get("result"), p.get("reference_value"))
            if ver.get("verified") is None:
                ver = {"verified": rec.get("tool_verified"), "reason": "tool's own verdict (" + ver.get("reason", "") + ")"}
            rec["verified"] = ver.pop("verified")
            rec["verification"] = ver
        if kind == "roofline":
            doc["rooflines"].append(fold_roofline(rec, prob_objects[p["name"]], p, doc, stem + ".csv"))
            st = rec.get("status")
            bar.show(name, True, f"roofline {st}" if st == "ok" else f"roofline {st}: {str(rec.get('error', ''))[:80]}")
            write_all()
            continue
        rep_obj = rec.get("report") or {}
        prefix = rep_obj.get("tool") or ("tnrt" if kind == "tnrt" else v["name"])
        for k, val in (rep_obj.get("versions") or {}).items():
            doc["versions"].setdefault(f"{prefix}:{k}", val)
        doc["records"].append(rec)
        st = rec.get("status")
        note = f"{st} {fmt(rec.get('median_ms'))} ms" if st == "ok" else f"{st}: {str(rec.get('error', ''))[:80]}"
        if st == "ok" and rec.get("verified") is False:
            note += " VERIFICATION FAILED"
        bar.show(name, True, note)
        write_all()

    runner.close_servers()
    doc["environment"]["gpu_after"] = gpu_info() if device != "cpu" else {}
    write_all(final=True)
    print_summary(doc, out_dir)
    failed = [r for r in doc["records"] + doc["rooflines"] if r.get("status") not in ("ok", "not_supported")]
    bad_ver = [r for r in doc["records"] if r.get("verified") is False]
    return 1 if bad_ver else (3 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
