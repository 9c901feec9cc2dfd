"""Simulated workers (`sim/<profile>`): determinism, accuracy, verification, usage, keys."""

import asyncio
import math

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, get_model
from inspect_ai.solver import generate

from scorers.checks import check_choice, check_math, check_numeric
from scorers.inspect_scorers import choice_letter
from solvers.executor import StepRecord, Worker, run_step
from workers.pools import load_pool
from workers.sim_provider import answer_key, key_from_sample
from workers.simulation import (
    AnswerKey,
    SimError,
    load_profiles,
    make_key,
    parse_profiles,
    simulate,
)

PROFILES = load_profiles()
N = 400
CHECK = {"choice": check_choice, "math": check_math, "numeric": check_numeric}


def keys(domain: str, n: int = N) -> list[AnswerKey]:
    """n generated items of a domain, in that domain's answer format."""
    if domain == "mmlu":
        return [make_key("ABCD"[i % 4], "mmlu", choices=list("wxyz"), item_id=f"q{i}") for i in range(n)]
    if domain == "rlpr":
        return [make_key(f"\\frac{{{i + 1}}}{{7}}", "rlpr", item_id=f"q{i}") for i in range(n)]
    return [make_key(str(3 * i + 1), "math", "numeric", item_id=f"q{i}") for i in range(n)]


def fresh(key: AnswerKey, profile: str, subtask: str = "solve it", seed: int = 0):
    return simulate(PROFILES[profile], key, [("user", f"Q?\n\nYour subtask: {subtask}")], seed)


def within(observed: float, p: float, n: int, sigmas: float = 4.0) -> bool:
    return abs(observed - p) <= sigmas * math.sqrt(p * (1 - p) / n) + 1e-9


def test_same_seed_item_and_subtask_give_the_same_output_and_others_differ():
    key = keys("math", 1)[0]
    first = [fresh(key, "mediocre", f"step {i}").text for i in range(40)]
    assert first == [fresh(key, "mediocre", f"step {i}").text for i in range(40)]
    other_seed = [fresh(key, "mediocre", f"step {i}", seed=7).text for i in range(40)]
    assert first != other_seed
    assert len(set(first)) > 1  # subtasks draw independently


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("domain", ["math", "mmlu", "rlpr"])
def test_accuracy_per_domain_matches_the_profile_by_the_pure_checks(profile, domain):
    results = [(fresh(k, profile), k) for k in keys(domain)]
    graded = [CHECK[k.check](r.text, k.target).correct for r, k in results]
    assert graded == [r.correct for r, _ in results]  # the flag agrees with the scorer's check
    assert within(sum(graded) / N, PROFILES[profile].accuracy[domain], N)


def test_wrong_answers_are_plausible_in_the_task_format():
    wrong = [r.text for k in keys("mmlu", 100) if not (r := fresh(k, "math-strong")).correct]
    assert wrong and all(t.splitlines()[-1] in {f"ANSWER: {c}" for c in "ABCD"} for t in wrong)
    numbers = [r.text.splitlines()[-1] for k in keys("math", 100) if not (r := fresh(k, "choice-strong")).correct]
    assert numbers and all(t.removeprefix("ANSWER: ").lstrip("-").isdigit() for t in numbers)


def verify_turns(seen: str) -> list[tuple[str, str]]:
    return [("user", "Q?\n\nYour subtask: solve"), ("assistant", seen), ("user", "Your subtask: check it")]


def test_verifying_a_visible_answer_follows_the_documented_rule():
    prof = PROFILES["mediocre"]
    p, t, c = prof.accuracy["math"], prof.trust, prof.catch
    items = keys("math", 800)
    firsts = [fresh(k, "math-strong") for k in items]
    second = [simulate(prof, k, verify_turns(f.text), 0) for k, f in zip(items, firsts, strict=True)]
    seen_right = [s.correct for f, s in zip(firsts, second, strict=True) if f.correct]
    seen_wrong = [s for f, s in zip(firsts, second, strict=True) if not f.correct]
    assert within(sum(seen_right) / len(seen_right), 1 - (1 - p) * (1 - t), len(seen_right))
    assert sum(seen_right) / len(seen_right) > p + 0.2  # confirming a right answer beats solving alone
    assert within(sum(s.correct for s in seen_wrong) / len(seen_wrong), c * p, len(seen_wrong))
    repeats = [(f, s) for f, s in zip(firsts, second, strict=True) if s.mode == "repeat"]
    assert repeats and all(f.text.splitlines()[-1] == s.text.splitlines()[-1] for f, s in repeats)


def test_a_turn_without_an_answer_is_not_a_visible_answer():
    key = keys("math", 1)[0]
    result = simulate(PROFILES["premium"], key, verify_turns("I would start by factoring."), 0)
    assert result.mode == "fresh"


def test_code_items_return_the_reference_or_a_wrong_program():
    reference = "n = int(input())\nprint(n * 2)"
    outs = [simulate(PROFILES["premium"], make_key(reference, "lcb", item_id=i), [("user", "x")], 0) for i in range(60)]
    assert {o.text.split("\n", 1)[1] == f"```python\n{reference}\n```" for o in outs} == {True, False}
    assert all((reference in o.text) == o.correct for o in outs)
    none = [simulate(PROFILES["premium"], make_key("", "lcb", item_id=i), [("user", "x")], 0) for i in range(20)]
    assert not any(o.correct for o in none) and all("```python" in o.text for o in none)


