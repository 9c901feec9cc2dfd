"""The policy's own worker choice at each saved model of a run: per domain, the mean probability the
model gives each pool worker as its first worker, on the run's training prompts.

    python -m experiments.seeds.checkpoint_routing runs/seeds-cpu-all-assigned/seed-3000 [--questions 16]
    python -m experiments.seeds.checkpoint_routing runs/seeds-cpu-all-assigned/seed-300{0,1,2} --only warm-up

Reads the run's recipe options from `run_info.json`, builds its first training prompts per domain
(`training.data.build_dataset`), and for the warm-up model, each `checkpoint-N` and the final model
generates greedily up to the first worker id, where `training.explore.FirstWorker` keeps the model's
probabilities over the worker ids (the same reading as `first_worker_policy` in `rollouts.jsonl`).
Where the rollouts cannot show the policy's choice (every rollout assigned, or a run from before that
log), this shows how it moved.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from reports.run_files import read_run_info
from reports.tables import markdown


def saved_models(run: Path) -> list[tuple[str, Path]]:
    """(label, folder) of the warm-up model, every checkpoint by step, then the final model."""
    steps = sorted((int(m[1]), p) for p in run.glob("checkpoint-*") if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)))
    found = [("warm-up", run / "warmup")] if (run / "warmup" / "config.json").is_file() else []
    found += [(f"step {n}", p) for n, p in steps]
    return found + [("final", run)] if (run / "config.json").is_file() else found


def prompts(run: Path, questions: int) -> list[dict]:
    """The run's first `questions` training rows of each domain (prompt, domain, pool_indices)."""
    from training.data import build_dataset
    from training.options import parse
    from training.train import settings_of

    recipes = Path(__file__).resolve().parents[2] / "training" / "recipes"
    name = read_run_info(run, required=["recipe"])["recipe"]
    recipe = recipes / f"{name}.yaml"
    if recipe not in recipes.glob("*.yaml"):  # a run folder may be anyone's: only a bundled recipe is read
        raise SystemExit(f"{run}: recipe {name!r} is not one of training/recipes/*.yaml")
    script, _, _ = parse([str(recipe), "--output_dir", str(run / "probe")])
    rows, seen = [], {}
    for row in build_dataset(script, settings_of(script))[0]:
        if seen.get(row["domain"], 0) < questions:
            seen[row["domain"]] = seen.get(row["domain"], 0) + 1
            rows.append(row)
    return rows


def first_worker_shares(model_dir: Path, rows: list[dict], names: list[str]) -> pd.DataFrame:
    """Per row: its domain and the model's probability of each pool worker (by name) as first worker."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    from training.explore import FirstWorker, digit_token_ids

    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    texts = [tokenizer.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True) for r in rows]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    n_workers = len(rows[0]["pool_indices"])
    reader = FirstWorker(
        [0] * len(rows), digit_token_ids(tokenizer, n_workers)
    )  # records, then forces: only the record is used
    with torch.no_grad():
        model.generate(**batch, max_new_tokens=64, do_sample=False, logits_processor=LogitsProcessorList([reader]),
                       pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)  # fmt: skip
    out = []
    for row, given in zip(rows, reader.assignments(), strict=True):
        if given.policy is not None:
            out.append(
                {
                    "domain": row["domain"],
                    **{names[i]: p for i, p in zip(row["pool_indices"], given.policy, strict=False)},
                }
            )
    return pd.DataFrame(out)


def routing_table(run: Path, questions: int, only: str | None = None) -> pd.DataFrame:
    """Per saved model of `run` (only the one labelled `only`, if given) and domain: the mean first-worker
    probabilities."""
    models = [(label, folder) for label, folder in saved_models(run) if only in (None, label)]
    if not models:
        raise SystemExit(f"{run}: no saved model labelled {only!r} (labels: warm-up, step N, final)")
    names = list(read_run_info(run, required=["data"])["data"]["pool_workers"])
    rows = prompts(run, questions)
    parts = []
    for label, folder in models:
        shares = first_worker_shares(folder, rows, names)
        parts.append(shares.groupby("domain").mean().round(3).assign(run=run.name, model=label).reset_index())
    return pd.concat(parts, ignore_index=True)[["run", "model", "domain", *names]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="training runs' output_dirs")
    parser.add_argument("--questions", type=int, default=16, help="training prompts per domain")
    parser.add_argument("--only", help="one saved model of each run: warm-up, 'step N' or final")
    args = parser.parse_args(argv)
    print(markdown(pd.concat([routing_table(run, args.questions, args.only) for run in args.runs], ignore_index=True)))


if __name__ == "__main__":
    main()
