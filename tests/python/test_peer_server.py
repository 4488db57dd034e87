"""bench/harness.py --peer-server (bench/peers/serve.py) on the host, no GPU: a peer's jobs run in one
long-lived process per peer, give the same reports as a process per job, and a job that hangs past
its timeout or ends the process with os._exit is reported as such without losing the jobs after it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
PY = sys.executable

# A stand-in peer: reports its pid; the problem's label decides what else it does.
FAKE_PEER = r'''
import argparse, json, os, sys, time
def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("file"); ap.add_argument("--json"); ap.add_argument("--label", default="")
    ap.add_argument("--device"); ap.add_argument("--warmups"); ap.add_argument("--runs"); ap.add_argument("--dtype")
    ap.add_argument("--fill"); ap.add_argument("--value")
    a = ap.parse_args(argv)
    print("peer stdout line")  # must land in the job's stdout file, not in the server's replies
    os.write(2, b"peer stderr bytes\n")
    if "hang" in a.label:
        time.sleep(60)
    if "exit" in a.label:
        with open(a.json, "w") as f:
            json.dump({"tool": "fake", "status": "not_supported", "error": "gave up", "pid": os.getpid()}, f)
        os._exit(2)
    if "raise" in a.label:
        raise RuntimeError("boom from the peer")
    with open(a.json, "w") as f:
        json.dump({"tool": "fake", "status": "ok", "times_ms": [1.0, 1.0], "median_ms": 1.0,
                   "result": {"scalar": 0.25}, "verified": True, "pid": os.getpid()}, f)
    return 0
if __name__ == "__main__":
    sys.exit(main())
'''


def make_suite(tmp_path, names, peer_timeout=None):
    fake = tmp_path / "fake_peer.py"
    fake.write_text(FAKE_PEER)
    with open(os.path.join(BENCH, "suites", "smoke.json"), encoding="utf-8") as f:
        suite = json.load(f)
    tiny = next(p for p in suite["problems"] if p["name"] == "tiny-tree")
    tiny["file"] = os.path.join(ROOT, tiny["file"])
    suite["name"] = "peer-server"
    suite["problems"] = [dict(tiny, name=n) for n in names]
    suite["variants"] = []
    suite["peers"] = [{"name": "fake", "script": str(fake), "args": []},
                      {"name": "numpy", "script": os.path.join(BENCH, "peers", "common.py"), "args": []}]
    if peer_timeout:
        suite["timeout_s"] = peer_timeout
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    return str(path)


def harness(*args, timeout=180):
    return subprocess.run([PY, os.path.join(BENCH, "harness.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def records(out):
    d = json.loads((out / "results.json").read_text())
    return d, {(r["problem"], r["variant"]): r for r in d["records"]}


COMMON = ["--device", "cpu", "--reps", "1", "--skip-peak", "--no-bandwidth"]


def test_served_jobs_share_one_process_and_match(tmp_path):
    suite = make_suite(tmp_path, ["tiny-a", "tiny-b", "tiny-c"])
    out1, out2 = tmp_path / "served", tmp_path / "spawned"
    r = harness(suite, *COMMON, "--peer-server", "*", "--out", str(out1))
    assert r.returncode == 0, r.stdout + r.stderr
    r = harness(suite, *COMMON, "--out", str(out2))
    assert r.returncode == 0, r.stdout + r.stderr
    d1, served = records(out1)
    d2, spawned = records(out2)
    assert d1["peer_server"] == ["*"] and "peer_server" not in d2
    assert set(served) == set(spawned) and len(served) == 6
    for k, rec in served.items():
        assert rec["status"] == "ok" and rec["verified"] is True, rec
        assert rec["result"] == spawned[k]["result"]
        assert rec["served_by_pid"] and "served_by_pid" not in spawned[k]
    # one process per peer: the fake's three jobs report one pid, the numpy peer's another
    pids = {served[(n, "fake")]["report"]["pid"] for n in ("tiny-a", "tiny-b", "tiny-c")}
    assert len(pids) == 1 and pids == {served[("tiny-a", "fake")]["served_by_pid"]}
    assert served[("tiny-a", "numpy")]["served_by_pid"] not in pids
    spawned_pids = {spawned[(n, "fake")]["report"]["pid"] for n in ("tiny-a", "tiny-b", "tiny-c")}
    assert len(spawned_pids) == 3
    # what the job printed went to its own files
    raw = out1 / "raw"
    assert "peer stdout line" in (raw / "rep1-tiny-b-fake.stdout").read_text()
    assert "peer stderr bytes" in (raw / "rep1-tiny-b-fake.stderr").read_text()


def test_served_job_that_hangs_raises_or_exits(tmp_path):
    suite = make_suite(tmp_path, ["tiny-hang", "tiny-raise", "tiny-exit", "tiny-after"])
    out = tmp_path / "out"
    r = harness(suite, *COMMON, "--only", "fake", "--peer-server", "fake", "--timeout", "5", "--out", str(out))
    assert r.returncode == 3, r.stdout + r.stderr  # some jobs failed, none failed verification
    _, recs = records(out)
    hang, boom, ex, after = (recs[(n, "fake")] for n in ("tiny-hang", "tiny-raise", "tiny-exit", "tiny-after"))
    assert hang["status"] == "timeout" and hang["wall_s"] < 30, hang
    assert boom["status"] == "failed" and boom["rc"] == 1
    assert "RuntimeError: boom from the peer" in boom["stderr_tail"]
    assert ex["status"] == "not_supported" and ex["rc"] == 2, ex
    assert after["status"] == "ok" and after["verified"] is True, after
    # the hang killed its server; the raise did not end the next one; os._exit ended it
    assert hang["served_by_pid"] != boom["served_by_pid"]
    assert boom["served_by_pid"] == ex["served_by_pid"] != after["served_by_pid"]


def test_server_survives_a_job_it_cannot_load(tmp_path):
    out, err = tmp_path / "o", tmp_path / "e"
    jobs = json.dumps({"script": "/nonexistent/peer.py", "argv": [], "stdout": str(out), "stderr": str(err)}) + "\n"
    fake = tmp_path / "fake_peer.py"
    fake.write_text(FAKE_PEER)
    js = tmp_path / "r.json"
    jobs += json.dumps({"script": str(fake), "argv": [str(fake), "--json", str(js), "--label", "x"],
                        "stdout": str(out), "stderr": str(err)}) + "\n"
    p = subprocess.run([PY, os.path.join(BENCH, "peers", "serve.py")], input=jobs, capture_output=True,
                       text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert [json.loads(x)["rc"] for x in p.stdout.splitlines()] == [1, 0]
    assert json.loads(js.read_text())["status"] == "ok"


def test_signal_stops_the_harness_and_its_servers(tmp_path):
    """SIGTERM while a served job hangs: the harness kills the server at once (it does not wait for
    the job or for the server to see its stdin close), writes what it has, and exits."""
    import signal
    import time
    suite = make_suite(tmp_path, ["tiny-a", "tiny-hang", "tiny-after"])
    out = tmp_path / "out"
    p = subprocess.Popen([PY, os.path.join(BENCH, "harness.py"), suite, *COMMON, "--only", "fake",
                          "--peer-server", "fake", "--timeout", "120", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    hang_json = out / "raw" / "rep1-tiny-hang-fake.stdout"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (hang_json.exists() and "peer stdout" in hang_json.read_text()):
        time.sleep(0.2)
    assert hang_json.exists(), "the hanging job never started"
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 3, err
    assert time.monotonic() - t0 < 8, "the hanging server was not killed on the signal"
    _, recs = records(out)
    assert recs[("tiny-a", "fake")]["status"] == "ok"
    hang = recs[("tiny-hang", "fake")]
    assert hang["status"] == "interrupted", hang
    assert recs[("tiny-after", "fake")]["status"] == "skipped"
    pid = recs[("tiny-a", "fake")]["served_by_pid"]
    time.sleep(0.5)
    try:
        os.kill(pid, 0)
        alive = not open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive, f"server {pid} outlived the harness"
