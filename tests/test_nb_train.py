"""Training of static and early-stopping NB: known answers and the paper's properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone

from compiler.nb.discretize import Bins, fit_bins
from compiler.nb.orderings import class_bin_counts, delta_cp, fcbf, information_gain, rank
from compiler.nb.train import NaiveBayesBudget, best_threshold, fit_tables, partial_scores
from compiler.tasks import class_weights, weighted_accuracy
from pyruntime.data import make_sparse_binary
from pyruntime.nb.binding import CNaiveBayes


def test_laplace_tables_known_answer() -> None:
    B = np.array([[1], [1], [1], [0], [0], [0], [0], [1]], dtype=np.int8)
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    bins = Bins(zero_bin=np.zeros(1, np.uint8), edges=[np.float32([0.5])])
    tables, counts = fit_tables(B, y, bins, alpha=1.0)
    assert counts[0].tolist() == [[3, 1], [1, 3]]
    np.testing.assert_allclose(tables.d[0], [math.log(2 / 6) - math.log(4 / 6), math.log(4 / 6) - math.log(2 / 6)],
                               rtol=1e-6)
    assert tables.d0 == 0.0


def test_mean_std_bins_known_answer() -> None:
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    bins = fit_bins(X, "mean-std")
    np.testing.assert_allclose(bins.edges[0], [2 - math.sqrt(2), 2 + math.sqrt(2)], rtol=1e-6)
    got = bins.transform(np.array([[0.0], [0.5], [1.0], [3.4], [3.5], [-0.0]]))[:, 0]
    assert got.tolist() == [0, 1, 2, 2, 3, 0]


def test_quantile_bins() -> None:
    X = np.arange(100, dtype=float)[:, None]
    bins = fit_bins(X, "quantile:4")
    assert bins.zero_bin[0] == 0 and bins.edges[0].size == 3
    assert np.bincount(bins.transform(X)[:, 0]).tolist() == [25, 25, 25, 25]
    with pytest.raises(ValueError, match="quantile:N"):
        fit_bins(X, "quantile:x")
    with pytest.raises(ValueError, match="mean-std"):
        fit_bins(X, "kmeans")


def test_metrics_known_answers() -> None:
    # feature 0 determines the class, feature 1 is independent of it
    counts = np.array([[[4, 0], [0, 4]], [[2, 2], [2, 2]]])
    ig = information_gain(counts)
    assert ig[0] == pytest.approx(1.0) and ig[1] == pytest.approx(0.0)
    assert delta_cp(counts).tolist() == pytest.approx([1.0, 0.0])
    assert rank("chi2", counts).tolist() == [0, 1]


def test_threshold_and_weighted_accuracy_known_answers() -> None:
    t = best_threshold(np.float32([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 1, 1]), (1, 1))
    assert np.float32(0.2) < t < np.float32(0.3)
    y = np.array([0, 0, 0, 1])
    w = class_weights(y)
    assert w == (1, 3)
    assert weighted_accuracy(y, np.zeros(4, int), w) == 0.5
    assert weighted_accuracy(y, y, w) == 1.0
    # a threshold never falls between equal scores
    t = best_threshold(np.float32([0.5, 0.5, 0.5, 0.9]), np.array([0, 1, 0, 1]), (1, 1))
    assert t >= np.float32(0.5)


def test_fcbf_drops_a_redundant_copy() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    a = np.where(rng.random(400) < 0.9, y, 1 - y)
    b = np.where(rng.random(400) < 0.7, y, 1 - y)
    B = np.column_stack([a, a, b]).astype(np.int8)
    counts = class_bin_counts(B, y, 2)
    order = fcbf(counts, B, 2)
    assert order[0] in (0, 1) and order[-1] in (0, 1) and order[1] == 2


def separable(n: int = 3000, d: int = 40, seed: int = 0, strength: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    shift = np.linspace(strength, 0.1 * strength, d)
    X = rng.normal(size=(n, d)) + np.outer(2 * y - 1, shift)
    return X, y


def test_stop_points_meet_the_criterion_on_validation() -> None:
    X, y = separable(n=6000, strength=0.3)
    Xtr, ytr, Xva, yva = X[:3000], y[:3000], X[3000:], y[3000:]
    est = NaiveBayesBudget(budget=40, criterion="agree").fit(Xtr, ytr, eval_set=(Xva, yva))
    m = est.model_
    assert m.n_stops > 0
    P = partial_scores(NaiveBayesBudget(budget=40, early_stopping=False).fit(Xtr, ytr, eval_set=(Xva, yva)).model_, Xva)
    full = (P[:, 40] > np.float32(est.static_threshold_)).astype(int)
    w = np.where(yva == 1, *reversed(class_weights(yva)))
    running = np.ones(yva.size, bool)
    for at, hi, lo in zip(m.stop_at, m.stop_hi, m.stop_lo):
        s = P[:, at]
        for mask, label in ((running & (s > hi), 1), (running & (s < lo), 0)):
            if mask.any():
                early_ok = int(w[mask & (yva == label)].sum())
                full_ok = int(w[mask & (full == yva)].sum())
                assert early_ok > full_ok  # R1, strict
        running &= ~((s > hi) | (s < lo))
    # the reference evaluator reproduces the stops the training decided on
    assert np.array_equal(~running, m.predict_reference(Xva).stage > 0)


def test_paper_criterion_never_stops_on_a_very_accurate_model() -> None:
    X, y = separable(d=30)
    X[:, :5] *= 3  # nearly perfect
    kw = dict(budget=30)
    paper = NaiveBayesBudget(criterion="paper", **kw).fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]))
    acc = weighted_accuracy(y[2000:], paper.predict(X[2000:]), class_weights(y[2000:]))
    assert acc > 1 / 1.05  # R2 cannot hold: the paper's rule finds nothing
    assert paper.model_.n_stops == 0
    safe = NaiveBayesBudget(criterion="safe", **kw).fit(X[:2000], y[:2000], eval_set=(X[2000:], y[2000:]))
    assert safe.model_.n_stops > 0 and safe.features_read(X[2000:]).mean() < 15


def test_early_stopping_reads_fewer_features_without_losing_accuracy() -> None:
    X, y = make_sparse_binary(6000, 300, seed=3)
    tr, va, te = slice(0, 3600), slice(3600, 4800), slice(4800, None)
    static = NaiveBayesBudget(budget=100, early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    dyn = NaiveBayesBudget(budget=100).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    w = class_weights(y[va])
    acc_s = weighted_accuracy(y[te], static.predict(X[te]), w)
    acc_d = weighted_accuracy(y[te], dyn.predict(X[te]), w)
    assert dyn.features_read(X[te]).mean() < 0.8 * 100
    assert acc_d >= acc_s - 0.01
    np.testing.assert_array_equal(CNaiveBayes(dyn.model_).predict(X[te]).label, dyn.predict(X[te]))


@pytest.mark.parametrize("ordering", ["ig", "chi2", "dcp", "fcbf", "greedy"])
def test_every_ordering_trains_and_ranks_the_strong_feature_high(ordering: str) -> None:
    X, y = separable(n=1200, d=8, seed=2)
    est = NaiveBayesBudget(ordering=ordering, budget=4).fit(X[:800], y[:800], eval_set=(X[800:], y[800:]))
    assert 0 in est.ordering_[:2].tolist()
    assert sorted(est.ordering_.tolist()) == list(range(8))
    assert est.predict_proba(X[:5]).shape == (5, 2)


def test_budget_is_chosen_on_validation_when_not_given() -> None:
    X, y = separable(n=1500, d=60, seed=4)
    est = NaiveBayesBudget(early_stopping=False).fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]))
    assert est.budget_ in est.static_curve_
    assert est.static_curve_[est.budget_] == max(est.static_curve_.values())


def test_estimator_api_and_validation_errors() -> None:
    est = NaiveBayesBudget(budget=3, ordering="dcp")
    assert clone(est).get_params()["ordering"] == "dcp"
    X, y = separable(n=300, d=5)
    with pytest.raises(ValueError, match="single class"):
        NaiveBayesBudget().fit(X, np.zeros(300, int))
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        NaiveBayesBudget().fit(Xn, y)
    with pytest.raises(ValueError, match="ordering"):
        NaiveBayesBudget(ordering="random").fit(X, y)
    with pytest.raises(ValueError, match=r"tolerance must be a finite number in \[0, 1\] or None, got 1.5"):
        NaiveBayesBudget(tolerance=1.5).fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        NaiveBayesBudget().predict(X)
    with pytest.raises(ValueError, match=r"validation data is empty: the 3 rows given to naive Bayes's fit"):
        NaiveBayesBudget().fit(X[:3], np.array([0, 1, 0]))
    est = NaiveBayesBudget(budget=3).fit(X, y)  # internal validation split
    assert est.model_.n_used == 3


def test_pay_rule_keeps_a_stop_point_only_when_its_skipped_reads_outweigh_the_checks() -> None:
    """A late stop point (one feature left) that stops 20% of the running rows saves 0.2 reads per row
    and costs one check per row: dropped at stop_cost 1 (the default is 1.5), kept when checks are cheap."""
    from compiler.nb.train import StopRule, learn_stop_points

    n, k = 2000, 4
    y = (np.arange(n) < 1000).astype(np.int64)
    P = np.zeros((n, k + 1), np.float32)
    P[:400, 3] = 5.0  # 400 positive rows clearly positive after feature 3
    P[:, k] = np.where(y == 1, 1.0, -1.0)  # the full model is right on every row
    stops, running = learn_stop_points(P, y, np.float32(0.0), (1000, 1000), StopRule(stop_cost=1.0))
    assert stops == [] and running.all()
    stops, running = learn_stop_points(P, y, np.float32(0.0), (1000, 1000), StopRule(stop_cost=0.1))
    assert [(i, lo) for i, _, lo in stops] == [(3, float("-inf"))] and 0.0 <= stops[0][1] < 5.0
    assert int((~running).sum()) == 400
    # an early stop point (three reads left) on the same 400 rows pays: 400 * 3 >= 2000 * 0.5
    P[:400, 1:4] = 5.0
    stops, _ = learn_stop_points(P, y, np.float32(0.0), (1000, 1000), StopRule(stop_cost=0.5))
    assert [i for i, _, _ in stops] == [1]


def test_stop_cost_is_validated() -> None:
    from compiler.nb.train import NaiveBayesBudget

    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="stop_cost"):
        NaiveBayesBudget(stop_cost=-1.0).fit(X, y)
