"""Scripted Inspect models for logic tests: a reply function, an optional delay, real usage;
every call's messages and generate config are kept (`model.calls`, `model.configs`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

Reply = Callable[[list[ChatMessage]], str]


def output(text: str, tokens_in: int = 10, tokens_out: int = 5) -> ModelOutput:
    """A ModelOutput with usage set (mockllm would otherwise count tokens with tiktoken)."""
    result = ModelOutput.from_content(model="scripted", content=text)
    result.usage = ModelUsage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
    return result


def scripted(reply: Reply | str, delay: float = 0.0, fail: Exception | None = None) -> Model:
    """A mockllm model whose every call sleeps `delay`, then raises `fail` or replies."""
    calls: list[list[ChatMessage]] = []
    configs: list = []

    async def respond(messages, tools, tool_choice, config) -> ModelOutput:
        calls.append(messages)
        configs.append(config)
        await asyncio.sleep(delay)
        if fail is not None:
            raise fail
        text = reply if isinstance(reply, str) else reply(messages)
        return output(text, tokens_in=sum(len(m.text) for m in messages))

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    model.calls = calls  # type: ignore[attr-defined]
    model.configs = configs  # type: ignore[attr-defined]
    return model


def user_texts(messages: list[ChatMessage]) -> list[str]:
    return [m.text for m in messages if m.role == "user"]
