"""Inspect model provider `scripted/fixed-workflows`: a conductor that runs no model.

It answers every conductor prompt with the regression gate's fixed workflow for the prompt's
question (`workers.scripted_workflows.scripted_completion`: one call, solve then verify, three
attempts then aggregate, plan then execute, or an invalid workflow, picked by a sha256 of the
question), and counts usage as characters / 4. It makes the conductor row of a simulated run
fast and deterministic (the `sim-scripted` pool, `nox -s reproduce_tables` without logs, the
tutorial); its numbers say nothing about a conductor model.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from startup.errors import start_checked
from workers.scripted_workflows import scripted_completion

NAMES = ("fixed-workflows",)


def scripted_output(prompt: str, model: str) -> ModelOutput:
    """The scripted completion for a conductor prompt, with usage of characters / 4."""
    text = scripted_completion(prompt)
    output = ModelOutput.from_content(model=model, content=text)
    tokens_in, tokens_out = len(prompt) // 4, len(text) // 4
    output.usage = ModelUsage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
    return output


class ScriptedModelAPI(ModelAPI):
    """The scripted conductor: see the module docstring."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in NAMES:
            raise ValueError(f"no scripted model {model_name!r}; use scripted/{' or scripted/'.join(NAMES)}")
        if model_args:
            raise ValueError(f"scripted/{model_name} takes no model args (got {', '.join(sorted(model_args))})")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        return scripted_output("\n".join(m.text for m in input), f"scripted/{self.model_name}")

    def max_connections(self) -> int:
        return 1000  # nothing remote: calls are instant

    def connection_key(self) -> str:
        return "scripted"


@modelapi(name="scripted")
def scripted() -> type[ModelAPI]:
    return start_checked(ScriptedModelAPI)
