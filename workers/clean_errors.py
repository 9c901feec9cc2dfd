"""A model's errors cleaned of credentials where they enter Inspect, before any record holds them.

Inspect records a failed call in the .eval log's model event: the exception's message (`error`),
its traceback text, and the error body (`call.response`); its retry log lines and a
`ModelGenerateError` quote the exception too, and a provider may turn an API error into an answer
(a context-length or content-filter refusal whose text is the error's). A gateway that echoes a
credential in an error would put it in all of them, and from there in the round's records and the
endpoint's answers. So `guard_errors(model)` wraps the model's API once (`model.api.generate`:
copies and memoized handles of the model share it): what it raises or returns as an error is
cleaned in place by `workers.redact.redact_text` with the model's own credentials
(`workers.redact.model_secrets`: API key, model args, client headers and body fields), URL user
info and token-shaped words. The exception keeps its type and status, so Inspect's retry rules,
`describe_error` and the refusal handling see the same error, without the credential.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.model import Model, ModelOutput

from workers.redact import model_secrets, redact_text

ERROR_STOPS = ("model_length", "content_filter")  # an output with one of these and no usage is an API error
MAX_CHAIN = 8  # causes and contexts followed at most


def guard_errors(model: Model) -> Model:
    """`model`, its API's errors cleaned from now on (module docstring); idempotent. A stand-in with no
    provider API (training's policy as the conductor of a recursive round) is returned as it is."""
    api = getattr(model, "api", None)
    if api is None or getattr(api, "_errors_guarded", False):
        return model
    clean = functools.partial(clean_value, secrets=tuple(model_secrets([model])))
    generate = api.generate

    @functools.wraps(generate)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            result = await generate(*args, **kwargs)
        except Exception as error:
            clean_exception(error, clean)
            raise
        output, call = result if isinstance(result, tuple) else (result, None)
        failed = bool(getattr(call, "error", False))  # the provider recorded the call as an error
        if isinstance(output, Exception):
            clean_exception(output, clean)
        elif isinstance(output, ModelOutput) and (failed or _is_error(output)):  # every text: completion, details
            output = ModelOutput.model_validate(clean(output.model_dump()))
        elif not failed:
            return result
        if call is not None and call.response is not None:
            call.response = clean(call.response)
        return (output, call) if isinstance(result, tuple) else output

    api.generate = guarded  # type: ignore[method-assign]
    api._errors_guarded = True  # type: ignore[attr-defined]
    return model


def clean_value(value: Any, secrets: Sequence[str]) -> Any:
    """`value` with every string (in mappings and lists too) `redact_text`-ed."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {k: clean_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(clean_value(v, secrets) for v in value)
    return value


def clean_exception(error: BaseException, clean: Callable[[Any], Any]) -> None:
    """Clean `error`, its causes and contexts in place: args, notes and every text, mapping or
    list attribute (openai's `message` and `body`, google's `details`...)."""
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo and len(seen) < MAX_CHAIN:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        texts = {"args": current.args} | {k: v for k, v in getattr(current, "__dict__", {}).items()
                                          if isinstance(v, str | dict | list)}  # fmt: skip
        for name, value in texts.items():
            try:
                setattr(current, name, clean(value))
            except (AttributeError, TypeError):  # a read-only attribute: its text stays as it is
                pass
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        todo += list(getattr(current, "exceptions", ()))  # an exception group's members


def _is_error(output: ModelOutput) -> bool:
    return bool(output.error) or (output.usage is None and output.stop_reason in ERROR_STOPS)
