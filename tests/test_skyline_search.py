"""PolyDom / Greedy search: exactness against brute force, pruning counts, candidate pruning."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB

from compiler.skyline.index import skyline_at, tie_keys
from compiler.skyline.search import (
    AccuracyOracle,
    SearchResult,
    TableOracle,
    _max_over_subsets,
    brute_force_search,
    greedy_search,
    mask_features,
    polydom_search,
    prune_candidates,
    set_coef,
)


def coverage_table(d: int, n_items: int, seed: int) -> np.ndarray:
    """A monotone accuracy oracle: fraction of items covered by the features' item sets (many ties)."""
    rng = np.random.default_rng(seed)
    covers = rng.random((d, n_items)) < 0.25
    acc = np.zeros(1 << d)
    for m in range(1 << d):
        cols = mask_features(m)
        acc[m] = (0.5 * n_items + np.count_nonzero(covers[cols].any(axis=0)) * 0.5) / n_items if cols else 0.5
    return acc


def random_costs(d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    coef = np.round(rng.uniform(0, 4, (d, 3)) * 4) / 4  # dyadic: exact float sums
    coef[:, 2] = np.round(coef[:, 2] * rng.integers(0, 2, d)) / 64
    return coef


def skyline_masks(masks: list[int], accuracy: dict[int, float], coef: np.ndarray, size: float) -> list[int]:
    c = np.array([set_coef(coef, m) for m in masks])
    a = np.array([accuracy[m] for m in masks])
    return [masks[i] for i in skyline_at(c, a, tie_keys(masks), size)]


def assert_same_skylines(cands: list[int], truth: dict[int, float], coef: np.ndarray, lo: float, hi: float,
                         seed: int = 0) -> None:
    every = sorted(truth)
    rng = np.random.default_rng(seed)
    for n in np.concatenate(([lo, hi], rng.uniform(lo, hi, 40))):
        assert skyline_masks(cands, truth, coef, n) == skyline_masks(every, truth, coef, n), n


@pytest.mark.parametrize("d,seed", [(8, 0), (10, 1), (12, 2)])
def test_polydom_equals_brute_force_on_monotone_oracle(d: int, seed: int) -> None:
    table = coverage_table(d, 12, seed)
    coef = random_costs(d, seed)
    res = polydom_search(TableOracle(table), d, epsilon=0.0)
    cands = prune_candidates(res.accuracy, coef, 0.0, 50.0, res)
    truth = {m: float(table[m]) for m in range(1 << d)}
    assert_same_skylines(cands, truth, coef, 0.0, 50.0, seed)
    # the sandwich/covering pruning skipped part of the lattice, and every set is accounted for
    assert res.pruned_sandwich > 0 and res.pruned_covering > 0
    assert res.n_evaluated + res.pruned_sandwich == 1 << d
    assert res.pruned_subset > 0
    assert res.complete


def trained_nb_lattice(d: int) -> tuple[AccuracyOracle, SearchResult, float]:
    """Gaussian NB on every subset of d features (brute force) and the worst monotonicity violation of its
    validation accuracies (more features hurting)."""
    X, y = make_classification(300, d, n_informative=3, n_redundant=2, random_state=3)
    oracle = AccuracyOracle(GaussianNB(), X[:200], y[:200], X[200:], y[200:])
    brute = brute_force_search(oracle, d)
    acc = np.array([brute.accuracy[m] for m in range(1 << d)])
    return oracle, brute, float(np.max(_max_over_subsets(acc, d) - acc))


def test_polydom_relaxed_epsilon_exact_on_trained_models() -> None:
    """Real NB accuracies are not monotone; with epsilon = the worst violation PolyDom stays exact."""
    d = 8
    oracle, brute, violation = trained_nb_lattice(d)
    assert violation > 0  # more features do hurt here
    coef = random_costs(d, 5)
    res = polydom_search(oracle, d, epsilon=violation)
    cands = prune_candidates(res.accuracy, coef, 0.0, 20.0, res)
    assert_same_skylines(cands, brute.accuracy, coef, 0.0, 20.0)
    # plain PolyDom (epsilon 0) assumes monotonicity and expands fewer sets
    plain = polydom_search(oracle, d, epsilon=0.0)
    assert plain.n_evaluated < res.n_evaluated <= 1 << d


def test_covering_prunes_supersets_of_a_perfect_set() -> None:
    d = 6
    table = np.full(1 << d, 0.6)
    for m in range(1 << d):
        if m & 1:
            table[m] = 1.0  # feature 0 alone is perfect; every superset is no better
    res = polydom_search(TableOracle(table), d)
    # evaluated: empty set, full set, the singletons; all strict supersets of {0} are covered
    assert 1 in res.accuracy
    assert res.pruned_covering >= (1 << (d - 1)) - 1 - d
    cands = prune_candidates(res.accuracy, np.ones((d, 3)), 0.0, 10.0, res)
    assert cands == [0, 1]


def test_max_sets_stops_the_search() -> None:
    d = 8
    res = polydom_search(TableOracle(coverage_table(d, 20, 0)), d, max_sets=10)
    assert res.n_evaluated == 10 and not res.complete


def test_polydom_rejects_huge_lattices() -> None:
    with pytest.raises(ValueError, match="greedy"):
        polydom_search(TableOracle(np.zeros(2)), 30)


def test_polynomial_dominance_prunes_over_the_range() -> None:
    # f0 is cheap for small items, f1 for large ones (cross at n = 10); f2 costs more than f0 everywhere
    coef = np.array([[1.0, 1.0, 0.0], [11.0, 0.0, 0.0], [2.0, 1.5, 0.0]])
    acc = {0: 0.5, 1: 0.8, 2: 0.8, 4: 0.7, 3: 0.9, 5: 0.85, 6: 0.85, 7: 0.9}
    small = prune_candidates(acc, coef, 0.0, 5.0)
    assert 2 not in small  # {f1} costs more than {f0} below n = 10 at equal accuracy, f0 has the smaller mask
    assert 4 not in small  # {f2}: less accurate and costlier than {f0}
    large = prune_candidates(acc, coef, 20.0, 30.0)
    assert 2 in large and 1 not in large
    both = prune_candidates(acc, coef, 0.0, 30.0)
    assert 1 in both and 2 in both
    assert 7 not in both  # subset {f0, f1} is as accurate


@pytest.mark.parametrize("method", ["greedy-acc", "greedy-cost"])
def test_greedy_records_nested_orders(method: str) -> None:
    d = 7
    table = coverage_table(d, 25, 4)
    coef = random_costs(d, 4)
    res = greedy_search(TableOracle(table), coef, 5.0, method)
    assert len(res.orders) >= 2
    for run in res.orders:
        assert len(set(run)) == len(run) >= 1  # each feature at most once
        if len(run) < d:  # stopped early: the last `patience` additions did not raise the accuracy
            m = sum(1 << j for j in run)
            before = m & ~sum(1 << j for j in run[-3:])
            assert table[m] <= table[before]
        mask = 0
        for j in run:
            mask |= 1 << j
            assert mask in res.accuracy
    first = res.orders[0]
    if method == "greedy-acc":  # weight 0: pure accuracy gain first
        gains = [table[1 << j] for j in range(d)]
        assert table[1 << first[0]] == max(gains)
    else:  # weight 0: cheapest feature first
        c = coef[:, 0] + coef[:, 1] * 5.0 + coef[:, 2] * 25.0
        assert c[first[0]] == c.min()
    assert res.n_evaluated < 1 << d


def test_polydom_approx_prunes_more_and_loses_at_most_approx() -> None:
    """Approximate mode (a(F) >= a(H) + epsilon - approx prunes): fewer trained sets, and at every budget and
    size the best kept model is at most ``approx`` less accurate (validation) than brute force's."""
    d = 8
    oracle, brute, violation = trained_nb_lattice(d)
    acc = np.array([brute.accuracy[m] for m in range(1 << d)])
    coef = random_costs(d, 5)
    exact = polydom_search(oracle, d, epsilon=violation)
    alpha = 0.05
    approx = polydom_search(oracle, d, epsilon=violation, approx=alpha)
    assert approx.n_evaluated < exact.n_evaluated
    cands = prune_candidates(approx.accuracy, coef, 0.0, 20.0, approx)
    every = np.arange(1 << d)
    worst_loss = 0.0
    for n in (0.0, 3.0, 20.0):
        cost_all = np.array([set_coef(coef, m) @ [1.0, n, n * n] for m in every])
        cost_c = np.array([set_coef(coef, m) @ [1.0, n, n * n] for m in cands])
        acc_c = np.array([approx.accuracy[m] for m in cands])
        for budget in np.unique(cost_all):
            best = acc[cost_all <= budget].max()
            kept = acc_c[cost_c <= budget].max(initial=-np.inf)
            worst_loss = max(worst_loss, best - kept)
    assert worst_loss <= alpha + 1e-12
    with pytest.raises(ValueError, match="approx"):
        polydom_search(oracle, d, approx=-0.1)


def test_small_validation_scores_by_cross_validation_and_refits() -> None:
    """Fewer validation rows than cv_below: k-fold accuracy over both parts pooled, models refitted on both;
    else the paper's validation score and models fitted on the training part (SkylineClassifier docstring)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: PLC0415

    from compiler.skyline.classifier import SkylineClassifier  # noqa: PLC0415

    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0, random_state=0)
    oracle = AccuracyOracle(GaussianNB(), X[:90], y[:90], X[90:], y[90:], cv=4, random_state=3)
    folds = StratifiedKFold(n_splits=4, shuffle=True, random_state=3)
    ref = cross_val_score(GaussianNB(), X[:, [0, 2]], y, cv=folds)  # equal folds of 30 rows: mean = pooled
    assert oracle(0b101) == pytest.approx(float(np.mean(ref)))
    assert oracle.fit_model(0b101).class_count_.sum() == 90  # fit_model: the training part only

    cv = SkylineClassifier(method="brute", cv=4, cv_below=200).fit(X[:90], y[:90], eval_set=(X[90:], y[90:]))
    assert (cv.cv_used_, cv.refit_used_) == (4, True)
    assert all(m is None or m.class_count_.sum() == 120 for m in cv.models_)
    same = AccuracyOracle(GaussianNB(), X[:90], y[:90], X[90:], y[90:], cv=4, random_state=0)
    assert cv.index_.model_acc.tolist() == [same(m) for m in cv.masks_]  # the index keeps the search's scores
    val = SkylineClassifier(method="brute", cv_below=0).fit(X[:90], y[:90], eval_set=(X[90:], y[90:]))
    assert (val.cv_used_, val.refit_used_) == (0, False)
    assert all(m is None or m.class_count_.sum() == 90 for m in val.models_)
    with pytest.raises(ValueError, match="cv_below"):
        SkylineClassifier(cv_below=-1).fit(X, y)


def test_greedy_without_patience_runs_every_feature_in() -> None:
    """A table whose accuracy stalls for four additions after the first feature, then rises: with the default
    patience (3) each run stops in the stall and never sees the best set; with patience None every run takes all
    d features (d (d + 1) / 2 sets for the first run) and the best set is found."""
    d = 6
    acc = np.full(1 << d, 0.5)
    for m in range(1 << d):
        n = bin(m).count("1")
        acc[m] = 0.6 if 1 <= n <= 4 else (0.9 if n >= 5 else 0.5)  # a plateau, then a rise at five features
    coef = np.column_stack([np.ones(d), np.zeros(d), np.zeros(d)])
    short = greedy_search(TableOracle(acc), coef, 0.0, "greedy-acc", weights=(0.0,))
    whole = greedy_search(TableOracle(acc), coef, 0.0, "greedy-acc", weights=(0.0,), patience=None)
    assert [len(r) for r in short.orders] == [4] and max(short.accuracy.values()) == 0.6
    assert [len(r) for r in whole.orders] == [d] and max(whole.accuracy.values()) == 0.9
    assert whole.n_evaluated == 1 + d * (d + 1) // 2
