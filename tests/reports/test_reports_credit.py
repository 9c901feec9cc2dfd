"""Counterfactual credit (reports.credit) on hand-made conductor logs run by simulated workers whose
answers are known: `sim/oracle` is always right and catches any wrong answer it is shown, `sim/dunce`
is always wrong and repeats a wrong answer it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from standins import standins  # noqa: F401 (fixture)

from reports import credit
from reports import synthetic as syn
from solvers.workflow import Workflow

DOMAINS = ("math", "mmlu", "rlpr", "lcb")


def profile(p: float) -> dict:
    return {"description": "test", "accuracy": dict.fromkeys(DOMAINS, p), "trust": p, "catch": p, "reasoning_tokens": 0}


def write_pool(d: Path, models: list[str], model_args: dict | None = None) -> Path:
    """A pool file of `models` (sim/ ones with the oracle and dunce profiles; `model_args` by model)."""
    profiles = d / "profiles.yaml"
    profiles.write_text(yaml.safe_dump({"profiles": {"oracle": profile(1.0), "dunce": profile(0.0)}}))
    args = {m: {"profiles": str(profiles)} for m in models if m.startswith("sim/")} | (model_args or {})
    workers = [
        {"model": m, "description": m, "model_args": args.get(m, {}), "price": {"input": 1.0, "output": 2.0}}
        for m in models
    ]
    pool = d / "pool.yaml"
    pool.write_text(yaml.safe_dump({"name": "credit-test", "workers": workers}))
    return pool


def conducted(models: list[str], plan: list[tuple[int, list]]) -> dict:
    """A conductor record whose root workflow runs `plan`: (worker, access) per step."""
    steps = [
        syn.step(i, w, models[w], list(range(i)) if a == ["all"] else a, f"Step {i}: solve it.")
        for i, (w, a) in enumerate(plan)
    ]
    meta = syn.record("conductor", models, steps, conductor="local/smollm2-135m", settings={"question": "first"})
    meta["round"]["workflow"] = {
        "model_id": [w for w, _ in plan],
        "subtasks": [s["subtask"] for s in steps],
        "access_list": [a for _, a in plan],
    }
    return meta


SIMS = ["sim/dunce", "sim/oracle"]
DUNCE, ORACLE = 0, 1


@pytest.fixture()
def sim_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    pool = write_pool(tmp_path, SIMS)
    rows = [
        syn.sample("q0", 1, "C", conducted(SIMS, [(DUNCE, []), (ORACLE, ["all"])])),  # the oracle fixes it
        syn.sample("q1", 1, "C", conducted(SIMS, [(ORACLE, [])])),
        syn.sample("q2", 1, "I", {**conducted(SIMS, [(ORACLE, [])]), "method": "mixture_of_agents"}),
    ]
    syn.write_log(tmp_path / "logs", "mmlu", "conductor", {"pool": str(pool)}, rows)
    return tmp_path


def cache_files(root: Path) -> int:
    return sum(1 for p in (root / "cache").rglob("*") if p.is_file())


def test_removed_and_swapped_workflows():
    flow = Workflow((0, 1, 2), ("a", "b", "c"), ((), "all", (0, 1)))
    assert credit.removed(flow, 1) == Workflow((0, 2), ("a", "c"), ((), (0,)))
    assert credit.removed(flow, 0) == Workflow((1, 2), ("b", "c"), ("all", (0,)))
    assert credit.swapped(flow, 2, 0).model_ids == (0, 1, 0)
    runs = credit.variants(flow, 3)
    assert [v.change for v in runs].count("remove") == 3 and [v.change for v in runs].count("swap") == 6
    assert [v.change for v in credit.variants(Workflow((0,), ("a",), ((),)), 2, swap=False)] == ["replay"]


def test_credit_per_position_and_worker_with_known_answers(sim_logs):
    lines = []
    assert credit.main(["--logs", str(sim_logs / "logs"), "--out", str(sim_logs / "out")], say=lines.append) == 0
    text = "\n".join(lines)
    assert "skipped 1 sample(s): not a conductor sample" in text
    # q0: replay, 2 removals, 2 swaps; q1: replay, 1 swap -> distinct calls (one removal repeats a replay call)
    assert "2 sample(s), 7 workflow runs: at most 8 model calls" in text
    assert "SIMULATION: pool" in (sim_logs / "out" / "credit.md").read_text()
    assert cache_files(sim_logs) == 8  # every distinct call made once, the repeated one read from the cache
    import pandas as pd

    t = pd.read_csv(sim_logs / "out" / "credit.csv")

    def got(by, value, change):
        row = t[(t["by"] == by) & (t["value"].astype(str) == str(value)) & (t["change"] == change)]
        assert len(row) == 1, (by, value, change, t)
        return row.iloc[0]["credit"], row.iloc[0]["pairs"]

    assert got("position", 0, "remove") == (0.0, 1)  # q0 without the dunce's step: the oracle alone is right
    assert got("position", 1, "remove") == (100.0, 1)  # q0 without the oracle's step: wrong
    assert got("position", 0, "swap") == (50.0, 2)  # q0 dunce -> oracle: right; q1 oracle -> dunce: wrong
    assert got("position", 1, "swap") == (100.0, 1)  # the dunce repeats the dunce's wrong answer
    assert got("worker", "sim/oracle", "swap") == (100.0, 2)
    assert got("worker", "sim/dunce", "remove") == (0.0, 1)
    assert "Replay agrees with the logged score on 2 of 2 samples" in text


def test_second_run_reads_every_call_from_the_cache(sim_logs):
    args = ["--logs", str(sim_logs / "logs"), "--out", str(sim_logs / "out")]
    credit.main(args, say=lambda _: None)
    first = (sim_logs / "out" / "credit.csv").read_text()
    credit.main(args, say=lambda _: None)
    assert cache_files(sim_logs) == 8 and (sim_logs / "out" / "credit.csv").read_text() == first


def test_api_pool_asks_before_spending(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    models = ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"]
    pool = write_pool(tmp_path, models)
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": str(pool)},
        [syn.sample("q0", 1, "C", conducted(models, [(0, []), (1, ["all"])]))],
    )
    args, lines, asked = (
        ["--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--no-swap", "--pool", str(pool)],
        [],
        [],
    )  # the user's own pool: only the cost is asked
    # replay (2 calls) and the removal of step 1 (its call is the replay's first): 2 + 1 distinct calls,
    # each 100 input and 50 output tokens at 1 and 2 USD per million
    assert credit.main(args, say=lines.append, ask=lambda q: asked.append(q) or "n") == 1
    assert "at most 3 model calls" in lines[-2] and "estimated cost 0.0006 USD" in lines[-2]
    assert asked and lines[-1] == "nothing run" and not (tmp_path / "out").exists()
    with pytest.raises(SystemExit, match="pass --yes"):
        credit.main(args, say=lines.append, ask=None)


def test_missing_log_dir_names_the_fix(tmp_path):
    with pytest.raises(SystemExit, match="pass --logs DIR"):
        credit.main(["--logs", str(tmp_path / "nowhere")])
    (tmp_path / "logs").mkdir()
    with pytest.raises(SystemExit, match="--pool nope: no pool file .*use a bundled pool"):
        credit.main(["--logs", str(tmp_path / "logs"), "--pool", "nope"])


def test_a_pool_the_log_names_that_does_not_fit_is_skipped_named(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    pool = write_pool(tmp_path, SIMS)
    other = ["sim/oracle", "sim/dunce"]  # the same models in another order: not this pool's workers
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": str(pool)},
        [syn.sample("q0", 1, "C", conducted(other, [(0, [])]))],
    )
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": "no-such-pool"},
        [syn.sample("q1", 1, "C", conducted(SIMS, [(0, [])]))],
    )
    lines = []
    assert credit.main(["--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out")], say=lines.append) == 1
    assert any("its workers are not pool" in line for line in lines)
    assert any("pool 'no-such-pool' does not load" in line for line in lines)
    assert lines[-1] == "no logged conductor sample to re-run" and cache_files(tmp_path) == 0


def test_a_recorded_workflow_that_breaks_the_rules_is_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    pool = write_pool(tmp_path, SIMS)
    negative = conducted(SIMS, [(ORACLE, [])])
    negative["round"]["steps"][0]["worker"] = -1  # would index the pool from its end
    later = conducted(SIMS, [(ORACLE, [1]), (DUNCE, [])])  # step 0 sees a later step
    mode = conducted(SIMS, [(ORACLE, [])])
    mode["settings"]["question"] = "sideways"
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": str(pool)},
        [syn.sample("q0", 1, "C", negative), syn.sample("q1", 1, "C", later), syn.sample("q2", 1, "C", mode)],
    )
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": str(pool), "worker_temperature": "hot"},
        [syn.sample("q3", 1, "C", conducted(SIMS, [(ORACLE, [])]))],
    )
    lines = []
    assert credit.main(["--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out")], say=lines.append) == 1
    assert sum("the recorded workflow does not validate" in line for line in lines) == 4
    assert any("-S worker_temperature='hot'" in line for line in lines)
    assert cache_files(tmp_path) == 0


ATTACKER = ["sim/oracle", "openai/gpt-4o-mini"]  # one simulated worker, one aimed at the log writer's host


@pytest.fixture()
def attacker_logs(tmp_path, monkeypatch, standins):  # noqa: F811
    """A log whose pool file mixes a simulated worker and an `openai` worker whose base_url is the
    attacker's (a loopback stand-in); the victim's OPENAI_API_KEY is in the environment."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL")  # the pool's base_url is the only way to the stand-in
    host = f"{standins.url}/openai/v1"
    pool = write_pool(tmp_path, ATTACKER, {"openai/gpt-4o-mini": {"base_url": host}})
    syn.write_log(
        tmp_path / "logs",
        "mmlu",
        "conductor",
        {"pool": str(pool)},
        [syn.sample("q0", 1, "C", conducted(ATTACKER, [(0, []), (1, ["all"])]))],
    )
    return tmp_path, pool, host


