"""AIQ (RouterBench) and APGR (RouteLLM) on hand-made points whose areas are worked out by hand, and
per benchmark from the hand-made logs of test_reports_orchestration (reports.routing)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_reports_orchestration import COND, W0, frame, logs, one  # noqa: F401 (fixtures)

from reports import routing


def test_hull_is_the_upper_envelope_up_to_its_most_accurate_point():
    # (2, 60) lies under the segment (1, 50)-(3, 90); (4, 80) is costlier and less accurate than (3, 90)
    assert routing.hull([(2, 60), (4, 80), (1, 50), (3, 90), (3, 40)]).tolist() == [[1, 50], [3, 90]]


def test_aiq_is_the_hulls_mean_accuracy_over_the_cost_range():
    points = [(1, 50), (2, 60), (3, 90), (4, 80)]
    # 1..3: trapezoid (50 + 90) / 2 * 2 = 140; 3..4: flat at 90 -> 230 over a range of 3
    assert routing.aiq(points, 1, 4) == pytest.approx(230 / 3)
    # nothing below the cheapest point: over 0..4 the same area counts over a range of 4
    assert routing.aiq(points, 0, 4) == pytest.approx(230 / 4)
    assert routing.aiq([(2, 70)], 1, 3) == pytest.approx(35)  # 0 until 2, then 70
    assert math.isnan(routing.aiq(points, 2, 2))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ((2, 80), 50 / 80),  # 150 under the hull - 100 (weak) over 180 - 100
        ((2, 70), 0.5),  # on the weak-strong line: what mixing the two at random recovers
        ((2, 55), 0.5),  # under it: the mix is better, the row adds nothing
        ((1, 90), 1.0),  # the strong model's accuracy at the weak model's cost
        ((5, 100), 0.5),  # costlier than strong: its mixes with weak reach 50 + 50/4 * 2 = 75 < 90 at cost 3
    ],
)
def test_apgr_is_the_share_of_the_weak_to_strong_gap_recovered_over_the_costs(row, expected):
    assert routing.apgr(row, (1, 50), (3, 90)) == pytest.approx(expected)


def test_apgr_is_undefined_without_a_gap():
    assert math.isnan(routing.apgr((2, 80), (1, 50), (1, 90)))
    assert math.isnan(routing.apgr((2, 80), (1, 50), (3, 50)))


def test_router_table_per_benchmark_from_logs(frame):  # noqa: F811
    t = routing.router_table(frame)
    mmlu = t[t["benchmark"] == "MMLU"]
    # single workers: w0 (0.001 USD, 50 %), w1 (0.002, 25 %); conductor (0.003, 75 %)
    # oracle: q0, q1 w0; q2 w1; q3 nobody -> the cheapest: 0.00125 USD, 75 %
    oracle = one(mmlu, row=routing.ORACLE)
    assert (oracle["usd"], oracle["accuracy"]) == (pytest.approx(0.00125), pytest.approx(75))
    assert one(mmlu, row=routing.ZERO)["aiq"] == pytest.approx(50)  # w0 flat over the range
    assert one(mmlu, row=COND)["aiq"] == pytest.approx(62.5)  # (50 + 75) / 2 over 0.001..0.003
    assert oracle["aiq"] == pytest.approx((0.015625 + 75 * 0.00175) / 0.002)
    assert one(mmlu, row=W0)["weak"] == one(mmlu, row=W0)["strong"] == W0  # no gap: APGR undefined
    assert np.isnan(one(mmlu, row=COND)["apgr"])
