"""Registers the NB kinds with the model format and the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.nb.model import NB_KINDS, NBModel
from pyruntime.result import Predictions


class NBReference:
    def __init__(self, model: NBModel, numeric: str) -> None:
        self.impl = model.q15() if numeric == "q15" else model

    def predict(self, X: Any) -> Predictions:
        return self.impl.predict_reference(X)


def nb_c(model: NBModel, numeric: str) -> Any:
    from pyruntime.nb.binding import CNaiveBayes

    return CNaiveBayes(model, numeric)


for _kind in NB_KINDS:
    register_kind(_kind, NBModel)
    register_evaluators(_kind, nb_c, NBReference)
