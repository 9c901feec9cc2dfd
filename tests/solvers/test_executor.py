"""The DAG executor with scripted workers: visibility, concurrency, failures, records."""

import asyncio

import pytest
from inspect_ai.model import get_model
from scripted import output, scripted, user_texts
from waits import WAIT_S

from solvers.executor import Worker, WorkerError, execute_workflow, final_answer, step_messages
from solvers.workflow import Workflow
from workers.pools import Price

QUESTION = "What is 6 x 7?"


def echo_seen(messages):
    """Reply with the subtasks this worker was shown, so tests can read its visibility."""
    return " | ".join(user_texts(messages))


def tracker(order, name):
    """A reply function that appends `name` to `order` when the worker is called."""

    def reply(messages):
        order.append(name)
        return name

    return reply


def pool(*models, price=None):
    return [Worker(m, f"w{i}", price=price) for i, m in enumerate(models)]


def test_every_mode_step_messages_are_question_then_seen_turns_then_subtask():
    # the earlier behaviour (-S question=every): the first turn carries the question
    seen = [("Draft.", "42", False), ("Check.", "ok", False)]
    messages = step_messages(QUESTION, seen, "Answer.", first=False, question_mode="every")
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert QUESTION in messages[0].text and "Draft." in messages[0].text
    assert messages[1].text == "42"
    assert QUESTION not in messages[2].text
    assert messages[-1].text.endswith("Answer.")


def test_every_mode_no_access_sees_question_and_own_subtask_only():
    messages = step_messages(QUESTION, [], "Solve.", first=False, question_mode="every")
    assert len(messages) == 1
    assert QUESTION in messages[0].text and "Solve." in messages[0].text


def test_first_mode_only_the_first_step_gets_the_question():
    first = step_messages(QUESTION, [], "Solve.", first=True)
    assert [m.role for m in first] == ["user"] and QUESTION in first[0].text and "Solve." in first[0].text
    later_alone = step_messages(QUESTION, [], "Solve 6 x 7.", first=False)
    assert [m.text for m in later_alone] == ["Your subtask: Solve 6 x 7."]
    # a later step that sees step 0 gets step 0's turn as it was sent (with the question)
    sees_first = step_messages(QUESTION, [("Draft.", "42", True), ("Check.", "ok", False)], "Answer.", first=False)
    assert [m.role for m in sees_first] == ["user", "assistant", "user", "assistant", "user"]
    assert QUESTION in sees_first[0].text and "Draft." in sees_first[0].text
    assert QUESTION not in sees_first[2].text and QUESTION not in sees_first[4].text
    # one that sees only step 1 never sees the question
    sees_second = step_messages(QUESTION, [("Check.", "ok", False)], "Answer.", first=False)
    assert all(QUESTION not in m.text for m in sees_second)


async def test_first_mode_later_step_without_access_does_not_see_the_question():
    model = scripted("ok")
    workflow = Workflow((0, 0, 0), ("A", "B", "C"), ((), (), "all"))
    await execute_workflow(workflow, QUESTION, pool(model))
    by_subtask = {user_texts(m)[-1][-1]: m for m in model.calls}
    assert QUESTION in by_subtask["A"][0].text
    assert all(QUESTION not in m.text for m in by_subtask["B"])
    assert [m.role for m in by_subtask["C"]] == ["user", "assistant", "user", "assistant", "user"]
    assert QUESTION in by_subtask["C"][0].text  # through step 0's turn


async def test_prior_turn_is_shown_to_all_steps_only():
    model = scripted(echo_seen)
    workflow = Workflow((0, 0), ("A", "B"), ((), "all"))
    prior = ("Earlier subtask.", "earlier final answer", False)
    records = await execute_workflow(workflow, QUESTION, pool(model), prior=prior)
    assert "Earlier subtask." not in records[0].output
    assert "Earlier subtask." in records[1].output
    assert any(m.text == "earlier final answer" for m in model.calls[-1])


