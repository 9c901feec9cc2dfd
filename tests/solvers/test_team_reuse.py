"""A sample's team (conductor and workers with their configs) is built once per eval run and
solver options, then reused by the run's later samples; another eval run builds its own."""

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, TaskState, solver

from solvers import team as team_module
from solvers.conductor import sample_answer_constraint
from solvers.team import Overrides, eval_conductor, resolve_team

POOL = "workers/pools/sim.yaml"


@solver
def keep_team(seen: list):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        built = resolve_team(POOL, Overrides(), sample_answer_constraint(state), lead=eval_conductor())
        seen.append((state.sample_id, built))
        return state

    return solve


def run(samples: list[Sample], monkeypatch) -> tuple[list, list]:
    seen: list = []
    builds: list = []
    build = team_module._built_team
    monkeypatch.setattr(team_module, "_built_team", lambda *a: builds.append(a) or build(*a))
    roles = {"conductor": get_model("mockllm/model")}  # one object, as a memoized provider's model is
    [log] = eval(Task(dataset=samples, solver=keep_team(seen)), model_roles=roles, display="none", log_dir=None)
    assert log.status == "success", log.error
    return dict(seen), builds


def test_samples_with_the_same_options_share_one_team(monkeypatch):
    samples = [Sample(input=f"q{i}", target="1", id=i, metadata={"domain": "math"}) for i in range(4)]
    samples += [Sample(input="mc", target="A", id=9, choices=["x", "y"], metadata={"domain": "mmlu"})]
    teams, builds = run(samples, monkeypatch)
    assert len(builds) == 2  # free-form and two-choice answer constraints
    assert len({id(teams[i]) for i in range(4)}) == 1
    assert teams[9] is not teams[0]


def test_each_eval_run_builds_its_own_team(monkeypatch):
    samples = [Sample(input="q", target="1", id=1, metadata={"domain": "math"})]
    first, _ = run(samples, monkeypatch)
    second, builds = run(samples, monkeypatch)
    assert len(builds) == 1 and second[1] is not first[1]
