"""LiveCodeBench (code generation): contest problems from LeetCode, AtCoder, Codeforces.

Jain et al., LiveCodeBench: Holistic and Contamination Free Evaluation of Large
Language Models for Code, arXiv:2403.07974. The hub dataset holds one file per release
increment (test.jsonl = the 400 problems of release_v1, test2.jsonl = the problems added
in release_v2, ..., test6.jsonl = the 175 added in release_v6); the official loader maps
`release_vN` to files 1..N (cumulative), `vN` to file N alone and `vN_vM` to files N..M.
Default `release=v6`: the problems added in release v6 only, the paper's test set (the
cumulative release_v6, 1055 problems, also holds the v1 problems used for training).
Problems can further be filtered by contest date (`start_date`/`end_date`, inclusive).
Check: scorers/code_lcb.py (official semantics, upstream commit 28fef95).

    inspect eval tasks/livecodebench.py --model openai/gpt-5                 # v6 additions
    inspect eval tasks/livecodebench.py -T release=release_v6                # cumulative
    inspect eval tasks/livecodebench.py -T start_date=2024-08-01 -T end_date=2025-02-01
    inspect eval tasks/livecodebench.py -T data_dir=./code_generation_lite   # offline copy
    inspect eval tasks/livecodebench.py -T data_file=test6.jsonl -T sandbox=docker

Data: the hub repository `livecodebench/code_generation_lite` at a pinned commit
(needs `pip install huggingface_hub` and network); or `-T data_dir=DIR`, a local copy
of that repository's test*.jsonl files (the release picks files as on the hub); or
`-T data_file=FILE`, one jsonl in the same format used as is (the release does not apply).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

import sandboxes.inspect_bwrap  # noqa: F401 (registers the `bwrap` sandbox type)
from sandboxes.compose import task_sandbox
from scorers.code_lcb import (
    DEFAULT_TIMEOUT,
    LCBProblem,
    in_date_window,
    problem_from_record,
    register_problems,
)
from scorers.code_scorers import livecodebench_scorer
from tasks.catalog import LIVECODEBENCH_FILES, LIVECODEBENCH_REPO, LIVECODEBENCH_REVISION, Benchmark, register
from tasks.common import checked_task, norm_name, parse_filter
from tasks.sources import FileSource, HubFilesSource, LoadedRecords, SourceError, load_records, resolve_user_path

# --------------------------------------------------------------------------- prompts (official)
# Benchmark prompt reproduced from LiveCodeBench/LiveCodeBench at commit
# 28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24, lcb_runner/prompts/code_generation.py
# (wording last changed in 153931b / 264e841, Jan 2025): PromptConstants.SYSTEM_MESSAGE_GENERIC,
# FORMATTING_MESSAGE_WITH_STARTER_CODE, FORMATTING_WITHOUT_STARTER_CODE and
# get_generic_question_template_answer. The system message goes in front of the question in
# the one user turn, as the official harness does for models without a system role
# (LMStyle.OpenAIReasonPreview / Grok: SYSTEM + "\n\n" + template), so the conductor and every
# worker see all of it.

SYSTEM_MESSAGE = (
    "You are an expert Python programmer. You will be given a question (problem specification) "
    "and will generate a correct Python program that matches the specification and passes all tests."
)
FORMAT_WITH_STARTER_CODE = (
    "You will use the following starter code to write the solution to the problem and enclose "
    "your code within delimiters."
)
FORMAT_WITHOUT_STARTER_CODE = (
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly "
    "test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when "
    "the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT."
)


def question_template(question_content: str, starter_code: str = "") -> str:
    """The official generic user message (question, format, answer header)."""
    prompt = f"### Question:\n{question_content}\n\n"
    if starter_code:
        prompt += f"### Format: {FORMAT_WITH_STARTER_CODE}\n```python\n{starter_code}\n```\n\n"
    else:
        prompt += f"### Format: {FORMAT_WITHOUT_STARTER_CODE}\n```python\n# YOUR CODE HERE\n```\n\n"
    prompt += "### Answer: (use the provided format with backticks)\n\n"
    return prompt


def lcb_prompt(question_content: str, starter_code: str = "") -> str:
    """System message, a blank line, then the official question template (one user turn)."""
    return f"{SYSTEM_MESSAGE}\n\n{question_template(question_content, starter_code)}"


# --------------------------------------------------------------------------- releases and data


def release_files(release: str) -> tuple[str, ...]:
    """Hub files of a release: release_vN (cumulative), release_latest, vN, vN_vM."""
    n_all = len(LIVECODEBENCH_FILES)
    name = release.strip().lower()
    if name == "release_latest":
        return LIVECODEBENCH_FILES
    if name.startswith("release_v") and name[9:].isdigit() and 1 <= int(name[9:]) <= n_all:
        return LIVECODEBENCH_FILES[: int(name[9:])]
    parts = name.split("_")
    if 1 <= len(parts) <= 2 and all(p.startswith("v") and p[1:].isdigit() for p in parts):
        lo, hi = int(parts[0][1:]), int(parts[-1][1:])
        if 1 <= lo <= hi <= n_all:
            return LIVECODEBENCH_FILES[lo - 1 : hi]
    raise ValueError(
        f"unknown LiveCodeBench release {release!r}: use release_v1..release_v{n_all}, "
        f"release_latest, v1..v{n_all} or a range such as v4_v6"
    )


def lcb_sources(release: str) -> tuple[HubFilesSource, ...]:
    return (HubFilesSource(LIVECODEBENCH_REPO, LIVECODEBENCH_REVISION, release_files(release)),)


# its sources: the task's default release
BENCHMARK = register(
    Benchmark(
        "livecodebench", "livecodebench", domain="lcb", answer="lcb", sources=lcb_sources("v6"), paper_column="LCB"
    )
)


@dataclass(frozen=True)
class ReleaseDirSource:
    """A local copy of the hub repository: the release's test*.jsonl files in `path`."""

    path: str
    filenames: tuple[str, ...]
    kind = "dir"

    @property
    def label(self) -> str:
        return f"dir:{resolve_user_path(self.path)}[{'+'.join(self.filenames)}]"

    def load(self, **_: Any) -> list[dict[str, Any]]:
        root = resolve_user_path(self.path)
        missing = [f for f in self.filenames if not (root / f).is_file()]
        if missing:
            raise SourceError(
                f"{self.label}: missing {', '.join(missing)}; download them from the hub repository "
                f"{LIVECODEBENCH_REPO} (revision {LIVECODEBENCH_REVISION}) or choose another release"
            )
        records: list[dict[str, Any]] = []
        for name in self.filenames:
            records.extend(FileSource(str(root / name)).load())
        return records


