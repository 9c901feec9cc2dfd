"""Tables from small hand-written Inspect logs (reports.frame + reports.tables + reports.missing)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reports import missing as ms
from reports import synthetic as syn
from reports import tables as tb
from reports.frame import load_samples

SIM = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
PAPER = [
    "google/gemini-2.5-pro",
    "anthropic/claude-sonnet-4-20250514",
    "openai/gpt-5",
    "vllm/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "vllm/google/gemma-3-27b-it",
    "vllm/Qwen/Qwen3-32B",
    "vllm/Qwen/Qwen3-32B",
]


def single(workers, w, *, cost=0.001, tokens=(100, 50)):
    return syn.record("single_worker", workers, [syn.step(0, w, workers[w])], cost=cost, tokens=tokens)


def conducted(workers, *, cost=0.002):
    steps = [syn.step(0, 0, workers[0]), syn.step(1, 1, workers[1], [0])]
    return syn.record("conductor", workers, steps, conductor="local/smollm2-135m", cost=cost, tokens=(400, 100))


@pytest.fixture(scope="module")
def sim_logs(tmp_path_factory):
    """Sim pool: single_worker w1 on math500 with 3 epochs, one errored sample on mmlu, an unpriced
    sample; the conductor on math500 only (mmlu missing); a stale log replaced by a rerun."""
    d = tmp_path_factory.mktemp("logs")
    meta = single(SIM, 1, cost=0.01)
    per_epoch = {1: ["C", "C"], 2: ["C", "I"], 3: ["I", "I"]}
    rows = [syn.sample(f"q{i}", e, v, meta) for e, vs in per_epoch.items() for i, v in enumerate(vs)]
    syn.write_log(d, "math500", "single_worker", {"pool": "sim", "worker": 1}, rows, epochs=3)
    rows = [
        syn.sample("m0", 1, "C", meta),
        syn.sample("m1", 1, None, None, error="worker timed out"),
        syn.sample("m2", 1, "C", single(SIM, 1, cost=None)),
    ]
    syn.write_log(
        d,
        "mmlu",
        "single_worker",
        {"pool": "sim", "worker": 1},
        rows,
        total=4,
        roles={"conductor": {"model": "mockllm/model"}},
    )  # a role the baseline ignores
    stale = [syn.sample("q0", 1, "I", conducted(SIM)), syn.sample("q1", 1, "I", conducted(SIM))]
    syn.write_log(d, "math500", "conductor", {"pool": "sim"}, stale, created="2026-01-01T00:00:00+00:00")
    fresh = [syn.sample("q0", 1, "C", conducted(SIM)), syn.sample("q1", 1, "I", conducted(SIM))]
    syn.write_log(d, "math500", "conductor", {"pool": "sim"}, fresh, created="2026-01-02T00:00:00+00:00")
    return d


@pytest.fixture(scope="module")
def sim_frame(sim_logs):
    return load_samples(sim_logs)


def by_id(built, spec_id, pool="sim"):
    return next(b for b in built if b.spec.id == spec_id and b.pool == pool)


def row(b, start):
    found = b.wide[b.wide["row"].str.startswith(start)]
    assert len(found) == 1, (start, list(b.wide["row"]))
    return found.iloc[0]


def test_frame_rows_identity_and_score_rule(sim_frame):
    f = sim_frame
    assert len(f) == 6 + 3 + 2 + 2  # every (log, sample, epoch)
    sw = f[f["solver"] == "single_worker"]
    assert set(sw["key"]) == {"single_worker|worker=1"} and set(sw["pool_kind"]) == {"simulated"}
    assert set(sw["label"]) == {"single_worker (sim/choice-strong)"} and set(sw["conductor_short"]) == {""}
    errored = f[f["sample_id"] == "m1"].iloc[0]
    assert math.isnan(errored["score"]) and errored["error"] == "worker timed out"
    assert not errored["recorded"]  # no conductor record
    assert set(f[f["solver"] == "conductor"]["conductor_short"]) == {"smollm2-135m"}
    assert f["expected"].max() == 6  # 2 ids x 3 epochs


def test_epochs_give_mean_and_standard_error(sim_frame):
    b = by_id(tb.build_tables(sim_frame), "7")
    c = tb.cell(sim_frame[(sim_frame["task"] == "math500") & (sim_frame["solver"] == "single_worker")])
    assert (c.mean, c.samples, c.epochs, c.errors) == (50.0, 2, 3, 0)
    # q0 scores 1, 1, 0 and q1 1, 0, 0 over the epochs: deviations from 0.5 sum to +0.5 and -0.5 per
    # question -> sqrt((0.25 + 0.25) * 2 / 1) / 6 = 1/6 (over the epochs' means it would be 28.87)
    assert c.se == pytest.approx(100 / 6)
    assert row(b, "single_worker")["MATH500"] == "50.00 ± 16.67 (n=2x3)"


@pytest.mark.parametrize(
    ("per_question", "expected"),
    [
        # three questions, two epochs: mean 0.5; per question the deviations sum to 1, 0, -1 ->
        # sqrt(2 * 3 / 2) / 6 (over the two epochs' means 2/3 and 1/3 it would be 16.67)
        ({"a": [1, 1], "b": [1, 0], "c": [0, 0]}, 100 * math.sqrt(3) / 6),
        # every question right once in two epochs: no spread between questions
        ({"a": [1, 0], "b": [0, 1], "c": [1, 0]}, 0.0),
        # one epoch: the usual standard error over samples, std (ddof 1) / sqrt(n) = 0.5 / 2
        ({"a": [1], "b": [0], "c": [1], "d": [1]}, 25.0),
    ],
)
def test_standard_error_is_clustered_by_question(per_question, expected):
    values = [100.0 * v for vs in per_question.values() for v in vs]
    questions = [q for q, vs in per_question.items() for _ in vs]
    assert tb.clustered_se(pd.Series(values), pd.Series(questions)) == pytest.approx(expected)
    assert math.isnan(tb.clustered_se(pd.Series([100.0, 0.0]), pd.Series(["a", "a"])))  # one question


def test_failed_sample_counts_wrong_and_is_shown(sim_frame):
    b = by_id(tb.build_tables(sim_frame), "5")
    # m0 right, m1 errored (wrong), m2 right: 2 of 3; the log meant to run 4 samples
    assert row(b, "single_worker")["MMLU"] == "66.67 ± 33.33 (n=3x1, 1 err, 1 missing)"  # one epoch: SE over samples
    long = b.long[(b.long["column"] == "MMLU") & (b.long["key"] == "single_worker|worker=1")].iloc[0]
    assert (long["errors"], long["samples"], long["missing"]) == (1, 3, 1)


def test_unknown_cost_is_unknown_not_zero(sim_frame):
    b = by_id(tb.build_tables(sim_frame), "5")
    r = row(b, "single_worker")
    # m2's price is unknown, and the errored m1 left no record at all: 2 of 3 unpriced
    assert r["usd"] == "unknown (2/3 unpriced)" and r["cost_adjusted"] == "unknown"
    assert r["tokens"] != "unknown"  # tokens come from Inspect's usage when no record exists
    long = b.long[(b.long["column"] == "usd") & (b.long["key"] == "single_worker|worker=1")].iloc[0]
    assert long["value"] == "unknown"


def test_rerun_replaces_the_older_log_and_missing_cells_are_listed(sim_frame, sim_logs):
    built = tb.build_tables(sim_frame, expected=ms.expected_rows)
    b = by_id(built, "7")
    assert row(b, "conductor")["MATH500"] == "50.00 ± 50.00 (n=2x1)"  # the fresh log (1 of 2), not the stale (0)
    assert row(b, "conductor")["MMLU"] == "—"
    assert ("conductor [conductor smollm2-135m]", "MMLU") in b.missing
    # methods of the matrix that never ran are rows too, so their gaps are listed
    assert any(label.startswith("mixture_of_agents") for label, _ in b.missing)
    where = ms.places(sim_frame, "unused")
    assert where == {"sim": (str(sim_logs), 3)}  # the logs' directory; mmlu's 3 samples are the most
    text = ms.listing(built, sim_frame, where)
    assert (
        f"python -m solvers.matrix --tasks livecodebench,mmlu,rlpr --pool sim --methods conductor --limit 3 "
        f"--log-dir {sim_logs}" in text
    )
    assert "--matrix solvers/ablations.yaml" in text and "few_shot_mixed" in text


def test_simulated_pool_has_no_paper_column(sim_frame):
    for b in tb.build_tables(sim_frame):
        assert not b.comparable and not any("paper" in c for c in b.wide.columns)
        assert b.heading.count("SIMULATION") == 1 and "not comparable" in b.heading


def test_paper_pool_puts_the_paper_number_beside_ours(tmp_path):
    rows = [syn.sample(f"q{i}", 1, v, single(PAPER, 0, cost=0.02)) for i, v in enumerate("CCCI")]
    syn.write_log(tmp_path, "math500", "single_worker", {"pool": "paper-constrained", "worker": 0}, rows)
    rows = [syn.sample(f"g{i}", 1, v, single(PAPER, 0, cost=0.02)) for i, v in enumerate("CI")]
    syn.write_log(tmp_path, "gpqa_diamond", "single_worker", {"pool": "paper", "worker": 0}, rows)
    built = tb.build_tables(load_samples(tmp_path))
    seven = by_id(built, "7", "paper-constrained")
    assert seven.comparable and "constrained setting" in seven.heading
    r = row(seven, "single_worker (google/gemini-2.5-pro)")
    # the paper's average over the one benchmark this row ran, as ours, not its four-benchmark 64.14
    assert (r["MATH500"], r["MATH500 paper"], r["avg"], r["avg paper"]) == (
        "75.00 ± 25.00 (n=4x1)",
        "85.3",
        "75.00 ± 25.00 (1 of 4)",
        "85.3 (1 of 4)",
    )
    # a constrained pool gets no unconstrained table; the unconstrained pool gets Table 10's number
    assert {b.spec.id for b in built if b.pool == "paper-constrained"} == {"6", "7"}  # tables with data
    ten = by_id(built, "10", "paper")
    assert row(ten, "single_worker")["GPQA-D paper"] == "84.8"
    assert row(ten, "single_worker")["usd"] == "0.02000"
    assert row(ten, "single_worker")["cost_adjusted"] == "25.00"  # 50 % / 2 cents


def test_a_simulated_pool_is_paired_with_the_paper_by_method_never_by_worker_slot(sim_frame):
    seven = by_id(tb.build_tables(sim_frame), "7")
    labels = list(seven.wide["row"])
    conductor = labels.index(row(seven, "conductor")["row"])
    under = seven.wide.iloc[conductor + 1]
    assert under["row"] == "↳ paper: Conductor" and under["MATH500"] == "89.33"
    assert under["avg"] == "89.33 (1 of 4)"  # over MATH500, the one benchmark the conductor ran
    single = labels.index(row(seven, "single_worker (sim/choice-strong)")["row"])
    after = labels[single + 1 : single + 2]
    assert not any(str(x).startswith("↳ paper") for x in after)  # not the paper's Claude Sonnet 4 (slot 1)
    assert "no paper row" in row(seven, "single_worker (sim/choice-strong)")["note"]
    assert not any("Claude" in str(label) for label in labels)


def test_reference_match_prefers_the_most_specific_row():
    ref = tb.read_reference()
    eleven = ref[ref["table"] == "11"]
    gpt = tb.reference_match(eleven, "conductor", "paper-frontier", "gpt-5")
    assert set(gpt["label"]) == {"GPT-5 conducting GPT-5, Gemini, Claude"}
    own = tb.reference_match(eleven, "conductor", "paper", "my-trained-conductor")
    assert set(own["label"]) == {"Conductor"}


def test_reference_file_agrees_with_itself():
    """Each transcribed average is the mean of its row or carries a note giving that mean (four
    printed averages disagree with their cells), and Table 5's cost-adjusted score is
    performance / cents."""
    ref = tb.read_reference()
    for (table, key), rows in ref.groupby(["table", "key"]):
        values = dict(zip(rows["column"], rows["value"], strict=True))
        if "avg" in values:
            parts = [v for c, v in values.items() if c != "avg"]
            mean = sum(parts) / len(parts)
            note = rows[rows["column"] == "avg"]["note"].iloc[0]
            if abs(mean - values["avg"]) > 0.02:  # printed inconsistently: the note must say so
                assert f"{mean:.2f}" in note, (table, key, mean, values["avg"])
        if "cost_adjusted" in values:
            assert values["performance"] / (values["usd"] * 100) == pytest.approx(values["cost_adjusted"], rel=0.01)
    typo = ref[(ref["table"] == "2/8") & (ref["key"] == "single_worker|worker=2") & (ref["column"] == "avg")]
    assert "51.73" in typo["note"].iloc[0] and typo["value"].iloc[0] == 51.07
    assert set(ref["table"]) == {"1", "2/8", "4", "5", "6", "7", "9", "10", "11"}


def test_markdown_escapes_pipes_and_empty_tables():
    text = tb.markdown(pd.DataFrame([{"row": "a|b", "x": 1}]))
    assert "a\\|b" in text and text.splitlines()[1] == "|---|---|"
    assert tb.markdown(pd.DataFrame()) == "(no rows)\n"


def test_table_file_names_are_safe_for_pool_files():
    assert tb.pool_slug("paper-constrained") == "paper-constrained"
    slug = tb.pool_slug("/work/x/regression/local greedy.yaml")
    assert slug.startswith("local-greedy-") and len(slug) == len("local-greedy-") + 6
    assert tb.pool_slug("../../etc") != "../../etc" and "/" not in tb.pool_slug("../../etc")
    assert tb.pool_slug("a.yaml") == "a.yaml"  # a plain file name is already safe


def test_every_logged_row_and_benchmark_is_in_some_table(tmp_path):
    for task in ("gpqa_diamond", "math500", "gsm8k"):
        rows = [syn.sample(f"{task}{i}", 1, "C", conducted(SIM)) for i in range(2)]
        syn.write_log(tmp_path, task, "conductor", {"pool": "sim", "max_steps": 2}, rows)
    frame = load_samples(tmp_path)
    built = tb.build_tables(frame)
    shown = {
        (r, c) for b in built for r, c, n in zip(b.long["key"], b.long["column"], b.long["samples"], strict=True) if n
    }
    logged = set(zip(frame["key"], frame["paper_column"], strict=True))
    assert logged == {("conductor|max_steps=2", c) for c in ("GPQA-D", "MATH500", "gsm8k")}
    assert logged <= shown


def test_unfinished_logs_are_listed(tmp_path):
    rows = [syn.sample("q0", 1, "C", conducted(SIM))]
    syn.write_log(tmp_path, "math500", "conductor", {"pool": "sim"}, rows, total=3, status="error")
    frame = load_samples(tmp_path)
    built = tb.build_tables(frame)
    assert row(by_id(built, "7"), "conductor")["MATH500"] == "100.00 (n=1x1, 2 missing)"
    text = ms.listing(built, frame, ms.places(frame, str(tmp_path)))
    assert "status error, 1 of 3 samples x epochs held" in text


def test_a_worker_recorded_alone_leaves_its_pool_simulated(tmp_path):
    """A single worker's record names only the worker it used (`pool_indices` [2], as the baselines record
    it): the slots it did not use are unknown, not real models, so its pool stays SIMULATION (was MIXED,
    shown in the workflow plot's title and, by row order, in a section heading)."""
    record = {**single(SIM, 2), "workers": [SIM[2]], "pool_indices": [2]}
    syn.write_log(tmp_path, "math500", "single_worker", {"pool": "sim", "worker": 2}, [syn.sample("q", 1, "C", record)])
    frame = load_samples(tmp_path)
    assert set(frame["pool_kind"]) == {"simulated"} and set(frame["label"]) == {"single_worker (sim/mediocre)"}


def test_a_benchmark_the_paper_does_not_report_has_no_missing_paper_row_note(tmp_path):
    """The table of a user's own task has no paper table to pair with: no row says the paper lacks it
    (the tutorial's table read "no paper row: the paper's Table other has no row for this method")."""
    syn.write_log(
        tmp_path, "gsm8k", "single_worker", {"pool": "sim", "worker": 2}, [syn.sample("g", 1, "C", single(SIM, 2))]
    )
    other = by_id(tb.build_tables(load_samples(tmp_path), tb.read_reference()), "other")
    assert list(other.wide["row"]) == ["single_worker (sim/mediocre)"] and "note" not in other.wide
