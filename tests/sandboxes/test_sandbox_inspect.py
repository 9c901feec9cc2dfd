"""The Inspect sandbox type `bwrap` and InspectSandboxRunner, through real eval() runs."""

from __future__ import annotations

import os

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import OutputLimitExceededError, sandbox
from waits import ROOMY_S

import sandboxes.inspect_bwrap as ib
from sandboxes.bwrap import check_bwrap
from sandboxes.inspect_bwrap import BwrapSandboxConfig, BwrapSandboxEnvironment, InspectSandboxRunner

SECRET_NAME = "CONDUCTOR_BENCH_TEST_SECRET"
SECRET = "sk-inspect-do-not-leak-93ab"
INNER = (
    "import os; d = open('sub/dir/in.txt', newline='').read(); open('out.bin', 'wb').write(bytes([0, 255]));"
    "print(repr(d), os.getuid(), sorted(os.environ), os.environ.get('MINE'))"
)


@pytest.fixture(autouse=True, scope="module")
def _bwrap_present():
    check_bwrap()


def run_task(solver_fn, scorer_fn=None, sandbox_spec="bwrap"):
    @scorer(metrics=[accuracy()])
    def noop_scorer():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=1)

        return score

    task = Task(dataset=[Sample(input="x")], solver=solver_fn, scorer=scorer_fn or noop_scorer(), sandbox=sandbox_spec)
    [log] = eval(task, model="mockllm/model", display="none", log_level="warning")
    assert log.status == "success", log.error
    return log


def test_exec_and_file_round_trip(monkeypatch):
    monkeypatch.setenv(SECRET_NAME, SECRET)
    seen: dict = {}

    @solver
    def probe():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            sb = sandbox()
            seen["type"] = type(sb.as_type(BwrapSandboxEnvironment)).__name__
            r = await sb.exec(["python3", "-c", "print(1)"])
            seen["print"] = (r.success, r.returncode, r.stdout)
            await sb.write_file("sub/dir/in.txt", "line1\r\nline2\n")
            r = await sb.exec(
                ["python3", "-c", INNER],
                env={"MINE": "given"},
            )
            seen["inner"] = r.stdout
            seen["roundtrip"] = await sb.read_file("sub/dir/in.txt")
            seen["binary"] = await sb.read_file("out.bin", text=False)
            seen["abs"] = await sb.read_file("/sandbox/sub/dir/in.txt")
            r = await sb.exec(["python3", "-c", "import sys; print(sys.stdin.read()[::-1])"], input="abc")
            seen["stdin"] = r.stdout
            r = await sb.exec(["pwd"], cwd="sub")
            seen["cwd"] = r.stdout.strip()
            r = await sb.exec(["python3", "-c", "import sys; sys.exit(4)"])
            seen["fail"] = (r.success, r.returncode)
            try:
                await sb.exec(["sleep", "30"], timeout=1)
                seen["timeout"] = "no"
            except TimeoutError:
                seen["timeout"] = "raised"
            for bad in ("../escape.txt", "/etc/passwd"):
                try:
                    await sb.write_file(bad, "x")
                    seen[bad] = "written"
                except PermissionError:
                    seen[bad] = "refused"
            # a symlink planted by sandboxed code must not lead read_file out of the work dir
            await sb.exec(["ln", "-s", "/etc/hostname", "link"])
            try:
                await sb.read_file("link")
                seen["symlink"] = "followed"
            except PermissionError:
                seen["symlink"] = "refused"
            seen["dir"] = sb.as_type(BwrapSandboxEnvironment).directory
            return state

        return solve

    run_task(probe())
    assert seen["type"] == "BwrapSandboxEnvironment"
    assert seen["print"] == (True, 0, "1\n")
    assert "'line1\\r\\nline2\\n'" in seen["inner"] and "given" in seen["inner"]
    assert SECRET_NAME not in seen["inner"] and " 0 " not in seen["inner"]
    assert seen["roundtrip"] == "line1\r\nline2\n" == seen["abs"]
    assert seen["binary"] == b"\x00\xff"
    assert seen["stdin"] == "cba\n"
    assert seen["cwd"] == "/sandbox/sub"
    assert seen["fail"] == (False, 4)
    assert seen["timeout"] == "raised"
    assert seen["../escape.txt"] == seen["/etc/passwd"] == "refused"
    assert seen["symlink"] == "refused"
    assert not os.path.exists(seen["dir"]), "sample_cleanup must remove the work dir"
    assert not any(BwrapSandboxEnvironment._live_dirs.values())


def test_runner_adapter_maps_results():
    results: dict = {}

    @solver
    def no_generate():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def code_scorer():
        async def score(state: TaskState, target: Target) -> Score:
            runner = InspectSandboxRunner()
            results["ok"] = await runner.run(
                ["python3", "sol.py"],
                files={"sol.py": "print(sum(map(int, input().split())))"},
                stdin="2 3",
                timeout=ROOMY_S,
            )
            results["isolated"] = await runner.run(["ls", "-A"], timeout=ROOMY_S)  # each run has its own dir
            results["timeout"] = await runner.run(["python3", "-c", "while True: pass"], timeout=1)
            results["flood"] = await runner.run(["python3", "-c", "print('x' * 30_000_000)"], timeout=ROOMY_S)
            return Score(value=1 if results["ok"].ok else 0)

        return score

    log = run_task(no_generate(), code_scorer())
    assert log.results.scores[0].metrics["accuracy"].value == 1
    ok = results["ok"]
    assert (ok.returncode, ok.stdout, ok.timed_out) == (0, "5\n", False)
    assert results["isolated"].stdout.split() == [".keep"]  # not sol.py
    assert results["timeout"].timed_out and results["timeout"].returncode is None
    flood = results["flood"]
    assert flood.output_truncated and not flood.ok and 0 < len(flood.stdout) <= 10 * 1024**2


def test_config_limits_apply():
    seen = {}

    @solver
    def probe():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            r = await sandbox().exec(["python3", "-c", "import resource as r; print(r.getrlimit(r.RLIMIT_AS)[0])"])
            seen["as"] = int(r.stdout)
            return state

        return solve

    run_task(probe(), sandbox_spec=("bwrap", BwrapSandboxConfig(memory_bytes=2 * 1024**3)))
    assert seen["as"] == 2 * 1024**3


async def test_exec_output_limit_raises(tmp_path):
    env = BwrapSandboxEnvironment(str(tmp_path), BwrapSandboxConfig())
    with pytest.raises(OutputLimitExceededError):
        await env.exec(["python3", "-c", "print('y' * 20_000_000)"], timeout=ROOMY_S)


def test_registered_and_cheap_import():
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    assert registry_find_sandboxenv("bwrap") is BwrapSandboxEnvironment
    assert ib.__name__ == "sandboxes.inspect_bwrap"
