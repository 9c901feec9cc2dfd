"""`python -m conductor_model.serve`: the openai client on loopback gets the round's answer, usage and
(on request) its trace; keys (every route but /health), sizes, concurrency, bad requests, a
failed round and an internal error give OpenAI-style errors; no route names a pool file's path;
the command's help, ready line and the docs' client example. Slow clients:
test_serve_slow_clients.py; redaction: test_serve_redact.py."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import select
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from inspect_ai.model import get_model
from installed import Deferred
from scripted import output, scripted
from waits import HANG_S, WAIT_S, run_command

from conductor_model.serve import Limits, RequestError, is_loopback, make_server, parse_request

openai = Deferred("openai")

WORKFLOW = (
    'model_id = [1, 3]\nsubtasks = ["Answer it.", "Check and give the final letter."]\naccess_list = [[], ["all"]]'
)
QUESTION = "Which is prime?\n\nA) 4\nB) 6\nC) 7\nD) 9"
SIMULATION = {"target": "C", "domain": "mmlu", "choices": ["4", "6", "7", "9"], "item_id": "q1"}


@contextmanager
def running(model, limits: Limits = Limits()):
    """The endpoint's own server (`make_server`) on a free loopback port, in a thread; yields
    (base_url, server)."""
    server = make_server(model, limits, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S  # a wait, not a bound: it ends when the server is up
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, f"hang guard: the server was not up after {WAIT_S} s"
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/v1", server
    finally:
        server.should_exit = True
        thread.join(timeout=WAIT_S)


@contextmanager
def serving(limits: Limits = Limits(), pool: str = "sim", lead=None, **model_args):
    """The endpoint on the `sim` pool with a conductor (`lead`; default: scripted); yields (base_url, conductor)."""
    lead = lead or scripted(WORKFLOW)
    model = get_model(f"conductor/{pool}", conductor=lead, few_shot="none", memoize=False, **model_args)
    with running(model, limits) as (url, _):
        yield url, lead


# how long a test's client waits for the server: a net against a hung server, not a bound any test asserts
# (on a loaded machine a round can take long; the server's own deadlines are tested with their own clocks)
PATIENCE = WAIT_S


def client(base_url: str, key: str = "none") -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=PATIENCE)


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
            client(url, "wrong").chat.completions.create(
                model="conductor/sim", messages=[{"role": "user", "content": "q"}]
            )
        reply = client(url, "s3cret").chat.completions.create(
            model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"simulation": SIMULATION},
        )  # fmt: skip
    assert reply.choices[0].message.content


def held_conductor():
    """(conductor, started, release): a conductor whose call waits for `release` once it has set `started`,
    so a round runs until the test lets it end (events, not a delay: a busy machine cannot end it first)."""
    started, release = threading.Event(), threading.Event()

    async def respond(messages, tools, tool_choice, config):
        started.set()
        await asyncio.to_thread(release.wait, WAIT_S)
        return output(WORKFLOW)

    return get_model("mockllm/model", custom_outputs=respond, memoize=False), started, release


def test_oversized_busy_and_bad_requests_get_named_errors():
    lead, started, release = held_conductor()
    with serving(Limits(max_request_bytes=2000, max_concurrency=1), lead=lead) as (url, _):
        api = client(url)
        with pytest.raises(openai.APIStatusError, match="over 2000 bytes") as too_big:
            api.chat.completions.create(model="conductor/sim", messages=[{"role": "user", "content": "x" * 5000}],
                                        extra_body={"simulation": SIMULATION})  # fmt: skip
        assert too_big.value.status_code == 413
        with pytest.raises(openai.BadRequestError, match="need the correct answer"):
            api.chat.completions.create(model="conductor/sim", messages=[{"role": "user", "content": "q"}])
        with pytest.raises(openai.NotFoundError, match="not served here"):
            api.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "q"}])

        def ask():
            return api.chat.completions.create(model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
                                               extra_body={"simulation": SIMULATION})  # fmt: skip

        first: list = []
        asking = threading.Thread(target=lambda: first.append(ask()))
        asking.start()
        try:
            assert started.wait(WAIT_S), f"hang guard: the first round had not called its conductor after {WAIT_S} s"
            with pytest.raises(openai.RateLimitError, match="rounds are running"):  # while the first round runs
                ask()
        finally:
            release.set()
            asking.join(WAIT_S)
    assert first and first[0].choices[0].message.content


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


def test_every_route_but_health_needs_the_key():
    """No docs, schema, model list or unknown route answers without the key; /health does."""
    with serving(Limits(api_key="s3cret")) as (url, _):
        root = url.removesuffix("/v1")
        for path in ("/openapi.json", "/docs", "/redoc", "/v1/models", "/v1/nothing"):
            refused = httpx.get(root + path, timeout=PATIENCE)
            assert refused.status_code == 401, path
            assert refused.json()["error"]["type"] == "authentication_error"
        assert httpx.get(f"{root}/health", timeout=PATIENCE).json() == {"status": "ok"}
        keyed = {"Authorization": "Bearer s3cret"}
        assert (
            httpx.get(f"{root}/openapi.json", headers=keyed, timeout=PATIENCE)
            .json()["error"]["message"]
            .startswith("Not Found")
        )


def test_a_pool_file_is_served_by_its_name_never_its_path(tmp_path):
    pool = tmp_path / "my_pool.yaml"
    pool.write_text((Path(__file__).parents[2] / "workers/pools/sim.yaml").read_text())
    with serving(pool=str(pool)) as (url, _):
        api = client(url)
        assert [m.id for m in api.models.list().data] == ["conductor/my_pool"]
        with pytest.raises(openai.NotFoundError) as wrong:
            api.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "q"}])
        reply = api.chat.completions.create(
            model="conductor/my_pool", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"trace": True, "simulation": SIMULATION},
        )  # fmt: skip
    assert "conductor/my_pool" in str(wrong.value) and str(tmp_path) not in str(wrong.value)
    assert reply.model == "conductor/my_pool" and str(tmp_path) not in reply.model_dump_json()


def _post(url: str, body: bytes) -> httpx.Response:
    return httpx.post(
        f"{url}/chat/completions", content=body, headers={"Content-Type": "application/json"}, timeout=PATIENCE
    )


MESSAGE = [{"role": "user", "content": QUESTION}]


@pytest.mark.parametrize(
    "messages, simulation, fragment",
    [
        ([{"role": ["user"], "content": "q"}], SIMULATION, "role must be one of"),
        ([{"role": {"user": 1}, "content": "q"}], SIMULATION, "role must be one of"),
        (MESSAGE, {"target": "C"}, "needs a domain or a check"),
        (MESSAGE, {"target": "C", "domain": "chess"}, "domain 'chess' is unknown"),
        (MESSAGE, {"target": "C", "domain": "mmlu", "choices": 5}, "choices must be a list of strings"),
        (MESSAGE, {"target": "C", "domain": "mmlu", "item_id": [1]}, "item_id must be"),
    ],
)  # fmt: skip
def test_bad_input_reaches_the_openai_client_as_a_named_400(messages, simulation, fragment):
    with serving() as (url, lead):
        with pytest.raises(openai.BadRequestError, match=fragment):
            client(url).chat.completions.create(model="conductor/sim", messages=messages,
                                                extra_body={"simulation": simulation})  # fmt: skip
    assert lead.calls == []


@pytest.mark.parametrize(
    "body, fragment",
    [
        (b'{"model": "conductor/sim", "n": 1' + b"0" * 5000 + b"}", "number that is too long"),
        (b'{"model": "conductor/sim", "n": NaN}', "not finite"),
        (b'{"model": "conductor/sim", "messages": [', "not valid JSON: Expecting value"),
        (b'{"model": "conductor/sim", "messages": "\xff"}', "not UTF-8"),
    ],
)
def test_bodies_json_cannot_read_get_a_named_400(body, fragment):
    with serving() as (url, _):
        answer = _post(url, body)
    assert answer.status_code == 400
    assert fragment in answer.json()["error"]["message"] and answer.json()["error"]["type"] == "invalid_request_error"


def test_a_lone_surrogate_is_refused_before_the_round_spends_a_call():
    body = {"model": "conductor/sim", "messages": [{"role": "user", "content": "Is \ud800 prime?"}], "trace": True,
            "simulation": SIMULATION}  # fmt: skip
    with serving() as (url, lead):
        answer = _post(url, json.dumps(body).encode())
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "messages[0].content"
    assert "lone surrogate" in answer.json()["error"]["message"]
    assert lead.calls == []


def test_an_unexpected_error_is_one_openai_shaped_500_not_retried():
    model = get_model("conductor/sim", conductor=scripted(WORKFLOW), few_shot="none", memoize=False)
    attempts = []

    async def broken(messages):
        attempts.append(messages)
        raise RuntimeError("detail for the server log only")

    model.generate = broken
    with running(model) as (url, _):
        api = openai.OpenAI(base_url=url, api_key="none", timeout=PATIENCE)  # the client's own retries left on
        with pytest.raises(openai.InternalServerError, match="internal error of the conductor endpoint") as failed:
            api.chat.completions.create(model="conductor/sim", messages=MESSAGE, extra_body={"simulation": SIMULATION})
    assert failed.value.status_code == 500 and "server log only" not in str(failed.value)
    assert len(attempts) == 1


@pytest.mark.parametrize(
    "failing, fragment, code",
    [
        ("conductor", "the conductor failed: RuntimeError: conductor down", "conductor_failed"),
        ("last worker", "its last step (step 1, mockllm/model) failed: ", "worker_failed"),
    ],
)
def test_a_round_without_an_answer_is_a_502_naming_what_failed(failing, fragment, code):
    """Not a 200 with finish_reason "stop" and empty content; the client does not re-run it."""
    lead = scripted(WORKFLOW, fail=RuntimeError("conductor down") if failing == "conductor" else None)
    workers = [scripted("ANSWER: C") for _ in range(3)] + [scripted("", fail=RuntimeError("worker down"))]
    model = get_model("conductor/sim", conductor=lead, workers=workers, few_shot="none", memoize=False)
    with running(model) as (url, _):
        api = openai.OpenAI(base_url=url, api_key="none", timeout=PATIENCE)
        with pytest.raises(openai.InternalServerError, match=re.escape(fragment)) as failed:
            api.chat.completions.create(model="conductor/sim", messages=MESSAGE, extra_body={"trace": True})
    assert failed.value.status_code == 502 and failed.value.code == code
    assert failed.value.body["code"] == code and len(lead.calls) == 1
    assert failed.value.response.json()["conductor"]["round"]["answer"] is None


@pytest.mark.slow
def test_help_shows_defaults_and_an_example():
    shown = subprocess.run([sys.executable, "-m", "conductor_model.serve", "--help"], capture_output=True, text=True,
                           check=True).stdout  # fmt: skip
    assert "(default: 127.0.0.1)" in shown and "(default: 8000)" in shown
    assert "python -m conductor_model.serve --pool sim" in shown and "(default: 30.0)" in shown


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, fragment",
    [(["--pool", "nope"], "no pool file"), (["-M", "max_step=3"], "unknown option -M max_step"),
     (["-M", "temperature=.inf"], "invalid -M temperature=inf; fix: expected a finite number >= 0")],
)  # fmt: skip
def test_a_bad_pool_or_option_is_one_line_and_exit_2(args, fragment):
    ran = run_command([sys.executable, "-m", "conductor_model.serve", "--pool", "sim", *args])
    assert ran.returncode == 2 and fragment in ran.stderr and "Traceback" not in ran.stderr


def started_with(monkeypatch, args: list[str]) -> list[tuple]:
    """What `main(args)` would start the server with (nothing is built or served)."""
    from conductor_model import serve

    started: list[tuple] = []
    monkeypatch.setattr(serve, "get_model", lambda name, **model_args: name)
    monkeypatch.setattr(serve, "make_server", lambda *given: SimpleNamespace(run=lambda: started.append(given)))
    serve.main(["--pool", "sim", *args])
    return started


@pytest.mark.parametrize(
    "option, value",
    [("--read-timeout", "nan"), ("--request-timeout", "inf"), ("--request-timeout", "1e400"),
     ("--read-timeout", "soon"), ("--read-timeout", "0"), ("--keep-alive-timeout", "1.5"),
     ("--max-connections", "-1"), ("--port", "70000"),
     ("--max-request-bytes", "1e3"), ("--max-concurrency", "4" * 5000)],
)  # fmt: skip
def test_a_numeric_option_not_a_finite_number_in_range_is_one_line_at_start(option, value, monkeypatch, capsys):
    with pytest.raises(SystemExit) as ended:
        started_with(monkeypatch, [option, value])
    shown = capsys.readouterr().err
    assert ended.value.code == 2 and shown.count("\n") == 1 and "Traceback" not in shown
    assert shown.startswith(f"python -m conductor_model.serve: {option} ") and "; fix: give each a number" in shown


def test_numeric_options_in_range_start_the_server_with_numbers(monkeypatch):
    [(model, limits, host, port, verbose, _key_env)] = started_with(
        monkeypatch, ["--port", "0", "--read-timeout", "2.5"]
    )
    assert (model, host, port, verbose) == ("conductor/sim", "127.0.0.1", 0, False)
    assert limits == Limits(read_timeout=2.5) and isinstance(limits.max_connections, int)


@pytest.mark.slow
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "myhost.example"])
def test_a_public_address_without_a_key_is_refused(host):
    env = {k: v for k, v in os.environ.items() if k != "CONDUCTOR_API_KEY"}
    ran = run_command([sys.executable, "-m", "conductor_model.serve", "--pool", "sim", "--host", host], env=env)
    assert ran.returncode == 2 and ran.stderr == (
        f"python -m conductor_model.serve: --host {host} opens the endpoint (and the pool's spend) beyond this "
        "machine with no key; fix: set CONDUCTOR_API_KEY to a secret (clients send it as their API key), or "
        "listen on 127.0.0.1\n"
    )


@pytest.mark.parametrize(
    "host, loopback", [("127.0.0.1", True), ("::1", True), ("localhost", True), ("0.0.0.0", False)]
)
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def endpoint_output(*options: str, key: str | None = None) -> tuple[list[str], str]:
    """Start `python -m conductor_model.serve --pool sim --port 0 <options>` (its key in CONDUCTOR_API_KEY
    when given), ask /health and /v1/models (with the key, then a wrong one), stop it; (its three start
    lines, everything else it printed on stdout and stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "CONDUCTOR_API_KEY"}
    env.update({"CONDUCTOR_API_KEY": key} if key else {})
    command = [sys.executable, "-m", "conductor_model.serve", "--pool", "sim", "--port", "0", *options]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        ready = select.select([server.stdout], [], [], HANG_S)[0]  # a hang guard: the lines come on start
        start = [server.stdout.readline() for _ in range(3)] if ready else []
        assert start and start[0].startswith("serving"), (start, server.stderr.read() if not ready else "")
        base = start[0].split()[3].removesuffix("/v1")
        assert httpx.get(base + "/health", timeout=PATIENCE).status_code == 200
        for given in (key or "none", "wrong"):
            models = httpx.get(base + "/v1/models", headers={"Authorization": f"Bearer {given}"}, timeout=PATIENCE)
            assert models.status_code == (401 if key and given == "wrong" else 200)
    finally:
        server.terminate()
        out, err = server.communicate(timeout=WAIT_S)
    return [line.rstrip("\n") for line in start], out + err


