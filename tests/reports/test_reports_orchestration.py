"""Does orchestration pay: oracle gap, paired comparisons, Pareto front and workflow diagnostics, from
hand-made logs whose answers are known (reports.oracle, .paired, .pareto, .diagnostics, .orchestration)."""

from __future__ import annotations

import csv
import math

import pandas as pd
import pytest

from reports import diagnostics as dg
from reports import oracle, paired, pareto
from reports import synthetic as syn
from reports.build import build
from reports.frame import load_samples

SIM = ["sim/math-strong", "sim/choice-strong"]
W0, W1 = "single_worker (sim/math-strong)", "single_worker (sim/choice-strong)"
COND = "conductor [conductor smollm2-135m]"
# task -> question -> (w0, w1, conductor) scores
SCORES = {"mmlu": {"q0": "CIC", "q1": "CIC", "q2": "ICC", "q3": "III"}, "math500": {"p0": "CIC", "p1": "ICI"}}


def single(w: int, cost: float) -> dict:
    return syn.record("single_worker", SIM, [syn.step(0, w, SIM[w])], cost=cost)


def step(index: int, w: int, output: str, visible=(), subtask: str = "Check the answer above.") -> dict:
    s = syn.step(index, w, SIM[w], visible, subtask)
    s["output"] = output
    return s


# the conductor's mmlu workflows (target A): q0 copies the question, then fixes a wrong answer (better);
# q1 one step; q2 one worker twice, same answer; q3 breaks a right answer (worse)
WORKFLOWS = {
    "q0": [step(0, 0, "ANSWER: B", subtask="Answer this: question q0"), step(1, 1, "ANSWER: A", [0])],
    "q1": [step(0, 0, "ANSWER: A", subtask="Solve it.")],
    "q2": [step(0, 1, "ANSWER: A", subtask="Solve it."), step(1, 1, "ANSWER: A", [0])],
    "q3": [step(0, 0, "ANSWER: A", subtask="Solve it."), step(1, 1, "ANSWER: C", [0])],
}


def conducted(sid: str) -> dict:
    steps = WORKFLOWS.get(sid) or [step(0, 0, "ANSWER: 1", subtask="Solve it.")]
    return syn.record("conductor", SIM, steps, conductor="local/smollm2-135m", cost=0.003)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("orchestration")
    for task, questions in SCORES.items():
        for w, cost in ((0, 0.001), (1, 0.002)):
            rows = [syn.sample(q, 1, v[w], single(w, cost)) for q, v in questions.items()]
            syn.write_log(d, task, "single_worker", {"pool": "sim", "worker": w}, rows)
        rows = [syn.sample(q, 1, v[2], conducted(q)) for q, v in questions.items()]
        syn.write_log(d, task, "conductor", {"pool": "sim"}, rows)
    moa = [
        syn.sample("q0", 1, "C", syn.record("mixture_of_agents", SIM, [syn.step(0, 0, SIM[0])], cost=0.001)),
        syn.sample("q1", 1, "I", syn.record("mixture_of_agents", SIM, [syn.step(0, 0, SIM[0])], cost=0.001)),
    ]
    syn.write_log(d, "mmlu", "mixture_of_agents", {"pool": "sim"}, moa)  # two questions of one benchmark
    return d


@pytest.fixture(scope="module")
def frame(logs):
    return load_samples(logs)


def one(table: pd.DataFrame, **match) -> pd.Series:
    found = table
    for k, v in match.items():
        found = found[found[k] == v]
    assert len(found) == 1, (match, table)
    return found.iloc[0]


def test_oracle_is_the_best_single_worker_per_question(frame):
    t = oracle.oracle_table(frame)
    mmlu = one(t, benchmark="MMLU", row=COND)  # oracle: q0, q1, q2 right (75%); best single w0 (50%)
    assert (mmlu["questions"], mmlu["accuracy"], mmlu["oracle"]) == (4, 75.0, 75.0)
    assert (mmlu["best_single"], mmlu["best_single_accuracy"], mmlu["vs_best_single"]) == (W0, 50.0, 25.0)
    assert mmlu["vs_oracle"] == 0.0
    math500 = one(t, benchmark="MATH500", row=COND)  # w0 and w1 tie at 50%: the first label wins
    assert (math500["oracle"], math500["vs_oracle"], math500["best_single"]) == (100.0, -50.0, W1)
    pooled = one(t, benchmark="all", row=COND)  # 6 questions: oracle 5, w0 3, conductor 4
    assert pooled["questions"] == 6 and pooled["best_single"] == W0
    assert pooled["oracle"] == pytest.approx(500 / 6) and pooled["vs_best_single"] == pytest.approx(100 / 6)


def test_oracle_gap_uses_only_the_questions_a_method_ran(frame):
    moa = one(oracle.oracle_table(frame), benchmark="MMLU", row="mixture_of_agents")
    # q0, q1 only: the oracle and w0 get both right there
    assert (moa["questions"], moa["accuracy"], moa["oracle"], moa["best_single_accuracy"]) == (2, 50.0, 100.0, 100.0)


def test_no_single_worker_logs_no_oracle_rows(frame):
    assert oracle.oracle_table(frame[frame["solver"] != "single_worker"]).empty


