"""K-class naive Bayes: the greedy forward ordering (validation log-probability of the true class), the
tolerance rule that picks the budget, and where the defaults fall back to the filter order and coarse grid
(fewer than 200 validation rows; two classes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from sklearn.datasets import load_digits

from compiler.nb import multi_train
from compiler.nb.discretize import fit_bins
from compiler.nb.multi_train import NBMultiTables, fit_multi_tables
from compiler.nb.orderings import rank
from compiler.nb.train import BUDGET_GRID, NaiveBayesBudget
from compiler.options import CV_FOLDS, stratified_folds
from pyruntime import format as fmt


def k_class(n: int, seed: int, k: int = 4, d: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """Feature j shifts the class means by strength[j] (feature 4 the strongest; 6-8 pure noise)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    strength = np.array([0.4, 0.6, 0.8, 0.3, 1.6, 0.5, 0.0, 0.0, 0.0])[:d]
    centres = rng.normal(size=(k, d)) * strength
    return rng.normal(size=(n, d)) + centres[y], y


def mean_log_prob(tables: NBMultiTables, order: list[int], X: np.ndarray, y: np.ndarray) -> float:
    """Mean log-probability of the true class under the NB of ``order``, through the model's own float32
    partial sums (another path than the trainer's float64 lookups)."""
    P = tables.model(np.array(order), X.shape[1]).partial_scores(X)[:, -1].astype(np.float64)
    top = P.max(axis=1, keepdims=True)
    lse = np.log(np.exp(P - top).sum(axis=1)) + top[:, 0]
    return float(np.mean(P[np.arange(y.size), y] - lse))


