"""What a round leaves behind: the sample's metadata (`summary`) and the transcript's account
(`workflow_markdown`), both with the models' credentials redacted."""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.model import Model

from solvers.executor import RoundRecord, Worker, worker_config
from workers.provider_settings import sdk_settings
from workers.redact import model_secrets, redact_config, redact_round, redact_text


def summary(record: RoundRecord, workers: Sequence[Worker], chosen: list[int], *, method: str = "conductor",
            lead: Model | None = None, secrets: Sequence[str] | None = None) -> dict:  # fmt: skip
    """Sample metadata: headline numbers for reports (worker and conductor cost and calls
    apart, as the paper counts them; a cost is None when a price is unknown), then the
    full round tree. Worker configs and error texts are redacted (`workers.redact`): a record
    never holds a header value, a body string or a credential the workers or the conductor
    (`lead`) were given; `secrets` are theirs when the caller already has them (`round_secrets`)."""
    workers_used, conducting = record.worker_usage(), record.conductor_usage()
    total = record.total_usage()
    rounds = list(record.rounds())
    return {
        "method": method,
        "parsed": record.rejection is None,
        "rejection": record.rejection,
        "steps": len(record.steps),
        "agent_calls": record.agent_calls(),
        "conductor_calls": record.conductor_calls(),
        "calls": record.calls(),
        "format_retries": sum(max(0, len(r.attempts) - 1) for r in rounds),
        "recursions": sum(1 for r in rounds[1:] if not r.refused),
        "recursions_refused": sum(1 for r in rounds if r.refused),
        "fallbacks": sum(1 for r in rounds for s in r.steps if s.fallback),
        "input_tokens": total.input_tokens,
        "output_tokens": total.output_tokens,
        "worker_cost_usd": workers_used.cost,
        "conductor_cost_usd": conducting.cost,
        "cost_usd": total.cost,
        "conductor": record.conductor,
        "workers": [w.name for w in workers],
        "worker_configs": [redact_config(worker_config(w)) for w in workers],  # as each provider receives it
        "worker_sdk": [sdk_settings(w.name, w.model.config.model_dump(), w.model.model_args) for w in workers],
        "pool_indices": chosen,
        "round": redact_round(record.to_dict(), round_secrets(workers, lead) if secrets is None else secrets),
    }


def round_secrets(workers: Sequence[Worker], lead: Model | None) -> list[str]:
    """What the round's models were given that may be a credential (`workers.redact.model_secrets`)."""
    return model_secrets([w.model for w in workers] + ([lead] if lead is not None else []))


def workflow_markdown(record: RoundRecord, secrets: Sequence[str] = ()) -> str:
    """A readable account of a round (and its nested rounds) for the transcript; its error texts
    redacted (`workers.redact.redact_text`, with the round's `secrets`)."""
    lines = []
    for turn in record.conversation:
        shown = turn["content"] if turn["role"] == "user" else turn["content"][:1500]
        lines.append(f"*{turn['role']} turn continuing the conductor's conversation:*\n```\n{shown[:3000]}\n```")
    for number, attempt in enumerate(record.attempts[:-1]):
        lines.append(f"Round {record.depth} attempt {number} rejected ({attempt['rejection']}); resampled.")
    if record.rejection:
        return "\n\n".join(
            [
                *lines,
                f"**Round {record.depth}: workflow rejected** ({record.rejection}): "
                f"{redact_text(record.rejection_message or '', secrets)}\n\n```\n{record.completion[:2000]}\n```",
            ]
        )
    lines += [
        f"**Round {record.depth}** ({record.conductor}): {len(record.steps)} step(s)",
        "",
        "| step | worker | sees | subtask | tokens in/out | latency s | error |",
        "|---|---|---|---|---|---|---|",
    ]
    nested = []
    for s in record.steps:
        subtask = s.subtask.replace("|", "\\|").replace("\n", " ")[:120]
        note = redact_text(s.error, secrets) if s.error else (f"fallback: {s.fallback}" if s.fallback else "")
        sees = f"previous response, {s.visible}" if s.shown_previous else str(s.visible)
        lines.append(
            f"| {s.index} | Model {s.worker} ({s.model}) | {sees} | {subtask} | "
            f"{s.usage.input_tokens}/{s.usage.output_tokens} | {s.latency:.2f} | {note} |"
        )
        if s.round:
            nested.append(workflow_markdown(s.round, secrets))
    if record.workflow and not record.steps:
        lines.append("(three empty lists: the previous answer is kept)")
    return "\n".join([*lines, *nested])