def test_paired_difference_ci_and_mcnemar_on_known_samples(frame):
    t = paired.paired_table(frame)
    row = one(t, benchmark="MMLU", a=COND, b=W0)  # the conductor is always side a
    assert (row["n"], row["difference"], row["a_only"], row["b_only"]) == (4, 25.0, 1, 0)
    assert row["mcnemar_p"] == 1.0  # one discordant pair: binomial two-sided p = 1
    assert row["ci_low"] <= 25.0 <= row["ci_high"]
    moa = one(t, benchmark="MMLU", a=COND, b="mixture_of_agents")  # paired on q0, q1 only
    assert (moa["n"], moa["difference"]) == (2, 50.0)
    pooled = one(t, benchmark="all", a=COND, b=W0)
    assert (pooled["n"], pooled["a_only"], pooled["b_only"]) == (6, 1, 0)
    assert pooled["difference"] == pytest.approx(100 / 6)


def test_paired_statistics_against_hand_computed_values():
    sure = paired.compare(pd.Series([1.0] * 6), pd.Series([0.0] * 6))
    assert sure["difference"] == 100.0 and (sure["ci_low"], sure["ci_high"]) == (100.0, 100.0)
    assert sure["mcnemar_p"] == pytest.approx(2 * 0.5**6)  # exact: both tails of Binomial(6, 1/2)
    assert paired.mcnemar_exact(0, 0) == 1.0
    assert all(map(math.isnan, paired.mean_difference_ci(pd.Series([1.0]).to_numpy(), pd.Series([0.0]).to_numpy())))


def test_pareto_front_compares_complete_priced_rows(frame):
    t = pareto.front_table(frame)
    assert one(t, row=W0)["front"] == "yes"  # 50% for 0.001
    assert one(t, row=COND)["front"] == "yes"  # 62.5% for 0.003
    assert (one(t, row=W1)["front"], one(t, row=W1)["dominated_by"]) == ("no", W0)  # 37.5% for 0.002
    assert one(t, row="mixture_of_agents")["front"] == "not compared: ran 1 of 2 benchmarks"


def test_pareto_unknown_cost_is_not_compared(frame):
    unpriced = frame.assign(
        cost_usd=[
            None if s == "single_worker" and "math" in k else c
            for s, k, c in zip(frame["solver"], frame["label"], frame["cost_usd"], strict=True)
        ]
    )
    assert one(pareto.front_table(unpriced), row=W0)["front"] == "not compared: cost unknown"


def test_diagnostics_of_known_workflows(frame):
    t = dg.diagnostics_table(frame)
    m = one(t, row=COND, benchmark="MMLU")
    assert m["samples"] == 4 and m["steps"] == 7 / 4
    assert m["copy_rate"] == pytest.approx(100 / 7)  # q0's first subtask restates "question q0"
    assert (m["single_step_share"], m["single_worker_share"], m["verify_refine_share"]) == (25.0, 50.0, 75.0)
    assert m["answer_compared"] == 3  # q0 better, q2 same, q3 worse
    assert m["answer_changed_share"] == pytest.approx(200 / 3)
    assert m["answer_better_share"] == pytest.approx(100 / 3) == m["answer_worse_share"]
    p = 3 / 7  # w0 runs 3 of the 7 steps
    assert m["worker_entropy"] == pytest.approx(-(p * math.log2(p) + (1 - p) * math.log2(1 - p)))
    assert one(t, row=W0, benchmark="all")["worker_entropy"] == 0.0


@pytest.mark.slow
def test_report_shows_the_analyses_labelled_simulation(logs, tmp_path):
    report = build(logs, tmp_path / "out", progress=lambda _: None)
    text = (report.out / "tables.md").read_text()
    for title in ("Oracle gap", "Paired comparisons", "Accuracy-cost Pareto front", "Workflow diagnostics"):
        assert f"## {title}" in text
        assert title in report.page.read_text()
    assert text.count("SIMULATION: pool sim") >= 4 + 1
    assert (report.out / "plots" / "sim-paired.png").stat().st_size > 0
    with open(report.out / "tables" / "paired-sim.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["benchmark"] for r in rows} == {"MATH500", "MMLU", "all"}


@pytest.mark.slow
def test_log_text_in_the_analysis_files_is_escaped(tmp_path):
    d = tmp_path / "logs"
    for solver in ("single_worker", "=HYPERLINK(1)|x"):
        rows = [syn.sample(q, 1, "C", syn.record(solver, SIM, [syn.step(0, 0, SIM[0])])) for q in ("q0", "q1")]
        syn.write_log(
            d, "mmlu", solver, {"pool": "sim", "worker": 0} if solver == "single_worker" else {"pool": "sim"}, rows
        )
    out = build(d, tmp_path / "out", progress=lambda _: None).out
    with open(out / "tables" / "oracle-sim.csv", newline="") as f:
        assert "'=HYPERLINK(1)|x" in {r["row"] for r in csv.DictReader(f)}
    assert "=HYPERLINK(1)\\|x" in (out / "tables" / "oracle-sim.md").read_text()


def test_the_paired_plot_shows_long_labels_whole(tmp_path):
    import xml.etree.ElementTree as ET

    from reports.orchestration import Analysis, paired_plot

    a = "single_worker (max_tokens=20480, sim/premium), the paper's 5x context"
    b = "conductor [conductor fixed-workflows]"
    data = pd.DataFrame(
        [
            {
                "benchmark": "all",
                "a": b,
                "b": a,
                "n": 24,
                "difference": -16.7,
                "ci_low": -40.0,
                "ci_high": 8.0,
                "mcnemar_p": 0.34,
            }
        ]
    )
    plot = paired_plot(Analysis("paired", "sim", "simulated", "", "", data, data, ()), tmp_path)
    text = " ".join(t.strip() for t in ET.parse(plot.svg).getroot().itertext() if t.strip())
    assert f"{b} − {a} (all, n=24, p=0.34)" in text and "…" not in text  # on two lines, not cut
