"""A run's record says exactly what happened: recursion counts are the conductor calls made
(refusals apart), and every step's recorded inputs are the messages its model received."""

import asyncio
from itertools import count

from inspect_ai.model import get_model
from scripted import output, scripted
from waits import WAIT_S

from solvers.conducting import Settings, conduct, summary, workflow_markdown
from solvers.executor import RECURSION_BUDGET, RoundRecord, StepRecord, Worker
from solvers.team import Conductor
from training.recursion import shown_response
from training.rewards import ConductorReward, Recursion, Rollout, rollout_row
from workers.pools import ModelSpec, PoolSpec

QUESTION = "What is 6 x 7? Reply with the number."
KEEP = "model_id = []\nsubtasks = []\naccess_list = []"


def workflow(ids: list[int], access: list) -> str:
    subtasks = [f"Subtask {i}." for i in range(len(ids))]
    return f"model_id = {ids}\nsubtasks = {subtasks}\naccess_list = {access}".replace("'", '"')


def lead(root: str, nested: str) -> Conductor:
    """A conductor writing `root`, and `nested` when called recursively (its conversation continued)."""
    return Conductor(scripted(lambda messages: nested if len(messages) > 1 else root), "lead", None, grammar=False)


def recording_pool(n: int) -> tuple[list[Worker], dict[str, list]]:
    """Workers replying a unique text per call; `sent` maps each reply to the messages it answered."""
    sent: dict[str, list] = {}
    replies = count()

    def worker(i: int) -> Worker:
        def reply(messages):
            text = f"reply {next(replies)} of w{i}"
            sent[text] = messages
            return text

        return Worker(scripted(reply), f"w{i}", f"member {i}")

    return [worker(i) for i in range(n)], sent


def check_inputs(record: RoundRecord, sent: dict[str, list], lead_calls: list, previous: str | None = None) -> int:
    """Assert that every recorded step's inputs are what its model received; return the steps checked.

    A worker step's received assistant turns are exactly the previous response (when recorded
    as shown) and then the outputs of its recorded `visible` steps; a conductor step's nested
    round continues the conversation the conductor model received, showing the recorded one."""
    checked = 0
    for step in record.steps:
        shown = ([previous] if step.shown_previous else []) + [record.steps[j].output for j in step.visible]
        if step.round is not None:
            nested = step.round
            if nested.refused:
                continue
            assert len(shown) <= 1
            call = next(c for c in lead_calls if len(c) > 1 and c[-1].text == nested.conversation[-1]["content"])
            assert nested.conversation == [{"role": m.role, "content": m.text} for m in call[1:]]
            if shown:
                assert f"<response>\n{shown[0]}\n</response>" in call[-1].text
            checked += 1 + check_inputs(nested, sent, lead_calls, shown[0] if shown else None)
        elif step.ok:
            assert [m.text for m in sent[step.output] if m.role == "assistant"] == shown, step
            checked += 1
    return checked


async def test_recursions_count_the_calls_made_and_refusals_apart():
    root = workflow([0, 2, 2, 2, 2], [[], [], [], [], []])
    conductor = lead(root, KEEP)
    pool, _ = recording_pool(2)
    record = await conduct(QUESTION, conductor, pool, Settings(max_depth=1, max_recursions=1))
    meta = summary(record, pool, [0, 1])
    assert len(conductor.model.calls) == 2  # the root and one recursive call
    assert meta["recursions"] == 1 and meta["recursions_refused"] == 3
    assert meta["conductor_calls"] == len(conductor.model.calls)


async def test_nested_all_step_records_the_previous_response_it_was_shown():
    conductor = lead(workflow([0, 1, 2], [[], [], []]), workflow([1, 0], [[], ["all"]]))
    pool, sent = recording_pool(2)
    record = await conduct(QUESTION, conductor, pool, Settings(max_depth=1))
    review = record.steps[2]
    assert review.visible == [1] and not review.shown_previous  # it waited for, and was shown, step 1 only
    nested_last = review.round.steps[1]
    assert nested_last.shown_previous and nested_last.visible == [0]
    assert "| previous response, [0] |" in workflow_markdown(record)  # the transcript's table says so too
    assert check_inputs(record, sent, conductor.model.calls) == 5


async def test_a_conductor_step_records_what_it_was_shown_not_its_access_list():
    conductor = lead(workflow([0, 1, 2], [[], [], ["all"]]), KEEP)
    pool, sent = recording_pool(2)
    record = await conduct(QUESTION, conductor, pool, Settings(max_depth=1))
    assert record.steps[2].visible == [1]  # access ["all"], but the recursion turn shows step 1 only
    assert check_inputs(record, sent, conductor.model.calls) == 3