async def test_usage_and_cost_come_from_text_lengths_and_pool_prices():
    spec = load_pool("sim").workers[3]
    assert spec.model == "sim/premium" and spec.price.output > load_pool("sim").workers[0].price.output
    worker = Worker(get_model(spec.model), spec.model, price=spec.price)
    short, long = StepRecord(0, 0, spec.model, "s", []), StepRecord(0, 0, spec.model, "s", [])
    with answer_key(target="12", domain="math", item_id="cost"):
        await run_step(short, [ChatMessageUser(content="Q? " * 10)], worker, None, None)
        await run_step(long, [ChatMessageUser(content="Q? " * 400)], worker, None, None)
    assert short.ok and short.output.startswith("(simulated answer from sim/premium")
    assert short.usage.input_tokens == math.ceil(len("Q? " * 10) / 4)
    assert long.usage.input_tokens > short.usage.input_tokens
    assert short.usage.output_tokens == math.ceil(len(short.output) / 4) + PROFILES["premium"].reasoning_tokens
    assert short.usage.cost == pytest.approx(spec.price.cost(short.usage.input_tokens, short.usage.output_tokens))


async def test_without_a_key_the_call_fails_clearly_and_the_step_records_it():
    model = get_model("sim/mediocre")
    with pytest.raises(SimError, match="no answer key.*answer_key"):
        await model.generate("What is 2 + 2?")
    record = StepRecord(0, 0, "sim/mediocre", "s", [])
    await run_step(record, [ChatMessageUser(content="What is 2 + 2?")], Worker(model, "sim/mediocre"), None, None)
    assert not record.ok and "no answer key" in record.error


async def test_concurrent_tasks_each_see_their_own_key():
    model = get_model("sim/premium")

    async def ask(target: str) -> str:
        with answer_key(target=target, domain="mmlu", item_id=f"c{target}"):
            await asyncio.sleep(0)
            out = await model.generate([ChatMessageUser(content="Q"), ChatMessageAssistant(content="hm")])
            return out.metadata["correct"], out.completion, target

    for correct, text, target in await asyncio.gather(*(ask(t) for t in "ABCD" * 5)):
        assert (text.endswith(f"ANSWER: {target}")) == correct


def test_inspect_sample_gives_the_key_and_outputs_are_labelled_simulated():
    samples = [Sample(input=f"Q{i}", target="ABCD"[i % 4], choices=list("wxyz"), metadata={"domain": "mmlu"})
               for i in range(60)]  # fmt: skip
    log = eval(Task(dataset=samples, solver=generate(), scorer=choice_letter()), model="sim/choice-strong",
               display="none", log_format="json")[0]  # fmt: skip
    assert log.status == "success"
    outputs = [s.output for s in log.samples]
    assert all(o.model == "sim/choice-strong" and o.metadata["simulated"] for o in outputs)
    scores = [s.scores["choice_letter"].value == "C" for s in log.samples]
    assert scores == [o.metadata["correct"] for o in outputs]
    assert within(sum(scores) / 60, 0.9, 60)


def test_domain_comes_from_metadata_or_the_task_name_else_a_clear_error():
    sample = Sample(input="x", target="42", id=3)
    assert key_from_sample(sample, "gsm8k") == AnswerKey("42", "math", "numeric", None, "gsm8k/3")
    assert key_from_sample(sample, "pkg/rlpr").check == "math"
    tagged = Sample(input="x", target="B", metadata={"domain": "mmlu", "choices": ["a", "b", "c"]}, id=1)
    assert key_from_sample(tagged, "mine").choices == ("a", "b", "c")
    with pytest.raises(SimError, match="metadata 'domain'"):
        key_from_sample(sample, "my_task")
    # a task's own "domain" field (GPQA: the science) is not a simulation domain: the task decides
    gpqa = Sample(input="x", target="C", choices=["a", "b", "c", "d"], metadata={"domain": "Physics"}, id=7)
    key = key_from_sample(gpqa, "gpqa_diamond")
    assert key == AnswerKey("C", "mmlu", "choice", ("a", "b", "c", "d"), "gpqa_diamond/7")
    with pytest.raises(SimError, match="'Physics'"):
        key_from_sample(gpqa, "my_task")


def test_bad_keys_and_profiles_are_refused_with_the_fix():
    with pytest.raises(SimError, match="one of math, mmlu"):
        make_key("1", "physics")
    with pytest.raises(SimError, match="not a letter of 4 choices"):
        make_key("E", "mmlu")
    with pytest.raises(SimError, match="domain or a check"):
        make_key("1")
    with pytest.raises(SimError, match="exactly these domains"):
        parse_profiles({"profiles": {"x": {"accuracy": {"math": 0.5}, "trust": 0.5, "catch": 0.5}}}, "f")
    bad = {"accuracy": dict.fromkeys(("math", "mmlu", "rlpr", "lcb"), 1.5), "trust": 0.5, "catch": 0.5}
    with pytest.raises(SimError, match="between 0 and 1"):
        parse_profiles({"profiles": {"x": bad}}, "f")
    with pytest.raises(SimError, match="no simulated profile 'nope'"):
        get_model("sim/nope")


def test_the_sim_pool_says_simulation_and_lists_the_four_profiles():
    pool = load_pool("sim")
    assert "SIMULATION" in pool.description
    profiles = ("math-strong", "choice-strong", "mediocre", "premium")
    assert [w.model for w in pool.workers] == [f"sim/{p}" for p in profiles]
    assert all(w.price is not None and "simulated" in w.description for w in pool.workers)
