"""The gated estimators' per-row cost is the runtime's: on the rows sent to a tree-ensemble f0 only the features on
their paths are read (the C runtime walks f0 lazily). Until round 68 `cost` / `mean_cost` / `sample_costs` /
`features_read` charged those rows with every feature f0 uses, above what `frugalml eval` measured, and the sweeps
chose their point on that figure."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from compiler.convert import convert
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from pyruntime.evaluators import reference_evaluator

os.environ.setdefault("FRUGALML_PROGRESS", "off")


def data(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "wine":
        return load_wine(return_X_y=True)
    X, y = make_classification(300, 8, n_informative=5, random_state=3)
    return X, y


def costs_of(d: int) -> np.ndarray:
    return np.linspace(1.0, 3.0, d)


MAKERS: dict[str, Any] = {
    "adapt-gbrt": lambda c: AdaptGbrtClassifier(hpc=DecisionTreeClassifier(max_depth=4, random_state=0), n_trees=10,
                                                p_full=0.4, costs=c),
    "adapt-gbrt-rf": lambda c: AdaptGbrtClassifier(hpc=RandomForestClassifier(8, max_depth=4, random_state=0),
                                                   n_trees=10, p_full=0.4, costs=c),
    "adapt-lin": lambda c: AdaptLinClassifier(hpc=DecisionTreeClassifier(max_depth=4, random_state=0), n_iter=3,
                                              inner_iter=50, p_full=0.4, costs=c),
    "l1-gate": lambda c: L1GateClassifier(hpc=DecisionTreeClassifier(max_depth=4, random_state=0), p_full=0.4,
                                          costs=c),
}


@pytest.mark.parametrize("set_name", ["binary", "wine"])
@pytest.mark.parametrize("kind", list(MAKERS))
def test_estimator_cost_is_the_runtime_cost(kind: str, set_name: str) -> None:
    X, y = data(set_name)
    c = costs_of(X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = MAKERS[kind](c).fit(X, y)
    est = m.cost(X) if hasattr(m, "cost") else m.sample_costs(X)
    pred = reference_evaluator(convert(m, X).model).predict(X.astype(np.float32))
    routed = m.route(X)
    assert routed.any() and not routed.all()  # both parts answer some rows
    np.testing.assert_allclose(est, pred.cost, rtol=1e-6)
    assert m.mean_cost(X) == pytest.approx(float(np.mean(pred.cost)), rel=1e-6)
    if hasattr(m, "features_read"):
        np.testing.assert_array_equal(m.features_read(X).sum(axis=1), pred.n_read)


def test_f0_alone_cost_as_the_runtime_reads_it() -> None:
    """hpc_cost(X): f0's mean path cost over X; without X the paper's bound, every feature f0 uses."""
    X, y = data("wine")
    c = costs_of(X.shape[1])
    m = MAKERS["adapt-gbrt-rf"](c).fit(X, y)
    assert m.hpc_cost(X) < m.hpc_cost()
    assert m.hpc_cost() == pytest.approx(float(c[np.flatnonzero(m.f0_features_)].sum()))
