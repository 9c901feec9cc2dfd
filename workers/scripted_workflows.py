"""The gate's scripted conductor: a fixed, deterministic workflow per question (pure).

It stands in for a conductor model so the gate tracks the harness (prompt, parser,
executor, scoring, accounting), not a model's sampling. The shape is picked by a sha256
of the question, so every run writes the same workflows, and covers the paper's strategies
plus one rejected workflow:

    0, 1  one call
    2, 3  solve, then verify with the earlier step visible
    4, 5  three independent attempts (the question restated), then an aggregator
    6     plan, then execute the plan
    7     unequal list lengths (rejected as `unequal_lengths`: scores as wrong)
"""

from __future__ import annotations

import hashlib
import json

MAX_QUESTION_CHARS = 2000  # restated questions are clipped


def prompt_parts(prompt: str) -> tuple[str, int]:
    """(question, number of workers) read from a conductor prompt's last `QUESTION:` and
    the `MODELS:` list after it; ("", 1) parts when the markers are missing."""
    start = prompt.rfind("QUESTION:")
    models_at = prompt.find("MODELS:", start + 1) if start >= 0 else -1
    if start < 0 or models_at < 0:
        return "", 1
    question = prompt[start + len("QUESTION:") : models_at].strip()
    lines = prompt[models_at + len("MODELS:") :].splitlines()
    workers = sum(1 for line in lines if line.startswith("Model ") and line[6:7].isdigit())
    return question, max(1, workers)


def scripted_completion(prompt: str) -> str:
    """The conductor completion for a prompt: brief reasoning, then the three lists."""
    question, n = prompt_parts(prompt)
    h = int.from_bytes(hashlib.sha256(question.encode()).digest()[:8], "big")
    shape, first = h % 8, (h // 8) % n
    other = (first + 1) % n
    restated = question[:MAX_QUESTION_CHARS]
    if shape in (0, 1):
        lists = ([first], ["Solve the problem and state the final answer."], [[]])
    elif shape in (2, 3):
        lists = (
            [first, other],
            ["Solve the problem step by step.", "Check the solution above and state the final answer."],
            [[], ["all"]],
        )
    elif shape in (4, 5):
        attempt = f"Solve this independently and state the final answer: {restated}"
        lists = (
            [first, other, (first + 2) % n, (first + 3) % n],
            [
                "Solve the problem and state the final answer.",
                attempt,
                attempt,
                "Compare the answers above; give the best.",
            ],
            [[], [], [], ["all"]],
        )
    elif shape == 6:
        lists = (
            [other, first],
            [
                "Outline a plan to solve the problem; do not solve it.",
                "Follow the plan above and state the final answer.",
            ],
            [[], ["all"]],
        )
    else:
        lists = ([first, other], ["Solve the problem."], [[], ["all"]])
    names = ("model_id", "subtasks", "access_list")
    body = "\n".join(f"{name} = {json.dumps(value)}" for name, value in zip(names, lists, strict=True))
    return f"Scripted workflow of shape {shape}.\n```python\n{body}\n```"
