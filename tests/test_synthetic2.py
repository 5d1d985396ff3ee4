"""The paper's Synthetic-2 example: ADAPT-LIN reaches full accuracy at average cost 1.5, L1 needs 1.75."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.common import sweep
from compiler.gated.l1_gate import L1GateClassifier
from compiler.synthetic import make_synthetic2

P_GRID = [0.25, 0.5, 0.75]


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, ...]:
    Xtr, ytr = make_synthetic2(100, random_state=0)
    Xv, yv = make_synthetic2(100, random_state=1)
    Xte, yte = make_synthetic2(100, random_state=2)
    return Xtr, ytr, Xv, yv, Xte, yte


def test_adapt_lin_full_accuracy_at_cost_1_5(data) -> None:
    Xtr, ytr, Xv, yv, Xte, yte = data
    res = sweep(lambda p, g, f0: AdaptLinClassifier(hpc=f0, p_full=p, gamma=g), P_GRID, [0.003, 0.01],
                Xtr, ytr, Xv, yv)
    assert res.hpc_accuracy == 1.0 and res.hpc_mean_cost == 2.0
    best = res.chosen
    assert best is not None
    assert best.val_accuracy == 1.0
    assert best.val_mean_cost == pytest.approx(1.5, abs=0.02)
    m = best.model
    assert m.used_features_.tolist() == [0]
    assert np.mean(m.predict(Xte) == yte) >= 0.995
    assert m.mean_cost(Xte) == pytest.approx(1.5, abs=0.02)
    # no grid point reaches full accuracy any cheaper
    assert min(p.val_mean_cost for p in res.points if p.val_accuracy >= 0.99) == pytest.approx(1.5, abs=0.02)


def test_l1_baseline_needs_1_75(data) -> None:
    Xtr, ytr, Xv, yv, Xte, yte = data
    res = sweep(lambda p, g, f0: L1GateClassifier(hpc=f0, p_full=p, gamma=g), P_GRID, [0.0, 0.1, 0.3],
                Xtr, ytr, Xv, yv)
    best = res.chosen
    assert best is not None
    assert best.val_accuracy >= 0.99
    assert best.val_mean_cost == pytest.approx(1.75, abs=0.02)
    assert np.mean(best.model.predict(Xte) == yte) >= 0.99
    assert best.model.mean_cost(Xte) == pytest.approx(1.75, abs=0.02)
    # the L1 baseline's f1 (fitted on all rows) is right on the two outer clusters only
    f1_ok = (best.model.f1_.decide(Xtr).astype(int) == ytr).reshape(4, -1).mean(axis=1)
    np.testing.assert_array_equal(f1_ok.round(), [1.0, 0.0, 0.0, 1.0])


def test_budget_choice(data) -> None:
    Xtr, ytr, Xv, yv, _, _ = data
    res = sweep(lambda p, g, f0: AdaptLinClassifier(hpc=f0, p_full=p, gamma=g), [0.5, 0.75], [0.01],
                Xtr, ytr, Xv, yv, budget=1.6)
    assert res.chosen is not None and res.chosen.val_mean_cost <= 1.6
    curve = res.curve()
    assert [c[3] for c in curve] == sorted(c[3] for c in curve)
