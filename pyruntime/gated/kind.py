"""Registers kind ``gated`` (ADAPT-LIN, ADAPT-GBRT, L1 baseline) with the model format and the evaluators."""

from __future__ import annotations

from pyruntime.evaluators import register_numeric_kind
from pyruntime.gated.model import CGated, GatedModel, for_numeric

register_numeric_kind("gated", GatedModel, for_numeric, CGated)
