"""Registers kind ``cascade`` (CSCC cascades and the early-exit baseline) with the model format and
the evaluators."""

from __future__ import annotations

from pyruntime.evaluators import register_numeric_kind
from pyruntime.trees.cascade import CCascade, TreeCascade, for_numeric

register_numeric_kind("cascade", TreeCascade, for_numeric, CCascade)
