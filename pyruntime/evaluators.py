"""Evaluators by model kind: the C runtime and the numpy reference.

Each model kind registers two factories taking (tables, numeric):
``c`` returns an object with ``predict(X) -> Predictions`` and
``ns_per_prediction(X) -> float``; ``reference`` returns an object with
``predict(X) -> Predictions``. Both must agree exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pyruntime.format import ModelFile
from pyruntime.result import Predictions


class Evaluator(Protocol):
    def predict(self, X: Any) -> Predictions: ...


C_FACTORIES: dict[str, Callable[[Any, str], Any]] = {}
REFERENCE_FACTORIES: dict[str, Callable[[Any, str], Evaluator]] = {}


def register_evaluators(kind: str, c: Callable[[Any, str], Any],
                        reference: Callable[[Any, str], Evaluator]) -> None:
    C_FACTORIES[kind] = c
    REFERENCE_FACTORIES[kind] = reference


def c_evaluator(model: ModelFile, numeric: str = "float32") -> Any:
    if model.kind not in C_FACTORIES:
        raise ValueError(f"no C evaluator for model kind {model.kind!r}")
    return C_FACTORIES[model.kind](model.tables, numeric)


def reference_evaluator(model: ModelFile, numeric: str = "float32") -> Evaluator:
    if model.kind not in REFERENCE_FACTORIES:
        raise ValueError(f"no reference evaluator for model kind {model.kind!r}")
    return REFERENCE_FACTORIES[model.kind](model.tables, numeric)
