"""One line naming why a model call failed: provider, HTTP status and the provider's message.

Inspect gives up on a call with tenacity's `RetryError`, whose text names only the exception
class (`RetryError[<Future ... raised InternalServerError>]`). `describe_error` unwraps it and
reads the SDKs' public error attributes (duck-typed, no SDK import): openai's and anthropic's
`APIStatusError` (`status_code`, `body`, `message`), google-genai's `APIError` (`code`,
`status`, `message`). The provider's message is data from outside: one line, bounded.
"""

from __future__ import annotations

from workers.providers import provider_name

MAX_CHARS = 500  # of the provider's message kept in a record
MAX_UNWRAP = 8  # nested RetryErrors followed at most


def describe_error(error: BaseException, model: str | None = None) -> str:
    """`<provider> HTTP <status> (<Type>): <message>` for an API error, `<provider> (<Type>):
    <message>` for one without a status (timeout, connection). `model` is the Inspect model
    name (`vllm/Qwen/...`); without it the provider is the SDK the exception comes from."""
    error = unwrap(error)
    provider = provider_name(model) if model else type(error).__module__.split(".", 1)[0]
    status = _status(error)
    where = f"{provider} HTTP {status}" if status is not None else provider
    return f"{where} ({type(error).__name__}): {_one_line(provider_message(error))}"


def describe_length_refusal(model: str, text: str) -> str:
    """A request the API refused as longer than the model's context. Inspect returns it as an
    answer whose text is the API's error (stop reason `model_length`, no usage)."""
    return f"{provider_name(model)}: the request is too long for the model ({_one_line(text)})"


def unwrap(error: BaseException) -> BaseException:
    """The error that says why: inside tenacity `RetryError`s (their `last_attempt`), the
    deepest cause with an HTTP status (Inspect's `ModelGenerateError` is raised from the
    SDK's error), else the error itself."""
    chain: list[BaseException] = []
    for _ in range(MAX_UNWRAP):
        chain.append(error)
        attempt = getattr(error, "last_attempt", None)
        inner = attempt.exception() if attempt is not None and hasattr(attempt, "exception") else None
        inner = inner if isinstance(inner, BaseException) else error.__cause__
        if inner is None:
            break
        error = inner
    with_status = [e for e in chain if _status(e) is not None]
    return with_status[-1] if with_status else next(e for e in chain if not hasattr(e, "last_attempt"))


def provider_message(error: BaseException) -> str:
    """The message the provider sent (the error body's `message`), else the exception text."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    for name in ("provider_message", "message"):  # Inspect's ModelGenerateError; the SDKs
        message = getattr(error, name, None)
        if isinstance(message, str) and message:
            return message
    return str(error) or type(error).__name__


def _status(error: BaseException) -> int | None:
    for name in ("status_code", "code"):  # openai/anthropic; google-genai
        value = getattr(error, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def _one_line(text: str) -> str:
    line = " ".join(text[: MAX_CHARS * 4].split())
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 3] + "..."
