"""describe_error on each SDK's exception type, bare and inside tenacity's RetryError."""

from __future__ import annotations

import importlib
from functools import partial

import httpx
import pytest
import tenacity
from inspect_ai.model._model import AttemptTimeoutError, ModelGenerateError  # Inspect's types; no public names
from installed import needs

from workers.provider_errors import MAX_CHARS, describe_error

pytestmark = needs("anthropic", "google.genai", extra="api")

URL = "http://127.0.0.1:1/v1/x"


def response(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", URL))


def retry_error(error: BaseException) -> tenacity.RetryError:
    """What Inspect raises when its retries of a call are used up."""
    attempt = tenacity.Future(attempt_number=3)
    attempt.set_exception(error)
    return tenacity.RetryError(attempt)


def sdk_error(sdk: str, name: str, *args, **kwargs) -> Exception:
    """An SDK's exception, the SDK imported when a test builds it: the SDKs take seconds to import
    while the suite is collected, so the errors below are builders (`partial`), not errors."""
    return getattr(importlib.import_module(sdk), name)(*args, **kwargs)


OPENAI_500 = partial(
    sdk_error,
    "openai",
    "InternalServerError",
    "Error code: 500 - stand-in",
    response=response(500),
    body={"message": "The server had an error", "type": "server_error"},
)
ANTHROPIC_400 = partial(
    sdk_error,
    "anthropic",
    "BadRequestError",
    "Error code: 400 - {...}",
    response=response(400),
    body={"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: 70000 > 64000"}},
)
GOOGLE_400 = partial(
    sdk_error,
    "google.genai.errors",
    "ClientError",
    400,
    {"error": {"code": 400, "message": "The thinking budget 0 is invalid.", "status": "INVALID_ARGUMENT"}},
)


@pytest.fixture
def error(request) -> BaseException:
    """The parameter's error, built (`request.param` is its builder)."""
    return request.param()


@pytest.mark.parametrize(
    "error, model, expected",
    [
        (OPENAI_500, "openai/gpt-5", "openai HTTP 500 (InternalServerError): The server had an error"),
        (OPENAI_500, "vllm/Qwen/Qwen3-32B", "vllm HTTP 500 (InternalServerError): The server had an error"),
        (ANTHROPIC_400, "anthropic/claude-sonnet-4-20250514",
         "anthropic HTTP 400 (BadRequestError): max_tokens: 70000 > 64000"),
        (GOOGLE_400, "google/gemini-2.5-pro", "google HTTP 400 (ClientError): The thinking budget 0 is invalid."),
        (partial(sdk_error, "openai", "APITimeoutError", request=httpx.Request("POST", URL)), "openai/gpt-5",
         "openai (APITimeoutError): Request timed out."),
        (partial(AttemptTimeoutError, 2), "google/gemini-2.5-pro",
         "google (AttemptTimeoutError): attempt_timeout '2' exceeded."),
    ],
    indirect=["error"],
)  # fmt: skip
def test_describe_error_names_provider_status_and_message(error, model, expected):
    assert describe_error(error, model) == expected
    assert describe_error(retry_error(error), model) == expected  # Inspect's wrapper is seen through


def test_inspect_generate_error_is_described_by_the_sdk_error_it_was_raised_from():
    """A 400 is not retried: Inspect raises ModelGenerateError (with the whole request in its
    text) from the SDK's error."""
    try:
        raise ModelGenerateError('Request: {"messages": ...}', status_code=400) from ANTHROPIC_400()
    except ModelGenerateError as error:
        described = describe_error(error, "anthropic/claude-sonnet-4-20250514")
    assert described == "anthropic HTTP 400 (BadRequestError): max_tokens: 70000 > 64000"
    bare = ModelGenerateError("Request: {...}", status_code=503, provider_message="overloaded")
    assert describe_error(bare, "google/gemini-2.5-pro") == "google HTTP 503 (ModelGenerateError): overloaded"


def test_describe_error_without_model_names_the_sdk():
    assert describe_error(retry_error(ANTHROPIC_400())).startswith("anthropic HTTP 400 ")
    assert describe_error(GOOGLE_400()).startswith("google HTTP 400 ")


def test_provider_message_is_one_bounded_line():
    body = {"error": {"message": "line one\n\nline two " + "x" * 5000}}
    error = sdk_error("openai", "BadRequestError", "Error code: 400", response=response(400), body=body)
    text = describe_error(error, "openai/m")
    assert "\n" not in text and "line one line two" in text
    assert len(text) < MAX_CHARS + 60 and text.endswith("...")
