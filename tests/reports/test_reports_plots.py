"""reports.plots: eval plots from a reports frame, training plots from run dirs, experiments/curves.py."""

from __future__ import annotations

import json
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from waits import run_command

from reports import plots
from reports import synthetic as syn
from reports.records import paper_column, run_fields, sample_fields

ROOT = Path(__file__).resolve().parents[2]
SIM = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
LOCAL = ["local/smollm2-135m", "local/gemma3-270m"]


def row(
    solver,
    args,
    workers,
    steps,
    *,
    task="math500",
    sid="s1",
    epoch=1,
    score=1.0,
    cost=0.001,
    conductor=None,
    log=None,
    meta=True,
):
    """One frame row in the loader's layout (reports.records fields + task, score, log, ...)."""
    ident = run_fields(solver, args, {}, None, workers, conductor, solver)
    record = syn.record(solver, workers, steps, conductor=conductor, cost=cost) if meta else None
    return {
        **ident,
        **sample_fields(record),
        "task": task,
        "paper_column": paper_column(task),
        "epoch": epoch,
        "sample_id": sid,
        "score": score,
        "error": None,
        "log": log or f"logs/{task}_{solver}_{args.get('pool')}.eval",
    }


def make_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    """A simulated-pool conductor and single worker, and a local-pool conductor, on two tasks."""
    import random

    rng = random.Random(seed)
    rows = []
    for task in ("math500", "mmlu"):
        for i in range(n):
            k = 1 + i % 4
            steps = [syn.step(j, w := rng.randrange(4), SIM[w], list(range(j))[-1:]) for j in range(k)]
            rows.append(
                row(
                    "conductor",
                    {"pool": "sim"},
                    SIM,
                    steps,
                    task=task,
                    sid=f"{task}{i}",
                    score=float(i % 3 != 0),
                    conductor="local/smollm2-135m",
                )
            )
            rows.append(
                row(
                    "single_worker",
                    {"pool": "sim", "worker": 1},
                    SIM,
                    [syn.step(0, 1, SIM[1])],
                    task=task,
                    sid=f"{task}{i}",
                    score=float(i % 2),
                )
            )
            steps = [syn.step(j, j % 2, LOCAL[j % 2], []) for j in range(1 + i % 2)]
            rows.append(
                row(
                    "conductor",
                    {"pool": "local"},
                    LOCAL,
                    steps,
                    task=task,
                    sid=f"{task}{i}",
                    score=float(i % 2),
                    cost=None,
                    conductor="local/smollm2-135m",
                )
            )
    return pd.DataFrame(rows)


def svg_text(path: Path) -> str:
    """All text of an SVG file (it must parse as XML)."""
    return " ".join(t for t in ET.parse(path).getroot().itertext())


@pytest.mark.slow
def test_eval_plots_write_png_and_svg_per_pool_with_labels(tmp_path):
    out = plots.eval_plots(make_frame(), tmp_path)
    names = [p.name for p in out]
    assert names == [
        "local-accuracy-cost",
        "local-workers",
        "local-steps",
        "local-strategies",
        "sim-accuracy-cost",
        "sim-workers",
        "sim-steps",
        "sim-strategies",
        "sim-workflow",
    ]
    for p in out:
        assert p.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        text = svg_text(p.svg)
        if p.pool == "sim":
            assert "SIMULATION" in p.title and "SIMULATION" in text
        elif p.pool == "local":
            assert p.title.startswith("LOCAL (pool local") and "LOCAL" in text
        assert p.sources and all(s.startswith("logs/") for s in p.sources)
    # a fixed single worker always takes one step with the same worker and one strategy: no panel
    by_name = {p.name: p for p in out}
    for name in ("sim-workers", "sim-steps", "sim-strategies"):
        assert "conductor" in svg_text(by_name[name].svg) and "single_worker" not in svg_text(by_name[name].svg)
    assert "single_worker" in svg_text(by_name["sim-accuracy-cost"].svg)
    assert "cost unknown: conductor" in svg_text(by_name["local-accuracy-cost"].svg)  # local costs are None
    free = make_frame(4).assign(cost_usd=0.0)
    free_plot = plots.eval_plots(free[free["pool"] == "local"], tmp_path / "free")[0]
    assert "every known cost is 0 USD" in svg_text(free_plot.svg)
    assert set(by_name["sim-steps"].sources) == {"logs/math500_conductor_sim.eval", "logs/mmlu_conductor_sim.eval"}


