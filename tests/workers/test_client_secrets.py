"""A pool's header values and body strings reach the server, never Inspect's `.eval` log
(workers/client_secrets.py, workers/body_fields.py), and the log names a pool file by its stem
where the project writes it (docs/security.md, "What a record may hold").

The end-to-end test runs `inspect eval` as a user does, on a pool file whose one worker is an
OpenAI-compatible gateway (the loopback stand-in of tests/standins.py) with a bearer token in
`extra_headers` and a string in `extra_body`, then reads every member of the `.eval` file."""

from __future__ import annotations

import asyncio
import os
import sys
import zipfile
from pathlib import Path

import httpx2
import pytest
import yaml
from inspect_ai.log import read_eval_log
from standins import standins  # noqa: F401 (fixture)
from waits import run_command

from solvers.team import pool_workers
from workers.pools import PoolError, load_pool, parse_pool
from workers.redact import REDACTED

ROOT = Path(__file__).resolve().parents[2]
INSPECT = Path(sys.executable).parent / "inspect"
TOKEN = "sk-test-SECRET-5a0c2e9f41d7b38e6c1f"  # the gateway's bearer token
BODY_SECRET = "tenant-SECRET-body-value"  # no credential shape: only where it is written says so
QUESTION = "What is 6 times 7?"  # the scripted conductor runs a valid workflow on it (workers/scripted_workflows.py)
TASK = f'''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes

from tasks.common import checked_task


@task
@checked_task
def gateway_question():
    return Task(dataset=[Sample(input="{QUESTION}", target="42")], scorer=includes())
'''


def gateway_entry(url: str, model: str = "openai-api/gateway/gw-model", **config) -> dict:
    """A pool worker behind a gateway: a bearer token in its headers, a string in its body."""
    return {
        "model": model,
        "description": "a model behind the team's gateway",
        "model_args": {"base_url": f"{url}/openai/v1", "api_key": "standin"},
        "config": {"max_tokens": 64, "extra_headers": {"Authorization": f"Bearer {TOKEN}"},
                   "extra_body": {"route": {"tenant": BODY_SECRET}, "top_k": 20}, **config},
    }  # fmt: skip


def header(request, name: str) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get(name.lower())


