"""The L1 baseline: feature choice, gate threshold budget, export agreement, validation."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.gated.common import score_f32
from compiler.gated.l1_gate import L1GateClassifier, quantile_threshold
from compiler.synthetic import make_easy_hard


def test_quantile_threshold_meets_budget_exactly() -> None:
    s = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 4.0, 0.5, 7.0], dtype=np.float32)
    for p in (0.0, 0.125, 0.25, 0.5, 0.75, 0.99):
        t = quantile_threshold(s, p)
        assert np.mean(s <= t) <= p
    assert np.mean(s <= quantile_threshold(s, 0.25)) == 0.25
    # ties: 2.0 twice, a threshold cannot split them
    assert np.mean(s <= quantile_threshold(s, 0.375)) == 0.25
    assert quantile_threshold(s, 1.0) == np.inf


def test_fit_and_export() -> None:
    X, y = make_easy_hard(n_samples=500, n_features=8, random_state=0)
    m = L1GateClassifier(p_full=0.4, gamma=0.02).fit(X, y)
    assert m.hpc_fraction(X) <= 0.4
    d = m.to_gated_dict()
    assert d["algorithm"] == "l1-gate"
    gate = d["gate"]
    easy = score_f32(X, gate["feature"], gate["weight"], gate["bias"]) > gate["decision_threshold"]
    np.testing.assert_array_equal(m.route(X), ~easy)
    assert set(d["gate"]["feature"]) <= set(m.support_) and set(d["f1"]["feature"]) <= set(m.support_)
    # a huge penalty keeps no feature: f1 is a constant and gates nothing
    none = L1GateClassifier(p_full=0.4, gamma=10.0).fit(X, y)
    assert none.support_.size == 0 and none.mean_cost(X) == 0.0
    # p_full = 1 sends everything to f0 when the gate has no feature
    allf0 = L1GateClassifier(p_full=1.0, gamma=10.0).fit(X, y)
    assert allf0.hpc_fraction(X) == 1.0 and allf0.mean_cost(X) == 8.0


def test_costs_change_the_support() -> None:
    X, y = make_easy_hard(n_samples=500, n_features=8, random_state=0)
    base = L1GateClassifier(p_full=0.4, gamma=0.05).fit(X, y)
    j = int(base.support_[0])
    costs = np.ones(8)
    costs[j] = 100.0
    dear = L1GateClassifier(p_full=0.4, gamma=0.05, costs=costs).fit(X, y)
    assert j not in dear.support_


def test_validation_and_determinism() -> None:
    with pytest.raises(ValueError, match="single class"):
        L1GateClassifier().fit(np.zeros((5, 2)), np.ones(5))
    with pytest.raises(ValueError, match="NaN|infinity"):
        L1GateClassifier().fit(np.array([[np.inf, 0.0], [1.0, 2.0]]), np.array([0, 1]))
    X, y = make_easy_hard(n_samples=300, n_features=6, random_state=2)
    a = L1GateClassifier(p_full=0.3, gamma=0.02).fit(X, y).to_gated_dict()
    b = L1GateClassifier(p_full=0.3, gamma=0.02).fit(X, y).to_gated_dict()
    for part in ("gate", "f1"):
        for key in ("feature", "weight", "bias", "decision_threshold"):
            np.testing.assert_array_equal(a[part][key], b[part][key])
