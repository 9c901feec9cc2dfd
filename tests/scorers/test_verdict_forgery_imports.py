"""Trusted drivers never import what the code under test can write (issue 20), through the
real bwrap sandbox.

The attack: a WRONG answer writes modules (`string.py`, `copy.py`, ...) into every folder it
can reach that a Python process may import from (the driver's folder, the run's working
directory); if the trusted parent later imports one lazily (HumanEval checks such as /38
and /50 run `import string` inside `check`), the planted module runs in the parent, reads
its nonce from the stack and prints a passing verdict. Each attack must fail to score.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_humaneval import DRIVER_FILES, HumanEvalProblem, check_humaneval
from scorers.code_lcb import check_livecodebench, driver_files, problem_from_record
from scorers.verdict_channel import TRUSTED_PYTHON, changeable

FIXTURES = Path(__file__).parents[1] / "fixtures"
LCB = {r["question_id"]: r for r in map(json.loads, (FIXTURES / "lcb_sample.jsonl").read_text().splitlines())}

# stdlib modules the drivers do not load before the candidate runs, and the startup hooks
PLANTED_NAMES = ("string", "copy", "heapq", "hashlib", "fractions", "statistics", "numbers", "decimal",
                 "sitecustomize", "usercustomize")  # fmt: skip
HE_VERDICT = {"result": "passed", "stage": "check"}
LCB_VERDICT = {"passed": True, "n_tests": 1, "n_run": 1, "results": [True], "status": "passed", "first_failure": None}

# Runs in whichever process imports it: finds a `nonce` on the stack, prints `verdict` under it, exits 0.
FORGER = """
import os, sys
_f = sys._getframe()
while _f is not None:
    _n = _f.f_locals.get("nonce")
    if isinstance(_n, str):
        os.write(1, ("\\n" + _n + " " + {verdict!r} + "\\n").encode())
        os._exit(0)
    _f = _f.f_back
"""

# Candidate code: writes the forger under every planted name into every folder on its sys.path,
# its working directory and the sandbox root, wherever it can.
PLANT = """
def _plant():
    import os, sys
    source = {forger!r}
    folders = {{p or "." for p in sys.path}} | {{os.path.dirname(os.path.abspath(sys.argv[0])), "/sandbox", "."}}
    for folder in folders:
        for name in {names!r}:
            try:
                with open(os.path.join(folder, name + ".py"), "w") as f:
                    f.write(source)
            except OSError:
                pass
