"""The `conductor/<pool>` model provider: any Inspect task runs against it (offline, sim pool,
a scripted conductor), it refuses what a round cannot take, and it counts no token twice."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    get_model,
)
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice
from inspect_ai.tool import ToolInfo
from scripted import scripted

from conductor_model.provider import ConductorInputError, options, question_from

# Model 1 = choice-strong, Model 3 = premium (workers/pools/sim.yaml)
WORKFLOW = (
    'model_id = [1, 3]\nsubtasks = ["Answer it.", "Check and give the final letter."]\naccess_list = [[], ["all"]]'
)


def mc_task() -> Task:
    """A multiple-choice task written here (not a project task): Inspect's own solver and scorer."""
    samples = [
        Sample(input="Which is prime?", choices=["4", "6", "7", "9"], target="C", metadata={"domain": "mmlu"}),
        Sample(input="Which is even?", choices=["3", "8", "5", "7"], target="B", metadata={"domain": "mmlu"}),
    ]
    return Task(dataset=samples, solver=multiple_choice(), scorer=choice())


def test_a_task_written_here_runs_against_the_provider_with_its_round_tree(tmp_path):
    lead = scripted(WORKFLOW)
    model = get_model("conductor/sim", conductor=lead, max_steps=3, few_shot="none", memoize=False)
    log = eval(mc_task(), model=model, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success"
    assert len(log.samples) == 2 and all(s.scores for s in log.samples)
    for sample in log.samples:
        record = sample.output.metadata["conductor"]
        assert record["parsed"] and record["steps"] == 2
        assert [s["model"] for s in record["round"]["steps"]] == ["sim/choice-strong", "sim/premium"]
        assert record["round"]["steps"][1]["visible"] == [0]
        assert sample.output.completion == record["round"]["steps"][1]["output"]  # the last step answers
    # the conductor saw the question Inspect's multiple_choice wrote, choices included
    prompt = lead.calls[0][0].text
    assert "Which is prime?" in prompt and "C) 7" in prompt
    # every nested call is counted once, under its own model; the round itself adds nothing
    usage = log.stats.model_usage
    assert set(usage) == {"mockllm/model", "sim/choice-strong", "sim/premium"}
    recorded = sum(s.output.metadata["conductor"]["input_tokens"] for s in log.samples)
    assert sum(u.input_tokens for u in usage.values()) == recorded


def test_a_rejected_workflow_is_an_empty_answer_with_its_reason(tmp_path):
    model = get_model("conductor/sim", conductor=scripted("I will not write lists."), few_shot="none", memoize=False)
    log = eval(mc_task(), model=model, log_dir=str(tmp_path), display="none", limit=1)[0]
    assert log.status == "success"
    record = log.samples[0].output.metadata["conductor"]
    assert not record["parsed"] and record["rejection"] and log.samples[0].output.completion == ""


def test_question_keeps_system_text_and_writes_out_earlier_turns():
    assert question_from([ChatMessageSystem(content="Be brief."), ChatMessageUser(content="2+2?")], []) == (
        "Be brief.\n\n2+2?")  # fmt: skip
    turns = [ChatMessageUser(content="Hi"), ChatMessageAssistant(content="Hello"), ChatMessageUser(content="2+2?")]
    assert question_from(turns, []) == "User: Hi\n\nAssistant: Hello\n\nUser: 2+2?"


@pytest.mark.parametrize(
    "messages, tools, fragment",
    [
        ([ChatMessageUser(content="q")], [ToolInfo(name="f", description="f")], "tools"),
        ([ChatMessageUser(content=[ContentText(text="q"), ContentImage(image="data:image/png;base64,AA==")])], [],
         "text only"),
        ([ChatMessageUser(content="q"), ChatMessageAssistant(content="a")], [], "end with"),
        ([], [], "end with"),
    ],
)  # fmt: skip
def test_unsupported_input_is_refused_by_name(messages, tools, fragment):
    with pytest.raises(ConductorInputError, match=fragment):
        question_from(messages, tools)


def test_refusal_reaches_inspect_as_a_clear_error(tmp_path):
    model = get_model("conductor/sim", conductor=scripted(WORKFLOW), memoize=False)
    with pytest.raises(ConductorInputError, match="text only"):
        import asyncio

        image = [ContentText(text="q"), ContentImage(image="data:image/png;base64,AA==")]
        asyncio.run(model.generate([ChatMessageUser(content=image)]))


def test_options_are_checked_like_the_solvers():
    settings, generation, models = options({"max_steps": 3, "access": "INDICES", "seed": 2, "conductor": "x/y"})
    assert (settings.max_steps, settings.access, generation["seed"], models["conductor"]) == (3, "indices", 2, "x/y")
    with pytest.raises(ValueError, match="unknown option -M max_step; fix: did you mean -M max_steps"):
        options({"max_step": 3})
    with pytest.raises(ValueError, match="invalid -M max_steps=0; fix: expected an integer >= 1"):
        options({"max_steps": 0})


def test_replace_workers_runs_the_replacement_in_every_slot_and_records_it(tmp_path):
    """-M replace_workers: the replacement answers in every slot the conductor picked (Inspect
    counts its calls, none of the pool's own), the slots keep their descriptions in the prompt."""
    lead = scripted(WORKFLOW)
    model = get_model("conductor/sim", conductor=lead, few_shot="none", replace_workers="sim/mediocre", memoize=False)
    log = eval(mc_task(), model=model, log_dir=str(tmp_path), display="none", limit=1)[0]
    assert log.status == "success", log.error
    record = log.samples[0].output.metadata["conductor"]
    assert record["workers"] == ["sim/mediocre"] * 4
    assert [s["model"] for s in record["round"]["steps"]] == ["sim/mediocre", "sim/mediocre"]
    assert set(log.stats.model_usage) == {"mockllm/model", "sim/mediocre"}
    assert "strong at multiple choice" in lead.calls[0][0].text  # the slot's description, as the solver keeps it


def test_a_bad_pool_fails_at_start():
    with pytest.raises(Exception, match="no-such-pool"):
        get_model("conductor/no-such-pool", conductor=scripted(WORKFLOW))
