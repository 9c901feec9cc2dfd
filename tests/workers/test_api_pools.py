"""Every bundled `paper*` pool end to end through the providers' real SDKs (openai, anthropic,
google-genai, as Inspect calls them) against loopback stand-ins of their APIs (tests/standins.py).

A scripted conductor names every worker once; the eval runs the pool's real workers. Per
worker: the request carries the paper's settings (PAPER.md "Training" and "Worker pool and
budgets", minus what the provider drops, workers/provider_settings.py), the step records that
config, and its tokens and cost equal what the stand-in returned x the pool's prices.
"""

from __future__ import annotations

import math

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from installed import needs
from scripted import scripted
from standins import standins  # noqa: F401 (fixture)

from solvers import executor
from solvers.conductor import conductor
from workers.pools import bundled_pools, load_pool
from workers.provider_settings import CLIENT_FIELDS, effective_config

pytestmark = needs("anthropic", "google.genai", extra="api")  # the API pools' SDKs

GEMINI, CLAUDE, GPT5 = "google/gemini-2.5-pro", "anthropic/claude-sonnet-4-20250514", "openai/gpt-5"
R1, GEMMA, QWEN = "vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "vllm/google/gemma-3-27b-it", "vllm/Qwen/Qwen3-32B"
QWEN_TOPS = {"top_p": 0.8, "presence_penalty": 1.0}  # PAPER.md: both Qwen3 workers, constrained


def _qwen(thinking: bool, **settings) -> tuple[str, dict]:
    extra = {"chat_template_kwargs": {"enable_thinking": thinking}}
    if "top_p" in settings:
        extra = {"top_k": 20, **extra}
    return QWEN, {**settings, "extra_body": extra}


# What PAPER.md says each worker is sent, as the request carries it (Claude: no temperature,
# the API takes none since version 2026-10-21; GPT-5: no temperature, only its default).
CONSTRAINED = {
    GEMINI: {"max_tokens": 4096, "temperature": 0.2, "reasoning_tokens": 128},
    CLAUDE: {"max_tokens": 4096},
    GPT5: {"max_tokens": 4096, "reasoning_effort": "minimal"},
    R1: {"max_tokens": 4096, "temperature": 0.2},
    GEMMA: {"max_tokens": 4096, "temperature": 0.2},
}
UNCONSTRAINED = {
    GEMINI: {"max_tokens": 65535, "reasoning_tokens": 32768},
    CLAUDE: {"max_tokens": 64000, "reasoning_tokens": 32768},
    GPT5: {"max_tokens": 128000, "reasoning_effort": "high"},
    R1: {"max_tokens": 20480},
    GEMMA: {"max_tokens": 20480},
}
QWEN_CONSTRAINED = [_qwen(t, max_tokens=4096, temperature=0.2, **QWEN_TOPS) for t in (False, True)]
QWEN_UNCONSTRAINED = [_qwen(t, max_tokens=20480) for t in (False, True)]
PAPER_SETTINGS = {
    "paper-constrained": [*CONSTRAINED.items(), *QWEN_CONSTRAINED],
    "paper": [*UNCONSTRAINED.items(), *QWEN_UNCONSTRAINED],
    "paper-closed": [(m, CONSTRAINED[m]) for m in (GEMINI, CLAUDE, GPT5)],
    "paper-open": [(R1, CONSTRAINED[R1]), (GEMMA, CONSTRAINED[GEMMA]), *QWEN_CONSTRAINED],
    "paper-frontier": [(m, UNCONSTRAINED[m]) for m in (GPT5, GEMINI, CLAUDE)],
}


def wire(config: dict) -> dict:
    """The part of a config that goes into requests (not the client's budgets)."""
    return {k: v for k, v in config.items() if k not in CLIENT_FIELDS}


def every_worker(n: int) -> str:
    """A conductor completion naming workers 0..n-1 once each, none seeing another."""
    return f"model_id = {list(range(n))}\nsubtasks = {['Solve the question.'] * n}\naccess_list = {[[]] * n}"


def run_pool(pool: str, log_dir, **solver_args):
    """One sample through the conductor solver with a scripted conductor; the log."""
    n = len(load_pool(pool).workers)
    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42", id="q")],
        solver=conductor(pool=pool, max_steps=n, **solver_args),
        scorer=includes(),
    )
    [log] = eval(task, model=scripted(every_worker(n)), display="none", log_dir=str(log_dir))
    return log


def test_every_paper_pool_is_checked():
    assert sorted(PAPER_SETTINGS) == sorted(p for p in bundled_pools() if p.startswith("paper"))


@pytest.mark.parametrize("pool", sorted(PAPER_SETTINGS))
def test_paper_pool_end_to_end(pool, standins, tmp_path):  # noqa: F811
    spec = load_pool(pool)
    log = run_pool(pool, tmp_path)
    assert log.status == "success", log.error
    [sample] = log.samples
    assert sample.scores["includes"].value == "C"
    record = sample.metadata["conductor"]
    steps = record["round"]["steps"]
    assert [s["model"] for s in steps] == [w.model for w in spec.workers]
    by_text = {r.text: r for r in standins.generations() if r.text}
    total = 0.0
    for step, worker, (model, paper) in zip(steps, spec.workers, PAPER_SETTINGS[pool], strict=True):
        assert step["error"] is None and worker.model == model
        request = by_text[step["output"]]  # the reply names its request
        assert request.model == model.split("/", 1)[1]
        assert request.settings() == paper, f"{pool}: {model} was sent {request.settings()}"
        assert wire(step["config"]) == wire(effective_config(model, worker.config)) == request.settings()
        tokens_in, tokens_out = request.usage
        assert (step["usage"]["input_tokens"], step["usage"]["output_tokens"]) == (tokens_in, tokens_out)
        cost = (tokens_in * worker.price.input + tokens_out * worker.price.output) / 1e6
        assert math.isclose(step["usage"]["cost"], cost, rel_tol=1e-12)
        total += cost
    assert math.isclose(record["worker_cost_usd"], total, rel_tol=1e-12)
    assert [s["config"] for s in steps] == record["worker_configs"]


def test_claude_temperature_is_dropped_with_a_warning(standins, tmp_path, caplog, monkeypatch):  # noqa: F811
    """The pools ask Claude for temperature 0.2; the request has none, and the run says so."""
    monkeypatch.setattr(executor, "_warned", set())  # warned once per process: start afresh
    run_pool("paper-closed", tmp_path)
    [claude] = standins.generations("anthropic")
    assert "temperature" not in claude.body
    assert any("anthropic/claude-sonnet-4-20250514: pool setting temperature=0.2 is not sent" in r.getMessage()
               for r in caplog.records)  # fmt: skip
