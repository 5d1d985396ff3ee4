"""Tests for the cost-aware CART fitter (compiler/trees/cost_tree.py)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.trees.cost_tree import Binner, CostTreeFitter, ensemble_to_ir, ir_scores, ir_tree_features


def test_thresholds_reproduce_bins_exactly_in_float32() -> None:
    rng = np.random.default_rng(1)
    X = np.column_stack([
        rng.normal(size=3000),  # many distinct values -> quantile bins
        rng.integers(0, 5, size=3000),  # few distinct values -> one bin each
        np.nextafter(np.float32(1.0), np.float32(2.0)) * rng.integers(0, 2, size=3000),  # adjacent floats
        np.full(3000, 7.0),  # constant -> no threshold
    ]).astype(np.float32)
    X[:10, 0] = np.float32(1.0)
    X[10:20, 0] = np.nextafter(np.float32(1.0), np.float32(2.0))
    b = Binner(max_bins=64).fit(X)
    codes = b.transform(X)
    assert b.thresholds_[3].size == 0
    assert b.thresholds_[1].size == 4
    assert b.thresholds_[0].size <= 63
    for j, thr in enumerate(b.thresholds_):
        assert thr.dtype == np.float32
        assert np.all(np.diff(thr) > 0)
        for k, t in enumerate(thr):
            np.testing.assert_array_equal(X[:, j] <= t, codes[:, j] <= k)


def test_obvious_split_known_answer() -> None:
    # y depends on x0 only: threshold between 2 and 3; x1 is noise
    x0 = np.array([0, 1, 2, 3, 4, 5], dtype=np.float32)
    x1 = np.array([5, 3, 1, 4, 0, 2], dtype=np.float32)
    y = np.array([1.0, 1.0, 1.0, 4.0, 4.0, 4.0])
    f = CostTreeFitter.from_data(np.column_stack([x0, x1]))
    fit = f.fit(y, max_depth=1)
    t = fit.tree
    assert t.feature[0] == 0
    assert t.threshold[0] == np.float32(2.5)
    assert t.value[t.left[0]] == 1.0 and t.value[t.right[0]] == 4.0
    np.testing.assert_array_equal(fit.new_features, [0])
    # a perfect split leaves nothing to gain: depth 3 adds no more nodes
    assert f.fit(y, max_depth=3).tree.n_nodes == 3


def test_weighted_leaf_values_and_gain() -> None:
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    y = np.array([0.0, 2.0, 10.0, 10.0])
    w = np.array([3.0, 1.0, 1.0, 1.0])
    fit = CostTreeFitter.from_data(X).fit(y, w, max_depth=2)
    t = fit.tree
    assert t.feature[0] == 0
    assert t.value[t.left[0]] == pytest.approx(0.5)  # (3*0 + 1*2) / 4
    assert t.value[t.right[0]] == pytest.approx(10.0)


def _two_feature_problem() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 400
    y01 = rng.integers(0, 2, size=n)
    x_exp = y01 + 0.05 * rng.normal(size=n)  # perfect, expensive
    flip = rng.random(n) < 0.2
    x_cheap = np.where(flip, 1 - y01, y01) + 0.05 * rng.normal(size=n)  # 80% right, cheap
    return np.column_stack([x_exp, x_cheap]), 2.0 * y01 - 1.0


def test_penalty_forbids_expensive_feature() -> None:
    X, y = _two_feature_problem()
    f = CostTreeFitter.from_data(X)
    costs = np.array([100.0, 1.0])
    assert f.fit(y, max_depth=1, penalty=0.0, costs=costs).tree.feature[0] == 0
    # gain of the perfect split ~1.0 (mean loss 1 -> 0), of the cheap one ~0.64
    assert f.fit(y, max_depth=1, penalty=0.01, costs=costs).tree.feature[0] == 1
    # once the expensive feature is used (by an earlier tree), it is free again
    used = np.array([True, False])
    assert f.fit(y, max_depth=1, penalty=0.01, costs=costs, used=used).tree.feature[0] == 0
    # a penalty beyond any gain gives a single leaf at the mean
    fit = f.fit(y, max_depth=3, penalty=10.0, costs=costs)
    assert fit.tree.n_nodes == 1
    assert fit.tree.value[0] == pytest.approx(y.mean())
    assert fit.new_features.size == 0


def test_feature_is_free_inside_the_tree_once_chosen() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(size=600)
    y = np.floor(x * 4)  # needs three cuts on the same feature
    f = CostTreeFitter.from_data(x[:, None])
    fit = f.fit(y, max_depth=2, penalty=0.5, costs=np.array([1.0]))
    # the root pays the cost; the two children reuse the feature for free
    assert np.count_nonzero(fit.tree.feature == 0) == 3


def test_apply_matches_training_partition_and_ir_agrees() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 6)).astype(np.float32)
    y = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2])
    f = CostTreeFitter.from_data(X, max_bins=16)
    fit = f.fit(y, max_depth=4)
    np.testing.assert_array_equal(fit.tree.apply(X), fit.leaf_of_sample)
    tree = fit.tree
    tree.value = tree.value.astype(np.float32).astype(np.float64)
    ir = ensemble_to_ir([tree], [0], np.zeros(1), 6, np.ones(6))
    s = ir_scores(ir, X)[:, 0]
    np.testing.assert_array_equal(s, tree.value[fit.leaf_of_sample].astype(np.float32))
    read = ir_tree_features(ir, X)[0]
    assert read.sum(axis=1).max() <= 4


def test_min_samples_leaf_respected() -> None:
    X = np.arange(20, dtype=np.float64)[:, None]
    y = np.zeros(20)
    y[-1] = 100.0
    fit = CostTreeFitter.from_data(X).fit(y, max_depth=1, min_samples_leaf=5)
    counts = np.bincount(fit.leaf_of_sample)
    assert counts[counts > 0].min() >= 5