def test_a_logs_mixed_pool_is_refused_without_a_terminal_and_sends_nothing(attacker_logs, standins):  # noqa: F811
    root, pool, host = attacker_logs
    lines = []
    with pytest.raises(SystemExit, match=r"pass the pool yourself \(--pool NAME_OR_PATH\)") as refused:
        credit.main(["--logs", str(root / "logs"), "--out", str(root / "out"), "--yes"], say=lines.append, ask=None)
    assert str(pool) in str(refused.value) and "\n" not in str(refused.value)  # one line, naming the pool
    assert any(host in line and "$OPENAI_API_KEY" in line for line in lines)  # every endpoint printed
    assert standins.requests == [] and not (root / "out").exists()


def test_a_logs_mixed_pool_shows_its_base_url_and_waits_for_a_yes(attacker_logs, standins):  # noqa: F811
    root, _, host = attacker_logs
    lines, asked = [], []
    assert (
        credit.main(
            ["--logs", str(root / "logs"), "--out", str(root / "out")],
            say=lines.append,
            ask=lambda q: asked.append(q) or "n",
        )
        == 1
    )
    shown = "\n".join(lines)
    assert f"openai/gpt-4o-mini (openai): calls {host} (base_url in the pool file), sends $OPENAI_API_KEY" in shown
    assert "sim/oracle (sim): answered in this process" in shown
    assert asked and "with your credentials" in asked[0] and lines[-1] == "nothing run"
    assert standins.requests == []


