"""Tests for Greedy Miser (compiler/trees/miser.py)."""

from __future__ import annotations

import numpy as np
import pytest
from boost_reference import boost
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split

from compiler.costs import FeatureCosts
from compiler.trees.miser import GreedyMiserClassifier, sweep


def cheap_noisy_expensive_informative(
    n: int = 1500, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four cheap features (cost 1) that are noisy views of the label, four
    expensive ones (cost 100) that are clean views of it."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    s = 2.0 * y - 1.0
    cheap = s[:, None] * 0.5 + rng.normal(size=(n, 4)) * 1.5
    expensive = s[:, None] * 2.0 + rng.normal(size=(n, 4)) * 0.7
    X = np.column_stack([cheap, expensive])
    costs = np.array([1.0] * 4 + [100.0] * 4)
    return X, y, costs


@pytest.fixture(scope="module")
def cancer() -> tuple[np.ndarray, ...]:
    X, y = load_breast_cancer(return_X_y=True)
    return tuple(train_test_split(X, y, test_size=0.3, random_state=0, stratify=y))


@pytest.mark.parametrize(("loss", "depth", "leaves"), [("squared", 3, None), ("logistic", 3, None),
                                                       ("logistic", None, 8), ("squared", 4, 6)])
def test_lambda_zero_is_plain_gradient_boosting(cancer: tuple, loss: str, depth: int | None,
                                                leaves: int | None) -> None:
    """Scores equal an independent numpy Newton booster (tests/boost_reference.py) bit for bit."""
    Xtr, Xte, ytr, yte = cancer
    Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=0.25, random_state=1, stratify=ytr)
    m = GreedyMiserClassifier(lam=0.0, n_trees=80, max_depth=depth, max_leaves=leaves, step=0.1, loss=loss)
    m.fit(Xa, ya, eval_set=(Xv, yv))
    ref = boost(Xa, ya, m.n_iter_, loss=loss, step=0.1, depth=depth or 16, leaves=leaves, X_eval=Xte)
    np.testing.assert_array_equal(m.decision_function(Xte), ref)
    np.testing.assert_array_equal(m.predict(Xte), (ref > 0).astype(int))
    # sanity bound: not far from scikit-learn's gradient boosting on the same data
    sk = GradientBoostingClassifier(n_estimators=m.n_iter_, max_depth=depth or 3, learning_rate=0.1, random_state=0)
    sk.fit(Xa, ya)
    assert m.score(Xte, yte) >= sk.score(Xte, yte) - 0.04


def test_large_lambda_uses_only_cheap_features() -> None:
    X, y, costs = cheap_noisy_expensive_informative()
    free = GreedyMiserClassifier(lam=0.0, n_trees=40, costs=costs).fit(X, y)
    assert np.any(free.features_used_ >= 4)  # unconstrained model wants the informative features
    frugal = GreedyMiserClassifier(lam=10.0, n_trees=40, costs=costs).fit(X, y)
    assert frugal.features_used_.size > 0
    assert np.all(frugal.features_used_ < 4)
    assert np.all(frugal.test_time_cost(X) <= 4.0)
    assert frugal.score(X, y) > 0.6  # still learns from the cheap, noisy features


def test_cost_drops_with_lambda() -> None:
    X, y, costs = cheap_noisy_expensive_informative(seed=1)
    c = [GreedyMiserClassifier(lam=lam, n_trees=40, costs=FeatureCosts(np.column_stack(
        [costs, np.zeros(8), np.zeros(8)]))).fit(X, y).test_time_cost(X).mean() for lam in (0.0, 0.3, 20.0)]
    assert c[0] >= c[1] >= c[2]
    assert c[0] > c[2]


