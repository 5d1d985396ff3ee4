"""The small-model trainers fit under one BLAS thread (benchmarks/blas_threads.py: their many small dense
solves run several times slower with a multi-threaded BLAS, the more so on a busy machine) and give the same
model as with the default thread count; the caller's limit is restored afterwards."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.naive_bayes import GaussianNB
from threadpoolctl import threadpool_info, threadpool_limits

import compiler.cstc.train as cstc_train
import compiler.gated.adapt_lin as adapt_lin
import compiler.gated.l1_gate as l1_gate
import compiler.trees.cscc as cscc
from compiler.blas_threads import one_blas_thread
from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from compiler.skyline.classifier import SkylineClassifier
from compiler.skyline.linear_base import StandardLogistic
from compiler.trees.cscc import CsccCascadeClassifier

SEEN: list[int] = []


def blas_threads() -> int:
    return max((int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"), default=0)


def record_threads(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Replace ``owner.name`` by a wrapper that records the BLAS thread count of each call; returns the record."""
    seen: list[int] = []
    real = getattr(owner, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return seen


@pytest.fixture
def two_threads() -> Any:
    """The caller's BLAS at two threads (skip where the BLAS cannot have two: nothing to hold down)."""
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("this BLAS runs one thread only")
        yield


class RecordingNB(ClassifierMixin, BaseEstimator):
    """GaussianNB that records the BLAS thread count each fit runs under."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> RecordingNB:
        SEEN.append(blas_threads())
        self.nb_ = GaussianNB().fit(X, y)
        self.classes_ = self.nb_.classes_
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.nb_.predict(X)


def data(k: int = 2, n: int = 240, d: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) + (k > 2) * (X[:, 2] > 0.8).astype(int)
    return X, y


def test_skyline_search_fits_under_one_thread(two_threads: None) -> None:
    SEEN.clear()
    X, y = data()
    SkylineClassifier(base=RecordingNB(), method="greedy-acc", max_sets=12).fit(X, y)
    assert SEEN and set(SEEN) == {1}, SEEN  # every set of the search and every indexed model's refit
    assert blas_threads() == 2  # the caller's limit is back


@pytest.mark.parametrize("cls, module", [(AdaptLinClassifier, adapt_lin), (L1GateClassifier, l1_gate)])
def test_gated_linear_fits_under_one_thread(two_threads: None, cls: type, module: Any,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_threads(monkeypatch, module, "prepare_gated")
    X, y = data(k=3)
    m = cls(p_full=0.3, gamma=0.1, random_state=0).fit(X, y)
    assert seen == [1]
    assert blas_threads() == 2
    if cls is L1GateClassifier:  # the sweep's re-gating at another P refits the gate: also one thread
        gates = record_threads(monkeypatch, L1GateClassifier, "_fit_gate")
        m.with_p_full(X, y, 0.6)
        assert gates == [1]


def test_linear_base_model_does_not_depend_on_the_thread_count(two_threads: None) -> None:
    X, y = data(k=3, n=400, d=12)
    ref = StandardLogistic().fit(X, y)
    with threadpool_limits(limits=1, user_api="blas"):
        one = StandardLogistic().fit(X, y)
    np.testing.assert_array_equal(ref.coef_, one.coef_)
    np.testing.assert_array_equal(ref.intercept_, one.intercept_)


def test_one_blas_thread_gives_the_limit_back_when_fit_raises(two_threads: None) -> None:
    inside: list[int] = []

    @one_blas_thread
    def fit(x: int) -> int:
        """Fits."""
        inside.append(blas_threads())
        if x < 0:
            raise ValueError("bad x")
        return 2 * x

    assert fit(3) == 6 and fit.__doc__ == "Fits." and fit.__name__ == "fit"
    with pytest.raises(ValueError, match="bad x"):
        fit(-1)
    assert inside == [1, 1]
    assert blas_threads() == 2


@pytest.mark.parametrize("k", [2, 3])
def test_cstc_fits_under_one_thread(two_threads: None, k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_threads(monkeypatch, cstc_train, "minimize")
    X, y = data(k=k)
    CSTCClassifier(depth=2, max_iter=2, n_starts=1, random_state=0).fit(X, y)
    assert seen and set(seen) == {1}, seen  # every L-BFGS-B solve of the binary tree or of the K-class one
    assert blas_threads() == 2


def test_cscc_fits_under_one_thread(two_threads: None, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = record_threads(monkeypatch, cscc, "minimize")
    X, y = data(n=400)
    CsccCascadeClassifier(n_stages=2, n_trees=5, lam=1.0, n_rounds=1, random_state=0).fit(X, y)
    assert seen and set(seen) == {1}, seen
    assert blas_threads() == 2
