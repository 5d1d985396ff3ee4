"""Sizes on and a few ulps around a size break: the budget index answers with the most accurate model that fits,
as at every other size. A break is a rounded root of two cost curves' difference; stored as computed, at the sizes
between it and the true crossing a range's skyline was not sorted by cost, and the lookup's binary search (numpy's
and fm_skyline_select's, which agree) stopped early on a less accurate model (round 68's probe: 8 of 25,038 wine
queries). The wine skylines below are that probe's."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_wine

from compiler.costs import load_costs
from compiler.skyline.classifier import SkylineClassifier
from compiler.skyline.index import answers_at, build_size_index, settle_break
from pyruntime.skyline.index import NO_MODEL, poly_cost

os.environ.setdefault("FRUGALML_PROGRESS", "off")

WINE_COSTS = """feature,c0,c1,c2
0,0.3,0.1,0
1,1,0,0.001
2,2.5,0.01,0.001
3,0.3,0,0.001
4,0.1,0.01,0.001
5,7,0,0.001
6,1,0.1,0
7,7,0,0.001
8,0.1,0,0
9,7,0,0.001
10,0.3,0.01,0
11,7,0,0.001
12,2.5,0.1,0
"""


def ulps_around(x: float, k: int) -> list[float]:
    out, lo, hi = [x], x, x
    for _ in range(k):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        out += [lo, hi]
    return out


def wine_skyline(tmp_path: Path, base: str) -> SkylineClassifier:
    X, y = load_wine(return_X_y=True)
    (tmp_path / "c.csv").write_text(WINE_COSTS)
    costs = load_costs(tmp_path / "c.csv", [str(j) for j in range(X.shape[1])])
    return SkylineClassifier(base=base, method="greedy-acc", costs=costs, sizes=(0, 10, 100)).fit(X, y)


def wrong_answers(clf: SkylineClassifier, sizes: list[float]) -> tuple[int, int]:
    """(lookups answering a less accurate set than the best that fits, lookups), over every set's cost at each size
    as the budget."""
    ix = clf.index_
    coef, acc = ix.model_coef, ix.model_acc
    bad = n = 0
    for size in sizes:
        cost = poly_cost(coef, size)
        for budget in np.unique(cost):
            got = ix.lookup(float(budget), size)
            assert got.model != NO_MODEL
            bad += int(acc[got.model] != acc[cost <= budget].max())
            n += 1
    return bad, n


@pytest.mark.parametrize("base", ["nb", "linear"])
def test_lookup_across_the_size_range_is_the_best_model_that_fits(tmp_path: Path, base: str) -> None:
    """Costs equal at the range's start up to rounding (1.1 against 1.0999999999999999) were ordered by value, not
    as ties by slope; their crossing a rounding-level distance later was dropped as within _next_crossing's
    tolerance, and the order stayed wrong for the rest of the walk: the nb skyline answered wrong over whole
    ranges (646 of 42,420 lookups here, e.g. at every size from 52 to 100)."""
    clf = wine_skyline(tmp_path, base)
    sizes = [float(v) for v in np.random.default_rng(0).uniform(0, 100, 400)]
    assert min(abs(s - b) for s in sizes for b in clf.index_.breaks) > 1e-9  # none at a break (the test below)
    bad, n = wrong_answers(clf, sizes)
    assert n > 5000 and bad == 0


@pytest.mark.parametrize("base", ["nb", "linear"])
def test_lookup_near_every_break(tmp_path: Path, base: str) -> None:
    """Within 40 ulps of each break: the break is moved to where the two skylines answer exactly (settle_break).
    Where rounding reorders two costs back and forth over a few ulps no single break can be exact: at most 1 in
    10,000 lookups there (3 of 66,812 and 1 of 99,822 here, all within 15 ulps of a break)."""
    clf = wine_skyline(tmp_path, base)
    bad, n = wrong_answers(clf, [s for b in clf.index_.breaks[1:] for s in ulps_around(float(b), 40)])
    assert n > 30000 and bad <= n // 10000


def test_settle_break_moves_a_rounded_root_to_where_the_skylines_answer() -> None:
    """Two lines crossing at 1/3 (not a double): wherever near it the computed root lands, the stored break is a
    double at which the new skyline answers every budget exactly, and the double before it one where the old
    does."""
    coef = np.array([[0.1, 0.3, 0.0], [0.2, 0.0, 0.0]])  # 0.1 + 0.3 n against 0.2: equal at n = 1/3
    acc, tie = np.array([0.5, 0.9]), np.array([0, 1])
    old, new = [0, 1], [1]  # before: 0 is cheaper, 1 more accurate; after: 1 is both
    for guess in ulps_around(1.0 / 3.0, 40):
        b = settle_break(coef, acc, tie, old, new, guess, 0.0)
        assert answers_at(coef, acc, tie, new, b)
        assert answers_at(coef, acc, tie, old, math.nextafter(b, -math.inf))
    index = build_size_index(coef, acc, tie, 0.0, math.inf)
    assert index.skylines == [old, new]
    b = index.breaks[1]
    assert answers_at(coef, acc, tie, new, b) and answers_at(coef, acc, tie, old, math.nextafter(b, -math.inf))


def test_lazy_prediction_where_nothing_fits_is_an_answer(tmp_path: Path) -> None:
    """CSkyModel.predict_lazy raised "nothing fits the budget (code -5)" where predict and predict_one answer
    label -1 at stage n_models, reading nothing."""
    from compiler.convert import convert
    from pyruntime.evaluators import c_evaluator

    clf = wine_skyline(tmp_path, "linear")
    X, _ = load_wine(return_X_y=True)
    ev = c_evaluator(convert(clf, X).model)
    read: list[int] = []
    p = ev.predict_lazy(lambda j: read.append(j) or float(X[0, j]), budget=-1.0, size=5.0)
    batch = ev.predict(X[:1], budget=-1.0, size=5.0)
    assert int(p.label[0]) == int(batch.label[0]) == -1
    assert int(p.stage[0]) == int(batch.stage[0]) == clf.index_.n_models
    assert read == [] and float(p.cost[0]) == 0.0


def test_a_cost_past_float32_is_inf_in_the_result(tmp_path: Path) -> None:
    """fm_result.cost was `(float)cost`, undefined in C99 past FLT_MAX (a huge budget at a huge size): now +inf from
    the first double float32 rounds to inf, as numpy rounds the double *spent; below it the plain rounding."""
    from compiler.convert import convert
    from pyruntime.evaluators import c_evaluator

    clf = wine_skyline(tmp_path, "linear")
    X, _ = load_wine(return_X_y=True)
    ev = c_evaluator(convert(clf, X).model)
    for size in (1e150, 1e10, 50.0):
        p, c32 = ev.predict_raw(X[:2].astype(np.float32), budget=1.7e308, size=size)
        assert np.all(p.stage < clf.index_.n_models)
        with np.errstate(over="ignore"):  # numpy's own cast to inf
            np.testing.assert_array_equal(c32, np.asarray(p.cost).astype(np.float32))
    assert np.isinf(c32).sum() == 0 and np.isinf(ev.predict_raw(X[:1].astype(np.float32), 1.7e308, 1e150)[1]).all()
