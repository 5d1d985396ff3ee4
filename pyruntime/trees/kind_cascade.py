"""Registers kind ``cascade`` (CSCC cascades and the early-exit baseline) with the model format and
the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.result import Predictions
from pyruntime.trees.cascade import CCascade, TreeCascade, for_numeric


class CascadeReference:
    """The numpy reference evaluator of a cascade (float32 or q15 tables)."""

    def __init__(self, tables: Any, numeric: str) -> None:
        self.impl = for_numeric(tables, numeric)

    def predict(self, X: Any) -> Predictions:
        return self.impl.predict_reference(X)


def cascade_c(tables: Any, numeric: str) -> CCascade:
    return CCascade(for_numeric(tables, numeric))


register_kind("cascade", TreeCascade)
register_evaluators("cascade", cascade_c, CascadeReference)
