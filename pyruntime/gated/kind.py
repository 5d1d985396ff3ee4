"""Registers kind ``gated`` (ADAPT-LIN, ADAPT-GBRT, L1 baseline) with the model format and the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.gated.model import CGated, GatedModel, for_numeric
from pyruntime.result import Predictions


class GatedReference:
    """The numpy reference evaluator of a gated model (float32 or q15 tables)."""

    def __init__(self, tables: Any, numeric: str) -> None:
        self.model = for_numeric(tables, numeric)

    def predict(self, X: Any) -> Predictions:
        return self.model.predict_reference(X)


def gated_c(tables: Any, numeric: str) -> CGated:
    return CGated(for_numeric(tables, numeric))


register_kind("gated", GatedModel)
register_evaluators("gated", gated_c, GatedReference)
