"""CSTC's leaf solves: the dual (rows' system) and the primal (columns' system) give the same minimiser, and the
trainer picks the dual on wide data only."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.cstc import ridge
from compiler.cstc.groups import GroupMap
from compiler.cstc.train import CSTCClassifier, _ridge_k


def _objective(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray,
               beta: np.ndarray, b: float) -> float:
    n = Z.shape[0]
    r = Z[:, idx] @ beta + b - ys
    return float(np.sum(w * r * r) / n + 0.5 * np.sum((Gam[idx] + ridge.DIAG_EPS) * beta**2)
                 + 0.5 * ridge.INTERCEPT_EPS * b * b)


def _gradient(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray,
              beta: np.ndarray, b: float) -> np.ndarray:
    n = Z.shape[0]
    r = Z[:, idx] @ beta + b - ys
    g_beta = (2.0 / n) * Z[:, idx].T @ (w * r) + (Gam[idx] + ridge.DIAG_EPS) * beta
    g_b = (2.0 / n) * float(np.sum(w * r)) + ridge.INTERCEPT_EPS * b
    return np.append(g_beta, g_b)


@pytest.mark.parametrize("seed", range(6))
def test_dual_and_primal_give_the_same_minimiser_on_wide_weighted_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(8, 40)), int(rng.integers(50, 200))
    Z = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)  # sparse, as the wide sets are
    ys = rng.choice([-1.0, 1.0], size=n)
    w = rng.uniform(0.0, 1.0, n)
    w[rng.random(n) < 0.2] = 0.0  # rows that do not weigh (hard routing, underflowed sigmoids)
    Gam = rng.uniform(0.01, 10.0, d)
    Gam[rng.random(d) < 0.1] = 1e4  # clamped auxiliary variables: columns all but shut
    idx = np.flatnonzero(rng.random(d) < 0.8)
    bp, cp = ridge.primal(Z, ys, w, Gam, idx)
    bd, cd = ridge.dual(Z, ys, w, Gam, idx)
    np.testing.assert_allclose(bd, bp, rtol=1e-7, atol=1e-10)
    assert cd == pytest.approx(cp, rel=1e-7, abs=1e-10)
    # and it is the minimiser: the gradient vanishes where the objective is flat
    assert np.max(np.abs(_gradient(Z, ys, w, Gam, idx, bd, cd))) < 1e-9
    assert _objective(Z, ys, w, Gam, idx, bd, cd) <= _objective(Z, ys, w, Gam, idx, bp, cp) + 1e-12


def test_solve_picks_the_dual_only_when_fewer_rows_weigh_than_there_are_columns() -> None:
    assert ridge.use_dual(10, 11)
    assert not ridge.use_dual(11, 11)
    rng = np.random.default_rng(7)
    Z, ys = rng.normal(size=(30, 20)), rng.normal(size=30)
    Gam = rng.uniform(0.1, 1.0, 20)
    idx = np.arange(20)
    w = np.ones(30)
    # 30 rows weigh against 20 columns: the primal, bit for bit
    got = ridge.solve(Z, ys, w, Gam, idx)
    want = ridge.primal(Z, ys, w, Gam, idx)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    w[12:] = 0.0  # 12 rows weigh against 20 columns: the dual, bit for bit
    got = ridge.solve(Z, ys, w, Gam, idx)
    want = ridge.dual(Z, ys, w, Gam, idx)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_a_column_zero_on_the_weighing_rows_gets_exactly_zero_in_the_dual() -> None:
    rng = np.random.default_rng(11)
    n, d = 12, 40
    Z = rng.normal(size=(n, d))
    w = np.where(np.arange(n) < 4, 0.0, 1.0)
    Z[4:, 7] = 0.0  # nonzero only where w = 0
    beta, _ = ridge.dual(Z, rng.normal(size=n), w, np.ones(d), np.arange(d))
    assert beta[7] == 0.0


def test_the_k_class_leaf_solve_takes_the_dual_on_wide_data_with_the_same_answer() -> None:
    rng = np.random.default_rng(5)
    n, d, K = 15, 60, 4
    Z = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    Y = -np.ones((n, K))
    Y[np.arange(n), rng.integers(0, K, n)] = 1.0
    w = rng.uniform(0.2, 1.0, n)
    Gam = rng.uniform(0.1, 5.0, (K, d))
    active = rng.random(d) < 0.9
    W, b = _ridge_k(Z, Y, w, Gam, active)
    idx = np.flatnonzero(active)
    assert np.all(W[:, ~active] == 0.0)
    for c in range(K):
        coef, bias = ridge.primal(Z, Y[:, c], w, Gam[c], idx)
        np.testing.assert_allclose(W[c, idx], coef, rtol=1e-7, atol=1e-10)
        assert b[c] == pytest.approx(bias, rel=1e-7, abs=1e-10)


def test_the_binary_leaf_solve_takes_the_dual_on_wide_data_with_the_same_answer() -> None:
    rng = np.random.default_rng(9)
    n, d = 20, 80
    Z = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    ys = rng.choice([-1.0, 1.0], size=n)
    w = rng.uniform(0.1, 1.0, n)
    Gam = rng.uniform(0.1, 5.0, d)
    beta, b = CSTCClassifier._weighted_ridge(Z, ys, w, Gam, np.ones(d, bool))
    idx = np.flatnonzero(np.any(Z != 0, axis=0))
    coef, bias = ridge.primal(Z, ys, w, Gam, idx)
    np.testing.assert_allclose(beta[idx], coef, rtol=1e-7, atol=1e-10)
    assert b == pytest.approx(bias, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("members", [
    [np.array([2]), np.array([0]), np.array([3]), np.array([1])],  # raw features: a permutation
    [np.array([j]) for j in range(5)],
    [np.array([0, 3]), np.array([1]), np.array([2, 3, 4])],  # the boosting trick's groups share columns
    [np.array([1]), np.array([1])],  # one-member groups on one column: the dense form sums them
])
def test_the_group_map_gives_the_dense_products_exactly(members: list[np.ndarray]) -> None:
    d = 5
    G = GroupMap(members, d)
    dense = np.zeros((len(members), d))
    for g, m in enumerate(members):
        dense[g, m] = 1.0
    np.testing.assert_array_equal(G.to_dense(), dense)
    rng = np.random.default_rng(len(members))
    v, u = rng.normal(size=d) ** 2, rng.uniform(0.1, 3.0, len(members))
    np.testing.assert_array_equal(G.sums(v), dense @ v)
    np.testing.assert_array_equal(G.spread(u), dense.T @ u)
    one_each = all(m.size == 1 for m in members) and len({int(m[0]) for m in members}) == len(members)
    assert (G.cols is not None) == one_each  # the index form only where it is exact

def test_raw_features_keep_no_dense_group_matrix() -> None:
    G = GroupMap([np.array([j]) for j in range(5000)], 5000)
    assert G.dense is None and G.cols is not None


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_wide_set_trains_through_the_dual_solve_and_learns(monkeypatch: pytest.MonkeyPatch,
                                                              n_classes: int) -> None:
    rng = np.random.default_rng(n_classes)
    n, d = 90, 600
    X = (rng.random((n, d)) < 0.05) * rng.uniform(1.0, 3.0, (n, d))
    y = rng.integers(0, n_classes, n)
    X[np.arange(n), y] += 4.0  # column c marks class c
    calls = []
    dual = ridge.dual

    def counted(*args: object) -> tuple[np.ndarray, float]:
        calls.append(1)
        return dual(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ridge, "dual", counted)
    est = CSTCClassifier(depth=2, n_starts=1, max_iter=3, random_state=0).fit(X[:60], y[:60],
                                                                              eval_set=(X[60:], y[60:]))
    assert calls, "60 training rows against 600 columns: the leaves solve through the rows"
    assert est._group_matrix(d).dense is None
    assert np.mean(est.predict(X[60:]) == y[60:]) >= 0.9
