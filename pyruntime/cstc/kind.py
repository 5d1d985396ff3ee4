"""Registers kind ``cstc`` (cost-sensitive trees of classifiers) with the model format and the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.cstc.model import CCSTC, CSTCModel, for_numeric
from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.result import Predictions


class CSTCReference:
    """The numpy reference evaluator of a CSTC tree (float32 or q15 tables)."""

    def __init__(self, tables: Any, numeric: str) -> None:
        self.impl = for_numeric(tables, numeric)

    def predict(self, X: Any) -> Predictions:
        return self.impl.predict_reference(X)


def cstc_c(tables: Any, numeric: str) -> CCSTC:
    return CCSTC(for_numeric(tables, numeric))


register_kind("cstc", CSTCModel)
register_evaluators("cstc", cstc_c, CSTCReference)