@pytest.mark.slow
def test_the_server_says_address_auth_and_pool_in_three_lines_then_nothing_per_request():
    start, more = endpoint_output()
    assert re.fullmatch(r"serving conductor/sim on http://127\.0\.0\.1:\d+/v1 \(Ctrl\+C stops\)", start[0]), start
    assert start[1] == "auth: none (loopback only; set CONDUCTOR_API_KEY to require a key)"
    assert start[2].startswith("pool: 4 workers (simulated: each request names its answer); 4 rounds at once")
    assert more == "", more  # was: the same one line; per request nothing at the default level


@pytest.mark.slow
def test_verbose_adds_a_line_per_request_and_never_the_key():
    start, more = endpoint_output("--verbose", key="s3cret-key")
    assert start[1] == "auth: the key in $CONDUCTOR_API_KEY (Bearer) on every route but /health", start
    lines = more.splitlines()
    for request in ("GET /health 200 in", "GET /v1/models 200 in", "GET /v1/models 401 in"):
        assert sum(request in line for line in lines) == 1, more
    assert any("Uvicorn running" in line for line in lines), more  # uvicorn's own start-up lines
    assert "s3cret-key" not in "".join(start) + more


def test_a_round_s_request_line_names_its_steps_tokens_and_cost():
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    with serving() as (url, _):
        serve_log = logging.getLogger("conductor_model.serve")  # its level and handler set as the server started
        serve_log.addHandler(handler)
        serve_log.setLevel(logging.INFO)
        try:
            client(url).chat.completions.create(
                model="conductor/sim", messages=[{"role": "user", "content": QUESTION}],
                extra_body={"simulation": SIMULATION},
            )  # fmt: skip
        finally:
            serve_log.removeHandler(handler)
    assert len(lines) == 1 and re.fullmatch(
        r"POST /v1/chat/completions 200 in [\d.]+ s: 2 step\(s\), [\d,]+ tokens, (\$[\d.]+|cost unknown)", lines[0]
    ), lines


@pytest.mark.slow
def test_the_docs_client_example_runs_as_written():
    """docs/conductor-model.md's client code against the sim pool (its conductor scripted here:
    the pool's own SmolLM2 takes minutes on a shared CPU); only the address differs."""
    page = (Path(__file__).parents[2] / "docs/conductor-model.md").read_text()
    endpoint = page[page.index("## `python -m conductor_model.serve`") :]
    code = endpoint[endpoint.index("```python\n") + 10 :].split("```", 1)[0]
    assert code.count("http://127.0.0.1:8000/v1") == 1
    with serving() as (url, _):
        ran = run_command([sys.executable, "-c", code.replace("http://127.0.0.1:8000/v1", url)])
    assert ran.returncode == 0, ran.stderr
    assert "ANSWER:" in ran.stdout and "'model_id': [1, 3]" in ran.stdout
