"""The strategy classifier (solvers.strategy) on hand-made workflow graphs."""

from __future__ import annotations

import pytest

from solvers import strategy as st


def rnd(*visible, subtasks=None, nested=None):
    """A root round whose step i sees `visible[i]`; optional subtasks and a nested round at step 0."""
    steps = []
    for i, vis in enumerate(visible):
        step = {"index": i, "model": f"m{i % 2}", "visible": list(vis), "subtask": (subtasks or [""] * len(visible))[i]}
        if nested is not None and i == 0:
            step["round"] = nested
        steps.append(step)
    return {"steps": steps}


@pytest.mark.parametrize(
    ("round_", "expected"),
    [
        (None, st.NO_WORKFLOW),
        ({"steps": []}, st.NO_WORKFLOW),
        (rnd([]), st.SINGLE),
        (rnd([], [], [], [0, 1, 2]), st.AGGREGATE),  # three attempts, the last sees them all
        (rnd([], [], []), st.AGGREGATE),  # consensus: nobody sees anybody, a vote picks
        (rnd([], [], [0]), st.REFINE),  # the last step sees one attempt only
        (rnd([], [0]), st.REFINE),
        (rnd([], [0], [0, 1]), st.REFINE),
        (rnd([], [0], []), st.SINGLE),  # the last step works alone: earlier steps are ignored
        (rnd([], [0], subtasks=["Make a plan: outline the approach.", "Follow the plan."]), st.PLAN),
        (rnd([], [0], subtasks=["Break it down into subgoals", "Do it"]), st.PLAN),
        # asks for the answer first: a solve, even when it mentions an approach
        (rnd([], [0], subtasks=["Solve it with any approach you like.", "Check it."]), st.REFINE),
        (rnd([], [0], subtasks=["Compute the answer; plan nothing.", "Check."]), st.REFINE),
    ],
)
def test_rule(round_, expected):
    assert st.strategy(round_) == expected


def test_plan_words_are_whole_words():
    assert not st.is_plan("The planet's orbit: find its period")
    assert st.is_plan("Decompose the problem into parts")


def test_long_subtask_is_clipped_before_search():
    assert not st.is_plan("x " * st.SUBTASK_CHARS + "plan")
    assert st.is_plan("plan " + "x " * 100_000)


def test_step_models_flatten_nested_rounds_depth_first():
    inner = {"steps": [{"model": "a", "visible": []}, {"model": "b", "visible": [0]}]}
    outer = rnd([], [0], nested=inner)
    assert st.step_models(outer) == ["a", "b", "m1"]
    assert st.nested_step_models(outer) == ["a", "b"]  # only the recursive round's steps
    assert st.nested_step_models(rnd([], [0])) == [] and st.step_models(None) == []
    assert set(st.STRATEGIES) == {st.SINGLE, st.AGGREGATE, st.REFINE, st.PLAN, st.NO_WORKFLOW}