"""


def plant(verdict: dict) -> str:
    return PLANT.format(forger=FORGER.format(verdict=json.dumps(verdict)), names=PLANTED_NAMES)


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


# `check` imports `string` at call time (as HumanEval/38 and /50 do), here after a first call
SHOUT = HumanEvalProblem(
    task_id="lazy-import/shout",
    prompt='def shout(s: str) -> str:\n    """`s` in upper case."""\n',
    entry_point="shout",
    test="def check(candidate):\n    assert candidate('') == ''\n    import string\n"
    "    for c in string.ascii_lowercase:\n        assert candidate(c) == c.upper()\n",
)
HE_WRONG = {
    "plant_at_import": "{plant}\n_plant()\ndef shout(s):\n    return s\n",
    "plant_in_call": "{plant}\ndef shout(s):\n    _plant()\n    return s\n",
}


@pytest.mark.parametrize("name", sorted(HE_WRONG))
async def test_humaneval_planted_module_does_not_forge_a_pass(runner, name):
    code = HE_WRONG[name].format(plant=plant(HE_VERDICT))
    result = await check_humaneval(fence(code), SHOUT, runner, timeout=ROOMY_S)
    assert not result.correct, (name, result.reason)
    assert result.details["status"] == "wrong_answer", result.reason


async def test_humaneval_lazily_importing_check_still_passes_a_right_answer(runner):
    result = await check_humaneval(fence("def shout(s):\n    return s.upper()\n"), SHOUT, runner, timeout=ROOMY_S)
    assert result.correct, result.reason


# The task's `check` runs in the trusted parent: it can look at that process's import path.
SEALED = HumanEvalProblem(
    task_id="lazy-import/sealed",
    prompt="def same(x):\n    pass\n",
    entry_point="same",
    test="def check(candidate):\n    import os, sys\n    assert sys.flags.isolated\n"
    "    for p in ['', *sys.path]:\n        assert not os.access(p or '.', os.W_OK), p\n"
    "    assert candidate(1) == 1\n",
)


async def test_humaneval_parent_has_nothing_writable_on_its_import_path(runner):
    result = await check_humaneval(fence("def same(x):\n    return x\n"), SEALED, runner, timeout=ROOMY_S)
    assert result.correct, result.reason


LCB_WRONG = {
    "abc900_a": "{plant}\n_plant()\nprint(0)\n",  # stdin problem: A+B
    "3501": "{plant}\nclass Solution:\n    def pairSum(self, nums, target):\n        _plant()\n        return [9, 9]\n",
}


@pytest.mark.parametrize("qid", sorted(LCB_WRONG))
async def test_livecodebench_planted_module_does_not_forge_a_pass(runner, qid):
    code = LCB_WRONG[qid].format(plant=plant(LCB_VERDICT))
    result = await check_livecodebench(fence(code), problem_from_record(LCB[qid]), runner, timeout=ROOMY_S)
    assert not result.correct, (qid, result.reason)
    assert result.details["status"] == "wrong_answer", result.reason


@pytest.mark.parametrize("driver", ["lcb_driver.py", "humaneval_driver.py"])
async def test_a_driver_started_without_isolation_refuses_to_judge(runner, driver):
    """A launcher that drops `-I` gets an error naming the fix, never a verdict."""
    request = {"nonce": "n" * 32, "timeout": 1, "fn_name": None, "tests": [{"input": "", "output": "1\n"}],
               "entry_point": "f", "prompt": "", "test": "def check(c):\n    pass\n"}  # fmt: skip
    files = {**driver_files(), **DRIVER_FILES, "solution.py": "print(1)\n", "he_solution.py": "def f():\n    pass\n"}
    result = await runner.run(["python3", driver], files=files, stdin=json.dumps(request), timeout=ROOMY_S)
    assert "n" * 32 not in result.stdout and result.returncode != 0, result.stdout
    assert "start it as `python3 -I" in result.stderr, result.stderr


# Which paths count as changeable by the code under test, seen inside the sandbox (uid of the run).
SEAL_PROBE = """
import runpy, sys
vc = runpy.run_path("verdict_channel.py")
print([vc["changeable"](p) for p in ("/sandbox", "/tmp", "/tmp/missing/x", "/usr/lib", "/usr/lib/missing", sys.prefix)])
sys.path.append("/tmp/missing/x")
vc["seal_parent"]()
"""


async def test_seal_refuses_an_import_path_the_candidate_can_change(runner):
    files = {"verdict_channel.py": DRIVER_FILES["verdict_channel.py"]}
    result = await runner.run([*TRUSTED_PYTHON, "-c", SEAL_PROBE], files=files, timeout=ROOMY_S)
    assert result.stdout.split() == ["[True,", "True,", "True,", "False,", "False,", "False]"], result.stdout
    assert "holds ['/tmp/missing/x']" in result.stderr and "could change" in result.stderr, result.stderr


def test_humaneval_task_in_inspect_does_not_take_a_planted_module(tmp_path, runner):
    """The same attack through tasks/humaneval.py (Inspect's bwrap sandbox: one work dir per sample)."""
    from inspect_ai import eval as inspect_eval
    from scripted import scripted

    import tasks.humaneval as he_task

    data = tmp_path / "he.jsonl"
    data.write_text(json.dumps({**vars(SHOUT), "canonical_solution": "    return s.upper()\n"}) + "\n")
    answer = fence(HE_WRONG["plant_at_import"].format(plant=plant(HE_VERDICT)))
    [log] = inspect_eval(he_task.humaneval(data_file=str(data)), model=scripted(answer),
                         log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert log.status == "success", log.error
    assert log.eval.sandbox.type == "bwrap"
    assert log.results.scores[0].metrics["accuracy"].value == 0
    [score] = log.samples[0].scores.values()
    assert score.metadata["status"] == "wrong_answer", score.explanation


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the probe runs as another user (nobody)")
def test_a_sticky_world_writable_folder_above_is_no_way_in():
    """A project under /tmp (a sticky, world-writable folder) is not changeable by another
    user through it: the sticky bit keeps them from renaming or replacing what they do not own;
    a missing entry there, or a folder without the sticky bit, still is."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path sits in a folder only root can enter
    sticky, loose = base / "sticky", base / "loose"
    for folder, mode in ((sticky, 0o1777), (loose, 0o777)):
        (folder / "venv" / "lib").mkdir(parents=True)
        folder.chmod(mode)
    base.chmod(0o755)
    paths = [sticky / "venv" / "lib", sticky / "missing", loose / "venv" / "lib", sticky / "venv"]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child becomes nobody and asks
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps([changeable(str(p)) for p in paths]).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    shutil.rmtree(base)
    with os.fdopen(read) as answer:
        assert json.loads(answer.read() or "null") == [False, True, True, False]
