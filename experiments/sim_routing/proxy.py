"""A cheap stand-in for sim-routing's GRPO, to see which knobs decide a seed's fate (CPU seconds).

Not training: a proxy of the one decision that routing is, the first worker per question form.
The policy's worker logits on a form are a shared part plus a form's own part, `z[d] = a + g * e[d]`;
`g` sets how much one form's update moves the other (the gradient cosine across forms that
`experiments/sim_routing/coupling.py` measures on a real warm-up model is `1 / (1 + g**2)`). Each
step draws the recipe's questions (one MATH, one MMLU when interleaved), samples `num_generations`
workers per question, scores them as the simulated pool does (each (question, worker) right with the
profile's accuracy, reward 0.5 + 0.5 * right - cost term), normalises advantages in each group as
GRPO does and takes an Adam step (TRL's optimizer; Adam's first steps are full-size whatever the
signal). A seed routes both when, at the held-out temperature 0.1, each form's specialist gets at
least 90% of the choice.

    python -m experiments.sim_routing.proxy --seeds 100-299 [--lr 0.5 --steps 20 ...]
    python -m experiments.sim_routing.proxy --sweep          # every knob of the study, one table

What it is not: a transformer. Its learning rate is in logits per Adam step, set by hand so that a
policy moves within a few steps as the GPU runs' training shares did (not fitted); it ranks the
suspects, and its absolute counts are its own (docs/training.md, "Routing on every seed").
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

import numpy as np

from workers.simulation import load_profiles

WORKERS = ("math-strong", "choice-strong", "mediocre", "premium")  # the `sim` pool, in its order
COST = (0.014, 0.014, 0.001, 1.0)  # USD per question / the pool's reference (docs/training.md, cost-aware reward)
DOMAINS = ("math", "mmlu")
_PROFILES = load_profiles()  # workers/sim_profiles.yaml
ACCURACY = {d: tuple(_PROFILES[w].accuracy[d] for w in WORKERS) for d in DOMAINS}
BEST = {d: max(range(len(WORKERS)), key=lambda i, d=d: ACCURACY[d][i]) for d in DOMAINS}  # each form's specialist


@dataclass(frozen=True)
class Knobs:
    """One training design, in the proxy's terms."""

    steps: int = 20  # the defaults: sim-routing before exploring groups
    questions: int = 1  # per domain per step
    generations: int = 8
    lr: float = 0.5  # Adam step size, in logits
    lr_warmup: int = 0  # linear warm-up steps of the learning rate
    g: float = 0.53  # form-specific gain: coupling cosine 0.78 (the worker layout)
    init_sd: float = 0.8  # sd of the warm-up's shared worker bias (logits)
    form_sd: float = 0.3  # sd of its form-specific bias
    cost_weight: float = 0.2
    assign: int = 0  # rows of a group whose first worker is assigned, a permutation of the workers (explore_workers)
    beta: float = 0.0  # KL penalty to the starting policy (TRL's beta, k3 estimator)


def lr_at(k: Knobs, step: int) -> float:
    """The learning rate of `step` (0-based): constant after a linear warm-up of `lr_warmup` steps."""
    return k.lr * min(1.0, (step + 1) / k.lr_warmup) if k.lr_warmup else k.lr


