"""Tests for CSCC-style cascades and the early-exit baseline (compiler/trees/cascade.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from compiler.trees.cascade import EarlyExitEnsemble, balanced_weights, learn_exit_thresholds
from compiler.trees.cost_tree import ensemble_to_ir, ir_leaves, ir_scores, ir_tree_features
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.miser import GreedyMiserClassifier

YAHOO_COSTS = np.array([1, 5, 10, 20, 50, 100, 150, 200], dtype=float)


@pytest.fixture(scope="module")
def cancer() -> dict:
    X, y = load_breast_cancer(return_X_y=True)
    costs = np.random.default_rng(0).choice(YAHOO_COSTS, size=X.shape[1])
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=0.3, random_state=0, stratify=ytr)
    return {"Xa": Xa, "ya": ya, "Xv": Xv, "yv": yv, "Xte": Xte, "yte": yte, "costs": costs}


def weighted_acc(pred: np.ndarray, y: np.ndarray) -> float:
    w = balanced_weights(np.searchsorted(np.unique(y), y), np.unique(y).size)
    return float(np.sum(w * (pred == y)) / np.sum(w))


def check_validation_guarantee(model, X: np.ndarray, y: np.ndarray) -> None:
    d = model.predict_detailed(X)
    full = model.predict_full(X)
    assert weighted_acc(d["label"], y) >= weighted_acc(full, y) - 1e-12
    exited = d["exit_stage"] < len(model.stage_end_) - 1
    if exited.any():
        assert np.mean(d["label"][exited] == full[exited]) >= 0.9975


def test_exit_thresholds_known_answer() -> None:
    # one early stage, 8 validation inputs; full model right everywhere except input 7
    s0 = np.array([3.0, 2.0, 1.0, 0.5, -0.5, -1.0, -2.0, -3.0], dtype=np.float32)[:, None]
    y = np.array([1, 1, 0, 1, 0, 0, 0, 1])
    full = np.array([1, 1, 0, 1, 0, 0, 0, 0])
    w = np.ones(8)
    up, lo = learn_exit_thresholds([s0, s0], full, y, w, min_agreement=0.9975)
    # top two agree with the full model and are right; the third (score 1.0) would disagree
    assert up[0] == np.float32(1.0)
    # the most negative (-3.0) is wrong for both early and full model and agrees with full:
    # prefix {-3,-2,-1,-0.5} all agree and are as accurate as the full model
    assert lo[0] == np.nextafter(np.float32(0.0), np.float32(1.0))
    assert up[1] == np.inf and lo[1] == -np.inf


def test_exit_thresholds_never_cut_between_ties() -> None:
    s0 = np.array([2.0, 1.0, 1.0, -1.0], dtype=np.float32)[:, None]
    y = np.array([1, 1, 0, 0])
    full = np.array([1, 1, 0, 0])
    up, lo = learn_exit_thresholds([s0, s0], full, y, np.ones(4))
    assert up[0] == np.float32(1.0)  # only the 2.0 input can exit; the tied pair cannot be split


def test_exit_thresholds_never_exit_tied_best_scores() -> None:
    # three classes: rows 2 and 3 tie on their two best partial scores (margin 0), and the tie's argmax (class 0)
    # agrees with the full model by chance; only the rows with a positive margin may exit
    s0 = np.array([[2.0, 0.0, 0.0], [0.0, 1.5, 0.0], [0.5, 0.5, 0.0], [0.3, 0.3, 0.0]], dtype=np.float32)
    y = np.array([0, 1, 0, 0])
    up, lo = learn_exit_thresholds([s0, s0], y.copy(), y, np.ones(4))
    assert up[0] >= 0 and lo[0] == -np.inf
    margin = np.array([2.0, 1.5, 0.0, 0.0], dtype=np.float32)
    np.testing.assert_array_equal(margin > up[0], [True, True, False, False])


def test_cscc_report_and_early_reject_only(cancer: dict) -> None:
    c = CsccCascadeClassifier(n_stages=3, n_trees=15, lam=0.3, pool_lambdas=(0.0, 3.0), costs=cancer["costs"],
                              tree_eval_cost=0.5, n_rounds=1)
    c.fit(cancer["Xa"], cancer["ya"], eval_set=(cancer["Xv"], cancer["yv"]))
    d = c.predict_detailed(cancer["Xte"])
    n = len(cancer["Xte"])
    assert c.exit_histogram(cancer["Xte"]).sum() == n
    np.testing.assert_array_equal(d["trees_evaluated"], c.stage_end_[d["exit_stage"]])
    ir = c.to_tree_ensemble()
    assert ir["stage_end"][-1] == ir["roots"].size
    assert np.all(ir["exit_upper"] == np.inf) and ir["exit_lower"][-1] == -np.inf  # early reject only
    # the running score after stage k is phi(x)' beta^k + b^k (float32 sums of the scaled trees)
    pool = ensemble_to_ir(c.pool_, [0] * len(c.pool_), np.zeros(1), ir["n_features"], c.costs_, 0.0)
    phi = pool["value"][ir_leaves(pool, cancer["Xte"])].astype(np.float64)
    for k, end in enumerate(c.stage_end_):
        s = ir_scores(ir, cancer["Xte"], n_trees=int(end))[:, 0]
        np.testing.assert_allclose(s, phi @ c.coef_[k] + c.intercept_[k], atol=1e-4)
    per_tree = ir_tree_features(ir, cancer["Xte"])
    for i in range(0, n, 9):
        t = d["trees_evaluated"][i]
        read = np.zeros(ir["n_features"], dtype=bool)
        for k in range(t):
            read |= per_tree[k][i]
        assert d["features_read"][i] == read.sum()
        assert d["cost"][i] == pytest.approx(cancer["costs"][read].sum() + 0.5 * t)
    assert np.mean(d["label"] == cancer["yte"]) > 0.85


def test_early_exit_baseline(cancer: dict) -> None:
    m = GreedyMiserClassifier(lam=0.0, n_trees=40, costs=cancer["costs"], tree_eval_cost=1.0)
    m.fit(cancer["Xa"], cancer["ya"])
    e = EarlyExitEnsemble(m, every=5).fit(cancer["Xv"], cancer["yv"])
    T = m.n_trees_
    assert e.stage_end_[-1] == T and np.all(np.diff(e.stage_end_) > 0)
    check_validation_guarantee(e, cancer["Xv"], cancer["yv"])
    d = e.predict_detailed(cancer["Xte"])
    assert np.all(d["cost"] <= m.test_time_cost(cancer["Xte"]) + 1e-9)
    assert d["trees_evaluated"].mean() < T


def test_cscc_is_deterministic(cancer: dict) -> None:
    kw = dict(n_stages=2, n_trees=10, lam=0.3, costs=cancer["costs"], random_state=7, n_rounds=1)
    ia = CsccCascadeClassifier(**kw).fit(cancer["Xa"], cancer["ya"]).to_tree_ensemble()
    ib = CsccCascadeClassifier(**kw).fit(cancer["Xa"], cancer["ya"]).to_tree_ensemble()
    for k in ia:
        np.testing.assert_array_equal(ia[k], ib[k])


def test_bad_parameters_rejected(cancer: dict) -> None:
    with pytest.raises(ValueError):
        CsccCascadeClassifier(n_stages=0).fit(cancer["Xa"], cancer["ya"])
    with pytest.raises(ValueError):
        CsccCascadeClassifier(lam=-1.0).fit(cancer["Xa"], cancer["ya"])
    with pytest.raises(ValueError, match="binary"):
        CsccCascadeClassifier().fit(np.zeros((9, 2)), np.arange(9) % 3)
