"""Registers kind ``skyline`` (budget-indexed models, pyruntime.skyline.model) with the model format and
the evaluators."""

from __future__ import annotations

from typing import Any

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.skyline.model import CSkyModel, SkylineModel, SkylineReference


def skyline_c(tables: Any, numeric: str) -> CSkyModel:
    return CSkyModel(tables, numeric)


def skyline_reference(tables: Any, numeric: str) -> SkylineReference:
    return SkylineReference(tables, numeric)


register_kind("skyline", SkylineModel)
register_evaluators("skyline", skyline_c, skyline_reference)
