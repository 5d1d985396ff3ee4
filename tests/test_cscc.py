"""CSCC (xu2014 section 4-5) on a task with a known ideal cascade: the cheap feature x0 decides half
of the inputs (x0 < 0: always class 0), the other half needs the expensive feature x1 (class = x1 > 0).
The ideal cascade reads x0 for everyone, rejects the x0 < 0 half at stage 0 and pays x1 (cost 100)
only for the rest: mean cost about 1 + 100 / 2 instead of 101."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.trees.cscc import CsccCascadeClassifier

COSTS = np.array([1.0, 100.0, 1.0, 1.0])


def _task(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.where(X[:, 0] < 0, 0, (X[:, 1] > 0).astype(np.int64))
    return X, y


@pytest.fixture(scope="module")
def fitted() -> tuple[CsccCascadeClassifier, np.ndarray, np.ndarray]:
    # 2000 rows (500 for validation): the exit calibration refuses exits it cannot check; with 600 rows
    # (150 for validation) one validation row where stage 0 and the last stage disagree (stage 0 right)
    # was already above its margin and every input went on to the last stage
    X, y = _task(2000, 0)
    c = CsccCascadeClassifier(n_stages=3, n_trees=10, lam=0.3, costs=COSTS, pool_lambdas=(0.0, 3.0),
                              random_state=0).fit(X, y)
    Xte, yte = _task(2000, 1)
    return c, Xte, yte


def test_cheap_half_exits_early_and_the_rest_goes_on(fitted: tuple) -> None:
    c, Xte, yte = fitted
    d = c.predict_detailed(Xte)
    exits = c.exit_histogram(Xte)
    # not [n, 0, 0] (every input rejected at stage 0) and not everything sent to the last stage
    assert 0.35 * len(yte) <= exits[0] <= 0.65 * len(yte), exits
    assert exits[0] < len(yte)
    early = d["exit_stage"] == 0
    # what stage 0 rejects is the easy half, answered 0 without the expensive feature
    assert np.mean(Xte[early, 0] < 0) >= 0.95
    assert np.all(d["label"][early] == 0)
    assert np.mean(d["label"] == yte) >= 0.97
    assert d["cost"].mean() <= 60.0  # the full model costs 101 for every input
    assert d["cost"][early].max() < 100.0  # no early-rejected input paid for x1


def test_the_paper_sharpness_degenerates_here() -> None:
    """Documents why exit_sharpness exists: with the paper's sigma(s - theta) the soft objective
    cannot separate the halves (stage scores live in about [-1.5, 1.5])."""
    X, y = _task(600, 0)
    c = CsccCascadeClassifier(n_stages=3, n_trees=10, lam=0.3, costs=COSTS, pool_lambdas=(0.0, 3.0),
                              exit_sharpness=1.0, random_state=0).fit(X, y)
    Xte, _ = _task(2000, 1)
    exits = c.exit_histogram(Xte)
    assert exits.max() == len(Xte)  # one stage answers for everything


def test_exit_sharpness_is_checked() -> None:
    X, y = _task(50, 0)
    with pytest.raises(ValueError, match="exit_sharpness"):
        CsccCascadeClassifier(exit_sharpness=0.0).fit(X, y)


def test_calibration_only_lowers_the_learned_thresholds(fitted: tuple) -> None:
    c, _, _ = fitted
    K = len(c.stage_end_)
    for k in range(K - 1):
        assert c.lower_[k] <= np.float32(c.theta_[k]) or not np.isfinite(c.theta_[k])
    assert c.lower_[K - 1] == -np.inf and np.all(c.upper_ == np.inf)  # early reject only, last stage answers


# ------------------------------------------------- the last stage and the done-when of issue 12 ----
def _cost_sensitive(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x0 (cost 1) decides the clear cases (|x0| > 0.8: class x0 > 0); the rest needs x1 + x2 (cost 100
    each); 5% label noise; x3..x5 are noise of cost 1, 10, 50."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    y = np.where(np.abs(X[:, 0]) > 0.8, X[:, 0] > 0, X[:, 1] + X[:, 2] > 0).astype(np.int64)
    flip = rng.random(n) < 0.05
    return X, np.where(flip, 1 - y, y)


SENSITIVE_COSTS = np.array([1.0, 100.0, 100.0, 1.0, 10.0, 50.0])
# the pool's trees: the paper's depth-3 stage-wise regression (miser's defaults are LightGBM-like)
PAPER_SHAPE = {"max_depth": 3, "max_bins": 64, "min_samples_leaf": 1, "n_iter_no_change": None}


def test_the_last_stage_is_greedy_miser_lambda_0() -> None:
    """Known answer: with final_stage='boosted' the last stage is the pool's lambda = 0 run, i.e. the Greedy
    Miser lambda = 0 model (squared loss, same trees, same validation prefix) on the same rows."""
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    X, y = _cost_sensitive(900, 0)
    Xtr, ytr, Xva, yva = X[:600], y[:600], X[600:], y[600:]
    m = GreedyMiserClassifier(lam=0.0, n_trees=30, loss="squared", costs=SENSITIVE_COSTS, **PAPER_SHAPE).fit(
        Xtr, ytr, eval_set=(Xva, yva))
    c = CsccCascadeClassifier(n_trees=30, lam=1.0, costs=SENSITIVE_COSTS, pool_lambdas=(0.0, 30.0)).fit(
        Xtr, ytr, eval_set=(Xva, yva))
    Xte, _ = _cost_sensitive(2000, 1)
    assert int(c.final_weights_.sum()) == m.n_trees_
    assert np.all(c.coef_[-1] == c.final_weights_) and c.intercept_[-1] == pytest.approx(float(m.base_score_[0]))
    # the whole cascade without exits scores as miser (float32 sums in another order: tiny differences)
    from compiler.trees.cost_tree import ir_staged_scores  # noqa: PLC0415

    full = ir_staged_scores(c.ir_, Xte)[0][:, 0]
    np.testing.assert_allclose(full, m.decision_function(Xte), atol=1e-4)
    assert np.mean(c.predict_full(Xte) == m.predict(Xte)) >= 0.999


def test_exits_only_where_they_agree_with_the_last_stage() -> None:
    """Known answer of the calibration: on the validation rows the exits lose at most exit_tolerance * n
    rows (net of the z sqrt(D) margin) against the last stage; with exit_tolerance 0 and z 0 no exited
    validation row is answered wrongly where the last stage is right."""
    X, y = _cost_sensitive(900, 0)
    Xtr, ytr, Xva, yva = X[:600], y[:600], X[600:], y[600:]
    c = CsccCascadeClassifier(n_trees=30, lam=1.0, costs=SENSITIVE_COSTS, pool_lambdas=(0.0, 30.0),
                              exit_tolerance=0.0, exit_z=0.0).fit(Xtr, ytr, eval_set=(Xva, yva))
    d = c.predict_detailed(Xva)
    early = d["exit_stage"] < len(c.stage_end_) - 1
    assert early.any()  # the clear cases leave early
    final_ok = c.predict_full(Xva) == yva
    assert not np.any(early & final_ok & (d["label"] != yva))


def test_cscc_within_one_point_of_miser_lambda_0_at_lower_cost() -> None:
    """Regression (issue 12's done-when) on a generated cost-sensitive set: the defaults (lambda chosen on
    validation) stay within 1 point of Greedy Miser lambda = 0 on held-out rows and read less."""
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    X, y = _cost_sensitive(1000, 2)
    Xtr, ytr, Xva, yva = X[:600], y[:600], X[600:], y[600:]
    Xte, yte = _cost_sensitive(4000, 3)
    m = GreedyMiserClassifier(lam=0.0, n_trees=100, loss="squared", costs=SENSITIVE_COSTS, **PAPER_SHAPE).fit(
        Xtr, ytr, eval_set=(Xva, yva))
    c = CsccCascadeClassifier(lam=None, costs=SENSITIVE_COSTS, pool_lambdas=(0.0, 3.0, 30.0)).fit(
        Xtr, ytr, eval_set=(Xva, yva))
    acc_m, acc_c = np.mean(m.predict(Xte) == yte), np.mean(c.predict(Xte) == yte)
    cost_m, cost_c = float(np.mean(m.test_time_cost(Xte))), c.mean_cost(Xte)
    assert acc_c >= acc_m - 0.01, (acc_c, acc_m)
    # early reject only: stage 0 may answer the x0 < -0.8 fifth of the rows without x1, x2 (at most about
    # 1 - 200 * 0.2 / 262 = 0.85 of miser's cost); the calibrated exits keep the safest part of it
    assert cost_c < 0.95 * cost_m, (cost_c, cost_m)
    assert c.lambda_chosen_ in (0.1, 1.0, 10.0) and len(c.lambda_curve_) == 3
