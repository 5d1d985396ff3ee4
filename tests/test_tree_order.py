"""Cost-ordered iterations of a boosted ensemble (compiler/trees/tree_order.py): the greedy order on known answers,
the reordering is a permutation of whole iterations (the same trees, the same sum), and the exit cascade built on
it keeps its rule."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine

from compiler.trees.cascade import EarlyExitEnsemble
from compiler.trees.cost_tree import ir_staged_scores
from compiler.trees.miser import GreedyMiserClassifier
from compiler.trees.tree_order import (
    cost_order,
    cost_ordered,
    iteration_features,
    iteration_importance,
    reorder_iterations,
    tree_nodes,
)


def by_costs(costs: list[float]):
    c = np.asarray(costs, dtype=np.float64)
    return lambda read: read @ c


def test_greedy_order_known_answer() -> None:
    """Costs 1, 10, 100. Iterations: 0 reads {2} (importance 5), 1 {0} (1), 2 {2} (0.1), 3 {1} (2). Worth per new
    cost: 1 (1/1) first, then 3 (2/10), then 0 (5/100); 2 is free once 0 has paid for feature 2."""
    feats = np.array([[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]], dtype=bool)
    imp = np.array([5.0, 1.0, 0.1, 2.0])
    assert cost_order(feats, imp, by_costs([1, 10, 100])).tolist() == [1, 3, 0, 2]
    # free iterations (nothing new to pay) come first, in boosting order; then by worth
    feats0 = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    assert cost_order(feats0, np.ones(4), by_costs([1, 10, 100])).tolist() == [1, 3, 2, 0]
    # equal costs: the order of importance
    assert cost_order(np.eye(3, dtype=bool), np.array([1.0, 3.0, 2.0]), by_costs([1, 1, 1])).tolist() == [1, 2, 0]


def test_greedy_order_charges_a_group_once() -> None:
    """Features 0 and 2 share a group of cost 50 (own costs 1, 10, 1): once feature 0 has paid for the group, feature
    2's new cost is its own 1, so the iteration reading it (importance 0.5) comes before feature 1's (importance 2,
    new cost 10)."""
    own = np.array([1.0, 10.0, 1.0])

    def cost_of(read: np.ndarray) -> np.ndarray:
        return read @ own + 50.0 * (read[:, 0] | read[:, 2])

    feats = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=bool)
    imp = np.array([100.0, 2.0, 0.5])
    assert cost_order(feats, imp, cost_of).tolist() == [0, 2, 1]
    assert cost_order(feats, imp, by_costs([51, 10, 51])).tolist() == [0, 1, 2]  # without the group


@pytest.fixture(scope="module")
def models() -> dict[str, tuple[GreedyMiserClassifier, np.ndarray]]:
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    cb = np.linspace(1.0, 30.0, Xb.shape[1])
    cw = np.linspace(1.0, 13.0, Xw.shape[1])
    out = {"binary": (GreedyMiserClassifier(lam=0.05, n_trees=25, costs=cb, random_state=0).fit(Xb, yb), Xb)}
    for form in ("separate", "shared"):
        m = GreedyMiserClassifier(lam=0.05, n_trees=12, costs=cw, class_trees=form, random_state=0).fit(Xw, yw)
        out[form] = (m, Xw)
    return out


@pytest.mark.parametrize("form", ["binary", "separate", "shared"])
def test_reordering_keeps_every_tree_and_the_sum(models: dict, form: str) -> None:
    """The cost order is a permutation of whole iterations (K trees each, outputs as before); every tree is the same
    tree, nodes contiguous; the whole ensemble's score is the same sum (float32 rounding aside); the inverse
    permutation gives back the original IR exactly."""
    model, X = models[form]
    ir = model.to_tree_ensemble()
    K = int(ir["n_outputs"])
    new, order = cost_ordered(ir, X, by_costs(list(model.costs_)))
    n_iter = ir["roots"].size // K
    assert sorted(order.tolist()) == list(range(n_iter))
    assert not np.array_equal(order, np.arange(n_iter))  # these costs move the order
    assert new["roots"][0] == 0 and np.all(np.diff(new["roots"]) > 0)
    for pos, i in enumerate(order):
        for k in range(K):
            a, b = tree_nodes(ir, i * K + k), tree_nodes(new, pos * K + k)
            assert new["tree_output"][pos * K + k] == ir["tree_output"][i * K + k]
            np.testing.assert_array_equal(new["feature"][b], ir["feature"][a])
            np.testing.assert_array_equal(new["threshold"][b], ir["threshold"][a])
            np.testing.assert_array_equal(new["value"][b], ir["value"][a])
            np.testing.assert_array_equal(new["left"][b] - b[0], np.where(ir["left"][a] >= 0, ir["left"][a] - a[0],
                                                                          -1 - b[0]))
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(ir_staged_scores(new, X32)[0], ir_staged_scores(ir, X32)[0], rtol=1e-5, atol=1e-5)
    back = reorder_iterations(new, np.argsort(order))
    for key in ("feature", "threshold", "left", "right", "value", "roots", "tree_output"):
        np.testing.assert_array_equal(back[key], ir[key])
    np.testing.assert_array_equal(iteration_features(new), iteration_features(ir)[order])
    np.testing.assert_allclose(iteration_importance(new, X32), iteration_importance(ir, X32)[order])


def test_reorder_refuses_what_is_not_a_permutation(models: dict) -> None:
    ir = models["binary"][0].to_tree_ensemble()
    n = ir["roots"].size
    for bad in (np.arange(n - 1), np.r_[np.arange(n - 1), 0], np.arange(1, n + 1)):
        with pytest.raises(ValueError, match="permutation"):
            reorder_iterations(ir, bad)


def test_cost_ordered_cascade_keeps_the_exit_rule() -> None:
    """An exit cascade on the cost order: its iterations are the model's in cost_ordered's order, its exits agree
    with the whole (reordered) ensemble on >= min_agreement of the validation rows, the whole ensemble predicts as
    the boosting-order one (float32 rounding aside), and the "boosting" order is the identity."""
    X, y = load_breast_cancer(return_X_y=True)
    costs = np.linspace(1.0, 30.0, X.shape[1])
    tr, va = np.arange(0, 400), np.arange(400, X.shape[0])
    m = GreedyMiserClassifier(lam=0.05, n_trees=30, costs=costs, random_state=0).fit(X[tr], y[tr])
    ee = EarlyExitEnsemble(m, every=1, tree_order="cost").fit(X[va], y[va])
    plain = EarlyExitEnsemble(m, every=1, tree_order="boosting").fit(X[va], y[va])
    np.testing.assert_array_equal(plain.tree_order_, np.arange(m.n_trees_))
    expect, order = cost_ordered(m.to_tree_ensemble(), X[va].astype(np.float32), by_costs(list(costs)))
    np.testing.assert_array_equal(ee.tree_order_, order)
    np.testing.assert_array_equal(ee.ir_["feature"], expect["feature"])
    d = ee.predict_detailed(X[va])
    assert np.mean(d["label"] == ee.predict_full(X[va])) >= ee.min_agreement
    assert np.mean(ee.predict_full(X) == m.predict(X)) >= 0.995
    with pytest.raises(ValueError, match="tree_order"):
        EarlyExitEnsemble(m, every=1, tree_order="random").fit(X[va], y[va])


def test_auto_keeps_the_cheaper_order() -> None:
    """tree_order="auto" fits both orders, each with its own exits, and keeps the one of lower mean cost on the rows
    the exits are learned on (fit: the validation rows; fit_folds: held out): the same thresholds, iterations and
    answers as that order fitted alone."""
    X, y = load_breast_cancer(return_X_y=True)
    costs = np.linspace(1.0, 30.0, X.shape[1])
    tr, va = np.arange(0, 400), np.arange(400, X.shape[0])
    m = GreedyMiserClassifier(lam=0.05, n_trees=30, costs=costs, random_state=0).fit(X[tr], y[tr])
    for every in (1, 3):
        one = {o: EarlyExitEnsemble(m, every=every, tree_order=o).fit(X[va], y[va]) for o in ("boosting", "cost")}
        auto = EarlyExitEnsemble(m, every=every, tree_order="auto").fit(X[va], y[va])
        cost = {o: e.mean_cost(X[va]) for o, e in one.items()}
        kept = "cost" if cost["cost"] < cost["boosting"] else "boosting"
        assert auto.tree_order_used_ == kept and one[kept].tree_order_used_ == kept
        assert auto.mean_cost(X[va]) == min(cost.values())
        np.testing.assert_array_equal(auto.tree_order_, one[kept].tree_order_)
        np.testing.assert_array_equal(auto.upper_, one[kept].upper_)
        np.testing.assert_array_equal(auto.predict_detailed(X)["score"], one[kept].predict_detailed(X)["score"])
        assert auto.tree_order == "auto"  # the parameter stays as given


def test_auto_on_folds_keeps_the_cheaper_held_out_cost() -> None:
    from compiler.options import stratified_folds

    X, y = load_breast_cancer(return_X_y=True)
    X32 = X.astype(np.float32)
    costs = np.linspace(1.0, 30.0, X.shape[1])
    folds = stratified_folds(y, 3, 0)

    def fold_model(Xf: np.ndarray, yf: np.ndarray) -> GreedyMiserClassifier:
        return GreedyMiserClassifier(lam=0.05, n_trees=15, costs=costs, validation_fraction=0.0,
                                     random_state=0).fit(Xf, yf)

    one = {o: EarlyExitEnsemble(fold_model(X32, y), every=1, tree_order=o).fit_folds(X32, y, folds, fold_model)
           for o in ("boosting", "cost")}
    auto = EarlyExitEnsemble(fold_model(X32, y), every=1, tree_order="auto").fit_folds(X32, y, folds, fold_model)
    kept = min(one, key=lambda o: (one[o].cv_["cv_cost"], o != "boosting"))
    assert auto.tree_order_used_ == kept and auto.cv_ == one[kept].cv_
    np.testing.assert_array_equal(auto.upper_, one[kept].upper_)
