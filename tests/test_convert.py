"""compiler.convert: a fitted estimator of every kind becomes the model file and C header the CLI would write,
and the C runtime answers exactly what the estimator's predict answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from host_build import PRINT_ROWS, run_with_header
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import NotFittedError

from compiler.convert import ConvertError, convert
from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from compiler.nb.train import NaiveBayesBudget
from compiler.skyline.classifier import SkylineClassifier
from compiler.skyline.linear_base import StandardLogistic
from compiler.trees.cascade import EarlyExitEnsemble
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier
from pyruntime import format as fmt
from pyruntime.costtext import predict_lines
from pyruntime.evaluators import c_evaluator


def iris() -> tuple[np.ndarray, np.ndarray]:
    """Three classes named by text, rows shuffled."""
    d = load_iris()
    order = np.random.default_rng(0).permutation(len(d.target))
    return d.data[order], np.array(["setosa", "versicolor", "virginica"])[d.target[order]]


def cancer() -> tuple[np.ndarray, np.ndarray]:
    d = load_breast_cancer()
    return d.data[::2, :8], np.where(d.target[::2] == 1, "benign", "malignant")


def tree_f0() -> DecisionTreeClassifier:
    return DecisionTreeClassifier(max_depth=4, random_state=0)


ESTIMATORS: dict[str, Any] = {
    "nb-static": lambda: NaiveBayesBudget(early_stopping=False, bins="quantile:8"),
    "nb-stop": lambda: NaiveBayesBudget(bins="quantile:8"),
    "miser": lambda: GreedyMiserClassifier(n_trees=20, lam=0.3),
    "miser-shared": lambda: GreedyMiserClassifier(n_trees=20, class_trees="shared"),
    "frontier": lambda: CascadeFrontierClassifier(n_trees=20, lambdas=(0.0, 1.0), refine=0),
    "cstc": lambda: CSTCClassifier(depth=2, max_iter=5),
    "adapt-lin": lambda: AdaptLinClassifier(hpc=tree_f0(), n_iter=3, inner_iter=50),
    "l1-gate": lambda: L1GateClassifier(hpc=tree_f0()),
    "adapt-gbrt": lambda: AdaptGbrtClassifier(hpc=tree_f0(), n_trees=10),
    "adapt-gbrt-rf": lambda: AdaptGbrtClassifier(n_trees=10),
    "skyline-nb": lambda: SkylineClassifier(base=NaiveBayesBudget(budget=4, early_stopping=False), method="polydom"),
    "skyline-linear": lambda: SkylineClassifier(base=StandardLogistic(), method="greedy-acc"),
}


@pytest.mark.parametrize("data", [iris, cancer])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_kind_converts_and_the_c_runtime_answers_as_predict(name: str, data: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRUGALML_PROGRESS", "off")
    X, y = data()
    if name.startswith("skyline-nb"):
        X = X[:, :4]  # polydom walks every feature set
    est = ESTIMATORS[name]().fit(X[:100], y[:100])
    c = convert(est, X[:100])
    assert c.model.classes == [str(v) for v in est.classes_]
    pred = c.predict(X)
    assert np.array_equal(est.classes_[pred.label], est.predict(X)), name
    c.save(tmp_path / "m.msgpack")
    again = fmt.load(tmp_path / "m.msgpack")
    assert again.kind == c.model.kind and again.classes == c.model.classes
    assert np.array_equal(c_evaluator(again, "float32").predict(X.astype(np.float32)).label, pred.label)


def test_a_cascade_of_exits_and_a_cscc_cascade_convert(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRUGALML_PROGRESS", "off")
    X, y = cancer()
    m = GreedyMiserClassifier(n_trees=30).fit(X[:100], y[:100])
    for est in (EarlyExitEnsemble(m, every=5).fit(X[100:200], y[100:200]),
                CsccCascadeClassifier(n_trees=10, n_rounds=1).fit(X[:200], y[:200])):
        c = convert(est)
        assert c.model.kind == "cascade"
        assert np.array_equal(est.classes_[c.predict(X).label], est.predict(X)), type(est).__name__


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_the_header_prints_what_predict_prints(numeric: str, tmp_path: Path) -> None:
    """The C header written by save(".h") runs its embedded rows to the labels and features read `frugalml
    predict` prints."""
    X, y = iris()
    est = GreedyMiserClassifier(n_trees=10).fit(X, y)
    c = convert(est, X, feature_names=["sepal_l", "sepal_w", "petal_l", "petal_w"])
    assert c.model.feature_names == ["sepal_l", "sepal_w", "petal_l", "petal_w"]
    header = tmp_path / "model.h"
    assert c.save(header, numeric=numeric, rows=X[:30]) == len(header.read_bytes())
    ev = c_evaluator(c.model, numeric)
    expected = predict_lines(c.model.tables, ev.predict(X[:30].astype(np.float32)), numeric == "q15", ev.cost_unit,
                             classes=c.model.classes)
    printed = run_with_header(header.read_text(), PRINT_ROWS, tmp_path)  # LABEL FEATURES_READ (no cost)
    assert printed == [" ".join(t.split(" ")[:2]) for t in expected]


def test_what_cannot_be_converted_is_refused_in_one_line() -> None:
    X, y = cancer()
    with pytest.raises(NotFittedError):
        convert(GreedyMiserClassifier())
    with pytest.raises(ConvertError, match="is not a frugalml estimator"):
        convert(GaussianNB().fit(X, y))
    gated = AdaptLinClassifier(hpc=tree_f0(), n_iter=2, inner_iter=20).fit(X, y)
    with pytest.raises(ConvertError, match=r"give the training rows \(convert\(est, X_train\)\)"):
        convert(gated)
    with pytest.raises(ConvertError, match="X_train has shape"):
        convert(gated, X[:, :3])
    with pytest.raises(ConvertError, match="has no runtime tables"):
        convert(SkylineClassifier(base=GaussianNB(), method="polydom").fit(X[:, :3], y), X[:, :3])
    with pytest.raises(ConvertError, match="3 feature names for a model of 8 features"):
        convert(GreedyMiserClassifier(n_trees=5).fit(X, y), feature_names=["a", "b", "c"])
