"""No credential of the conductor or a worker reaches a record, even when a gateway echoes it in an
error (workers/clean_errors.py, workers/redact.py): every member of the `.eval` log (Inspect's own
model events included) and every response of the endpoint is searched for each secret.

The loopback stand-ins (tests/standins.py) answer every call with an error that quotes the
credentials the request carried, by each provider's path into Inspect: an exception (anthropic 401,
google 500), an error returned with its call (vLLM 403) and an error Inspect turns into an answer
(OpenAI's 400 `context_length_exceeded`). No secret has a token's shape (letters and digits mixed),
so only the rule by origin (what the models were given) can remove them.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path

import httpx
import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import includes
from installed import Deferred, needs
from scripted import scripted
from standins import Fault, standins  # noqa: F401 (fixture)
from test_api_pools import every_worker
from test_serve import client, running
from waits import WAIT_S

from solvers.conductor import conductor
from workers.clean_errors import guard_errors
from workers.provider_errors import describe_error

openai = Deferred("openai")

pytestmark = needs("anthropic", "google.genai", extra="api")  # the API pools' SDKs

CONDUCTOR_KEY = "conductor-secret-key"
HEADER = "gateway-header-secret"
WORKERS = {  # provider -> (model, its API key, the stand-in's fault)
    "openai": ("openai-api/gateway/gw-model", "openai-worker-secret", Fault(400, echo=True,
                                                                            code="context_length_exceeded")),
    "anthropic": ("anthropic/claude-sonnet-4-20250514", "anthropic-worker-secret", Fault(401, echo=True)),
    "google": ("google/gemini-2.5-pro", "google-worker-secret", Fault(500, echo=True)),
    "vllm": ("vllm/Qwen/Qwen3-32B", "vllm-worker-secret", Fault(403, echo=True)),
}  # fmt: skip
SECRETS = (CONDUCTOR_KEY, HEADER, *(key for _, key, _ in WORKERS.values()))
QUESTION = "What is 6 * 7?"


def echoing_pool(path: Path, url: str) -> str:
    """A pool of one worker per provider, each with its own key (and a header where the client takes one)."""
    workers = []
    for provider, (model, key, _) in WORKERS.items():
        config = {"max_tokens": 64, "max_retries": 0, "timeout": WAIT_S}  # a healthy call: room
        if provider in ("openai", "anthropic"):
            config["extra_headers"] = {"X-Gateway-Key": HEADER}
        args = {"api_key": key, **({"base_url": f"{url}/openai/v1"} if provider == "openai" else {})}
        workers.append({"model": model, "config": config, "model_args": args})
    path.write_text(yaml.safe_dump({"name": "echoing", "workers": workers}))
    return str(path)


def conductor_model():
    """The conductor: an OpenAI model with its own key (through the stand-in's OpenAI route)."""
    return get_model("openai/gpt-5", api_key=CONDUCTOR_KEY, memoize=False, config=GenerateConfig(max_retries=0))


def log_members(log_dir: Path) -> dict[str, bytes]:
    [log_file] = log_dir.glob("*.eval")
    with zipfile.ZipFile(log_file) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def found(texts: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(secret, where) for where, text in texts.items() for secret in SECRETS if secret.encode() in text]


def run_eval(pool: str, lead, log_dir: Path):
    task = Task(dataset=[Sample(input=QUESTION, target="42", id="q")],
                solver=conductor(pool=pool, max_steps=len(WORKERS)), scorer=includes())  # fmt: skip
    [log] = eval(task, model=lead, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    return log.samples[0].metadata["conductor"]


def script_faults(stand) -> None:
    for provider, (_, _, fault) in WORKERS.items():
        stand.script(provider, always=fault)


@pytest.mark.slow
def test_a_gateway_echoing_the_workers_credentials_leaves_none_in_the_log(standins, tmp_path):  # noqa: F811
    script_faults(standins)
    record = run_eval(echoing_pool(tmp_path / "echoing.yaml", standins.url), scripted(every_worker(len(WORKERS))),
                      tmp_path / "logs")  # fmt: skip
    members = log_members(tmp_path / "logs")
    assert found(members) == []
    errors = {s["model"].split("/", 1)[0]: s["error"] for s in record["round"]["steps"]}
    echoed = {r.provider for r in standins.generations() if r.status >= 400}
    assert echoed == set(WORKERS) and all("stand-in fault" in e and "[redacted]" in e for e in errors.values()), errors
    events = b"".join(v for k, v in members.items() if k.startswith("samples/"))
    assert events.count(b"stand-in fault") >= len(WORKERS)  # the model events hold the error text, cleaned


def test_a_gateway_echoing_the_conductors_credential_leaves_none_in_the_log(standins, tmp_path):  # noqa: F811
    standins.script("openai", always=Fault(401, echo=True))
    record = run_eval(echoing_pool(tmp_path / "echoing.yaml", standins.url), conductor_model(), tmp_path / "logs")
    assert found(log_members(tmp_path / "logs")) == []
    assert record["rejection"] == "conductor_error" and "stand-in fault 401: refused" in record["round"][
        "rejection_message"]  # fmt: skip


@pytest.mark.parametrize("failing", ["conductor", "workers"])
def test_no_endpoint_response_holds_a_credential_a_gateway_echoed(standins, tmp_path, failing):  # noqa: F811
    pool = echoing_pool(tmp_path / "echoing.yaml", standins.url)
    if failing == "conductor":
        standins.script("openai", always=Fault(401, echo=True))
        lead = conductor_model()
    else:
        script_faults(standins)
        lead = scripted(every_worker(len(WORKERS)))
    model = get_model(f"conductor/{pool}", conductor=lead, few_shot="none", memoize=False)
    responses = {}
    with running(model) as (url, _):
        for trace in (False, True):
            with pytest.raises(openai.InternalServerError) as failed:
                client(url).chat.completions.create(model="conductor/echoing", extra_body={"trace": trace},
                                                    messages=[{"role": "user", "content": QUESTION}])  # fmt: skip
            responses[f"trace={trace}"] = failed.value.response.content
    assert found(responses) == []
    message = json.loads(responses["trace=True"])["error"]["message"]
    assert "stand-in fault" in message and "[redacted]" in message, message


def test_an_error_is_cleaned_in_place_with_its_chain_type_and_status():
    """What Inspect's retry rules and `describe_error` read stays (the same exception, its type and
    status); every text of it, its cause, context and notes loses the model's credential."""
    secret = CONDUCTOR_KEY
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    error = openai.AuthenticationError(
        f"Error code: 401 - key {secret}",
        response=httpx.Response(401, request=request),
        body={"error": {"message": f"bad key {secret}", "code": "invalid_api_key"}},
    )
    error.__cause__, error.__context__ = RuntimeError(f"upstream: {secret}"), KeyError(secret)
    error.add_note(f"sent {secret}")

    async def fail(*_):
        raise error

    model = guard_errors(get_model("mockllm/model", custom_outputs=fail, api_key=secret, memoize=False))
    assert guard_errors(model).api.generate is model.api.generate  # wrapped once
    with pytest.raises(openai.AuthenticationError) as raised:
        asyncio.run(model.generate("hi", config=GenerateConfig(max_retries=0)))
    texts = repr([raised.value.args, raised.value.message, raised.value.body, raised.value.__notes__,
                  raised.value.__cause__.args, raised.value.__context__.args])  # fmt: skip
    assert raised.value is error and error.status_code == 401 and secret not in texts and texts.count("[redacted]") == 6
    assert describe_error(error, "openai/gpt-5") == "openai HTTP 401 (AuthenticationError): bad key [redacted]"