@pytest.mark.slow
def test_inspect_eval_sends_the_gateway_credentials_and_logs_none_of_them(standins, tmp_path):  # noqa: F811
    pool = tmp_path / "gateway.yaml"
    pool.write_text(yaml.safe_dump({"conductor": "scripted/fixed-workflows", "workers": [gateway_entry(standins.url)]}))
    (tmp_path / "gateway_task.py").write_text(TASK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "XDG_DATA_HOME": str(tmp_path / "xdg")}  # fmt: skip
    command = [str(INSPECT), "eval", "gateway_task.py", "--solver", "conductor", "-S", f"pool={pool}",
               "--display", "none", "--log-dir", str(tmp_path / "logs")]  # fmt: skip
    done = run_command(command, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr

    requests = standins.generations("openai")
    assert requests and all(header(r, "authorization") == f"Bearer {TOKEN}" for r in requests)
    assert all(r.body["route"] == {"tenant": BODY_SECRET} and r.body["top_k"] == 20 for r in requests)
    [log_file] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    assert log.samples[0].output.completion in {r.text for r in requests}  # the workers' answers are the sample's
    with zipfile.ZipFile(log_file) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    assert any(b"gw-model" in data for data in members.values())  # the search reads the model events
    for secret in (TOKEN, BODY_SECRET, TOKEN[-12:], BODY_SECRET[-10:]):
        assert [name for name, data in members.items() if secret.encode() in data] == [], secret
    # the model events keep what cannot be a credential; the record names the headers it sent
    events = [e for e in log.samples[0].events if e.event == "model" and "gw-model" in e.model]
    assert len(events) == len(requests)
    assert all(e.config.extra_body == {"top_k": 20} and e.config.extra_headers is None for e in events)
    record = log.samples[0].metadata["conductor"]
    assert record["worker_configs"][0]["extra_headers"] == {"Authorization": REDACTED}
    assert record["worker_configs"][0]["extra_body"] == {"route": {"tenant": REDACTED}, "top_k": 20}
    # what the project writes names the pool by its file's stem (Inspect keeps `-S pool` as typed)
    assert log.eval.metadata["pool"] == "gateway"
    assert log.eval.solver_args == {"pool": str(pool)}


def worker_model(entry: dict):
    [worker] = pool_workers(parse_pool({"workers": [entry]}, default_name="t"))
    return worker.model


@pytest.mark.parametrize(
    "model", ["openai/gpt-4.1", "openai-api/gateway/gw-model", "anthropic/claude-sonnet-4-20250514"]
)
def test_each_client_provider_sends_the_headers_outside_the_config(model, standins):  # noqa: F811
    entry = gateway_entry(standins.url, model)
    if model.startswith("anthropic/"):  # its client takes headers; a body string would be in its logged request
        del entry["config"]["extra_body"]
        entry["model_args"] = {}
    elif model.startswith("openai/"):
        entry["model_args"] = {}
    worker = worker_model(entry)
    assert worker.config.extra_headers is None
    assert BODY_SECRET not in worker.config.model_dump_json()
    asyncio.run(worker.generate(QUESTION))
    [request] = standins.generations()
    assert header(request, "authorization") == f"Bearer {TOKEN}"
    assert request.body.get("route") == (None if model.startswith("anthropic/") else {"tenant": BODY_SECRET})


def test_a_field_the_call_sets_keeps_the_calls_value_and_two_tenants_stay_apart(standins):  # noqa: F811
    """A per-call extra_body (the executor's grammar) wins over a routed field, as extra_body merges
    in the SDK; two entries that differ only in a body string are two models (Inspect's memo would
    give both the first's HTTP client)."""
    from inspect_ai.model import GenerateConfig

    first = worker_model(gateway_entry(standins.url))
    other = gateway_entry(standins.url)
    other["config"]["extra_body"]["route"] = {"tenant": "other-tenant"}
    second = worker_model(other)
    asyncio.run(first.generate(QUESTION, config=GenerateConfig(extra_body={"route": "per-call", "top_k": 5})))
    asyncio.run(second.generate(QUESTION))
    sent = [(r.body["route"], r.body["top_k"]) for r in standins.generations()]
    assert sent == [("per-call", 5), ({"tenant": "other-tenant"}, 20)]


def test_in_process_workers_drop_the_mappings(standins):  # noqa: F811
    """A simulated worker sends no request: its headers and body strings have nowhere to go."""
    entry = {"model": "sim/math-strong", "config": gateway_entry(standins.url)["config"]}
    config = worker_model(entry).config
    assert config.extra_headers is None and config.extra_body == {"top_k": 20}


@pytest.mark.parametrize(
    "model, field",
    [("google/gemini-2.5-pro", "extra_headers"), ("vllm/Qwen/Qwen3-32B", "extra_headers"),
     ("anthropic/claude-sonnet-4-20250514", "extra_body.route"), ("openai/gpt-4.1", "extra_body.route")],
)  # fmt: skip
def test_a_provider_that_takes_them_only_in_the_config_is_refused_at_load(model, field, tmp_path):
    """The openai case batches: Inspect builds its batch files from the config."""
    entry = {"model": model, "config": {"extra_headers": {"X-Key": "k"}, "extra_body": {"route": "eu"}}}
    if field.startswith("extra_body"):
        del entry["config"]["extra_headers"]
    if model.startswith("openai/"):
        entry["config"]["batch"] = True
    pool = tmp_path / "p.yaml"
    pool.write_text(yaml.safe_dump({"workers": [entry]}))
    with pytest.raises(PoolError) as refused:
        load_pool(str(pool))
    message = str(refused.value)
    assert f"workers[0] ({model}).config.{field}: " in message
    assert "takes it only in the generate config, which every model event of the .eval log records whole" in message
    assert "; fix: remove it" in message


def test_inspect_still_offers_the_http_defaults_the_body_client_wraps():
    """workers/body_fields.py builds on this private Inspect name: if it moves, this fails first."""
    from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs

    kwargs = default_client_kwargs(trust_env=False)
    assert isinstance(kwargs["transport"], httpx2.AsyncBaseTransport)
    assert all(t is None or isinstance(t, httpx2.AsyncBaseTransport) for t in kwargs["mounts"].values())
