"""Pool files: bundled pools follow the paper, user files load by path, every bad file is
refused at load with one message naming the file, the entry, the field and the fix."""

import json
import re

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, TaskState, solver

from solvers.team import CONDUCTOR_MAX_TOKENS, Overrides, eval_conductor, resolve_team
from workers.pools import PoolError, Price, bundled_pools, known_prices, load_pool

PAPER_MODELS = {
    "gemini": "google/gemini-2.5-pro",
    "claude": "anthropic/claude-sonnet-4-20250514",
    "gpt5": "openai/gpt-5",
    "r1": "vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "gemma": "vllm/google/gemma-3-27b-it",
    "qwen": "vllm/Qwen/Qwen3-32B",
}


def by_model(pool: str) -> dict[str, list]:
    specs: dict[str, list] = {}
    for w in load_pool(pool).workers:
        specs.setdefault(w.model, []).append(w)
    return specs


def test_bundled_pools_load():
    assert {"local", "paper", "paper-constrained", "paper-closed", "paper-open", "paper-frontier"} <= set(
        bundled_pools()
    )
    local = load_pool("local")
    assert local.conductor.model == "local/smollm2-135m" and local.conductor.grammar
    assert [w.model for w in local.workers] == ["local/smollm2-135m", "local/gemma3-270m"]
    paper = load_pool("paper")
    assert len(paper.workers) == 7 and paper.conductor is None
    assert all(w.price is not None for w in paper.workers)


@pytest.mark.parametrize("pool", ["paper", "paper-constrained", "paper-closed", "paper-open", "paper-frontier"])
def test_paper_pools_make_no_claims_to_the_conductor(pool):
    """Workers are shown as Model 0..k-1 only: no description that names or praises a model."""
    assert all(w.description == "" for w in load_pool(pool).workers)


def test_constrained_pool_has_the_papers_training_settings():
    workers = load_pool("paper-constrained").workers
    assert len(workers) == 7
    for w in workers:
        assert w.config["max_tokens"] == 4096
        assert w.config.get("temperature", 0.2) == 0.2  # GPT-5 accepts only its default
    specs = by_model("paper-constrained")
    assert specs[PAPER_MODELS["gemini"]][0].config["reasoning_tokens"] == 128
    assert "reasoning_tokens" not in specs[PAPER_MODELS["claude"]][0].config  # no thinking
    assert specs[PAPER_MODELS["gpt5"]][0].config["reasoning_effort"] == "minimal"
    direct, thinking = specs[PAPER_MODELS["qwen"]]
    for qwen in (direct, thinking):
        top_k = qwen.config["extra_body"]["top_k"]  # Inspect's vllm provider drops GenerateConfig.top_k
        assert (qwen.config["top_p"], top_k, qwen.config["presence_penalty"]) == (0.8, 20, 1.0)
        assert "top_k" not in qwen.config
    assert direct.config["extra_body"]["chat_template_kwargs"]["enable_thinking"] is False
    assert thinking.config["extra_body"]["chat_template_kwargs"]["enable_thinking"] is True


def test_unconstrained_pool_has_the_papers_table3_budgets():
    specs = by_model("paper")
    gemini, claude, gpt5 = (specs[PAPER_MODELS[k]][0] for k in ("gemini", "claude", "gpt5"))
    assert (gemini.config["max_tokens"], gemini.config["reasoning_tokens"]) == (65535, 32768)
    assert (claude.config["max_tokens"], claude.config["reasoning_tokens"]) == (64000, 32768)
    assert (gpt5.config["max_tokens"], gpt5.config["reasoning_effort"]) == (128000, "high")
    for key in ("r1", "gemma", "qwen"):
        assert all(w.config["max_tokens"] == 20480 for w in specs[PAPER_MODELS[key]])
    assert specs[PAPER_MODELS["qwen"]][1].config["extra_body"]["chat_template_kwargs"]["enable_thinking"]


def test_gpt5_reasoning_is_medium_on_bigcodebench_only():
    for pool in ("paper", "paper-frontier"):
        gpt5 = by_model(pool)[PAPER_MODELS["gpt5"]][0]
        assert gpt5.config_for("bigcodebench")["reasoning_effort"] == "medium"
        assert gpt5.config_for("conductor_bench/bigcodebench")["reasoning_effort"] == "medium"
        assert gpt5.config_for("livecodebench")["reasoning_effort"] == "high"
        assert gpt5.config_for(None)["reasoning_effort"] == "high"
        assert gpt5.config_for("bigcodebench")["max_tokens"] == 128000


