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
    X, y = _task(600, 0)
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