def run_seed(k: Knobs, seed: int) -> dict:
    """One proxy training; returns the held-out shares of each form's best worker and the verdict."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, k.init_sd, 4)
    e = {d: rng.normal(0, k.form_sd, 4) / max(k.g, 1e-9) for d in DOMAINS}
    params = [a, e["math"], e["mmlu"]]
    start = {d: a + k.g * e[d] for d in DOMAINS}
    m = [np.zeros(4) for _ in params]
    v = [np.zeros(4) for _ in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8

    def logits(d: str) -> np.ndarray:
        return a + k.g * e[d]

    for step in range(k.steps):
        grads = [np.zeros(4) for _ in params]
        n = 0
        for d in DOMAINS:
            acc = np.array(ACCURACY[d])
            for _ in range(k.questions):
                right = rng.random(4) < acc  # this question's outcome for each worker (fixed per question)
                p = np.exp(logits(d) - logits(d).max())
                p /= p.sum()
                picks = rng.choice(4, size=k.generations, p=p)
                picks[: k.assign] = np.resize(rng.permutation(4), k.assign)
                p_ref = np.exp(start[d] - start[d].max())
                p_ref /= p_ref.sum()
                rewards = 0.5 + 0.5 * right[picks] - k.cost_weight * np.array(COST)[picks]
                std = rewards.std(ddof=1) if k.generations > 1 else 0.0
                adv = (rewards - rewards.mean()) / (std + 1e-4)
                for pick, adv_i in zip(picks, adv, strict=True):
                    dlogit = -p.copy()
                    dlogit[pick] += 1.0  # d log p(pick) / d logits
                    dlogit *= adv_i
                    if k.beta:  # k3 = r - log r - 1, r = p_ref/p: d/dlogp = 1 - r
                        ratio = p_ref[pick] / p[pick]
                        kl_grad = (1 - ratio) * (np.eye(4)[pick] - p)
                        dlogit -= k.beta * kl_grad
                    grads[0] += dlogit
                    grads[1 + DOMAINS.index(d)] += k.g * dlogit
                    n += 1
        rate = lr_at(k, step)
        for i, grad in enumerate(grads):
            grad = -grad / n  # the loss: minus the mean advantage-weighted log-probability
            m[i] = beta1 * m[i] + (1 - beta1) * grad
            v[i] = beta2 * v[i] + (1 - beta2) * grad**2
            mhat = m[i] / (1 - beta1 ** (step + 1))
            vhat = v[i] / (1 - beta2 ** (step + 1))
            params[i] -= rate * mhat / (np.sqrt(vhat) + eps)
    shares = {}
    for d in DOMAINS:
        z = logits(d) / 0.1
        p = np.exp(z - z.max())
        shares[d] = float(p[BEST[d]] / p.sum())
    return {"seed": seed, **shares, "routes_both": all(s >= 0.9 for s in shares.values())}


def summary(k: Knobs, seeds: range) -> dict:
    """How many seeds route both forms, and each form alone."""
    rows = [run_seed(k, s) for s in seeds]
    return {
        "seeds": len(rows),
        "routes_both": sum(r["routes_both"] for r in rows),
        **{d: sum(r[d] >= 0.9 for r in rows) for d in DOMAINS},
    }


DESIGNS: dict[str, Knobs] = {  # one suspect of a seed's fate each (docs/training.md, "Routing on every seed")
    "committed before exploring groups": Knobs(),
    "warm-up: no starting bias": Knobs(init_sd=0.0, form_sd=0.0),
    "cost term off (the paper's reward)": Knobs(cost_weight=0.0),
    "coupling: forms nearly independent (g 2)": Knobs(g=2.0),
    "coupling: the lists layout (g 0.18)": Knobs(g=0.18),
    "learning rate: warm-up over 4 steps": Knobs(lr_warmup=4),
    "learning rate halved, steps doubled": Knobs(lr=0.25, steps=40),
    "batch: 2+2 questions x 4": Knobs(questions=2, generations=4),
    "batch: 2+2 questions x 8": Knobs(questions=2),
    "exploration: KL to the start (beta 0.2)": Knobs(beta=0.2),
    "exploration: 4 of 8 assigned (explore_workers 4)": Knobs(assign=4),
    "explore_workers 4, lr halved, steps doubled": Knobs(assign=4, lr=0.25, steps=40),
    "batch 2+2 x 8, steps doubled (no exploring)": Knobs(questions=2, steps=40),
    "explore_workers 4, batch 2+2 x 8, steps doubled": Knobs(assign=4, questions=2, steps=40),
    "the same, cost term off (the paper's reward)": Knobs(assign=4, questions=2, steps=40, cost_weight=0.0),
    "explore_workers 8 (every row), batch 2+2 x 8, steps doubled": Knobs(assign=8, questions=2, steps=40),
    "explore_workers 4, batch 4+4 x 8, steps doubled": Knobs(assign=4, questions=4, steps=40),
    "every row assigned: 2+2 questions x 4, one rollout per worker": Knobs(assign=4, questions=2, generations=4),
    "the same over 30 steps (the committed recipe)": Knobs(assign=4, questions=2, generations=4, steps=30),
    "the committed recipe, cost term off": Knobs(assign=4, questions=2, generations=4, steps=30, cost_weight=0.0),
}


def seed_range(text: str) -> range:
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="100-299", help="a range, e.g. 100-299")
    parser.add_argument("--sweep", action="store_true", help="every design of the study")
    for name, value in Knobs().__dict__.items():
        parser.add_argument(f"--{name}", type=type(value) if not isinstance(value, bool) else lambda s: s == "true")
    args = parser.parse_args(argv)
    seeds = seed_range(args.seeds)
    if args.sweep:
        designs = DESIGNS
    else:
        overrides = {n: getattr(args, n) for n in Knobs().__dict__ if getattr(args, n) is not None}
        designs = {"this design": replace(Knobs(), **overrides)}
    print(f"| design (proxy, {len(seeds)} seeds {args.seeds}) | routes both | routes MATH | routes MMLU |")
    print("|---|---:|---:|---:|")
    for name, knobs in designs.items():
        s = summary(knobs, seeds)
        print(f"| {name} | {s['routes_both']} | {s['math']} | {s['mmlu']} |")


if __name__ == "__main__":
    main()
