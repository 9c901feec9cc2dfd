"""Records and traces never hold a pool's header values, body strings, credentials or host paths
(workers/redact.py): the rule on its own, then a sample record and the endpoint's trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import includes
from installed import Deferred
from scripted import scripted
from test_serve import MESSAGE, QUESTION, SIMULATION, WORKFLOW, client, running, serving

from solvers.conductor import conductor
from workers.redact import REDACTED, pool_label, redact_config, redact_round, redact_text

openai = Deferred("openai")

HEADER_SECRET, BODY_SECRET = "gw-header-value", "body-string-value"  # no credential shape: found by where they are
TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"


def test_a_config_keeps_typed_settings_and_no_string_of_a_free_form_mapping():
    config = {
        "max_tokens": 4096,
        "reasoning_effort": "minimal",
        "extra_headers": {"X-Anything": "v1", "Authorization": "Bearer x"},
        "extra_body": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}, "route": {"to": "eu"},
                       "tags": ["a", 1, None]},
    }  # fmt: skip
    assert redact_config(config) == {
        "max_tokens": 4096,
        "reasoning_effort": "minimal",
        "extra_headers": {"X-Anything": REDACTED, "Authorization": REDACTED},
        "extra_body": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}, "route": {"to": REDACTED},
                       "tags": [REDACTED, 1, None]},
    }  # fmt: skip


@pytest.mark.parametrize(
    "text, secrets, expected",
    [
        (f"HTTP 401: invalid key {TOKEN}.", (), f"HTTP 401: invalid key {REDACTED}"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0 refused", (), f"Bearer {REDACTED} refused"),
        ("GET https://me:pw@gw.example/v1 failed", (), f"GET https://{REDACTED}@gw.example/v1 failed"),
        ("header X-Org=acme-team rejected", ("acme-team",), f"header X-Org={REDACTED} rejected"),
        ("vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B: HTTP 503 (request 0b5e6c1a-91f2-4f60-8c55-1d2f3a4b5c6d)",
         (), "vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B: HTTP 503 (request 0b5e6c1a-91f2-4f60-8c55-1d2f3a4b5c6d)"),
    ],
)  # fmt: skip
def test_error_text_loses_credentials_by_shape_and_the_workers_own(text, secrets, expected):
    assert redact_text(text, secrets) == expected


def test_a_round_tree_is_redacted_at_every_depth():
    nested = {"rejection_message": f"RuntimeError: {TOKEN}", "steps": [{"config": {"extra_headers": {"k": "v"}}}]}
    tree = {"answer": None, "steps": [{"error": f"key {TOKEN}", "output": TOKEN, "round": nested}],
            "attempts": [{"rejection_message": TOKEN}]}  # fmt: skip
    redacted = redact_round(tree)
    assert redacted["steps"][0]["error"] == f"key {REDACTED}"
    assert redacted["steps"][0]["output"] == TOKEN  # a worker's answer is data, kept as written
    assert redacted["steps"][0]["round"]["rejection_message"] == f"RuntimeError: {REDACTED}"
    assert redacted["steps"][0]["round"]["steps"][0]["config"] == {"extra_headers": {"k": REDACTED}}
    assert redacted["attempts"][0]["rejection_message"] == REDACTED


def test_a_pool_is_named_by_its_name_or_its_file_stem():
    assert [pool_label(p) for p in ("sim", "/home/me/pools/my_pool.yaml", "pools/x.yml", "C:\\p\\y.yaml")] == [
        "sim", "my_pool", "x", "y"]  # fmt: skip


def gateway_pool(tmp_path: Path) -> Path:
    """The sim pool, its workers sending a gateway header and a body string (credentials)."""
    spec = yaml.safe_load((Path(__file__).parents[2] / "workers/pools/sim.yaml").read_text())
    for worker in spec["workers"]:
        worker["config"].update(extra_headers={"X-Gateway-Key": HEADER_SECRET},
                                extra_body={"gateway_token": BODY_SECRET, "top_k": 20})  # fmt: skip
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_sample_record_holds_no_header_value_body_string_or_pool_path(tmp_path):
    pool = gateway_pool(tmp_path)
    task = Task(dataset=[Sample(input=QUESTION, target="C", metadata={"domain": "mmlu"})],
                solver=conductor(pool=str(pool), few_shot="none"), scorer=includes())  # fmt: skip
    [log] = eval(task, model=scripted(WORKFLOW), display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    record = log.samples[0].metadata["conductor"]
    written = json.dumps(record)
    assert HEADER_SECRET not in written and BODY_SECRET not in written and str(tmp_path) not in written
    # a simulated worker sends no request: its headers and body strings are dropped before its model
    # is made (workers/client_secrets.py; tests/workers/test_client_secrets.py: a network worker's record)
    assert "extra_headers" not in record["worker_configs"][0]
    assert record["worker_configs"][0]["extra_body"] == {"top_k": 20}
    assert [s["config"] for s in record["round"]["steps"]] == [record["worker_configs"][i] for i in (1, 3)]


def test_the_trace_holds_no_header_value_body_string_or_pool_path(tmp_path):
    with serving(pool=str(gateway_pool(tmp_path))) as (url, _):
        reply = client(url).chat.completions.create(model="conductor/gateway", messages=MESSAGE,
                                                    extra_body={"trace": True, "simulation": SIMULATION})  # fmt: skip
    trace = json.dumps(reply.model_extra["conductor"])
    assert HEADER_SECRET not in trace and BODY_SECRET not in trace and str(tmp_path) not in trace
    assert reply.model_extra["conductor"]["worker_configs"][0]["extra_body"]["top_k"] == 20


def test_a_failed_rounds_trace_holds_no_credential_from_the_provider_error():
    failing = scripted("", fail=RuntimeError(f"401 Unauthorized: key {TOKEN} is revoked"))
    model = get_model("conductor/sim", conductor=scripted(WORKFLOW), workers=[scripted("ANSWER: C")] * 3 + [failing],
                      few_shot="none", memoize=False)  # fmt: skip
    with running(model) as (url, _):
        with pytest.raises(openai.InternalServerError) as failed:
            client(url).chat.completions.create(model="conductor/sim", messages=MESSAGE, extra_body={"trace": True})
    body = failed.value.response.text
    assert "401 Unauthorized: key [redacted] is revoked" in failed.value.message
    assert TOKEN not in body and TOKEN[3:] not in body
