"""`python -m workers.serve`: the openai client on loopback gets the round's answer, usage and
(on request) its trace; keys, sizes, concurrency and bad requests give OpenAI-style errors."""

import asyncio
import socket
import threading
import time
from contextlib import contextmanager

import openai
import pytest
import uvicorn
from inspect_ai.model import get_model
from scripted import scripted

from workers.serve import Limits, RequestError, make_app, parse_request

WORKFLOW = (
    'model_id = [1, 3]\nsubtasks = ["Answer it.", "Check and give the final letter."]\naccess_list = [[], ["all"]]'
)
QUESTION = "Which is prime?\n\nA) 4\nB) 6\nC) 7\nD) 9"
SIMULATION = {"target": "C", "domain": "mmlu", "choices": ["4", "6", "7", "9"], "item_id": "q1"}


@contextmanager
def serving(limits: Limits = Limits(), delay: float = 0.0):
    """The endpoint on a free loopback port, in a thread; yields (base_url, conductor model)."""
    lead = scripted(WORKFLOW, delay=delay)
    app = make_app(get_model("conductor/sim", conductor=lead, few_shot="none", memoize=False), limits)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", lead
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def client(base_url: str, key: str = "none") -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=30)


def test_openai_client_gets_the_answer_usage_and_trace():
    with serving() as (url, lead):
        reply = client(url).chat.completions.create(
            model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"trace": True, "simulation": SIMULATION},
        )  # fmt: skip
        assert [m.id for m in client(url).models.list().data] == ["conductor/sim"]
    trace = reply.model_extra["conductor"]
    assert reply.choices[0].message.content == trace["round"]["steps"][-1]["output"]
    assert "ANSWER:" in reply.choices[0].message.content
    assert [s["model"] for s in trace["round"]["steps"]] == ["sim/choice-strong", "sim/premium"]
    assert trace["round"]["workflow"]["model_id"] == [1, 3]
    assert reply.usage.prompt_tokens == trace["input_tokens"] > 0
    assert reply.usage.completion_tokens == trace["output_tokens"] > 0
    assert trace["cost_usd"] is None or trace["cost_usd"] >= 0
    assert QUESTION in lead.calls[0][0].text


def test_no_trace_unless_asked():
    with serving() as (url, _):
        reply = client(url).chat.completions.create(
            model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"simulation": SIMULATION},
        )  # fmt: skip
    assert "conductor" not in (reply.model_extra or {})


def test_api_key_is_required_when_set():
    with serving(Limits(api_key="s3cret")) as (url, _):
        with pytest.raises(openai.AuthenticationError, match="API key"):
            client(url, "wrong").chat.completions.create(model="conductor/sim", messages=[{"role": "user",
                                                                                           "content": "q"}])
        reply = client(url, "s3cret").chat.completions.create(
            model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"simulation": SIMULATION},
        )  # fmt: skip
    assert reply.choices[0].message.content


def test_oversized_busy_and_bad_requests_get_named_errors():
    with serving(Limits(max_request_bytes=2000, max_concurrency=1), delay=1.5) as (url, _):
        api = client(url)
        with pytest.raises(openai.APIStatusError, match="over 2000 bytes") as too_big:
            api.chat.completions.create(model="conductor/sim", messages=[{"role": "user", "content": "x" * 5000}],
                                        extra_body={"simulation": SIMULATION})  # fmt: skip
        assert too_big.value.status_code == 413
        with pytest.raises(openai.BadRequestError, match="need the correct answer"):
            api.chat.completions.create(model="conductor/sim", messages=[{"role": "user", "content": "q"}])
        with pytest.raises(openai.NotFoundError, match="not served here"):
            api.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "q"}])

        async def two_at_once():
            aio = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0, timeout=30)
            message = [{"role": "user", "content": QUESTION}]
            calls = [aio.chat.completions.create(model="conductor/sim", messages=message,
                                                 extra_body={"simulation": SIMULATION}) for _ in range(2)]  # fmt: skip
            return await asyncio.gather(*calls, return_exceptions=True)

        results = asyncio.run(two_at_once())
    refused = [r for r in results if isinstance(r, openai.RateLimitError)]
    assert len(refused) == 1 and "rounds are running" in str(refused[0])
    assert sum(1 for r in results if not isinstance(r, Exception)) == 1


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"model": "conductor/sim", "messages": [{"role": "user", "content": "q"}], "stream": True}, "streaming"),
        ({"model": "conductor/sim", "messages": [{"role": "user", "content": "q"}], "n": 2}, "n must be 1"),
        ({"model": "conductor/sim", "messages": [{"role": "user", "content": "q"}], "tools": [{}]}, "tools"),
        ({"model": "conductor/sim", "messages": []}, "non-empty"),
        ({"model": "conductor/sim", "messages": [{"role": "tool", "content": "q"}]}, "role must be"),
        ({"model": "conductor/sim", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "text"),
        ({"model": "conductor/sim", "messages": [{"role": "user", "content": "q"}], "simulation": {"x": 1}},
         "string target"),
        ([], "JSON object"),
    ],
)  # fmt: skip
def test_parse_request_refuses_by_name(body, fragment):
    with pytest.raises(RequestError, match=fragment):
        parse_request(body, "conductor/sim")


def test_parse_request_takes_text_parts_and_the_pool_name():
    messages, trace, simulation = parse_request(
        {"model": "sim", "messages": [{"role": "developer", "content": "Be brief."},
                                      {"role": "user", "content": [{"type": "text", "text": "q"}]}]},
        "conductor/sim",
    )  # fmt: skip
    assert [m.role for m in messages] == ["system", "user"] and messages[1].text == "q"
    assert (trace, simulation) == (False, None)
