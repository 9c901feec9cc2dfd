"""Mixture-of-Agents with one proposer layer: every pool member answers, then one member
drawn at random (seeded per sample) aggregates the answers. Pure: no Inspect import."""

from __future__ import annotations

import random
from collections.abc import Sequence

AGGREGATE_SUBTASK = "Combine the proposals into one best answer."
AGGREGATE = """\
{question}

Several assistants answered this question independently. Their responses follow.

{responses}

Some of these responses may be wrong, and they may disagree. Judge them critically, use what \
is right in them, and write one answer of your own that is as accurate as possible, ending in \
the form the question asks for."""


def draw_aggregator(n_workers: int, seed: int, key: str) -> int:
    """The aggregator's pool index for one sample (`key`: its id and epoch)."""
    if n_workers < 1:
        raise ValueError("mixture_of_agents needs at least one worker")
    return random.Random(f"{seed}/{key}/aggregator").randrange(n_workers)


def aggregate_prompt(question: str, proposals: Sequence[str]) -> str:
    """The aggregator's single user message: the question, then the numbered proposals."""
    responses = "\n\n".join(f"### Response {i + 1}\n{text}" for i, text in enumerate(proposals))
    return AGGREGATE.format(question=question, responses=responses or "(no assistant gave a response)")
