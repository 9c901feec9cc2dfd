"""How much does a conductor's worker choice for one question form move it for another?

A diagnostic for routing under GRPO (not used by training): the policy must raise, say, Model 0
on MATH prompts and Model 1 on MMLU prompts. One gradient step on a MATH prompt moves the
MMLU choice by about the cosine between the two prompts' gradients of the choice. This prints
that cosine, within a form and across forms, at the token where the worker is chosen:

- `lists`: the plain form line, then `model_id = [` (the choice is the list's first id);
- `worker`: the line of `format_warmup_form_worker` ("...: " and the first worker's id).

    python -m experiments.sim_routing.coupling training/recipes/sim-routing.yaml --model_name_or_path runs/x/warmup \\
        [--train_top_layers 8] [--layouts lists,worker] [--per_domain 6]

Near 1 across forms, the policy can only move both forms together: GRPO then finds the best
single worker, not routing.
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any

from training.warmup import form_line, worker_line, workflow_text

LAYOUTS = ("lists", "worker")


def decision_prefix(prompt_text: str, check: str, layout: str) -> str:
    """The completion, as the warm-up writes it (Model 0 first), up to the token that chooses
    the first worker."""
    if layout == "lists":
        text = f"{form_line(check)}\n{workflow_text([0])}"
        return prompt_text + text[: text.index("[0]") + 1]
    if layout == "worker":
        text = worker_line(check, 0)
        return prompt_text + text[: text.index(" 0 ") + 1]
    raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


def prompt_text(tokenizer: Any, row: dict) -> str:
    return tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)


def choice_gradient(model: Any, tokenizer: Any, prefix: str) -> Any:
    """The gradient (trainable parameters, flattened) of log p(Model 0) - log p(Model 1) after `prefix`."""
    import torch

    ids = [tokenizer(str(i), add_special_tokens=False).input_ids[0] for i in (0, 1)]
    model.zero_grad()
    enc = tokenizer(prefix, return_tensors="pt", add_special_tokens=False)
    logp = torch.log_softmax(model(**enc).logits[0, -1].float(), -1)
    (logp[ids[0]] - logp[ids[1]]).backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.requires_grad]).clone()


def coupling(grads: dict[str, list[Any]]) -> dict[str, float]:
    """Mean cosine of gradient pairs within a form, across two forms, and of the two forms' means."""
    import torch

    def cos(a: Any, b: Any) -> float:
        return float(torch.nn.functional.cosine_similarity(a, b, 0))

    first, second = grads.values()
    within = [cos(a, b) for g in (first, second) for a, b in itertools.combinations(g, 2)]
    across = [cos(a, b) for a in first for b in second]
    return {
        "within": sum(within) / len(within),
        "across": sum(across) / len(across),
        "mean_gradients": cos(sum(first) / len(first), sum(second) / len(second)),
    }


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    from training.data import build_dataset
    from training.model_prep import freeze_below, load_model
    from training.options import parse
    from training.train import settings_of

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--per_domain", type=int, default=6)
    own, rest = parser.parse_known_args(argv)
    script, config, model_args = parse(rest)
    rows = build_dataset(script, settings_of(script))[0].to_list()
    domains = sorted({r["domain"] for r in rows})[:2]
    if len(domains) < 2 or own.per_domain < 2:
        raise SystemExit("coupling needs two domains in the mixture and --per_domain >= 2")
    model, tokenizer = load_model(model_args, config)
    if script.train_top_layers:
        freeze_below(model, script.train_top_layers)
    out = {}
    for layout in own.layouts.split(","):
        grads = {}
        for domain in domains:
            chosen = [r for r in rows if r["domain"] == domain][: own.per_domain]
            prefixes = [decision_prefix(prompt_text(tokenizer, r), r["check"], layout) for r in chosen]
            grads[domain] = [choice_gradient(model, tokenizer, p) for p in prefixes]
        out[layout] = coupling(grads)
        print(f"{layout}: " + "  ".join(f"{k} {v:.3f}" for k, v in out[layout].items()), flush=True)
    return out


if __name__ == "__main__":
    main()
