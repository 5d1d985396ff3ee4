"""Every numeric parameter of every estimator, set to NaN, is refused at fit by a ValueError that names it: NaN is
never a valid setting, and it passes every ``value < 0`` comparison, so an unchecked one trains on (or fails deep
inside with "cannot convert float NaN to integer"). The parameters are found through get_params (those whose
default is a number or None), so a new one is covered the day it is added.

Round 67's sweep found 25 unnamed (strict xfails then); round 68 put every one on compiler.params.check_number."""

from __future__ import annotations

import os
import warnings
from numbers import Real
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from compiler.nb.train import NaiveBayesBudget
from compiler.skyline.classifier import SkylineClassifier
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier

os.environ.setdefault("FRUGALML_PROGRESS", "off")


def small_f0() -> DecisionTreeClassifier:
    return DecisionTreeClassifier(max_depth=3, random_state=0)


ESTIMATORS: dict[str, Any] = {
    "NaiveBayesBudget": NaiveBayesBudget(),
    "SkylineClassifier": SkylineClassifier(max_sets=6),
    "GreedyMiserClassifier": GreedyMiserClassifier(n_trees=5),
    "CsccCascadeClassifier": CsccCascadeClassifier(n_trees=5, n_rounds=1),
    "CascadeFrontierClassifier": CascadeFrontierClassifier(n_trees=5, lambdas=(0.0, 1.0), refine=0),
    "CSTCClassifier": CSTCClassifier(depth=2, max_iter=2),
    "AdaptGbrtClassifier": AdaptGbrtClassifier(hpc=small_f0(), n_trees=5),
    "AdaptLinClassifier": AdaptLinClassifier(hpc=small_f0(), n_iter=2, inner_iter=20),
    "L1GateClassifier": L1GateClassifier(hpc=small_f0()),
}
BINARY_ONLY = {"CsccCascadeClassifier"}
# None by default, and text is a valid setting
TEXT_OR_FILE = frozenset({"scheduler", "bins", "likelihood", "costs", "sizes"})
NOT_PARAMETERS = {"random_state"}  # NaN there is scikit-learn's check_random_state's to refuse


def numeric_parameters(but: frozenset[str] = frozenset()) -> list[Any]:
    cases = []
    for name, est in ESTIMATORS.items():
        for param, value in est.get_params(deep=False).items():
            skipped = param in NOT_PARAMETERS | but or isinstance(value, bool)
            if skipped or not (value is None or isinstance(value, Real)):
                continue
            cases.append(pytest.param(name, param, id=f"{name}.{param}"))
    return cases


def flag_parameters() -> list[Any]:
    return [pytest.param(name, param, id=f"{name}.{param}") for name, est in ESTIMATORS.items()
            for param, value in est.get_params(deep=False).items() if isinstance(value, bool)]


def fit_refuses(name: str, param: str, value: Any) -> str:
    """The message of the ValueError fit raises with ``param`` set to ``value`` (which it must name)."""
    X, y = load_iris(return_X_y=True)
    if name in BINARY_ONLY:
        X, y = X[y < 2], y[y < 2]
    est = clone(ESTIMATORS[name]).set_params(**{param: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as err:
            est.fit(X, y)
    assert param in str(err.value), str(err.value)
    return str(err.value)


@pytest.mark.parametrize(("name", "param"), numeric_parameters(but=TEXT_OR_FILE))
def test_text_in_a_number_is_refused_naming_the_parameter(name: str, param: str) -> None:
    """A number given as text ("3", as read from a config file) is a ValueError naming the parameter, not a
    bare TypeError from a comparison deep inside (round 68)."""
    fit_refuses(name, param, "3")


@pytest.mark.parametrize(("name", "param"), flag_parameters())
@pytest.mark.parametrize("value", ["no", 0.5, float("nan")], ids=["text", "half", "nan"])
def test_a_flag_takes_only_true_or_false(name: str, param: str, value: Any) -> None:
    """Every boolean parameter refuses a value that is only truthy or falsy ('no' was taken as True), naming it
    (round 68)."""
    assert "True" in fit_refuses(name, param, value)


def test_the_sweeps_cover_every_kind() -> None:
    """Each estimator has numeric parameters in the sweep, and the flag sweep is not empty."""
    assert {case.values[0] for case in numeric_parameters()} == set(ESTIMATORS)
    assert len(flag_parameters()) >= 8


@pytest.mark.parametrize(("name", "param"), numeric_parameters())
def test_nan_is_refused_naming_the_parameter(name: str, param: str) -> None:
    X, y = load_iris(return_X_y=True)
    if name in BINARY_ONLY:
        X, y = X[y < 2], y[y < 2]
    est = clone(ESTIMATORS[name]).set_params(**{param: float("nan")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as err:
            est.fit(X, y)
    assert param in str(err.value), str(err.value)
    assert np.isnan(est.get_params()[param])  # the estimator keeps what it was given (scikit-learn's rule)
