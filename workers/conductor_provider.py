"""Inspect model provider `conductor/<pool>`: the Conductor as a model, for any Inspect eval.

    inspect eval tasks/math500.py --model conductor/sim --limit 2
    inspect eval inspect_evals/gpqa_diamond --model conductor/paper -M conductor=vllm/ckpt -M max_depth=1

Each `generate()` is one conductor round on the pool `<pool>` (a bundled name or a pool YAML
path), run by the same `conduct` / `run_completion` as the `conductor` solver: the conductor
writes a workflow for the chat input, the workers run it, the last step's response is the
output. `-M conductor=<model>` picks the conductor (else `--model-role conductor`, else the
pool's); every solver option is a model arg (`-M max_steps=3 -M few_shot=none ...`).

The output carries the round tree in `metadata["conductor"]` (as a sample's metadata under the
solver: tokens and cost summed over every call, conductor and workers, and each call's own).
Inspect itself records every nested call under its model and role (`conductor`, `workers`), so
its usage totals, `--token-limit` and `--cost-limit` see the whole round; the output's own
`usage` stays empty, since summing the round into it as well would count every token twice.
Tools, tool calls, images and other non-text input are refused with `ConductorInputError`.
The eval's generate config (e.g. `--temperature`) is not forwarded: conductor and worker
sampling come from the pool and the `-M` options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelOutput,
    get_model,
    model_roles,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from solvers.conductor import Settings, answer_constraint_for, check_generation, check_settings, conduct, summary
from solvers.executor import Worker
from solvers.team import model_conductor, pool_conductor, pool_workers, sample_subset
from workers.pools import known_prices

SETTINGS = tuple(Settings.__dataclass_fields__)
GENERATION = ("temperature", "max_tokens", "worker_temperature", "worker_max_tokens", "pool_size", "seed", "grammar")
MODELS = ("conductor", "workers")
ARGS = (*MODELS, *SETTINGS, *GENERATION)


class ConductorInputError(ValueError):
    """Input a conductor round cannot take (tools, images, audio, tool results)."""


def options(args: dict[str, Any]) -> tuple[Settings, dict[str, Any], dict[str, Any]]:
    """(conductor settings, generation options, model choices) from `-M` args, checked as the
    solver checks its `-S` options; an unknown arg is named with the list of known ones."""
    unknown = sorted(set(args) - set(ARGS))
    if unknown:
        raise ValueError(f"conductor provider: unknown -M {', '.join(unknown)}; known: {', '.join(ARGS)}")
    fields = {k: (v.lower() if isinstance(v, str) and k in ("access", "question", "subtasks") else v)
              for k, v in args.items() if k in SETTINGS}  # fmt: skip
    settings = check_settings(Settings(**fields))
    generation = {k: args.get(k) for k in GENERATION}
    check_generation(**{k: generation[k] for k in ("pool_size", "max_tokens", "worker_max_tokens", "temperature",
                                                   "worker_temperature")})  # fmt: skip
    generation["seed"] = generation["seed"] or 0
    return settings, generation, {k: args.get(k) for k in MODELS}


def question_from(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]) -> str:
    """The question of a chat input: system text, then the user's message; a conversation with
    earlier turns is written out as a transcript. Anything but text is refused."""
    if tools:
        raise ConductorInputError("the conductor does not call tools: run the eval without tools")
    for message in messages:
        if message.role == "tool" or getattr(message, "tool_calls", None):
            raise ConductorInputError(f"the conductor takes no tool calls or results (a {message.role} message)")
        if not isinstance(message.content, str) and any(c.type not in ("text", "reasoning") for c in message.content):
            kinds = sorted({c.type for c in message.content} - {"text", "reasoning"})
            raise ConductorInputError(f"the conductor takes text only, got {', '.join(kinds)} content")
    system = "\n\n".join(m.text for m in messages if isinstance(m, ChatMessageSystem))
    turns = [m for m in messages if not isinstance(m, ChatMessageSystem)]
    if not turns or turns[-1].role != "user":
        raise ConductorInputError("the conductor answers a user message: the input must end with one")
    if len(turns) == 1:
        body = turns[0].text
    else:
        body = "\n\n".join(f"{m.role.capitalize()}: {m.text}" for m in turns)
    return f"{system}\n\n{body}" if system else body


def _as_model(value: Model | str) -> Model:
    return value if isinstance(value, Model) else get_model(str(value))


class ConductorAPI(ModelAPI):
    """One conductor round per `generate()`; see the module docstring."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.pool = model_name
        self.settings, self.generation, self.models = options(model_args)
        pool_workers(self.pool)  # a bad pool name or file fails here, at start, not per sample

    def lead(self) -> Any:
        """The round's conductor: `-M conductor`, else `--model-role conductor`, else the pool's."""
        g, chosen = self.generation, self.models["conductor"] or _role("conductor")
        if chosen is not None:
            return model_conductor(_as_model(chosen), g["temperature"], g["max_tokens"], g["grammar"])
        return pool_conductor(self.pool, g["temperature"], g["max_tokens"], g["grammar"])

    def workers(self) -> list[Worker]:
        """The round's workers: `-M workers=a,b` (models or names), else the pool's."""
        g = self.generation
        if self.models["workers"]:
            given = self.models["workers"]
            names = given.split(",") if isinstance(given, str) else list(given)
            models = [_as_model(m.strip() if isinstance(m, str) else m) for m in names]
            return [Worker(m, str(m), price=known_prices().get(str(m))) for m in models]
        return pool_workers(self.pool, g["worker_temperature"], g["worker_max_tokens"], answer_constraint_for(None))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        question = question_from(input, tools)
        pool = self.workers()
        chosen = sample_subset(len(pool), self.generation["pool_size"], self.generation["seed"], question)
        workers = [pool[i] for i in chosen]
        record = await conduct(question, self.lead(), workers, self.settings)
        output = ModelOutput.from_content(model=f"conductor/{self.pool}", content=record.answer or "")
        output.metadata = {"conductor": summary(record, workers, chosen)}
        if record.answer is None:
            output.choices[0].stop_reason = "unknown"
        return output

    def max_connections(self) -> int:
        return 8  # each connection is a whole round: several worker calls, each with its own limit


def _role(name: str) -> Model | None:
    role = model_roles().get(name)
    return role[0] if isinstance(role, list) else role


@modelapi(name="conductor")
def conductor_api() -> type[ModelAPI]:
    return ConductorAPI
