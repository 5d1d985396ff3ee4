"""Evaluators by model kind: the C runtime and the numpy reference.

Each model kind registers two factories taking (tables, numeric):
``c`` returns an object with ``predict(X) -> Predictions`` and
``ns_per_prediction(X) -> float``; ``reference`` returns an object with
``predict(X) -> Predictions``. Both must agree exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pyruntime.format import ModelFile, register_kind
from pyruntime.result import Predictions


class Evaluator(Protocol):
    def predict(self, X: Any) -> Predictions: ...


C_FACTORIES: dict[str, Callable[[Any, str], Any]] = {}
REFERENCE_FACTORIES: dict[str, Callable[[Any, str], Evaluator]] = {}


def register_evaluators(kind: str, c: Callable[[Any, str], Any],
                        reference: Callable[[Any, str], Evaluator]) -> None:
    C_FACTORIES[kind] = c
    REFERENCE_FACTORIES[kind] = reference


class TablesReference:
    """The numpy reference evaluator of a kind's float32 or q15 tables (each with ``predict_reference``)."""

    def __init__(self, impl: Any) -> None:
        self.impl = impl

    def predict(self, X: Any) -> Predictions:
        return self.impl.predict_reference(X)


def register_numeric_kind(kind: str, record: type, for_numeric: Callable[[Any, str], Any],
                          c_class: Callable[[Any], Any]) -> None:
    """Register a kind whose tables ``record`` reads from the model file and whose ``for_numeric(tables,
    numeric)`` gives the float32 or q15 tables that both ``c_class`` (the C evaluator) and the reference take."""
    register_kind(kind, record)
    register_evaluators(kind, lambda tables, numeric: c_class(for_numeric(tables, numeric)),
                        lambda tables, numeric: TablesReference(for_numeric(tables, numeric)))


def c_evaluator(model: ModelFile, numeric: str = "float32") -> Any:
    if model.kind not in C_FACTORIES:
        raise ValueError(f"no C evaluator for model kind {model.kind!r}")
    return C_FACTORIES[model.kind](model.tables, numeric)


def reference_evaluator(model: ModelFile, numeric: str = "float32") -> Evaluator:
    if model.kind not in REFERENCE_FACTORIES:
        raise ValueError(f"no reference evaluator for model kind {model.kind!r}")
    return REFERENCE_FACTORIES[model.kind](model.tables, numeric)
