"""Inspect model provider `conductor/<pool>`: the Conductor as a model, for any Inspect eval.

    inspect eval tasks/math500.py --model conductor/sim --limit 2
    inspect eval inspect_evals/gpqa_diamond --model conductor/paper -M conductor=vllm/ckpt -M max_depth=1

Each `generate()` is one conductor round on the pool `<pool>` (a bundled name or a pool YAML
path), run by the same `conduct` / `run_completion` as the `conductor` solver: the conductor
writes a workflow for the chat input, the workers run it, the last step's response is the
output. `-M conductor=<model>` picks the conductor (else `--model-role conductor`, else the
pool's); every solver option is a model arg (`-M max_steps=3 -M few_shot=none ...`). A bad
option, model, pool file or cycle of pools fails when Inspect builds the model, as one
start error that names it and the fix (`startup.errors`: one line, no traceback).

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

import difflib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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

from solvers.conducting import Settings, answer_constraint_for, check_generation, check_settings, conduct, summary
from solvers.executor import Worker
from solvers.team import Overrides, Team, resolve_team, sample_subset, with_replacement
from startup.errors import printed_cleanly, start_error
from startup.options import OptionError, is_int, need_option
from workers.pools import known_prices, load_pool
from workers.providers import any_simulated

SETTINGS = tuple(Settings.__dataclass_fields__)
GENERATION = ("temperature", "max_tokens", "worker_temperature", "worker_max_tokens", "pool_size", "seed", "grammar")
MODELS = ("conductor", "workers")
ARGS = (*MODELS, *SETTINGS, *GENERATION)
MODEL_FIX = "give an Inspect model name whose provider is installed, e.g. openai/gpt-5 or local/smollm2-135m"
POOL_WORKER_FIX = "name a model whose provider is installed in the pool file, or give -M workers=<models>"


class ConductorInputError(ValueError):
    """Input a conductor round cannot take (tools, images, audio, tool results)."""


def options(args: dict[str, Any], pool: str = "<pool>") -> tuple[Settings, dict[str, Any], dict[str, Any]]:
    """(conductor settings, generation options, model choices) from `-M` args, checked as the
    solver checks its `-S` options; a bad one is a start error naming the `-M` option and fix."""
    for name in args:
        if name not in ARGS:
            close = difflib.get_close_matches(name, ARGS, n=1)
            fix = f"did you mean -M {close[0]}?" if close else f"use one of {', '.join(ARGS)}"
            raise start_error(f"conductor/{pool}: unknown option -M {name}; fix: {fix}")
    fields = {k: (v.lower() if isinstance(v, str) and k in ("access", "question", "subtasks") else v)
              for k, v in args.items() if k in SETTINGS}  # fmt: skip
    generation = {k: args.get(k) for k in GENERATION}
    try:
        settings = check_settings(Settings(**fields))
        check_generation(**{k: generation[k] for k in ("pool_size", "max_tokens", "worker_max_tokens", "temperature",
                                                       "worker_temperature")})  # fmt: skip
        need_option(generation["seed"] is None or is_int(generation["seed"]), "seed", generation["seed"], "an integer")
        grammar = generation["grammar"]
        need_option(grammar is None or isinstance(grammar, bool), "grammar", grammar, "true | false (or unset: auto)")
        models = _check_models({k: args.get(k) for k in MODELS})
    except OptionError as error:
        raise start_error(
            f"conductor/{pool}: invalid {_given(error.option, error.value)}; fix: expected {error.expected}"
        ) from None
    generation["seed"] = generation["seed"] or 0
    return settings, generation, models


def _given(option: str, value: Any) -> str:
    """`-M option=value` as the user gave it, bounded."""
    return f"-M {option}={repr(value)[:80]}"


def _check_models(models: dict[str, Any]) -> dict[str, Any]:
    """`-M conductor` names one model, `-M workers` one or more (or they are unset)."""
    conductor, workers = models["conductor"], models["workers"]
    names = _model_names(conductor)
    need_option(conductor is None or (names is not None and len(names) == 1), "conductor", conductor,
                "one Inspect model name such as openai/gpt-5")  # fmt: skip
    need_option(workers is None or _model_names(workers) is not None, "workers", workers,
                "Inspect model names joined by commas, e.g. openai/gpt-5,local/qwen3-0.6b")  # fmt: skip
    return models


def _model_names(value: Any) -> list[Model | str] | None:
    """The models a `-M conductor` / `-M workers` value names (a model, names joined by commas
    or a list of names and models); None when it is not that."""
    entries = value.split(",") if isinstance(value, str) else value
    entries = [entries] if isinstance(entries, Model) else entries
    if not isinstance(entries, list | tuple) or not entries:
        return None
    entries = [m.strip() if isinstance(m, str) else m for m in entries]
    named = all(isinstance(m, Model) or (isinstance(m, str) and "/" in m.strip("/")) for m in entries)
    return list(entries) if named else None


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


@contextmanager
def _start_check(problem: str, fix: str | None = None) -> Iterator[None]:
    """An error raised inside becomes one start-up message, `<problem>: <error>; fix: <fix>`
    (errors Inspect already prints cleanly, such as a missing API key, pass unchanged)."""
    try:
        yield
    except Exception as error:
        if printed_cleanly(error):
            raise
        detail = " ".join(str(error).split())[:500].rstrip(".")
        raise start_error(f"{problem}: {detail}" + (f"; fix: {fix}" if fix else "")) from None


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
        self.settings, self.generation, self.models = options(model_args, model_name)
        # everything a round uses is built now: a bad pool, model or replacement fails at start, named
        with _start_check(f"--model conductor/{self.pool}"):
            load_pool(self.pool)
        self.chosen = {name: self._chosen_models(name) for name in MODELS}
        g = self.generation
        self.overrides = Overrides(g["temperature"], g["max_tokens"], g["grammar"], g["worker_temperature"],
                                   g["worker_max_tokens"])  # fmt: skip
        with _start_check(f"conductor/{self.pool}: a worker of the pool", POOL_WORKER_FIX):
            team = self.team(replace=False)
        if self.settings.replace_workers:
            with _start_check(
                f"conductor/{self.pool}: {_given('replace_workers', self.settings.replace_workers)}", MODEL_FIX
            ):
                team = self.replaced(team)
        # whether a worker is simulated (it needs the sample's answer key), from the team resolved once here
        self.simulated = any_simulated(w.model for w in team.workers)
        self.team_size = len(team.workers)

    def _chosen_models(self, name: str) -> list[Model] | None:
        """The models `-M <name>` names (None when unset)."""
        value = self.models[name]
        if value is None:
            return None
        with _start_check(f"conductor/{self.pool}: {_given(name, value)}", MODEL_FIX):
            return [m if isinstance(m, Model) else get_model(m) for m in _model_names(value) or []]

    def team(self, replace: bool = True) -> Team:
        """The round's team: the conductor is `-M conductor`, else `--model-role conductor`, else
        the pool's; the workers `-M workers=a,b` (models or names), else the pool's; every slot run
        by one model with `-M replace_workers` (as the solver's option)."""
        given = self.chosen["workers"]
        workers = [Worker(m, str(m), price=known_prices().get(str(m))) for m in given] if given else None
        team = resolve_team(self.pool, self.overrides, answer_constraint_for(None),
                            lead=(self.chosen["conductor"] or [_role("conductor")])[0], workers=workers)  # fmt: skip
        return self.replaced(team) if replace else team

    def replaced(self, team: Team) -> Team:
        """`team` with every slot run by `-M replace_workers` (`team` itself when it is not given)."""
        return with_replacement(team, self.settings.replace_workers, self.pool, self.overrides,
                                answer_constraint_for(None))  # fmt: skip

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        question = question_from(input, tools)
        team = self.team()
        chosen = sample_subset(len(team.workers), self.generation["pool_size"], self.generation["seed"], question)
        workers = [team.workers[i] for i in chosen]
        record = await conduct(question, team.conductor, workers, self.settings)
        output = ModelOutput.from_content(model=f"conductor/{self.pool}", content=record.answer or "")
        output.metadata = {"conductor": summary(record, workers, chosen, lead=team.conductor.model)}
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