def load_lcb_records(release: str, data_file: str | None, data_dir: str | None, source: str | None) -> LoadedRecords:
    """Records of `release` from a local hub copy (`data_dir`), a user file (as is) or the hub."""
    if data_dir and data_file:
        raise ValueError("livecodebench: give either data_dir (a copy of the hub files) or data_file, not both")
    if data_dir:
        src = ReleaseDirSource(data_dir, release_files(release))
        return LoadedRecords(src.load(), src)
    return load_records("livecodebench", lcb_sources(release), data_file=data_file, source=source)


def record_to_sample(record: dict[str, Any] | LCBProblem) -> Sample:
    """A code_generation_lite row (or a parsed problem) -> Sample (tests stay out of metadata)."""
    p = record if isinstance(record, LCBProblem) else problem_from_record(record)
    return Sample(
        id=p.question_id,
        input=lcb_prompt(p.question_content, p.starter_code),
        metadata={
            "answer_format": "code",
            "question_id": p.question_id,
            "question_title": p.question_title,
            "platform": p.platform,
            "difficulty": p.difficulty,
            "contest_id": p.contest_id,
            "contest_date": p.contest_date,
            "testtype": p.testtype,
            "func_name": p.func_name,
            "starter_code": p.starter_code,
            "n_public_tests": len(p.public_tests),
        },
    )


def select_problems(
    problems: list[LCBProblem],
    start_date: str | None = None,
    end_date: str | None = None,
    platform: str | None = None,
    difficulty: str | None = None,
) -> list[LCBProblem]:
    """Date window (inclusive, by contest_date) and optional platform/difficulty filters."""
    keep = [p for p in problems if in_date_window(p, start_date, end_date)]
    for field, wanted in (("platform", parse_filter(platform)), ("difficulty", parse_filter(difficulty))):
        if wanted:
            keep = [p for p in keep if norm_name(getattr(p, field)) in wanted]
    return keep


@task
@checked_task
def livecodebench(
    release: str = "v6",
    start_date: str | None = None,
    end_date: str | None = None,
    platform: str | None = None,
    difficulty: str | None = None,
    data_file: str | None = None,
    data_dir: str | None = None,
    source: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    sandbox: str = "bwrap",
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """LiveCodeBench code generation (pass@1).

    Args:
        release: "v6" (default: the 175 problems added in release v6, the paper's test set),
            vN (added in release N), vN_vM (added in releases N..M), release_vN (cumulative,
            releases 1..N) or release_latest; applies to the hub and to `data_dir`.
        start_date: keep problems with contest_date on or after this day (YYYY-MM-DD).
        end_date: keep problems with contest_date on or before this day.
        platform: keep only these platforms ("leetcode", "atcoder,codeforces").
        difficulty: keep only these difficulties ("easy", "medium,hard").
        data_file: a local jsonl/json file in the code_generation_lite format, used as is.
        data_dir: a local copy of the hub repository's test*.jsonl files.
        source: force a declared source kind ("hub").
        timeout: per-test limit in seconds (official 6).
        sandbox: Inspect sandbox type running the code ("bwrap" or "docker").
        shuffle: shuffle sample order (with `seed`).
        seed: seed for the sample order.
    """
    loaded = load_lcb_records(release, data_file, data_dir, source)
    problems = select_problems(
        [problem_from_record(r) for r in loaded.records], start_date, end_date, platform, difficulty
    )
    if not problems:
        raise ValueError(
            f"livecodebench: no problems left (source {loaded.label}, "
            f"dates {start_date or '-'}..{end_date or '-'}, platform {platform}, difficulty {difficulty})"
        )
    ids = "\n".join(p.question_id for p in problems)
    key = register_problems(
        "livecodebench:" + hashlib.sha256(f"{loaded.label}\n{ids}".encode()).hexdigest()[:16], problems
    )
    samples = []
    for p in problems:
        sample = record_to_sample(p)
        sample.metadata = {**(sample.metadata or {}), "data_source": loaded.label}
        samples.append(sample)
    dataset = MemoryDataset(samples, name=f"livecodebench ({loaded.label})", location=loaded.label)
    if shuffle:
        dataset.shuffle(seed)
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=livecodebench_scorer(timeout=timeout, problems=key),
        sandbox=task_sandbox(sandbox),
    )