def test_the_same_pool_passed_by_the_user_runs(attacker_logs, standins):  # noqa: F811
    """The control of the two tests above: the stand-in does receive the calls (with the key) once the
    user names that pool themselves."""
    root, pool, _ = attacker_logs
    args = ["--logs", str(root / "logs"), "--out", str(root / "out"), "--no-swap", "--pool", str(pool), "--yes"]
    assert credit.main(args, say=lambda _: None, ask=None) == 0
    sent = standins.generations("openai")
    assert sent and all(
        {k.lower(): v for k, v in r.headers.items()}["authorization"] == "Bearer sk-standin" for r in sent
    )


def test_the_users_mixed_pool_still_asks_about_the_cost(attacker_logs, standins):  # noqa: F811
    """A pool that can spend is one with any worker that can, not a pool whose workers are mostly simulated."""
    root, pool, _ = attacker_logs
    with pytest.raises(SystemExit, match="pass --yes"):
        credit.main(
            ["--logs", str(root / "logs"), "--out", str(root / "out"), "--pool", str(pool)],
            say=lambda _: None,
            ask=None,
        )
    assert standins.requests == []


def test_a_mixed_pool_is_labelled_mixed_and_named_without_its_path(attacker_logs, standins):  # noqa: F811
    """A pool of a simulated and a real worker is "mixed" in the summary and the headings (not
    "simulated"), and the outputs name the pool file by its stem, not the path the log recorded."""
    import pandas as pd

    root, pool, _ = attacker_logs
    lines = []
    args = ["--logs", str(root / "logs"), "--out", str(root / "out"), "--no-swap", "--pool", str(pool), "--yes"]
    assert credit.main(args, say=lines.append, ask=None) == 0
    assert "pool kind: mixed" in "\n".join(lines)
    text = (root / "out" / "credit.md").read_text()
    assert "## MIXED: pool pool (simulated and real workers" in text and "SIMULATION" not in text
    for name in ("credit.md", "credit.csv", "credit-runs.csv"):
        assert str(pool) not in (root / "out" / name).read_text(), name
    assert set(pd.read_csv(root / "out" / "credit.csv")["pool"]) == {"pool"}


def test_a_pool_is_labelled_by_what_it_holds():
    from reports.records import pool_makeup

    assert pool_makeup(["sim/a", "sim/b"]) == "simulated" and pool_makeup(["sim/a", "openai/x"]) == "mixed"
    assert pool_makeup(["sim/a", "local/x"]) == "mixed" and pool_makeup(["local/x"]) == "local"
    assert pool_makeup(["openai/x"]) == "api" and pool_makeup([]) == "unknown"
