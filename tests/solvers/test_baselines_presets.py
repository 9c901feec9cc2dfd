"""The paper's presets as solver options, run with scripted models: Table 11 (another model
conducts with 2048 tokens and format failures resampled, on 7- and 3-worker pools), Table 10
(every worker slot one model), Table 9 (fixed subtasks, per-index access, no few-shot)."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from scripted import scripted, user_texts

from solvers.conductor import conductor
from workers.pools import load_pool

QUESTION = "What is 6 x 7? Reply with the number."
TWO_STEPS = 'Plan.\nmodel_id = [0, 1]\nsubtasks = ["Compute it.", "Give the final number."]\naccess_list = [[], "all"]'
INDICES = 'Plan.\nmodel_id = [0, 1]\nsubtasks = ["Compute it.", "Check it."]\naccess_list = [[], [0]]'


def conduct(solver, lead, workers):
    task = Task(dataset=[Sample(input=QUESTION, target="42", id="q1")], solver=solver, scorer=includes())
    roles = {"conductor": lead, "workers": workers}
    [log] = eval(task, model="mockllm/model", model_roles=roles, display="none", log_dir=None)
    assert log.status == "success", log.error
    return log.samples[0].metadata["conductor"]


def test_frontier_conductor_gets_2048_tokens_and_resamples_format_failures():
    replies = iter(["I would ask someone.", "still no lists", TWO_STEPS])
    lead = scripted(lambda messages: next(replies))
    meta = conduct(conductor(max_tokens=2048, format_retries=5), lead, [scripted("41"), scripted("ANSWER: 42")])
    assert [c.max_tokens for c in lead.configs] == [2048] * 3
    assert meta["parsed"] and meta["conductor_calls"] == 3 and meta["agent_calls"] == 2
    assert meta["settings"]["format_retries"] == 5


@pytest.mark.parametrize("pool, size", [("paper", 7), ("paper-frontier", 3)])
def test_the_table_11_pools_have_seven_and_three_workers_and_no_conductor_of_their_own(pool, size):
    spec = load_pool(pool)
    assert len(spec.workers) == size and spec.conductor is None  # the eval model / conductor role conducts
    if size == 3:
        assert {w.model for w in spec.workers} == {
            "openai/gpt-5",
            "google/gemini-2.5-pro",
            "anthropic/claude-sonnet-4-20250514",
        }


def test_fixed_subtasks_and_index_access_and_no_few_shot():
    lead = scripted(INDICES)
    workers = [scripted("ANSWER: 42"), scripted("ANSWER: 42")]
    meta = conduct(conductor(subtasks="fixed", access="indices", few_shot="none"), lead, workers)
    prompt = user_texts(lead.calls[0])[0]
    assert "For instance" not in prompt  # no few-shot examples
    assert meta["round"]["workflow"]["access_list"] == [[], [0]]
    assert {s["subtask"] for s in meta["round"]["steps"]} == {"Solve the question."}
    assert meta["settings"]["subtasks"] == "fixed" and meta["settings"]["access"] == "indices"