async def test_each_step_sees_exactly_what_access_allows():
    workers = pool(scripted(echo_seen), scripted(echo_seen))
    workflow = Workflow((0, 1, 0, 1), ("A", "B", "C", "D"), ((), (), (0,), "all"))
    records = await execute_workflow(workflow, QUESTION, workers)
    assert [r.visible for r in records] == [[], [], [0], [0, 1, 2]]
    seen_by = {r.index: r.output for r in records}
    assert "A" in seen_by[0] and "B" not in seen_by[0]
    assert "A" not in seen_by[1]
    assert "A" in seen_by[2] and "B" not in seen_by[2]
    assert all(s in seen_by[3] for s in "ABCD")
    assert final_answer(records) == records[-1].output


async def test_every_mode_question_is_always_visible():
    model = scripted("ok")
    workflow = Workflow((0, 0), ("A", "B"), ((), ()))
    await execute_workflow(workflow, QUESTION, pool(model), question_mode="every")
    assert all(QUESTION in messages[0].text for messages in model.calls)


def traced(events, name, meet=None):
    """A worker that logs ("start", name) and ("end", name) around each call; with `meet` (a barrier),
    a call ends only once that many calls have started (a hang guard ends a wait that never meets)."""

    async def respond(messages, tools, tool_choice, config):
        events.append(("start", name))
        if meet is not None:
            await asyncio.wait_for(meet.wait(), WAIT_S)
        await asyncio.sleep(0)
        events.append(("end", name))
        return output("x")

    return get_model("mockllm/model", custom_outputs=respond, memoize=False)


async def test_independent_steps_run_concurrently():
    # events, not time: the four independent calls meet (each waits until all four have started,
    # which sequential calls never do), and a busy machine delays them without changing the order
    events = []
    meet = asyncio.Barrier(4)
    workers = pool(*(traced(events, i, meet) for i in range(4)), traced(events, 4))
    workflow = Workflow((0, 1, 2, 3, 4), tuple("ABCDE"), ((), (), (), (), "all"))
    records = await execute_workflow(workflow, QUESTION, workers)
    assert all(r.ok for r in records), [r.error for r in records]
    assert sorted(events[:4]) == [("start", i) for i in range(4)]  # all four started before any ended
    assert events[-2:] == [("start", 4), ("end", 4)]  # the aggregator waited for them
    events.clear()
    sequential = await execute_workflow(
        workflow, QUESTION, pool(*(traced(events, i) for i in range(5))), concurrent=False
    )
    assert all(r.ok for r in sequential)
    assert events == [(kind, i) for i in range(5) for kind in ("start", "end")]  # in order, no overlap


async def test_a_step_waits_for_the_steps_it_sees():
    order = []

    workers = pool(scripted(tracker(order, "slow"), delay=0.15), scripted(tracker(order, "fast")))
    workflow = Workflow((0, 1), ("A", "B"), ((), [0]))
    await execute_workflow(workflow, QUESTION, workers)
    assert order == ["slow", "fast"]


async def test_usage_cost_and_latency_are_recorded():
    workers = pool(scripted("x", delay=0.01), price=Price(input=2.0, output=10.0))
    records = await execute_workflow(Workflow((0,), ("A",), ((),)), QUESTION, workers)
    record = records[0]
    assert record.usage.input_tokens > 0 and record.usage.output_tokens == 5
    assert record.usage.cost == pytest.approx((record.usage.input_tokens * 2 + 5 * 10) / 1e6)
    assert record.latency >= 0.01
    assert record.model == "w0" and record.subtask == "A" and record.error is None


async def test_unknown_price_gives_unknown_cost():
    records = await execute_workflow(Workflow((0,), ("A",), ((),)), QUESTION, pool(scripted("x")))
    assert records[0].usage.cost is None


async def test_worker_error_is_recorded_and_later_steps_continue():
    broken = scripted("never", fail=RuntimeError("connection refused"))
    workers = pool(broken, scripted(echo_seen))
    workflow = Workflow((0, 1), ("A", "B"), ((), "all"))
    records = await execute_workflow(workflow, QUESTION, workers)
    assert records[0].error == "w0 (RuntimeError): connection refused"  # worker's provider (here its name), type
    assert records[1].ok and "A" not in records[1].output  # the failed step is not shown
    assert final_answer(records) == records[1].output


async def test_failed_last_step_gives_no_answer():
    workers = pool(scripted("x"), scripted("never", fail=ValueError("bad request")))
    records = await execute_workflow(Workflow((0, 1), ("A", "B"), ((), "all")), QUESTION, workers)
    assert final_answer(records) is None