def test_figure6_and_table11_pools():
    assert {w.model for w in load_pool("paper-closed").workers} == {
        PAPER_MODELS[k] for k in ("gemini", "claude", "gpt5")
    }
    assert all(w.config["max_tokens"] == 4096 for w in load_pool("paper-closed").workers)
    open_models = [w.model for w in load_pool("paper-open").workers]
    assert sorted(open_models) == sorted([PAPER_MODELS[k] for k in ("r1", "gemma")] + [PAPER_MODELS["qwen"]] * 2)
    assert all(w.config["max_tokens"] == 4096 for w in load_pool("paper-open").workers)
    frontier = load_pool("paper-frontier").workers
    assert {w.model for w in frontier} == {PAPER_MODELS[k] for k in ("gemini", "claude", "gpt5")}
    assert {w.config["max_tokens"] for w in frontier} == {128000, 65535, 64000}


def test_user_pool_file_by_path(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "workers:\n  - model: openai/gpt-5\n    price: {input: 1, output: 2}\n"
        "    description: my fast worker\n  - anthropic/claude-x\n"
    )
    pool = load_pool(str(path))
    assert pool.name == "mine"
    assert pool.workers[0].price == Price(1.0, 2.0) and pool.workers[1].price is None
    assert pool.workers[0].description == "my fast worker"


WORKER = "workers:\n  - model: openai/gpt-5\n"


@pytest.mark.parametrize(
    ("text", "where", "fix"),
    [
        ("workers: []\n", "workers", "at least one worker"),
        ("- openai/gpt-5\n", "top level", "workers:"),
        ("worker:\n  - openai/gpt-5\n", "top level.worker", "did you mean `workers`"),
        ("workers:\n  - {model: a, colour: red}\n", r"workers\[0\] \(a\)\.colour", "allowed:"),
        ("workers:\n  - {model: a, grammer: true}\n", r"workers\[0\] \(a\)\.grammer", "did you mean `grammar`"),
        ("workers:\n  - {description: x}\n", r"workers\[0\]\.model", "provider/name"),
        ("workers:\n  - 7\n", r"workers\[0\]", "provider/model"),
        (WORKER + "    price: {input: -1, output: 2}\n", r"workers\[0\] \(openai/gpt-5\)\.price\.input", ">= 0"),
        (
            WORKER + "    price: {input: 1, output: '2'}\n",
            r"price\.output: expected a number, got str",
            "USD per million",
        ),
        (WORKER + "    price: {input: .nan, output: 2}\n", r"price\.input: must be a finite", ">= 0"),
        (WORKER + "    price: {input: 1}\n", r"price\.output: expected a number, got nothing", "USD"),
        (
            WORKER + "    price: {input: 1, output: 2, cached: 0}\n",
            r"price\.cached: unknown key",
            "allowed: input, output",
        ),
        (WORKER + "    price: 3\n", r"\.price: expected a mapping", "USD"),
        (WORKER + '    grammar: "false"\n', r"\.grammar: expected true or false, got str 'false'", "without quotes"),
        (WORKER + "    grammar: 1\n", r"\.grammar: expected true or false", "without quotes"),
        (WORKER + "    description: 5\n", r"\.description: expected text", "quote it"),
        (
            WORKER + "    config: {max_token: 10}\n",
            r"\.config\.max_token: unknown Inspect GenerateConfig field",
            "did you mean `max_tokens`",
        ),
        (WORKER + "    config: {temperature: hot}\n", r"\.config\.temperature: .*'hot'", "GenerateConfig documents"),
        (WORKER + "    config: {reasoning_effort: extreme}\n", r"\.config\.reasoning_effort", "GenerateConfig"),
        (WORKER + "    config: [1]\n", r"\.config: expected a mapping", "max_tokens: 4096"),
        (WORKER + "    config: {timeout: -5}\n", r"\.config\.timeout: must be > 0, got -5", "more than 0"),
        (WORKER + "    config: {attempt_timeout: 0}\n", r"\.config\.attempt_timeout: must be > 0", "more than 0"),
        (WORKER + "    config: {max_retries: -1}\n", r"\.config\.max_retries: must be >= 0", "at least 0"),
        (WORKER + "    config: {max_tokens: 0}\n", r"\.config\.max_tokens: must be > 0", "more than 0"),
        (WORKER + "    config: {temperature: -0.5}\n", r"\.config\.temperature: must be >= 0", "at least 0"),
        (WORKER + "    model_args: 3\n", r"\.model_args: expected a mapping", "base_url"),
        (
            WORKER + "    task_overrides: {bigcodebench: {reasoning_efort: medium}}\n",
            r"task_overrides\.bigcodebench\.reasoning_efort: unknown",
            "did you mean `reasoning_effort`",
        ),
        (
            WORKER + "    task_overrides: {bigcodebench: medium}\n",
            r"task_overrides\.bigcodebench: expected a non-empty",
            "task name -> config",
        ),
        (WORKER + "    task_overrides: [bigcodebench]\n", r"task_overrides: expected a mapping", "task name -> config"),
        ("workers: [a]\nconductor: {model: b, grammar: 'yes'}\n", r"conductor \(b\)\.grammar", "without quotes"),
        ("workers: [a]\nname: [x]\n", r"top level\.name: expected text", "quote it"),
        (
            "workers:\n  - {model: vllm/m, config: {top_k: 20}}\n",
            r"\(vllm/m\)\.config\.top_k: Inspect's vllm provider",
            "extra_body: {top_k: 20}",
        ),
        ("workers: [sim/mediocer]\n", r"workers\[0\] \(sim/mediocer\)\.model: no simulated profile", "sim/mediocre"),
        ("workers: [sim/zzz]\n", r"no simulated profile 'zzz'", "use sim/<one of math-strong"),
        (
            "workers:\n  - {model: sim/premium, model_args: {profiles: /nonexistent/p.yaml}}\n",
            r"\(sim/premium\)\.model_args\.profiles: simulated profiles file",
            "profiles YAML",
        ),
    ],
)
def test_malformed_pool_names_file_entry_field_and_fix(tmp_path, text, where, fix):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(PoolError) as error:
        load_pool(str(path))
    message = str(error.value)
    assert message.startswith(f"pool file {path}: ")
    assert re.search(where, message), message
    assert "fix: " in message and fix in message.split("fix: ", 1)[1], message
    assert "\n" not in message