@pytest.mark.slow
def test_distribution_tables_and_panel_figures(tmp_path, monkeypatch):
    frame = make_frame(8)
    sim = frame[(frame["pool"] == "sim") & (frame["method"] == "conductor")]
    steps = plots.steps_by_task(sim)
    assert list(steps.columns) == ["1 step", "2 steps", "3 steps", "4 steps"]
    assert steps.loc["math500"].tolist() == [0.25] * 4
    local = frame[frame["pool"] == "local"]
    assert plots.strategies_by_task(local).loc["mmlu"].to_dict() == {
        "single call": 0.5,
        "independent attempts then aggregate": 0.5,
    }
    workers = plots.worker_shares_by_task(local)
    assert workers.loc["math500"].to_dict() == pytest.approx({"gemma3-270m": 1 / 3, "smollm2-135m": 2 / 3})
    single = frame[frame["method"] == "single_worker"]
    assert plots.worker_shares_by_task(single).columns.tolist() == ["choice-strong"]
    assert not plots.shown(single, plots.worker_shares_by_task(single))  # one worker, chosen by no model
    assert plots.worker_shares_by_task(single.iloc[:0]) is None
    # a conductor that always writes one-step workflows with one worker still gets its panels
    fixed = sim.assign(step_models=[["sim/a"]] * len(sim), steps=1, strategy="single call")
    assert all(
        plots.shown(fixed, build(fixed))
        for build in (plots.worker_shares_by_task, plots.steps_by_task, plots.strategies_by_task)
    )
    # more methods than fit a figure: further figures, numbered
    two = pd.concat([sim, sim.assign(label="conductor (other)")])
    monkeypatch.setattr(plots, "PANELS", 1)
    names = [p.name for p in plots.eval_plots(two, tmp_path)]
    assert names[:7] == [
        "sim-accuracy-cost",
        "sim-workers-1",
        "sim-workers-2",
        "sim-steps-1",
        "sim-steps-2",
        "sim-strategies-1",
        "sim-strategies-2",
    ]


@pytest.mark.slow
def test_workers_inside_recursive_rounds(tmp_path):
    inner = {"depth": 1, "steps": [syn.step(0, 1, SIM[1]), syn.step(1, 3, SIM[3], [0])]}
    outer = [syn.step(0, 0, SIM[0]), syn.step(1, 4, "local/smollm2-135m", [0], round=inner)]  # a self-call
    rows = [
        row("conductor", {"pool": "sim"}, SIM, outer, sid=f"s{i}", task=task, conductor="local/smollm2-135m")
        for i in range(2)
        for task in ("mmlu", "rlpr")
    ]
    rows.append(
        row(
            "conductor",
            {"pool": "sim"},
            SIM,
            [syn.step(0, 2, SIM[2])],
            sid="flat",
            task="rlpr",
            conductor="local/smollm2-135m",
        )
    )
    frame = pd.DataFrame(rows)
    nested = plots.nested_worker_shares_by_task(frame)
    assert nested.loc["mmlu"].to_dict() == {"choice-strong": 0.5, "premium": 0.5}
    assert plots.worker_shares_by_task(frame).loc["rlpr"].to_dict() == pytest.approx(
        {"choice-strong": 2 / 7, "math-strong": 2 / 7, "mediocre": 1 / 7, "premium": 2 / 7}
    )
    assert plots.nested_worker_shares_by_task(frame.drop(columns="nested_step_models")) is None
    names = [p.name for p in plots.eval_plots(frame, tmp_path)]
    assert "sim-workers-recursive" in names
    assert "sim-workers-recursive" not in [p.name for p in plots.eval_plots(frame.iloc[-1:], tmp_path / "flat")]


