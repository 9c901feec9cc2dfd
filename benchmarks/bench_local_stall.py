"""Does the in-process llama.cpp conductor stall? (issue 32.2)

    python benchmarks/bench_local_stall.py [--loads idle loaded] [--runs eval endpoint] [--repo PATH] [--json out.json]

Two everyday runs, each in a fresh process (so the first call includes starting the server):

* eval:     `inspect eval tasks/math500.py --model conductor/sim --limit 2` (as `eval()`)
* endpoint: the first answer of `python -m workers.serve --pool sim` (its app, in process)

on an idle machine and on a loaded one (a CPU-bound process beside it, started here). Per run:
wall seconds, CPU-seconds of the process (llama.cpp's threads included), and the longest
single conductor call: its wall time, the server's own prompt + generation time for it
(`metadata["llama_timings"]`), its wait for a slot in the client (`slot_wait_s`: the first
call on a cold server runs alone, so that the other reuses its cached prompt), the rest
(neither), and its attempts. Goal: no call waits more than its generation time plus
queueing for a free slot, i.e. no attempt abandoned as stalled. `--repo` runs another checkout's code (e.g.
the code before the fix); a run is cut at `--cap` seconds. The machine is shared: the load
average is printed with each row.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workers.providers import capabilities

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Which is prime?\n\nA) 4\nB) 6\nC) 7\nD) 9"
SIMULATION = {"target": "C", "domain": "mmlu", "choices": ["4", "6", "7", "9"], "item_id": "bench"}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _longest_call(events: list) -> dict:
    """The longest conductor (local model) call among model events."""
    calls = []
    for e in events:
        if getattr(e, "event", None) != "model" or not capabilities(e.model).local_server:
            continue
        wall = (e.completed - e.timestamp).total_seconds() if e.completed else e.working_time
        timings = (e.output.metadata or {}).get("llama_timings")  # absent on a failed call
        generation = timings["prompt_s"] + timings["generation_s"] if timings else None
        calls.append({"wall_s": wall, "generation_s": generation, "slot_wait_s": (timings or {}).get("slot_wait_s"),
                      "prompt_tokens": (timings or {}).get("prompt_tokens"),
                      "tokens": (timings or {}).get("generated_tokens"),
                      "attempts": 1 + (e.retries or 0), "error": e.error})  # fmt: skip
    return max(calls, key=lambda c: c["wall_s"], default={})


def child_eval() -> dict:
    from inspect_ai import eval as inspect_eval

    start = time.perf_counter()
    # the task file of the checkout the child runs in (cwd)
    (log,) = inspect_eval("tasks/math500.py", model="conductor/sim", limit=2, display="none")
    wall = time.perf_counter() - start
    events = [e for s in log.samples or [] for e in s.events]
    return {"wall_s": wall, "cpu_s": _cpu_seconds(), "status": log.status, "longest": _longest_call(events)}


def child_endpoint() -> dict:
    import asyncio

    import httpx
    from inspect_ai.model import get_model

    from conductor_model.serve import make_app

    async def first_answer() -> dict:
        app = make_app(get_model("conductor/sim"))
        body = {"model": "conductor/sim", "messages": [{"role": "user", "content": QUESTION}],
                "simulation": SIMULATION, "trace": True}  # fmt: skip
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=3600) as client:
            return (await client.post("/v1/chat/completions", json=body)).json()

    start = time.perf_counter()
    answer = asyncio.run(first_answer())
    wall = time.perf_counter() - start
    calls = (((answer.get("conductor") or {}).get("round") or {}).get("attempts")) or []
    longest = {"wall_s": sum(c.get("latency") or 0 for c in calls), "generation_s": _server_seconds(),
               "attempts": len(calls)}  # fmt: skip  # the round's conductor calls, summed
    status = "success" if "choices" in answer else str(answer)[:200]
    return {"wall_s": wall, "cpu_s": _cpu_seconds(), "status": status, "longest": longest}


def _server_seconds() -> float:
    """Prompt + generation seconds the in-process llama.cpp server spent (its /metrics)."""
    import urllib.request

    from workers import local_provider

    total = 0.0
    for server in local_provider._SERVERS.values():
        with urllib.request.urlopen(server.address + "/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name in ("llamacpp:prompt_seconds_total", "llamacpp:tokens_predicted_seconds_total"):
                    total += float(value)
    return total


def run_child(kind: str, repo: Path, cap: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(repo), "CONDUCTOR_BENCH_STALL_REPO": str(repo)}
    tmp = tempfile.mkdtemp(prefix="bench-stall-")
    env.setdefault("XDG_DATA_HOME", os.path.join(tmp, "xdg"))
    env["INSPECT_LOG_DIR"] = os.path.join(tmp, "logs")
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, __file__, "--child", kind], cwd=repo, env=env, capture_output=True,
                             text=True, timeout=cap)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"wall_s": time.perf_counter() - start, "status": f"cut at {cap:.0f} s", "longest": {}}
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        return {"wall_s": time.perf_counter() - start, "status": f"failed: {out.stderr.strip()[-300:]}", "longest": {}}
    return json.loads(lines[-1])


def burner() -> subprocess.Popen:
    """Another CPU-bound process beside the run (one core's worth)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def measure(loads: list[str], repo: Path, cap: float, runs: list[str]) -> list[dict]:
    rows = []
    for load in loads:
        for kind in runs:
            other = burner() if load == "loaded" else None
            try:
                before = os.getloadavg()[0]
                result = run_child(kind, repo, cap)
            finally:
                if other is not None:
                    other.kill()
                    other.wait()
            rows.append({"run": kind, "load": load, "loadavg": f"{before:.1f}-{os.getloadavg()[0]:.1f}", **result})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _num(value: object, fmt: str = ".1f") -> str:
    return format(value, fmt) if isinstance(value, int | float) and value == value else "-"


def table(rows: list[dict]) -> str:
    lines = [
        "| run | machine | load avg (start-end) | wall s | CPU s | longest call s | its prompt+generation s "
        "| its slot wait s | its other wait s | its attempts | status |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        c = r.get("longest") or {}
        slot_wait = c.get("slot_wait_s") or 0.0
        wait = c["wall_s"] - c["generation_s"] - slot_wait if c.get("generation_s") is not None else None
        lines.append(
            f"| {r['run']} | {r['load']} | {r['loadavg']} | {_num(r.get('wall_s'))} | {_num(r.get('cpu_s'))} "
            f"| {_num(c.get('wall_s'))} | {_num(c.get('generation_s'))} | {_num(c.get('slot_wait_s'))} | {_num(wait)} "
            f"| {c.get('attempts', '-')} | {r['status']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", nargs="+", default=["idle", "loaded"], choices=["idle", "loaded"])
    parser.add_argument("--runs", nargs="+", default=["eval", "endpoint"], choices=["eval", "endpoint"])
    parser.add_argument("--repo", type=Path, default=ROOT, help="checkout whose code runs (default: this one)")
    parser.add_argument("--cap", type=float, default=900.0, help="seconds before a run is cut")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--child", choices=["eval", "endpoint"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, os.environ.get("CONDUCTOR_BENCH_STALL_REPO", str(ROOT)))
        print(json.dumps((child_eval if args.child == "eval" else child_endpoint)()))
        return
    rows = measure(args.loads, args.repo.resolve(), args.cap, args.runs)
    print(f"conductor/sim (SmolLM2-135M conductor in-process), code from {args.repo}; {os.cpu_count()} CPUs\n")
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