@pytest.mark.parametrize("bins_spec", ["mean-std", "quantile:8"])
@pytest.mark.parametrize("block", [None, 1])  # 1: one feature a block (the blocked products, chosen features skipped)
def test_greedy_adds_at_each_step_the_feature_of_best_validation_log_probability(
        bins_spec: str, block: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if block is not None:
        monkeypatch.setattr(multi_train, "GREEDY_BLOCK", block)
    X, y = k_class(1600, seed=1)
    tr, va = slice(0, 1000), slice(1000, None)
    est = NaiveBayesBudget(ordering="greedy", budget=5, bins=bins_spec, early_stopping=False).fit(
        X[tr], y[tr], eval_set=(X[va], y[va]))
    order = est.ordering_.tolist()
    assert sorted(order) == list(range(9))
    assert order[0] == 4  # the strongest feature first
    bins = fit_bins(X[tr], bins_spec)
    tables, _ = fit_multi_tables(bins.transform(X[tr]), y[tr], 4, bins)
    for i in range(5):  # the first five: the greedy steps (the rest follow the ig rank)
        scores = {j: mean_log_prob(tables, order[:i] + [j], X[va], y[va]) for j in range(9) if j not in order[:i]}
        assert scores[order[i]] >= max(scores.values()) - 1e-6, (i, scores)
    counts = fit_multi_tables(bins.transform(X[tr]), y[tr], 4, bins)[1]
    assert order[5:] == [j for j in rank("ig", counts).tolist() if j not in order[:5]]  # the tail in ig's order


@pytest.mark.parametrize("tolerance", [0.0, 0.01, 0.05, 1.0])
def test_budget_is_the_fewest_features_within_the_tolerance(tolerance: float) -> None:
    X, y = k_class(1600, seed=2)
    est = NaiveBayesBudget(tolerance=tolerance, early_stopping=False).fit(
        X[:1000], y[:1000], eval_set=(X[1000:], y[1000:]))
    curve = est.static_curve_
    assert sorted(curve) == list(range(1, 10))  # every budget up to 100 judged
    best = max(curve.values())
    assert est.budget_ == min(k for k, v in curve.items() if v >= best - tolerance)
    if tolerance == 1.0:
        assert est.budget_ == 1
    assert est.model_.n_used == est.budget_


def test_under_200_validation_rows_the_order_and_budget_are_judged_out_of_fold() -> None:
    """199 validation rows: the greedy order's steps and the budget's curve over the train and validation rows
    pooled, each fold's rows scored by the tables of the other folds (the stop cuts' folds); checked through the
    model's own float32 partial sums."""
    X, y = k_class(1400, seed=3)
    Xtr, ytr, Xva, yva = X[:1000], y[:1000], X[1000:1199], y[1000:1199]
    small = NaiveBayesBudget(bins="mean-std", early_stopping=False).fit(Xtr, ytr, eval_set=(Xva, yva))
    pooled = np.concatenate([ytr, yva])
    folds = stratified_folds(pooled, CV_FOLDS, 0)
    bins = fit_bins(Xtr)
    parts = multi_train.out_of_fold_parts(bins, Xtr, ytr, Xva, yva, 4, 1.0, "counts", folds)
    assert [te.size for _, _, te in parts] == [te.size for _, te in folds] and sum(te.size for _, te in folds) == 1199

    def pooled_log_prob(order: list[int]) -> float:
        return sum(t.size * mean_log_prob(tables, order, Xf, t) for tables, Xf, t in parts) / 1199

    order = small.ordering_.tolist()
    for step in range(3):  # each step the candidate of the highest pooled out-of-fold log-probability
        left = [j for j in range(9) if j not in order[:step]]
        assert order[step] == max(left, key=lambda j: pooled_log_prob(order[:step] + [j])), step
    assert sorted(small.static_curve_) == list(range(1, 10))  # every budget, as with 200 rows
    for k in (1, 5, 9):
        right = sum(int(np.sum(np.argmax(tables.model(np.array(order[:k]), 9).partial_scores(Xf)[:, -1], axis=1)
                               == t)) for tables, Xf, t in parts)
        assert small.static_curve_[k] == right / 1199, k
    best = max(small.static_curve_.values())
    assert small.budget_ == min(k for k, v in small.static_curve_.items() if v >= best - 0.01)
    large = NaiveBayesBudget(bins="mean-std", early_stopping=False).fit(
        X[:1000], y[:1000], eval_set=(X[1000:1200], y[1000:1200]))
    greedy = NaiveBayesBudget(bins="mean-std", ordering="greedy", early_stopping=False).fit(
        X[:1000], y[:1000], eval_set=(X[1000:1200], y[1000:1200]))
    assert large.ordering_.tolist() == greedy.ordering_.tolist()
    assert sorted(large.static_curve_) == list(range(1, 10))


def test_a_class_under_five_pooled_rows_falls_back_to_ig_and_the_coarse_grid() -> None:
    X, y = k_class(1300, seed=5)
    y[[3, 1100, 1150]] = 4  # a fifth class of three rows: no five folds
    Xtr, ytr, Xva, yva = X[:1000], y[:1000], X[1000:1199], y[1000:1199]
    small = NaiveBayesBudget(bins="mean-std", early_stopping=False).fit(Xtr, ytr, eval_set=(Xva, yva))
    ig = NaiveBayesBudget(bins="mean-std", ordering="ig", tolerance=0.0, early_stopping=False).fit(
        Xtr, ytr, eval_set=(Xva, yva))
    assert small.ordering_.tolist() == ig.ordering_.tolist()
    assert sorted(small.static_curve_) == sorted({min(k, 9) for k in BUDGET_GRID})
    best = max(small.static_curve_.values())
    assert small.budget_ == min(k for k, v in small.static_curve_.items() if v == best)


def test_two_classes_auto_is_the_ig_model() -> None:
    X, y = k_class(1600, seed=4, k=2)
    a = NaiveBayesBudget().fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:])).model_.to_dict()
    b = NaiveBayesBudget(ordering="ig").fit(X[:1000], y[:1000], eval_set=(X[1000:], y[1000:])).model_.to_dict()
    for key in a:
        assert np.asarray(a[key]).tobytes() == np.asarray(b[key]).tobytes(), key


def test_digits_defaults_read_under_half_the_features_within_a_point() -> None:
    """Digits (10 classes, 400 validation rows): the greedy order and the tolerance rule keep at most half
    of the 64 pixels, at test accuracy no more than one point under the NB of every pixel."""
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))
    tr, va, te = idx[:1000], idx[1000:1400], idx[1400:]
    cheap = NaiveBayesBudget(early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    every = NaiveBayesBudget(budget=64, ordering="ig", early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    assert cheap.budget_ <= 32
    assert np.mean(cheap.predict(X[te]) == y[te]) >= np.mean(every.predict(X[te]) == y[te]) - 0.01


def test_cli_tolerance(tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", "sklearn:digits", "--tolerance", "1.5", "-o", out)
    assert code == 2 and "--tolerance" in err and not out.exists()
    code, _, err = run("train", "nb-static", "sklearn:digits", "--tolerance", "0.2", "-o", out)
    assert code == 0, err
    loose = fmt.load(out).meta["training"]
    code, _, err = run("train", "nb-static", "sklearn:digits", "-o", out)
    assert code == 0, err
    default = fmt.load(out).meta["training"]
    assert loose["tolerance"] == 0.2 and loose["budget_chosen"] < default["budget_chosen"]