def test_method_points_average_benchmark_means_and_unknown_cost():
    w = ["sim/a", "sim/b"]
    one = [syn.step(0, 0, "sim/a")]
    two = [syn.step(0, 0, "sim/a"), syn.step(1, 1, "sim/b", [0])]
    rows = [
        # conductor: math500 2/2 correct (3 samples incl. a missing score -> 2/3), mmlu 0/1
        row("conductor", {"pool": "sim"}, w, two, task="math500", sid="a", score=1.0, cost=0.01),
        row("conductor", {"pool": "sim"}, w, two, task="math500", sid="b", score=1.0, cost=0.03),
        row("conductor", {"pool": "sim"}, w, one, task="math500", sid="c", score=None, cost=0.02),
        row("conductor", {"pool": "sim"}, w, one, task="mmlu", sid="a", score=0.0, cost=0.04),
        row("single_worker", {"pool": "sim"}, w, one, task="mmlu", sid="a", score=1.0, cost=None),
    ]
    points = plots.method_points(pd.DataFrame(rows))
    c = points.loc["conductor"]
    assert c["accuracy"] == pytest.approx(100 * (2 / 3 + 0) / 2)
    assert c["cost"] == pytest.approx((0.02 + 0.04) / 2)
    assert c["calls"] == pytest.approx((5 / 3 + 1) / 2)
    assert (c["tasks"], c["n"]) == (2, 4)
    s = points.loc["single_worker"]
    assert math.isnan(s["cost"]) and s["accuracy"] == 100 and s["tasks"] == 1


def test_layout_places_a_step_right_of_what_it_saw():
    graph = [{"visible": []}, {"visible": []}, {"visible": [0, 1]}, {"visible": [2, 7, "all", -1]}, {"visible": [0]}]
    assert plots.layout(graph) == [(0, 0), (0, 1), (1, 0), (2, 0), (1, 1)]


@pytest.mark.slow
def test_pick_sample_prefers_correct_longest_and_explicit_choice(tmp_path):
    frame = make_frame(8)
    chosen = plots.pick_sample(frame)
    ok = frame[frame["score"] >= 1]
    assert chosen["score"] == 1.0 and chosen["steps"] == ok["steps"].max()
    picked = plots.eval_plots(frame, tmp_path, sample={"log": "logs/mmlu_conductor_local.eval", "sample_id": "mmlu1"})
    workflow = [p for p in picked if p.name.endswith("workflow")]
    assert [p.name for p in workflow] == ["local-workflow"]
    assert "sample mmlu1 epoch 1" in workflow[0].title and "sample mmlu1" in svg_text(workflow[0].svg)
    with pytest.raises(ValueError, match="no sample"):
        plots.eval_plots(frame, tmp_path, sample={"sample_id": "nope"})


def test_log_text_is_plain_text_in_plots(tmp_path):
    hostile = r"\$x$ $\frac{<script>alert(1)</script>" + "\x00\x1b" + "x" * 5000
    steps = [syn.step(0, 0, "sim/a", [], subtask=hostile), syn.step(1, 1, "sim/$b$", [0], subtask="$$")]
    frame = pd.DataFrame([row("conductor", {"pool": "sim"}, ["sim/a", "sim/$b$"], steps, task="math$500", sid="<b>")])
    out = plots.eval_plots(frame, tmp_path)
    workflow = next(p for p in out if p.name.endswith("workflow"))
    raw = workflow.svg.read_text()
    assert "<script>" not in raw and "&lt;script&gt;" in raw
    assert "x" * 200 not in raw  # clipped
    assert plots.plain("a$b\x07") == r"a\$b "


def test_empty_frame_and_no_workflow(tmp_path):
    assert plots.eval_plots(make_frame().iloc[:0], tmp_path) == []
    frame = pd.DataFrame([row("conductor", {"pool": "sim"}, SIM, [], meta=False, score=None)])
    out = plots.eval_plots(frame, tmp_path)
    assert [p.name for p in out] == ["sim-accuracy-cost"]  # no workflow to draw, no distribution


def rollout(step, *, reward=0.5, parsed=True, correct=False, steps=2, names=("a", "b"), domain="math"):
    return {
        "step": step,
        "reward": reward,
        "parsed": parsed,
        "correct": correct,
        "steps": steps if parsed else 0,
        "workers": list(range(len(names))) if parsed else [],
        "worker_names": list(names) if parsed else [],
        "domain": domain,
        "completion": "x",
    }