def test_ir_scores_match_a_tree_walk_and_costs_match_paths(cancer: tuple) -> None:
    Xtr, Xte, ytr, _ = cancer
    costs = np.arange(1, Xtr.shape[1] + 1, dtype=float)
    m = GreedyMiserClassifier(lam=0.5, n_trees=30, costs=costs, tree_eval_cost=0.25).fit(Xtr, ytr)
    ir = m.to_tree_ensemble()
    assert ir["feature"].dtype == np.int32 and ir["threshold"].dtype == np.float32
    assert ir["value"].dtype == np.float32 and ir["roots"].size == m.n_trees_
    X32 = Xte.astype(np.float32)
    got_s = m.decision_function(Xte)
    got_c = m.test_time_cost(Xte)
    for i in range(0, len(X32), 7):
        s = ir["base_score"][0]
        read = set()
        for root in ir["roots"]:
            node = int(root)
            while ir["feature"][node] >= 0:
                f = int(ir["feature"][node])
                read.add(f)
                node = int(ir["left"][node] if X32[i, f] <= ir["threshold"][node] else ir["right"][node])
            s = np.float32(s + ir["value"][node])
        assert got_s[i] == s
        assert got_c[i] == pytest.approx(sum(costs[f] for f in read) + 0.25 * m.n_trees_)


def test_multiclass_log_on_digits() -> None:
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    m = GreedyMiserClassifier(lam=0.0, n_trees=25, loss="multiclass-log", step=0.3).fit(Xtr, ytr)
    ir = m.to_tree_ensemble()
    assert ir["n_outputs"] == 10
    assert ir["roots"].size == 10 * m.n_iter_
    assert m.score(Xte, yte) > 0.9
    np.testing.assert_allclose(m.predict_proba(Xte[:5]).sum(axis=1), 1.0)


def test_deterministic_with_fixed_seed(cancer: tuple) -> None:
    Xtr, Xte, ytr, _ = cancer
    a = GreedyMiserClassifier(lam=0.3, n_trees=20, random_state=3).fit(Xtr, ytr).to_tree_ensemble()
    b = GreedyMiserClassifier(lam=0.3, n_trees=20, random_state=3).fit(Xtr, ytr).to_tree_ensemble()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_sweep_keeps_cheapest_model_within_tolerance() -> None:
    X, y, costs = cheap_noisy_expensive_informative(n=1200, seed=2)
    res = sweep(X, y, [0.03, 0.3, 3.0, 30.0], tolerance=0.01, n_trees=30, costs=costs)
    assert res.reference.lam == 0.0
    ok = [p for p in res.points
          if p.validation_accuracy >= res.reference.validation_accuracy - 0.01]
    assert res.chosen in ok
    assert res.chosen.validation_cost == min(p.validation_cost for p in ok)
    assert res.chosen.validation_cost <= res.reference.validation_cost


def test_bad_parameters_rejected() -> None:
    X, y, _ = cheap_noisy_expensive_informative(n=100)
    with pytest.raises(ValueError):
        GreedyMiserClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError):
        GreedyMiserClassifier(costs=np.ones(3)).fit(X, y)
    with pytest.raises(ValueError):
        GreedyMiserClassifier(loss="logistic").fit(X, np.arange(100) % 3)


def test_ir_agrees_with_the_runtime_evaluators(cancer: tuple) -> None:
    """The emitted IR loads into pyruntime and its numpy and C evaluators give our answers exactly."""
    from pyruntime.trees import ensemble as trees_mod

    Xtr, Xte, ytr, _ = cancer
    costs = np.random.default_rng(0).choice([1.0, 5.0, 10.0, 20.0, 50.0, 100.0, 150.0, 200.0], Xtr.shape[1])
    m = GreedyMiserClassifier(lam=0.3, n_trees=30, costs=costs, loss="logistic").fit(Xtr, ytr)
    ens = trees_mod.TreeEnsemble.from_dict(m.to_tree_ensemble())
    for predict in (ens.predict_reference, trees_mod.CTrees(ens).predict):  # the C extension is always built
        p = predict(Xte)
        np.testing.assert_array_equal(p.label, m.predict(Xte))
        np.testing.assert_array_equal(p.score, m.decision_function(Xte))
        np.testing.assert_array_equal(p.n_read, m.features_read(Xte).sum(axis=1))
        np.testing.assert_allclose(p.cost, m.test_time_cost(Xte), rtol=1e-6)