async def test_a_failed_step_is_not_recorded_as_seen():
    broken = Worker(scripted("", fail=RuntimeError("down")), "broken", "member 2")
    pool, sent = recording_pool(2)
    conductor = lead(workflow([2, 0, 1], [[], [], ["all"]]), KEEP)
    record = await conduct(QUESTION, conductor, [*pool, broken], Settings())
    assert not record.steps[0].ok
    assert record.steps[2].visible == [1]  # step 0 failed: its turn was never sent
    assert check_inputs(record, sent, conductor.model.calls) == 2


async def test_records_match_the_messages_in_a_deeper_tree():
    root = workflow([0, 2, 1, 2], [[], ["all"], [], ["all"]])
    nested = workflow([1, 0, 2], [["all"], [], ["all"]])
    conductor = lead(root, nested)
    pool, sent = recording_pool(2)
    record = await conduct(QUESTION, conductor, pool, Settings(max_depth=2, max_recursions=3))
    meta = summary(record, pool, [0, 1])
    refused = sum(1 for r in record.rounds() if r.refused)
    assert meta["recursions"] == len(conductor.model.calls) - 1 == 3 and meta["recursions_refused"] == refused
    assert check_inputs(record, sent, conductor.model.calls) == 7  # 4 root steps, 3 in the round that ran steps


def slow_first_tree() -> tuple[Conductor, list[Worker]]:
    """Two conductor steps, each after a worker's; the later one runs first (step 0's worker answers
    only once the conductor has been called again: events, not a delay a busy machine could outlast),
    so the earlier one in list order is the one the budget refuses."""
    conductor = lead(workflow([0, 2, 1, 2], [[], [], [], []]), KEEP)
    fast = recording_pool(2)[0][1]

    async def slow(messages, tools, tool_choice, config):
        async with asyncio.timeout(WAIT_S):  # a hang guard: the recursion comes at once on a quiet machine
            while len(conductor.model.calls) < 2:
                await asyncio.sleep(0.01)
        return output("reply of w0")

    return conductor, [Worker(get_model("mockllm/model", custom_outputs=slow, memoize=False), "w0", "member 0"), fast]


async def test_the_reward_reads_the_recursive_round_that_ran_not_a_refusal():
    conductor, pool = slow_first_tree()
    record = await conduct(QUESTION, conductor, pool, Settings(max_depth=1, max_recursions=1))
    refused, ran = record.steps[1].round, record.steps[3].round
    assert refused.refused and not ran.refused and ran.workflow is not None
    assert shown_response(record) == record.steps[2].output  # what the round that ran was shown
    spec = PoolSpec(name="t", workers=tuple(ModelSpec(f"mockllm/w{i}", description=f"member {i}") for i in range(2)))
    reward = ConductorReward(spec, settings=Settings(max_depth=1, max_recursions=1))

    async def exact(answer, row):
        return answer == row["target"], "exact"

    reward.check = exact
    row = {"question": QUESTION, "target": record.answer, "check": "numeric", "pool_indices": [0, 1]}
    recursion = Recursion(prompt="p", first_completion=record.completion, record=record, shown=shown_response(record))
    rollout = await reward.recursive_rollout(recursion, row)
    assert rollout.correct and rollout.first_reward is not None
    assert rollout.reward == 1.0  # the round that ran parsed and kept a correct answer


def test_moa_aggregator_records_only_the_proposals_it_was_shown():
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample

    from solvers.baselines import mixture_of_agents

    pool = [scripted("x", fail=RuntimeError("down")), scripted("ANSWER: 41"), scripted("ANSWER: 42")]
    task = Task(dataset=[Sample(input=QUESTION, target="42")], solver=mixture_of_agents(aggregator=2))
    [log] = eval(task, model="mockllm/model", model_roles={"workers": pool}, display="none", log_dir=None)
    aggregate = log.samples[0].metadata["conductor"]["round"]["steps"][-1]
    shown = pool[2].calls[-1][0].text
    assert aggregate["visible"] == [1, 2]  # proposal 0 failed: it is not in the aggregator's prompt
    assert "ANSWER: 41" in shown and "ANSWER: 42" in shown


def test_a_rollout_whose_only_conductor_step_was_refused_is_not_logged_recursive():
    refused = RoundRecord(depth=1, conductor=None, rejection=RECURSION_BUDGET)
    step = StepRecord(0, 2, "conductor", "Review.", [], round=refused)
    record = RoundRecord(depth=0, conductor="policy", steps=[step])
    line = rollout_row(Rollout(0.0, True, False, record), {"pool_indices": [0, 1]}, "", None, None, ["a", "b"])
    assert line["recursive"] is False
