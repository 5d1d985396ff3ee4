"""Registers kind ``cstc`` (cost-sensitive trees of classifiers) with the model format and the evaluators."""

from __future__ import annotations

from pyruntime.cstc.model import CCSTC, CSTCModel, for_numeric
from pyruntime.evaluators import register_numeric_kind

register_numeric_kind("cstc", CSTCModel, for_numeric, CCSTC)
