"""API workers that fail: a 429 then success, repeated 5xx, a stalled call (stand-ins, real SDKs).

The test pool sets each worker's call budget explicitly (`timeout`, `attempt_timeout`,
`max_retries`), so the tests do not depend on the bundled pools' defaults. A tight budget is
given only to calls whose outcome is its time-out (a stall); the others get minutes, which a
healthy call never waits for: on a busy machine a first call's set-up alone can take seconds.
Every workflow runs the four providers' workers concurrently, Qwen (vLLM) last: its answer is
the sample's.
"""

from __future__ import annotations

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from installed import needs
from scripted import scripted
from standins import Fault, standins  # noqa: F401 (fixture)
from test_api_pools import every_worker

from solvers.conductor import conductor

pytestmark = needs("anthropic", "google.genai", extra="api")  # the API pools' SDKs

MODELS = {
    "google": ("google/gemini-2.5-pro", {"temperature": 0.2, "reasoning_tokens": 128}),
    "anthropic": ("anthropic/claude-sonnet-4-20250514", {}),
    "openai": ("openai/gpt-5", {"reasoning_effort": "minimal"}),
    "vllm": ("vllm/Qwen/Qwen3-32B", {"temperature": 0.2}),
}


GENEROUS = {"timeout": 600, "attempt_timeout": 300}


def fault_pool(path, tight: dict | None = None, tight_for: tuple[str, ...] = (), **budget) -> str:
    """A pool file of one worker per provider with the given call budget (`tight` instead for
    the providers in `tight_for`)."""
    workers = [
        {"model": model, "config": {"max_tokens": 512, **config, **(tight if name in tight_for else budget)},
         "price": {"input": 1.0, "output": 2.0}}
        for name, (model, config) in MODELS.items()
    ]  # fmt: skip
    path.write_text(yaml.safe_dump({"name": "faults", "workers": workers}))
    return str(path)


def run(pool: str, log_dir):
    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42", id="q")],
        solver=conductor(pool=pool, max_steps=len(MODELS)),
        scorer=includes(),
    )
    [log] = eval(task, model=scripted(every_worker(len(MODELS))), display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    [sample] = log.samples
    steps = {s["model"].split("/", 1)[0]: s for s in sample.metadata["conductor"]["round"]["steps"]}
    return sample, steps


@pytest.mark.slow
def test_rate_limited_once_then_answered(standins, tmp_path):  # noqa: F811
    pool = fault_pool(tmp_path / "pool.yaml", **GENEROUS, max_retries=2)
    for provider in MODELS:
        standins.script(provider, Fault(status=429))
    sample, steps = run(pool, tmp_path)
    assert sample.scores["includes"].value == "C"
    for provider, step in steps.items():
        assert step["error"] is None and step["output"].startswith("ANSWER: 42"), step
        statuses = [r.status for r in standins.generations(provider) if r.model in step["model"]]
        assert statuses[0] == 429 and statuses[-1] == 200, (provider, statuses)
        assert step["usage"]["output_tokens"] > 0


@pytest.mark.slow
def test_repeated_server_errors_fail_the_step_with_the_reason(standins, tmp_path):  # noqa: F811
    pool = fault_pool(tmp_path / "pool.yaml", **GENEROUS, max_retries=0)
    standins.script("openai", always=Fault(status=500))
    standins.script("anthropic", always=Fault(status=529))
    standins.script("google", always=Fault(status=503))
    sample, steps = run(pool, tmp_path)
    assert sample.scores["includes"].value == "C"  # the last step (vLLM) answered
    assert steps["vllm"]["error"] is None
    for provider, status in (("openai", 500), ("anthropic", 529), ("google", 503)):
        error = steps[provider]["error"]
        assert error.startswith(f"{provider} HTTP {status} (") and f"stand-in fault {status}" in error, error
        assert steps[provider]["usage"]["cost"] == 0.0


def test_stalled_call_ends_within_its_budget(standins, tmp_path):  # noqa: F811
    # only the attempt's limit is tight: the call's overall one starts earlier (its set-up, seconds on a busy
    # machine), so a tight one could end the call first, with its own error
    budget = {"timeout": GENEROUS["timeout"], "attempt_timeout": 1, "max_retries": 0}
    pool = fault_pool(tmp_path / "pool.yaml", budget, ("anthropic", "google"), **GENEROUS, max_retries=0)
    standins.script("anthropic", always=Fault(stall=10))
    standins.script("google", always=Fault(stall=10))
    sample, steps = run(pool, tmp_path)
    assert sample.scores["includes"].value == "C"
    for provider in ("anthropic", "google"):  # attempts counted, not timed: a busy machine is slow, not wrong
        step = steps[provider]
        assert step["error"] == f"{provider} (AttemptTimeoutError): attempt_timeout '1' exceeded.", step["error"]
        assert len(standins.generations(provider)) <= 1  # no retry (a starved attempt may end before sending)
        assert step["latency"] >= budget["attempt_timeout"]  # it waited out its attempt, and that ended it


def test_request_over_the_context_length_is_a_failed_step(standins, tmp_path):  # noqa: F811
    """Inspect returns a context-length refusal as an answer (the API's error text, stop
    reason model_length, no usage); the step is recorded as failed, not as that answer."""
    pool = tmp_path / "pool.yaml"
    workers = [{"model": "vllm/Qwen/Qwen3-32B", "config": {"max_tokens": 50000, "max_retries": 0}}]
    pool.write_text(yaml.safe_dump({"name": "too-long", "workers": workers}))
    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42")], solver=conductor(pool=str(pool)), scorer=includes()
    )
    [log] = eval(task, model=scripted(every_worker(1)), display="none", log_dir=str(tmp_path))
    [step] = log.samples[0].metadata["conductor"]["round"]["steps"]
    assert step["output"] == "" and step["error"].startswith("vllm: the request is too long for the model ("), step
    assert "maximum context length is 40960 tokens" in step["error"]
    assert [r.status for r in standins.generations("vllm")] == [400]
