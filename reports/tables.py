"""The paper's tables from the reports frame (pandas; Inspect only for its clustered standard error).

A table is a set of benchmark columns and a rule that picks rows (`SPECS`). Rows are whatever the
logs hold: one per (pool, method key, conductor model), the key being the solver and the options
that differ from its defaults (`reports.records.run_fields`). Each benchmark cell is the accuracy
(%) as mean +- standard error clustered by question (`clustered_se`; an errored or unscored
sample counts as wrong), with n = samples x epochs and the errored count. Per row: total
tokens, USD and agent calls per question over the table's benchmarks, and the cost-adjusted score
(the paper's: average accuracy / USD per question in cents). A cost is "unknown" when any sample of
the row lacks a price, never 0.

Sections are per pool. The paper's number stands beside a cell only for the paper's own API pools
in the table's setting (constrained / unconstrained, the bundled pool file's `setting`); simulated and local
pools get no paper column and a title that says what they are.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reports.safe_text import writable
from workers.providers import capabilities

REFERENCE = Path(__file__).with_name("paper_reference.csv")
IN_DIST = ("MATH500", "MMLU", "RLPR", "LCB")
OOD = ("AIME25", "BCB", "GPQA-D")
UNKNOWN = "unknown"
IDENTITY = ["pool", "key", "conductor_short"]
OTHER_TITLE = "Benchmarks the paper does not report"  # the table of every other task (a user's own)


def key_parts(key: str) -> tuple[str, set[str]]:
    """`solver|opt=v|...` -> (solver, option names)."""
    name, *rest = str(key).split("|")
    return name, {p.split("=", 1)[0] for p in rest}


def _only(solver: str, allowed: set[str]) -> Callable[[str], bool]:
    def pick(key: str) -> bool:
        name, options = key_parts(key)
        return name == solver and options <= allowed

    return pick


def _any(*rules: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda key: any(rule(key) for rule in rules)


def _all(key: str) -> bool:
    return True


@dataclass(frozen=True)
class Spec:
    """One paper table: its benchmark columns, setting and which logged rows it shows."""

    id: str
    title: str
    setting: str  # the paper's setting: constrained | unconstrained
    columns: tuple[str, ...]
    rows: Callable[[str], bool] = _all  # picks a row by its key
    average: bool = True
    expected: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (methods file, matrix method names | ("*",))
    aliases: dict = field(default_factory=dict)  # reference column -> our column (Tables 5, 6)
    note: str = ""


_single = _only("single_worker", {"worker"})  # Table 10's baselines
MATRIX, ABLATIONS = "solvers/matrix.yaml", "solvers/ablations.yaml"
SPECS: tuple[Spec, ...] = (
    # Tables 1 and 2/8 show every logged row (so that every row on every benchmark is in some table);
    # the paper's rows there are the single workers and the conductor, which are what they expect
    Spec(
        "1",
        "Table 1: unconstrained setting, all benchmarks",
        "unconstrained",
        IN_DIST + OOD,
        _all,
        expected=((MATRIX, ("conductor", "single_worker")),),
        note="The paper's baseline rows are the best of its own runs, private runs and leaderboards.",
    ),
    Spec(
        "2/8",
        "Tables 2/8: constrained setting, out-of-distribution benchmarks",
        "constrained",
        OOD,
        _all,
        expected=((MATRIX, ("conductor", "single_worker")),),
    ),
    Spec(
        "4",
        "Table 4: the conductor's few-shot examples",
        "constrained",
        IN_DIST,
        _only("conductor", {"few_shot"}),
        average=False,
        expected=((ABLATIONS, ("conductor", "few_shot_in_distribution", "few_shot_mixed")),),
    ),
    Spec(
        "5",
        "Table 5: cost on MMLU",
        "constrained",
        ("MMLU",),
        _all,
        average=False,
        expected=((MATRIX, ("*",)),),
        aliases={"performance": "MMLU"},
    ),
    Spec(
        "6",
        "Table 6: cost, average over the in-distribution benchmarks",
        "constrained",
        IN_DIST,
        _all,
        expected=((MATRIX, ("*",)),),
        aliases={"performance": "avg"},
    ),
    Spec(
        "7",
        "Table 7: constrained setting, in-distribution benchmarks, every method",
        "constrained",
        IN_DIST,
        _all,
        expected=((MATRIX, ("*",)),),
    ),
    Spec(
        "9",
        "Table 9: conductor ablations (access, few-shot, subtasks)",
        "constrained",
        IN_DIST,
        _only("conductor", {"access", "few_shot", "subtasks"}),
        average=False,
        expected=((ABLATIONS, ("conductor", "fine_grained_access", "no_few_shot", "no_subtasks")),),
    ),
    Spec(
        "10",
        "Table 10: one worker model in every slot",
        "unconstrained",
        OOD,
        _any(_single, _only("conductor", {"replace_workers"})),
        expected=((MATRIX, ("single_worker",)), (ABLATIONS, ("conductor", "replace_workers"))),
    ),
    Spec(
        "11",
        "Table 11: other conductor models",
        "unconstrained",
        ("LCB",) + OOD,
        _only("conductor", {"max_tokens", "format_retries"}),
        expected=((ABLATIONS, ("conductor",)),),
        note="A frontier model conducts with --model-role conductor=<model> -S max_tokens=2048 "
        "-S format_retries=<n>; each conductor model is its own row.",
    ),
)


# ----------------------------------------------------------------------------- cells


@dataclass(frozen=True)
class Cell:
    """Accuracy of one row on one benchmark: mean and SE clustered by question (%), sample counts."""

    mean: float
    se: float  # NaN with one question
    samples: int  # distinct samples
    epochs: int
    errors: int
    missing: int = 0  # samples x epochs the logs meant to run but do not hold

    def text(self) -> str:
        se = f" ± {self.se:.2f}" if not math.isnan(self.se) else ""
        err = f", {self.errors} err" if self.errors else ""
        gap = f", {self.missing} missing" if self.missing else ""
        return f"{self.mean:.2f}{se} (n={self.samples}x{self.epochs}{err}{gap})"


def cell(rows: pd.DataFrame) -> Cell:
    """Accuracy over `rows` (one benchmark, one method): the mean over samples x epochs (each epoch
    has every sample once, so it equals the mean of the epochs' means) with `clustered_se`. Missing:
    the most samples x epochs one of its logs meant to run (the header's sample ids, --limit applied)
    minus the rows held (a crashed or cancelled eval)."""
    correct = pd.to_numeric(rows["score"], errors="coerce").fillna(0.0).clip(0.0, 1.0) * 100.0
    per_epoch = correct.groupby(rows["epoch"]).mean()
    expected = pd.to_numeric(rows["expected"], errors="coerce").max() if "expected" in rows else math.nan
    gap = max(0, int(expected) - len(rows)) if not pd.isna(expected) else 0
    return Cell(
        float(per_epoch.mean()),
        clustered_se(correct, rows["sample_id"]),
        int(rows["sample_id"].nunique()),
        len(per_epoch),
        int(rows["error"].notna().sum()),
        gap,
    )


def clustered_se(values: pd.Series, question: pd.Series) -> float:
    """Standard error of the mean of `values` (one per sample and epoch) clustered by question: the
    epochs of one question are repeated measures, not independent draws (Miller 2024, "Adding Error
    Bars to Evals", arXiv:2411.00640, sec. 2.2 and appendix A), through Inspect's own
    `stderr(cluster=...)` (with its C / (C - 1) correction). One epoch: the usual SE over samples.
    NaN with fewer than two questions."""
    from inspect_ai.scorer import SampleScore, Score, stderr

    if question.nunique() < 2:
        return math.nan
    scores = [
        SampleScore(score=Score(value=float(v)), sample_id=str(q), sample_metadata={"question": str(q)})
        for v, q in zip(values, question, strict=True)
    ]
    return float(stderr(cluster="question")(scores))


def per_question(rows: pd.DataFrame) -> dict:
    """Tokens (in + out), USD and agent calls per question; USD None when any price is unknown."""
    tokens = pd.to_numeric(rows["input_tokens"], errors="coerce").fillna(0) + pd.to_numeric(
        rows["output_tokens"], errors="coerce"
    ).fillna(0)
    cost = pd.to_numeric(rows["cost_usd"], errors="coerce")
    calls = pd.to_numeric(rows["agent_calls"], errors="coerce")
    return {
        "tokens": float(tokens.mean()) if len(rows) else math.nan,
        "usd": float(cost.mean()) if len(rows) and cost.notna().all() else None,
        "agent_calls": float(calls.mean()) if calls.notna().any() else math.nan,
        "unpriced": int(cost.isna().sum()),
    }


def cost_adjusted(accuracy: float, usd: float | None) -> float | None:
    """The paper's cost-adjusted score: accuracy (%) / (USD per question in cents); None when the
    cost is unknown, NaN when there is no accuracy or the cost is 0 (free local models)."""
    if usd is None:
        return None
    if math.isnan(accuracy) or usd <= 0:
        return math.nan
    return accuracy / (usd * 100.0)


def dedupe(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (identity, task, sample, epoch): the latest log's (a rerun replaces a retry)."""
    if frame.empty:
        return frame
    ordered = frame.sort_values("created", kind="stable")
    return ordered.drop_duplicates(IDENTITY + ["task", "sample_id", "epoch"], keep="last")


# ----------------------------------------------------------------------------- tables


@dataclass
class Built:
    """One table for one pool: the wide frame for reading, the long frame for CSV."""

    spec: Spec
    pool: str
    kind: str  # simulated | mixed | local | api | unknown
    setting: str
    comparable: bool  # the paper's numbers stand beside ours
    wide: pd.DataFrame
    long: pd.DataFrame
    missing: list[tuple[str, str]]  # (row label, column) without samples
    logs: tuple[str, ...]

    @property
    def name(self) -> str:
        """A file name: table<id>-<pool> (a pool given as a YAML path: its stem and a short hash)."""
        return f"table{self.spec.id.replace('/', '-')}-{pool_slug(self.pool)}"

    @property
    def heading(self) -> str:
        return f"{self.spec.title} — {pool_heading(self.pool, self.kind, self.setting)}"


def pool_slug(pool: str) -> str:
    """A pool name safe in a file name; a pool file path becomes `<stem>-<hash>`."""
    if re.fullmatch(r"[A-Za-z0-9._-]{1,64}", pool) and not pool.startswith("."):
        return pool
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(pool).stem)[:40].strip("-") or "pool"
    return f"{stem}-{hashlib.sha1(pool.encode()).hexdigest()[:6]}"


def pool_heading(pool: str, kind: str, setting: str) -> str:
    if kind == "simulated":
        return f"SIMULATION: pool {pool} (simulated workers; not comparable to the paper's numbers)"
    if kind == "mixed":  # `reports.records.pool_makeup`
        return f"MIXED: pool {pool} (simulated and real workers; not comparable to the paper's numbers)"
    if kind == "local":
        return f"local pool {pool} (small local models; not comparable to the paper's numbers)"
    if setting:
        return f"pool {pool} ({setting} setting; the paper's numbers beside ours)"
    return f"pool {pool} (not one of the paper's pools; not comparable to the paper's numbers)"


def read_reference(path: Path = REFERENCE) -> pd.DataFrame:
    ref = pd.read_csv(path, dtype={"table": str, "key": str, "label": str, "column": str, "note": str})
    return ref.fillna({"note": ""})


def reference_match(ref: pd.DataFrame, key: str, pool: str, conductor: str) -> pd.DataFrame:
    """The reference rows for one logged row: same key (the reference's `conductor=` and `pool=`
    parts must also match); the most specific reference wins."""
    best, best_rank = ref.iloc[0:0], -1
    for rkey, group in ref.groupby("key", sort=False):
        name, *options = str(rkey).split("|")
        pairs = [o.split("=", 1) for o in options]
        fixed = {k: v for k, v in pairs if k in ("conductor", "pool")}
        base = "|".join([name] + [f"{k}={v}" for k, v in pairs if k not in fixed])
        if base != key or fixed.get("conductor", conductor) != conductor or fixed.get("pool", pool) != pool:
            continue
        if len(fixed) > best_rank:
            best, best_rank = group, len(fixed)
    return best


def build_table(
    spec: Spec, pool_rows: pd.DataFrame, ref: pd.DataFrame | None, *, extra_rows: Sequence[tuple[str, str]] = ()
) -> Built:
    """One table for one pool's rows (already deduplicated). `extra_rows` = (key, label) expected
    but not logged: shown with empty cells so that their gaps are listed."""
    first = pool_rows.iloc[0] if len(pool_rows) else None
    pool = str(first["pool"]) if first is not None else ""
    kind = str(first["pool_kind"]) if first is not None else "unknown"
    setting = str(first["setting"]) if first is not None else ""
    comparable = kind == "api" and setting == spec.setting and ref is not None
    table_ref = ref[ref["table"] == spec.id] if comparable else None
    chosen = pool_rows[pool_rows["key"].map(spec.rows)] if len(pool_rows) else pool_rows
    chosen = chosen[chosen["paper_column"].isin(spec.columns)]
    wide_rows, long_rows, missing = [], [], []
    identities = list(chosen.groupby(["key", "conductor_short"], sort=True).groups) if len(chosen) else []
    seen_keys = {k for k, _ in identities}
    identities += [(k, "") for k, _ in extra_rows if k not in seen_keys and spec.rows(k)]
    labels = dict(extra_rows)
    for key, conductor in identities:
        rows = chosen[(chosen["key"] == key) & (chosen["conductor_short"] == conductor)]
        if len(rows):
            label = named(str(rows["label"].iloc[0]), key, str(rows["matrix_base"].iloc[0]))
        else:
            label = f"{named(labels.get(key, key), key)} (not run)"
        paper = reference_match(table_ref, key, pool, conductor) if table_ref is not None and len(table_ref) else None
        paper_values = {}
        if paper is not None and len(paper):
            paper_values = {spec.aliases.get(c, c): v for c, v in zip(paper["column"], paper["value"], strict=True)}
        wide = {"row": label, "key": key}
        means, ses, present = [], [], []
        for column in spec.columns:
            part = rows[rows["paper_column"] == column]
            if len(part):
                c = cell(part)
                wide[column] = c.text()
                means.append(c.mean)
                present.append(column)
                ses.append(c.se)
                long_rows.append(
                    _long(
                        spec,
                        pool,
                        kind,
                        label,
                        key,
                        conductor,
                        column,
                        c.mean,
                        c.se,
                        c.samples,
                        c.epochs,
                        c.errors,
                        paper_values.get(column),
                        missing=c.missing,
                    )
                )
            else:
                wide[column] = "—"
                missing.append((label, column))
                long_rows.append(
                    _long(
                        spec,
                        pool,
                        kind,
                        label,
                        key,
                        conductor,
                        column,
                        math.nan,
                        math.nan,
                        0,
                        0,
                        0,
                        paper_values.get(column),
                    )
                )
            if comparable:
                wide[f"{column} paper"] = _num(paper_values.get(column))
        average = float(np.mean(means)) if means else math.nan  # over the benchmarks present
        if spec.average:
            se = math.sqrt(sum(s * s for s in ses)) / len(ses) if ses and not any(map(math.isnan, ses)) else math.nan
            wide["avg"] = (
                "—"
                if math.isnan(average)
                else (f"{average:.2f}" + (f" ± {se:.2f}" if not math.isnan(se) else "") + of(present, spec.columns))
            )
            paper_avg, paper_avg_text = paper_average(paper_values, spec.columns, present)
            long_rows.append(_long(spec, pool, kind, label, key, conductor, "avg", average, se, 0, 0, 0, paper_avg))
            if comparable:
                wide["avg paper"] = paper_avg_text
        costs = (
            per_question(rows)
            if len(rows)
            else {"tokens": math.nan, "usd": None, "agent_calls": math.nan, "unpriced": 0}
        )
        score = average if len(spec.columns) > 1 else (means[0] if means else math.nan)
        adjusted = cost_adjusted(score, costs["usd"])
        metrics = {
            "tokens": costs["tokens"],
            "usd": costs["usd"],
            "agent_calls": costs["agent_calls"],
            "cost_adjusted": adjusted,
        }
        for name, value in metrics.items():
            wide[name] = _metric(name, value, rows, costs["unpriced"])
            if comparable and name in paper_values:
                wide[f"{name} paper"] = _num(paper_values.get(name))
            long_rows.append(
                _long(
                    spec,
                    pool,
                    kind,
                    label,
                    key,
                    conductor,
                    name,
                    math.nan if value is None else value,
                    math.nan,
                    len(rows),
                    0,
                    0,
                    paper_values.get(name),
                    unknown=value is None and len(rows) > 0,
                )
            )
        models = [m for m in (rows["conductor_model"] if "conductor_model" in rows else ()) if isinstance(m, str)]
        notes = [row_note(key, kind, models[0] if models else "")]
        under = (
            paper_row(spec, ref, key, pool, conductor, list(wide), present)
            if (not comparable and len(rows) and ref is not None)
            else []
        )
        if not comparable and len(rows) and ref is not None and not under and spec.title != OTHER_TITLE:
            notes.append(no_counterpart(spec, ref, key, kind))  # the paper has no table of a user's own task
        wide["note"] = "; ".join(n for n in notes if n)
        wide_rows.append(wide)
        wide_rows += under
    logs = tuple(sorted(set(chosen["log"]))) if len(chosen) else ()
    wide = pd.DataFrame(wide_rows)
    if "note" in wide and not wide["note"].astype(bool).any():
        wide = wide.drop(columns="note")
    return Built(spec, pool, kind, setting, comparable, wide, pd.DataFrame(long_rows), missing, logs)


PAPER_ROW = "paper:"  # the key prefix of a row that holds the paper's numbers
# the paper's method names by key (worker options dropped); a 5x context run is named by its matrix method
PAPER_NAMES = {
    "self_reflection": "5x self-reflection",
    "consensus": "5x consensus",
    "mixture_of_agents": "MoA",
    "smoothie": "Smoothie dependent",
    "smoothie|mode=independent": "Smoothie independent",
    "router_dc": "RouterDC",
    "mas_router": "MASRouter",
    "conductor|max_depth=1": "Conductor-Recursive",
    "conductor|access=indices": "Conductor fine-grained access",
    "conductor|few_shot=none": "Conductor without few-shot",
    "conductor|subtasks=fixed": "Conductor without subtasks",
    "conductor|few_shot=in_distribution": "Conductor (in-distribution few-shot)",
    "conductor|few_shot=mixed": "Conductor (mixed few-shot)",
}
_NAME_OPTIONS = {"worker", "rounds", "samples", "embeddings", "samples_per_worker"}  # not part of a paper name


def named(label: str, key: str, matrix_base: str = "") -> str:
    """A row's label with the paper's name of its method, when the paper has one ("..., the paper's
    5x context"); the logged label stays first, as the logs name the row."""
    name, *options = key.split("|")
    if name == "single_worker" and (matrix_base == "context_5x" or "max_tokens=20480" in options):
        paper = "5x context"
    else:
        paper = PAPER_NAMES.get("|".join([name, *(o for o in options if o.split("=")[0] not in _NAME_OPTIONS)]))
    return f"{label}, the paper's {paper}" if paper else label


def row_note(key: str, kind: str, conductor_model: str) -> str:
    """What a row is when its name does not say it: a scripted conductor, simulated workers that ignore
    an option, hashed embeddings, routers trained at a small size."""
    solver, options = key_parts(key)
    notes = []
    if capabilities(conductor_model).scripted:
        notes.append(
            "a scripted conductor, no model: it writes fixed workflows chosen by a hash of the question "
            "(workers/scripted_provider.py)"
        )
    if solver == "single_worker" and "max_tokens" in options and kind == "simulated":
        notes.append("simulated workers ignore max_tokens: the same answers as the single worker without it")
    if "embeddings=hash" in key.split("|"):
        notes.append("hashed embeddings, not the paper's embedding model")
    if solver in ("router_dc", "mas_router") and kind in ("simulated", "mixed", "local"):
        notes.append("a router trained at a small size for this pool (solvers/matrix.yaml router_training)")
    return "; ".join(notes)


def of(present: Sequence[str], columns: Sequence[str]) -> str:
    """The label of an average over some of a table's benchmarks: ` (k of n)`; empty over all of them."""
    return f" ({len(present)} of {len(columns)})" if 0 < len(present) < len(columns) else ""


def paper_average(values: dict, columns: Sequence[str], present: Sequence[str]) -> tuple[float | None, str]:
    """The paper's average to stand beside a row that ran the benchmarks `present`: the paper's printed
    one when the row ran them all, else the mean of the paper's numbers on those same benchmarks
    (labelled `(k of n)`); where the paper prints only its average, that one labelled `(n of n)`."""
    printed = values.get("avg")
    if not present or len(present) == len(columns):
        return printed, _num(printed)
    same = [values.get(c) for c in present]
    if all(isinstance(v, (int, float)) and not math.isnan(v) for v in same):
        mean = round(float(np.mean(same)), 2)
        return mean, f"{mean:g}{of(present, columns)}"
    if printed is None or (isinstance(printed, float) and math.isnan(printed)):
        return None, ""
    return printed, f"{_num(printed)} ({len(columns)} of {len(columns)})"


def method_rows(ref: pd.DataFrame) -> pd.DataFrame:
    """The paper's rows that name a method, not one of its models: no worker slot in the key (a
    single worker, its 5x context, 5x self-reflection and 5x consensus are rows per named model)."""
    by_slot = pd.Series(
        [any(p.startswith("worker=") for p in str(k).split("|")) for k in ref["key"]], index=ref.index, dtype=bool
    )
    return ref[~by_slot]


def method_key(key: str) -> str:
    """A key without the options that do not change what the method is (`_NAME_OPTIONS` but the worker:
    hashed embeddings, samples per worker), as `named` names it."""
    name, *options = key.split("|")
    return "|".join([name, *(o for o in options if o.split("=")[0] not in _NAME_OPTIONS - {"worker"})])


def paper_row(
    spec: Spec,
    ref: pd.DataFrame,
    key: str,
    pool: str,
    conductor: str,
    columns: Sequence[str],
    present: Sequence[str] = (),
) -> list[dict]:
    """The paper's numbers for a row of a pool that is not the paper's, paired by what the method is (a
    conductor with the paper's conductor, a baseline with the same baseline; never by worker slot: a
    simulated or local worker is none of the paper's named models), as one row (`columns`) to show under
    it (`method_key`: hashed embeddings are still Smoothie); none when the paper has no such row. Its average is
    over the benchmarks `present` (`paper_average`)."""
    found = reference_match(method_rows(ref[ref["table"] == spec.id]), method_key(key), pool, conductor)
    if not len(found):
        return []
    values = {spec.aliases.get(c, c): v for c, v in zip(found["column"], found["value"], strict=True)}
    label = re.sub(r"\s+", " ", str(found["label"].iloc[0]))
    row = {"row": f"↳ paper: {label}", "key": PAPER_ROW + key, "note": ""}
    row.update({c: _num(values.get(c)) for c in columns if c not in row})
    if "avg" in columns:
        row["avg"] = paper_average(values, spec.columns, present)[1]
    return [row]


def no_counterpart(spec: Spec, ref: pd.DataFrame, key: str, kind: str) -> str:
    """Why a row of a pool that is not the paper's has no paper row under it."""
    solver, options = key_parts(method_key(key))
    table = ref[ref["table"] == spec.id]
    by_model = table["key"].map(lambda k: key_parts(k)[0] == solver and "worker" in key_parts(k)[1])
    if "worker" in options and by_model.any():
        worker = {"simulated": "a simulated worker", "local": "a local model"}.get(kind, "this pool's worker")
        return (
            f"no paper row: the paper's Table {spec.id} has this method only with its named models, "
            f"and {worker} is none of them"
        )
    with_options = " with these options" if options - {"worker"} else ""
    return f"no paper row: the paper's Table {spec.id} has no row for this method{with_options}"


def _num(value) -> str:  # noqa: ANN001
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:g}"


def _metric(name: str, value, rows: pd.DataFrame, unpriced: int) -> str:  # noqa: ANN001
    if not len(rows):
        return "—"
    if value is None:
        return f"{UNKNOWN} ({unpriced}/{len(rows)} unpriced)" if name == "usd" else UNKNOWN
    if isinstance(value, float) and math.isnan(value):
        return "—"
    if name == "usd":
        return f"{value:.5f}"
    return f"{value:.2f}" if name != "tokens" else f"{value:.0f}"


def _long(
    spec: Spec,
    pool: str,
    kind: str,
    label: str,
    key: str,
    conductor: str,
    column: str,
    mean: float,
    se: float,
    samples: int,
    epochs: int,
    errors: int,
    paper,
    *,
    unknown: bool = False,  # noqa: ANN001
    missing: int = 0,
) -> dict:
    return {
        "table": spec.id,
        "pool": pool,
        "pool_kind": kind,
        "row": label,
        "key": key,
        "conductor": conductor,
        "column": column,
        "value": UNKNOWN if unknown else mean,
        "se": se,
        "samples": samples,
        "epochs": epochs,
        "errors": errors,
        "missing": missing,
        "paper": paper,
    }


def build_tables(
    frame: pd.DataFrame,
    ref: pd.DataFrame | None = None,
    expected: Callable[[Spec, str], Sequence[tuple[str, str]]] | None = None,
    specs: Sequence[Spec] = SPECS,
) -> list[Built]:
    """Every table for every pool in the frame (API pools: only the tables of their setting)."""
    ref = read_reference() if ref is None else ref
    data = dedupe(frame)
    known = {c for spec in SPECS for c in spec.columns}
    others = tuple(sorted(set(data["paper_column"]) - known)) if len(data) else ()
    if others and specs is SPECS:
        specs = (*specs, Spec("other", OTHER_TITLE, "", others))
    out = []
    for pool, rows in data.groupby("pool", sort=True):
        kind, setting = str(rows["pool_kind"].iloc[0]), str(rows["setting"].iloc[0])
        for spec in specs:
            if kind == "api" and setting and spec.setting and setting != spec.setting:
                continue
            extra = expected(spec, str(pool)) if expected else ()
            built = build_table(spec, rows, ref, extra_rows=extra)
            if len(built.wide):
                out.append(built)
    return out


_MD_BREAK = re.compile(r"[\x00-\x1f\x7f]+")  # newlines and other control characters
# what starts raw HTML, code, emphasis, a heading or a table cell; a `]` that would close a link or image
# (`](`, `][`, `]:`): without it `[` is inert, so labels such as `conductor [conductor m]` read as they are
_MD_MARKUP = re.compile(r"[\\`*<>|#]|\](?=[(\[:])")


def md_text(value: object) -> str:
    """Log text as inert markdown inline text, writable (`reports.safe_text`): control characters
    (newlines) become one space and `_MD_MARKUP` is backslash-escaped (no link, image, HTML, code
    span, heading or extra table cell)."""
    return _MD_MARKUP.sub(r"\\\g<0>", _MD_BREAK.sub(" ", writable(str(value))))


def markdown(table: pd.DataFrame) -> str:
    """A pipe table, every header and cell `md_text`."""
    if table.empty:
        return "(no rows)\n"
    cols = list(table.columns)
    lines = ["| " + " | ".join(map(md_text, cols)) + " |", "|" + "---|" * len(cols)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(map(md_text, row)) + " |")
    return "\n".join(lines) + "\n"


def reference_tables(ref: pd.DataFrame | None = None) -> list[tuple[str, pd.DataFrame]]:
    """The paper's own numbers per table (wide), for the report's reference section."""
    ref = read_reference() if ref is None else ref
    out = []
    for table, rows in ref.groupby("table", sort=False):
        text = rows.assign(
            cell=[
                _num(v) + (f" ± {_num(s)}" if not pd.isna(s) else "")
                for v, s in zip(rows["value"], rows["se"], strict=True)
            ]
        )
        wide = text.pivot_table(index=["label", "key"], columns="column", values="cell", aggfunc="first", sort=False)
        order = list(dict.fromkeys(rows["column"]))
        out.append((str(table), wide.reindex(columns=order).reset_index().fillna("")))
    return out