async def test_fail_policy_raises_with_the_step_named():
    workers = pool(scripted("never", fail=RuntimeError("quota exceeded")), scripted("x"))
    workflow = Workflow((0, 1), ("A", "B"), ((), "all"))
    with pytest.raises(WorkerError, match="step 0 .*quota exceeded"):
        await execute_workflow(workflow, QUESTION, workers, on_error="fail")


async def test_timeout_becomes_a_failed_step_with_the_fix():
    ended = []

    async def late(messages, tools, tool_choice, config):
        try:
            await asyncio.sleep(30)
        finally:
            ended.append("cancelled" if asyncio.current_task().cancelling() else "finished")
        return output("late")

    # one step: a second one would have the same 0.1 s, too short for any call on a busy machine (that a
    # failed step leaves the others going is test_faults_outage's stalled-worker test)
    workers = pool(get_model("mockllm/model", custom_outputs=late, memoize=False))
    records = await execute_workflow(Workflow((0,), ("A",), ((),)), QUESTION, workers, step_timeout=0.1)
    assert ended == ["cancelled"]  # the late call was abandoned when the step timed out, not awaited
    assert "timed out after 0.1 s" in records[0].error and "step_timeout" in records[0].error


async def test_conductor_step_gets_the_previous_response_and_falls_back_to_it():
    from solvers.executor import RoundRecord

    received = []

    async def failed_round(previous):
        received.append(previous)
        return RoundRecord(depth=1, conductor="c", rejection="unequal_lengths")

    workflow = Workflow((0, 1), ("A", "review"), ((), ()))
    records = await execute_workflow(workflow, QUESTION, pool(scripted("41")), recurse=failed_round)
    assert received == [("A", "41", True)]  # the step before it, although its access is []
    assert records[1].ok and records[1].output == "41"
    assert "unequal_lengths" in records[1].fallback and "previous response is kept" in records[1].fallback
    assert final_answer(records) == "41"


async def test_conductor_step_without_recursion_is_a_failed_step():
    workflow = Workflow((1,), ("review",), ((),))
    records = await execute_workflow(workflow, QUESTION, pool(scripted("x")))
    assert "recursion is disabled" in records[0].error


async def test_sequential_mode_runs_steps_in_list_order():
    """Events, not delays: sequentially each call starts once the one before it has ended; concurrently a
    first step whose call waits for the second's ends after it (a busy machine cannot reorder either)."""
    events = []
    workflow = Workflow((0, 1), ("A", "B"), ((), ()))
    await execute_workflow(workflow, QUESTION, pool(traced(events, 0), traced(events, 1)), concurrent=False)
    assert events == [("start", 0), ("end", 0), ("start", 1), ("end", 1)]
    order, second_called = [], asyncio.Event()

    async def first(messages, tools, tool_choice, config):
        await asyncio.wait_for(second_called.wait(), WAIT_S)  # a hang guard: sequential calls never get there
        order.append("first")
        return output("first")

    def second(messages):
        second_called.set()
        return tracker(order, "second")(messages)

    waiting = get_model("mockllm/model", custom_outputs=first, memoize=False)
    records = await execute_workflow(workflow, QUESTION, pool(waiting, scripted(second)))
    assert all(r.ok for r in records) and order == ["second", "first"]


def test_prompt_cache_tokens_count_as_input():
    """Inspect reports llama.cpp's (and OpenAI's) cached prompt tokens apart from input_tokens;
    a reused 80-token prompt is still 80 input tokens, not 1."""
    from inspect_ai.model import ModelOutput, ModelUsage

    from solvers.executor import output_usage

    reused = ModelOutput.from_content("m", "x")
    reused.usage = ModelUsage(input_tokens=1, output_tokens=8, total_tokens=89, input_tokens_cache_read=80)
    usage = output_usage(reused, Price(input=1.0, output=2.0))
    assert (usage.input_tokens, usage.output_tokens) == (81, 8)
    assert usage.cost == pytest.approx((81 * 1.0 + 8 * 2.0) / 1e6)
    fresh = ModelOutput.from_content("m", "x")
    fresh.usage = ModelUsage(input_tokens=81, output_tokens=8, total_tokens=89)
    assert output_usage(fresh, None).input_tokens == 81
