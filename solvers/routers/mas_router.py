"""MASRouter (Yue et al., ACL 2025): a cascade that builds a multi-agent system per query:
collaboration mode and number of agents, then a role per agent, then a worker per role.
Each stage is a softmax policy over the query features and the earlier stages' choices;
the cascade is trained with REINFORCE on the executed system's utility
(correct - cost_rate * cost in USD; MASRouter's cost_rate 100), batch 256, validated every
5 iterations, stopping early at a 10% drop of validation accuracy below its best (the
Conductor paper's settings); the checkpoint of best validation utility (lowest loss) is
kept. Greedy decisions at test time.

A plan becomes a workflow in this project's language and runs on the shared executor
(every step recorded like the conductor's; every step is shown the question):
- single: one agent;  chain: each agent sees all earlier agents;
- ensemble: agents answer independently, then the first agent's worker decides seeing all;
- debate: agents answer independently, then each revises seeing all; the last revision answers.

Simplified against the original: linear heads over a fixed embedding (the original uses a
sentence encoder, a VAE for the agent count and a task classifier); roles are a small set
per domain written for this project; the task (domain) is known, not classified. Pure numpy.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from solvers.routers.nn import Adam, softmax
from solvers.workflow import Workflow

KIND = "mas_router"
MODES = ("single", "chain", "ensemble", "debate")
DECIDE = "Compare the answers above, settle which one is right, and give the final answer."
REVISE = "Consider the other answers above, revise your own if they show it wrong, and give the final answer."
FINAL = "give the final answer"
ROLES: dict[str, tuple[tuple[str, str], ...]] = {
    "math": (
        ("solver", "Solve the problem step by step and give the final answer."),
        ("checker", "Re-derive the result independently, point out any error, and give the final answer."),
        ("planner", "Write a short plan of attack, carry it out, and give the final answer."),
        ("calculator", "Do every computation carefully, checking each number, and give the final answer."),
    ),
    "mmlu": (
        ("expert", "Answer as a subject expert: recall the relevant facts and give the final answer."),
        ("eliminator", "Rule out the wrong options one by one and give the final answer."),
        ("critic", "Question the most tempting option, look for a flaw, and give the final answer."),
    ),
    "lcb": (
        ("programmer", "Write a correct, efficient solution and give the final code."),
        ("tester", "Think through edge cases and tests, fix any bug found, and give the final code."),
        ("designer", "Choose the algorithm and data structures first, then give the final code."),
    ),
}
ROLES["rlpr"] = ROLES["math"]
ROLE_LIST = [(domain, name, text) for domain, roles in ROLES.items() if domain != "rlpr" for name, text in roles]


def domain_roles(domain: str) -> list[int]:
    """Indices in ROLE_LIST of the roles a domain may use (unknown domains: math's)."""
    wanted = "math" if domain in ("rlpr",) or domain not in ROLES else domain
    return [i for i, (d, _, _) in enumerate(ROLE_LIST) if d == wanted]


@dataclass(frozen=True)
class Plan:
    mode: str
    roles: tuple[int, ...]  # indices in ROLE_LIST, one per agent
    workers: tuple[int, ...]  # pool indices, one per agent

    def to_dict(self) -> dict:
        return {"mode": self.mode, "roles": [ROLE_LIST[r][1] for r in self.roles], "workers": list(self.workers)}


def plan_workflow(plan: Plan) -> Workflow:
    """The plan as a workflow for the executor (question shown to every step)."""
    texts = [ROLE_LIST[r][2] for r in plan.roles]
    n, ids, subtasks, access = len(plan.workers), list(plan.workers), texts, []
    if plan.mode in ("single", "chain"):
        access = [() if i == 0 else "all" for i in range(n)]
    elif plan.mode == "ensemble":
        ids, subtasks, access = [*ids, plan.workers[0]], [*texts, DECIDE], [*[()] * n, "all"]
    elif plan.mode == "debate":
        ids, subtasks, access = ids * 2, [*texts, *[REVISE] * n], [*[()] * n, *["all"] * n]
    else:
        raise ValueError(f"unknown collaboration mode {plan.mode!r}; known: {', '.join(MODES)}")
    return Workflow(tuple(ids), tuple(subtasks), tuple(access))


@dataclass(frozen=True)
class MASConfig:
    max_agents: int = 4
    batch_size: int = 256
    iterations: int = 40
    eval_every: int = 5
    early_stop_drop: float = 0.10
    cost_rate: float = 100.0
    lr: float = 0.01
    seed: int = 0


def _onehot(i: int, n: int) -> np.ndarray:
    v = np.zeros(n)
    v[i] = 1.0
    return v


@dataclass
class MASRouter:
    """The cascade's parameters: one linear softmax head per stage."""

    params: dict[str, np.ndarray]
    workers: list[str]
    source: dict
    max_agents: int = 4
    info: dict = field(default_factory=dict)

    @classmethod
    def init(cls, dim: int, workers: list[str], source: dict, max_agents: int, seed: int = 0) -> MASRouter:
        rng = np.random.default_rng(seed)
        m, r, k, c = len(MODES), len(ROLE_LIST), len(workers), max(1, max_agents - 1)
        shapes = {"mode": (dim + 1, m), "count": (dim + m + 1, c), "role": (dim + m + max_agents + 1, r),
                  "worker": (dim + m + r + 1, k)}  # fmt: skip
        params = {name: rng.normal(0, 0.01, shape) for name, shape in shapes.items()}
        return cls(params, workers, source, max_agents)

    # each stage: (features, allowed options) -> choice; `choose` samples or takes the argmax
    def decide(
        self, x: np.ndarray, domain: str, choose: Callable[[np.ndarray], int], trace: list | None = None
    ) -> Plan:
        m = len(MODES)

        def stage(name: str, phi: np.ndarray, allowed: Sequence[int] | None = None) -> int:
            logits = phi @ self.params[name]
            if allowed is not None:
                mask = np.full(logits.shape, -np.inf)
                mask[list(allowed)] = 0.0
                logits = logits + mask
            probs = softmax(logits)
            pick = choose(probs)
            if trace is not None:
                trace.append((name, phi, probs, pick))
            return pick

        mode = stage("mode", np.append(x, 1.0))
        mode_1h = _onehot(mode, m)
        n = (
            1
            if MODES[mode] == "single" or self.max_agents < 2
            else 2 + stage("count", np.concatenate([x, mode_1h, [1.0]]))
        )
        allowed = domain_roles(domain)
        roles, workers = [], []
        for slot in range(n):
            slot_1h = _onehot(min(slot, self.max_agents - 1), self.max_agents)
            role = stage("role", np.concatenate([x, mode_1h, slot_1h, [1.0]]), allowed)
            workers.append(stage("worker", np.concatenate([x, mode_1h, _onehot(role, len(ROLE_LIST)), [1.0]])))
            roles.append(role)
        return Plan(MODES[mode], tuple(roles), tuple(workers))

    def greedy(self, x: np.ndarray, domain: str) -> Plan:
        return self.decide(x, domain, lambda p: int(np.argmax(p)))

    def to_dict(self) -> dict:
        return {"kind": KIND, "version": 1, "workers": self.workers, "source": self.source,
                "max_agents": self.max_agents, "params": {k: v.tolist() for k, v in self.params.items()},
                "info": self.info}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> MASRouter:
        if data.get("kind") != KIND:
            raise ValueError(f"not a {KIND} router file (kind={data.get('kind')!r}); train one with "
                             "`python -m solvers.routers.train mas_router ...`")  # fmt: skip
        params = {k: np.array(v, dtype=float) for k, v in data["params"].items()}
        return cls(params, list(data["workers"]), dict(data["source"]), int(data["max_agents"]), data.get("info", {}))


def save(router: MASRouter, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(router.to_dict()))


Execute = Callable[[int, Plan], Awaitable[tuple[bool, float | None]]]  # (item index, plan) -> (correct, cost)


def policy_gradient(trace: list, advantage: float, grads: dict[str, np.ndarray]) -> None:
    """Add advantage * d log pi(plan) to `grads` (gradient ascent direction)."""
    for name, phi, probs, pick in trace:
        delta = -probs
        delta[pick] += 1.0
        delta[~np.isfinite(delta)] = 0.0
        grads[name] += advantage * np.outer(phi, delta)


async def evaluate(router: MASRouter, x: np.ndarray, domains: Sequence[str], execute: Execute, cost_rate: float):
    """(accuracy, mean utility) of the greedy plans."""
    results = await asyncio.gather(*(execute(i, router.greedy(x[i], domains[i])) for i in range(len(x))))
    return float(np.mean([c for c, _ in results])), float(np.mean([utility(r, cost_rate) for r in results]))


def utility(result: tuple[bool, float | None], cost_rate: float) -> float:
    """MASRouter's reward: solved minus cost_rate times the cost in USD (unknown cost: 0)."""
    correct, cost = result
    return float(correct) - cost_rate * (cost or 0.0)


async def train(
    x: np.ndarray,
    domains: Sequence[str],
    execute: Execute,
    x_val: np.ndarray,
    val_domains: Sequence[str],
    execute_val: Execute,
    workers: list[str],
    source: dict,
    config: MASConfig = MASConfig(),
) -> MASRouter:
    """REINFORCE over sampled plans on training items. Every `eval_every` iterations the greedy
    plans run on the validation items: the checkpoint of best validation utility (lowest loss)
    is kept; training stops when validation accuracy falls `early_stop_drop` below its best."""
    if len(x) == 0 or len(x_val) == 0:
        raise ValueError("MASRouter needs training and validation items")
    rng = np.random.default_rng(config.seed)
    router = MASRouter.init(x.shape[1], workers, source, config.max_agents, config.seed)
    optimizer = Adam(router.params, config.lr)

    def snapshot() -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in router.params.items()}

    accuracy, value = await evaluate(router, x_val, val_domains, execute_val, config.cost_rate)
    best, best_accuracy = (value, accuracy, 0, snapshot()), accuracy
    history = [{"iteration": 0, "val_accuracy": accuracy, "val_utility": value}]
    for iteration in range(1, config.iterations + 1):
        batch = rng.choice(len(x), min(config.batch_size, len(x)), replace=False)
        traces: list[list] = [[] for _ in batch]
        plans = [
            router.decide(x[i], domains[i], lambda p: int(rng.choice(len(p), p=p)), t)
            for i, t in zip(batch, traces, strict=True)
        ]
        results = await asyncio.gather(*(execute(int(i), plan) for i, plan in zip(batch, plans, strict=True)))
        utilities = [utility(r, config.cost_rate) for r in results]
        baseline = float(np.mean(utilities))
        grads = {k: np.zeros_like(v) for k, v in router.params.items()}
        for trace, u in zip(traces, utilities, strict=True):
            policy_gradient(trace, (u - baseline) / len(batch), grads)
        optimizer.step({k: -g for k, g in grads.items()})  # ascend the expected utility
        entry = {"iteration": iteration, "train_accuracy": float(np.mean([c for c, _ in results])), "utility": baseline}
        history.append(entry)
        if iteration % config.eval_every and iteration != config.iterations:
            continue
        accuracy, value = await evaluate(router, x_val, val_domains, execute_val, config.cost_rate)
        entry.update(val_accuracy=accuracy, val_utility=value)
        if value > best[0]:
            best = (value, accuracy, iteration, snapshot())
        best_accuracy = max(best_accuracy, accuracy)
        if accuracy < best_accuracy * (1 - config.early_stop_drop):
            break
    router.params = best[3]
    router.info = {"config": asdict(config), "best_iteration": best[2], "val_utility": best[0],
                   "val_accuracy": best[1], "history": history}  # fmt: skip
    return router