def write_run(path: Path, rows, *, simulated=True, pool="sim") -> Path:
    path.mkdir(parents=True)
    (path / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = {"pool": pool, "simulated": simulated}
    info = {"recipe": path.name, "model": "tiny", "simulated": simulated, "data": data}
    (path / "run_info.json").write_text(json.dumps(info))
    return path


def test_per_step_numbers():
    rows = [
        rollout(0, reward=1.0, correct=True, steps=3),
        rollout(0, reward=0.0, parsed=False),
        rollout(1, reward=0.5, steps=1),
        rollout(1, reward=0.5, steps=2, domain="mmlu"),
    ]
    table = plots.per_step(rows)
    assert table["step"].tolist() == [0, 1]
    assert table["rollouts"].tolist() == [2, 2]
    assert table["reward_mean"].tolist() == [0.5, 0.5]
    assert table["parse_rate"].tolist() == [0.5, 1.0]
    assert table["accuracy"].tolist() == [0.5, 0.0]
    assert table["steps_per_workflow"].tolist() == [3.0, 1.5]
    shares = plots.worker_shares(pd.DataFrame([rollout(0, names=("a", "a", "b")), rollout(1, names=("b",))]))
    assert shares.loc[0, "a"] == pytest.approx(2 / 3) and shares.loc[1, "b"] == 1.0
    steps = plots.domain_steps(pd.DataFrame(rows))
    assert steps.loc[1, "mmlu"] == 2 and steps.loc[0, "math"] == 3
    routing = plots.domain_worker_shares(pd.DataFrame(rows + [rollout(1, names=("a", "a", "a", "b"))]))
    assert routing.columns.tolist() == ["step", "domain", "a", "b"]
    by = routing.set_index(["step", "domain"])
    assert by.loc[(1, "math"), "a"] == pytest.approx(4 / 6) and by.loc[(1, "mmlu"), "b"] == 0.5
    assert (0, "mmlu") not in by.index  # no worker steps there


@pytest.mark.slow
def test_training_plots_per_run_and_compared_per_pool(tmp_path):
    sim_rows = [rollout(s, reward=s / 4, domain=d) for s in range(4) for d in ("math", "mmlu")]
    sim = write_run(tmp_path / "sim-run", sim_rows)
    sim2 = write_run(tmp_path / "sim-run2", sim_rows[:3])
    local_rows = [rollout(s, parsed=s > 0) for s in range(3)]
    local = write_run(tmp_path / "local-run", local_rows, simulated=False, pool="local")
    out = plots.training_plots([sim, local, sim2], tmp_path / "out")
    names = [p.name for p in out]
    per_run = ["curves", "workers", "routing", "steps"]
    assert names == (
        [f"train-sim-run-{k}" for k in per_run]
        + [f"train-local-run-{k}" for k in per_run]
        + [f"train-sim-run2-{k}" for k in per_run]
        + ["train-compare-SIMULATION_pool_sim"]
    )
    assert all(p.title.startswith("SIMULATION (pool sim) - sim-run") for p in out[:4])
    assert all(p.title.startswith("LOCAL (pool local) - local-run") for p in out[4:8])
    assert "mmlu: share" in svg_text(out[2].svg)
    compared = svg_text(out[-1].svg)  # only the runs on the simulated pool
    assert "SIMULATION" in compared and "sim-run2" in compared and "local-run" not in compared
    assert out[-1].sources == (str(sim), str(sim2))


def test_training_plots_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="rollouts.jsonl is missing"):
        plots.training_plots([tmp_path / "none"], tmp_path / "out")
    empty = write_run(tmp_path / "empty", [])
    with pytest.raises(ValueError, match="has no rollouts"):
        plots.training_plots([empty], tmp_path / "out")
    broken = write_run(tmp_path / "broken", [rollout(0)])
    with (broken / "rollouts.jsonl").open("a") as handle:
        handle.write('{"step": 1, "rew')  # a run killed mid-line
    with pytest.raises(ValueError, match="rollouts.jsonl line 2 is not JSON"):
        plots.training_plots([broken], tmp_path / "out")


def test_read_run_keeps_only_the_plotted_fields(tmp_path):
    run = write_run(tmp_path / "run", [rollout(0), {"step": 1, "reward": 1.0}])
    rows, info = plots.read_run(run, plots.PLOT_FIELDS)
    assert list(rows.columns) == list(plots.PLOT_FIELDS) and info["recipe"] == "run"
    assert rows.loc[1, "parsed"] is None and plots.per_step(rows)["parse_rate"].tolist() == [1.0, 0.0]
    assert "completion" in plots.read_run(run)[0].columns


