"""`conductor/<pool>` checks at start what it says it checks: a bad `-M` option, model, pool file
or a cycle of pools is refused when Inspect constructs the model, before any sample runs, with
one message naming it and the fix; `inspect eval` prints that message without a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.model import get_model
from scripted import scripted
from waits import run_command

from startup.errors import StartError

ROOT = Path(__file__).resolve().parents[2]
INSPECT = Path(sys.executable).with_name("inspect")


@pytest.mark.parametrize(
    "args, message",
    [
        ({"workers": 5}, "invalid -M workers=5; fix: expected Inspect model names joined by commas"),
        ({"conductor": 7}, "invalid -M conductor=7; fix: expected one Inspect model name"),
        ({"conductor": "a/b,c/d"}, "invalid -M conductor='a/b,c/d'; fix: expected one Inspect model name"),
        ({"conductor": "nosuch/model"}, "-M conductor='nosuch/model': Model API nosuch .* not recognized; fix: give"),
        ({"workers": "mockllm/model,nosuch/x"}, "-M workers='mockllm/model,nosuch/x': .*nosuch/x' not recognized"),
        ({"replace_workers": "nosuch/model"}, "-M replace_workers='nosuch/model': Model API nosuch"),
        ({"seed": "x"}, "invalid -M seed='x'; fix: expected an integer"),
        ({"grammar": "yes"}, "invalid -M grammar='yes'; fix: expected true | false"),
        ({"pool_size": 0}, "invalid -M pool_size=0; fix: expected an integer >= 1"),
        ({"max_depht": 1}, "unknown option -M max_depht; fix: did you mean -M max_depth\\?"),
        ({"colour": 1}, "unknown option -M colour; fix: use one of conductor, workers, max_steps"),
    ],
)
def test_a_bad_option_is_refused_by_get_model_with_its_name_and_fix(args, message):
    with pytest.raises(StartError, match=f"^conductor/sim: {message}"):
        get_model("conductor/sim", memoize=False, **args)


def test_good_models_given_as_options_are_the_ones_used():
    lead = scripted("unused")
    api = get_model("conductor/sim", conductor=lead, workers="mockllm/a, mockllm/b", memoize=False).api
    assert api.team().conductor.model.api is lead.api  # a copy carrying the round's token budget
    assert [w.name for w in api.team().workers] == ["mockllm/a", "mockllm/b"]


def write_pools(folder: Path, pools: dict[str, str]) -> None:
    for name, text in pools.items():
        (folder / name).write_text(text)


@pytest.mark.parametrize(
    "pools, start, cycle",
    [
        ({"self.yaml": "conductor: conductor/self.yaml\nworkers: [mockllm/model]\n"}, "self.yaml",
         "self.yaml -> self.yaml"),
        ({"a.yaml": "workers: [mockllm/model, conductor/b.yaml]\n", "b.yaml": "workers: [conductor/a.yaml]\n"},
         "a.yaml", "a.yaml -> b.yaml -> a.yaml"),
        ({"a.yaml": "workers: [conductor/b.yaml]\n", "b.yaml": "workers: [conductor/c.yaml]\n",
          "c.yaml": "workers: [conductor/b.yaml]\n"}, "a.yaml", "b.yaml -> c.yaml -> b.yaml"),
    ],
)  # fmt: skip
def test_pools_that_run_each_other_are_refused_with_the_cycle_named(tmp_path, monkeypatch, pools, start, cycle):
    monkeypatch.chdir(tmp_path)
    write_pools(tmp_path, pools)
    with pytest.raises(StartError, match=f"pools run each other in a cycle: {cycle} .*; fix: remove or replace"):
        get_model(f"conductor/{start}", conductor=scripted("unused"), memoize=False)


def test_a_pool_may_run_another_pool(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_pools(tmp_path, {"outer.yaml": "workers: [mockllm/model, conductor/inner.yaml]\n",
                           "inner.yaml": "conductor: mockllm/model\nworkers: [mockllm/x]\n"})  # fmt: skip
    api = get_model("conductor/outer.yaml", conductor=scripted("unused"), memoize=False).api
    assert [w.name for w in api.team().workers] == ["mockllm/model", "conductor/inner.yaml"]


def test_a_pool_path_works_and_a_missing_one_is_refused(tmp_path):
    pool = tmp_path / "mine.yaml"
    pool.write_text("workers: [mockllm/a, mockllm/b]\n")
    api = get_model(f"conductor/{pool}", conductor=scripted("unused"), memoize=False).api
    assert [w.name for w in api.team().workers] == ["mockllm/a", "mockllm/b"]
    with pytest.raises(StartError, match="^--model conductor/.*missing.yaml: no pool file .*missing.yaml; use a"):
        get_model(f"conductor/{tmp_path / 'missing.yaml'}", memoize=False)


def test_a_pool_worker_whose_provider_does_not_exist_is_refused_at_start(tmp_path):
    pool = tmp_path / "typo.yaml"
    pool.write_text("workers: [mockllm/a, mockllm-typo/b]\n")
    with pytest.raises(StartError, match="a worker of the pool: Model API mockllm-typo .*; fix: name a model whose"):
        get_model(f"conductor/{pool}", conductor=scripted("unused"), memoize=False)


def inspect_eval(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    data = ROOT / "tests" / "fixtures" / "math500.jsonl"
    command = [str(INSPECT), "eval", "tasks/math500.py", "-T", f"data_file={data}", "--limit", "1", *args]
    return run_command(command, cwd=ROOT, env=env)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "conductor/sim", "-M", "workers=5"], "conductor/sim: invalid -M workers=5; fix: expected"),
        (["--model", "conductor/{tmp}/self.yaml"], "pools run each other in a cycle: {tmp}/self.yaml -> "),
    ],
)
def test_the_cli_prints_one_message_without_a_traceback_and_fails(tmp_path, args, message):
    """Also the check that Inspect still prints a StartError (its PrerequisiteError) this way."""
    (tmp_path / "self.yaml").write_text(f"workers: [mockllm/model, conductor/{tmp_path}/self.yaml]\n")
    result = inspect_eval(tmp_path, *[a.format(tmp=tmp_path) for a in args])
    printed = " ".join((result.stdout + result.stderr).split())  # rich wraps long lines
    assert result.returncode != 0
    assert message.format(tmp=tmp_path) in printed, printed[-2000:]
    assert "Traceback" not in printed and not list((tmp_path / "logs").glob("*")), printed[-2000:]


def test_the_team_is_resolved_once_at_start_and_the_endpoint_reuses_it(monkeypatch):
    """With -M replace_workers, building the model and its endpoint resolve the pool's team once and
    replace its workers once; the endpoint reads whether the team is simulated from the model."""
    from collections import Counter

    import conductor_model.provider as provider
    import solvers.team as team
    from conductor_model.serve import make_app

    calls = Counter()

    def counted(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(provider, "resolve_team", counted("teams", provider.resolve_team))
    monkeypatch.setattr(team, "pool_workers", counted("pool workers", team.pool_workers))
    monkeypatch.setattr(team, "replaced_workers", counted("replacements", team.replaced_workers))
    model = get_model("conductor/sim", conductor=scripted("unused"), replace_workers="sim/mediocre", memoize=False)
    make_app(model)
    assert calls == {"teams": 1, "pool workers": 1, "replacements": 1}
    assert model.api.simulated and [w.name for w in model.api.team().workers] == ["sim/mediocre"] * 4
    real = get_model("conductor/sim", conductor=scripted("unused"), replace_workers="mockllm/model", memoize=False)
    assert not real.api.simulated  # every slot is the replacement's
