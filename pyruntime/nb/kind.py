"""Registers the NB kinds with the model format and the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.nb.model import NB_KINDS, NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.result import Predictions


class NBRecord:
    """The tables record of an NB kind: binary (NBModel, as in format 1 and 2) or K-class (NBMultiModel,
    recognised by its n_classes field)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NBModel | NBMultiModel:
        return NBMultiModel.from_dict(data) if "n_classes" in data else NBModel.from_dict(data)


class NBReference:
    def __init__(self, model: NBModel | NBMultiModel, numeric: str) -> None:
        self.impl = model.q15() if numeric == "q15" else model

    def predict(self, X: Any) -> Predictions:
        return self.impl.predict_reference(X)


def nb_c(model: NBModel | NBMultiModel, numeric: str) -> Any:
    from pyruntime.nb.binding import CNaiveBayes, CNaiveBayesK

    return (CNaiveBayesK if isinstance(model, NBMultiModel) else CNaiveBayes)(model, numeric)


for _kind in NB_KINDS:
    register_kind(_kind, NBRecord)
    register_evaluators(_kind, nb_c, NBReference)