def test_the_routing_curves_read_from_a_run_show_the_policys_choice_in_exploring_groups(tmp_path):
    group = [{**rollout(0, names=(name,)), "assigned": i, "first_worker_policy": {"a": 0.9, "b": 0.1}}
             for i, name in enumerate("ab")]  # fmt: skip  # each worker once, assigned: no choice of the policy
    rows, _ = plots.read_run(write_run(tmp_path / "run", group), plots.PLOT_FIELDS)
    shares = plots.domain_worker_shares(rows).set_index(["step", "domain"])
    assert shares.loc[(0, "math"), "a"] == pytest.approx(0.9)  # not 0.5, the assigned workers' own share


@pytest.mark.slow
def test_curves_cli(tmp_path):
    run = write_run(tmp_path / "run", [rollout(s, reward=0.25 * s) for s in range(3)])
    done = run_command(
        [sys.executable, "-m", "experiments.curves", str(run), "--out", str(tmp_path / "c")],
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").is_file() and (tmp_path / "c.svg").is_file()
    table = pd.read_csv(tmp_path / "c.csv")
    assert table["reward_mean"].tolist() == [0.0, 0.25, 0.5]
    assert "SIMULATION" in svg_text(tmp_path / "c.svg")
    credit = pd.read_csv(tmp_path / "c-credit.csv")
    assert set(credit.columns) == {"domain", "worker", "rollouts", "reward_mean", "advantage_sum"}
    assert credit["rollouts"].sum() == 3


def test_accuracy_cost_styles_tell_22_methods_apart_and_ring_points_at_one_spot():
    from matplotlib.figure import Figure

    families = (
        ["single_worker"] * 4
        + ["context_5x"] * 4
        + ["self_reflection"] * 4
        + ["consensus"] * 4
        + ["mixture_of_agents", "smoothie", "smoothie", "random_workflow", "conductor", "router_dc"]
    )
    styles = plots.method_styles(families)
    looks = {(s["color"], s["marker"], s.get("facecolors")) for s in styles}
    assert len(looks) == 22  # no two methods look alike
    assert len({s["color"] for s, f in zip(styles, families, strict=True) if f == "consensus"}) == 1  # by method
    points = pd.DataFrame(
        {"cost": [0.001, 0.001, 0.002], "accuracy": [50.0, 50.0, 60.0]},
        index=["single_worker (sim/a)", "single_worker (max_tokens=20480, sim/a)", "other"],
    )
    ax = Figure().subplots()
    plots._scatter_spots(
        ax, points, "cost", dict(zip(points.index, styles[:1] + styles[4:5] + styles[8:9], strict=True))
    )
    first, second, third = ax.collections
    assert second.get_facecolor().size == 0 and second.get_sizes()[0] > first.get_sizes()[0]  # a ring around
    assert third.get_sizes()[0] == first.get_sizes()[0]  # a point of its own is drawn as usual


def test_a_title_is_wrapped_to_its_figure_not_cut():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    long = (
        "SIMULATION (pool sim: simulated workers, not comparable to the paper)\nsingle_worker (max_tokens=20480, "
        "sim/premium), the paper's 5x context on math500, sample test/algebra/1072.json epoch 1: correct, "
        "strategy: independent attempts then aggregate"
    )
    fig = Figure(figsize=(6, 3), dpi=100)
    title = fig.subplots().set_title(long, fontsize=8)
    canvas = FigureCanvasAgg(fig)

    def inside() -> bool:
        canvas.draw()
        box = title.get_window_extent(canvas.get_renderer())
        return box.x0 >= 0 and box.x1 <= fig.bbox.width

    assert not inside()  # as one line it runs past both edges
    title.set_text(plots.fitted_title(long, fig, 8))
    assert inside() and title.get_text().replace("\n", " ") == long.replace("\n", " ")  # wrapped, nothing cut
    label = "a − single_worker (max_tokens=20480, sim/choice-strong), the paper's 5x context (all, n=24)"
    assert plots.wrapped(label, 40).replace("\n", " ") == label and "sim/choice-\n" not in plots.wrapped(label, 40)
    assert plots.wrapped("x " * 200, 10).endswith("…") and plots.wrapped("$x$", 10) == r"\$x\$"