def test_invalid_yaml_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("workers: [a\n")
    with pytest.raises(PoolError, match="not valid YAML") as error:
        load_pool(str(path))
    assert "line 1" in str(error.value) and "\n" not in str(error.value)


def test_unknown_pool_lists_the_bundled_ones():
    with pytest.raises(PoolError, match="local"):
        load_pool("no-such-pool")


def test_prices_and_cost():
    assert known_prices()["openai/gpt-5"] == Price(1.25, 10.0)
    assert Price(2.0, 10.0).cost(1_000_000, 100_000) == pytest.approx(3.0)


# ----------------------------------------------------------------- team.py applies the pool


@solver
def record_configs(pool: str, conductor_max_tokens: int | None = None):
    """Resolve the team inside a running sample and keep the configs it would call with."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        team = resolve_team(pool, Overrides(max_tokens=conductor_max_tokens), lead=eval_conductor())
        workers, lead = team.workers, team.conductor
        state.metadata["efforts"] = [w.model.config.reasoning_effort for w in workers]
        state.metadata["worker_max_tokens"] = [w.model.config.max_tokens for w in workers]
        state.metadata["conductor_max_tokens"] = lead.model.config.max_tokens
        return state

    return solve


def run_configs(
    pool: str, task_name: str, model: str = "mockllm/model", conductor_max_tokens: int | None = None
) -> dict:
    solver = record_configs(pool, conductor_max_tokens)
    task = Task(dataset=[Sample(input="q", target="a")], solver=solver, name=task_name)
    [log] = eval(task, model=model, display="none", log_dir=None)
    assert log.status == "success", log.error
    return log.samples[0].metadata


@pytest.fixture
def override_pool(tmp_path):
    path = tmp_path / "override.yaml"
    path.write_text(
        "workers:\n"
        "  - model: mockllm/model\n"
        "    config: {max_tokens: 64, reasoning_effort: high}\n"
        "    task_overrides: {bigcodebench: {reasoning_effort: medium}}\n"
        "  - model: mockllm/model\n"
        "    config: {max_tokens: 32}\n"
        "conductor: {model: mockllm/model}\n"
    )
    return str(path)


def test_team_applies_task_overrides_by_the_running_task(override_pool):
    on_bcb = run_configs(override_pool, "bigcodebench")
    assert on_bcb["efforts"] == ["medium", None]
    assert on_bcb["worker_max_tokens"] == [64, 32]
    assert run_configs(override_pool, "livecodebench")["efforts"] == ["high", None]


@pytest.mark.slow
def test_conductor_gets_the_papers_budget_unless_set(override_pool):
    assert CONDUCTOR_MAX_TOKENS == 1024
    assert run_configs(override_pool, "gpqa")["conductor_max_tokens"] == 1024
    assert run_configs(override_pool, "gpqa", conductor_max_tokens=2048)["conductor_max_tokens"] == 2048
    # no eval model: the pool's conductor, with the paper's budget or the pool's own
    assert run_configs(override_pool, "gpqa", model="none/none")["conductor_max_tokens"] == 1024
    assert run_configs("local", "gpqa", model="none/none")["conductor_max_tokens"] == 512


def test_qwen3_sampling_reaches_the_vllm_request():
    """top-p, top-k, presence penalty and the thinking switch are in the request Inspect's
    vllm provider would send (it drops GenerateConfig.top_k, hence extra_body). No server."""
    from inspect_ai.model import GenerateConfig, get_model

    for pool in ("paper-constrained", "paper-open"):
        direct, thinking = by_model(pool)[PAPER_MODELS["qwen"]]
        for spec, enabled in ((direct, False), (thinking, True)):
            model = get_model(
                spec.model, base_url="http://127.0.0.1:9/v1", api_key="unused",
                config=GenerateConfig(**spec.config), memoize=False,
            )  # fmt: skip
            params = model.api.completion_params(model.config, tools=False)
            assert (params["top_p"], params["presence_penalty"], params["temperature"]) == (0.8, 1.0, 0.2)
            assert params["extra_body"] == {"top_k": 20, "chat_template_kwargs": {"enable_thinking": enabled}}
            assert params["max_tokens"] == 4096


HEADER_SECRET = "s3cr3t-value"


@pytest.mark.parametrize(
    ("headers", "where", "fix"),
    [
        ({"X Key": "v"}, r"extra_headers: header name 'X Key' is not an HTTP token", "letters, digits"),
        ({"X-Key:": "v"}, r"header name 'X-Key:' is not an HTTP token", "e.g. X-Api-Key"),
        ({"X-K\u00e9y": "v"}, r"header name 'X-K\\xe9y'", "letters, digits"),
        ({"": "v"}, r"header name '' is not an HTTP token", "letters, digits"),
        ({"X-Key": HEADER_SECRET + "\r\nX-Evil: 1"}, r"extra_headers\.X-Key: the value holds a line break", "one line"),
        ({"X-Key": HEADER_SECRET + "\n"}, r"line break or NUL", "one line"),
        ({"X-Key": HEADER_SECRET + "\0"}, r"line break or NUL", "one line"),
        ({"X-Key": HEADER_SECRET + "\u00e9"}, r"X-Key: the value holds a non-ASCII character", "base64"),
        ({"X-Key": HEADER_SECRET + "\u2603"}, r"non-ASCII character", "percent-"),
        ({"X-Key": " " + HEADER_SECRET}, r"starts or ends with white space", "remove the leading"),
        ({"X-Key": HEADER_SECRET + "\x7f"}, r"X-Key: the value holds a control character", "visible text"),
        ({"X-Key": 5}, r"extra_headers\.X-Key: expected text, got int", "quote the value"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("place", ["config", "task_overrides", "model_args"])
def test_headers_http_cannot_carry_are_refused_at_load_without_their_value(tmp_path, headers, where, fix, place):
    entry = {"model": "openai/gpt-5"}
    if place == "config":
        entry["config"] = {"extra_headers": headers}
    elif place == "task_overrides":
        entry["task_overrides"] = {"math500": {"extra_headers": headers}}
    else:
        entry["model_args"] = {"default_headers": headers}
        where = where.replace("extra_headers", r"model_args\.default_headers")
    path = tmp_path / "headers.yaml"
    path.write_text(json.dumps({"workers": [entry]}))  # JSON is YAML: every character written as given
    with pytest.raises(PoolError) as error:
        load_pool(str(path))
    message = str(error.value)
    assert re.search(where, message), message
    assert fix in message.split("fix: ", 1)[1] and "\n" not in message and HEADER_SECRET not in message


def test_headers_http_can_carry_load(tmp_path):
    headers = {"Authorization": "Bearer a.b-c_d~e+f/g=", "X-Org!#$%&'*+-.^_`|~": "team a\tb", "X-Empty": ""}
    path = tmp_path / "headers.yaml"
    path.write_text(json.dumps({"workers": [{"model": "openai/gpt-5", "config": {"extra_headers": headers},
                                             "model_args": {"default_headers": headers}}]}))  # fmt: skip
    spec = load_pool(str(path)).workers[0]
    assert spec.config["extra_headers"] == headers and spec.model_args["default_headers"] == headers
