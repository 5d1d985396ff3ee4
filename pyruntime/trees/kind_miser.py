"""Registers kind ``miser`` (Greedy Miser cost-aware boosted trees): a cascade of one stage, so it
shares the cascade IR, reference evaluator and C runtime (fm_cascade.c)."""

from __future__ import annotations

from pyruntime.evaluators import register_numeric_kind
from pyruntime.trees.cascade import CCascade, TreeCascade, for_numeric

register_numeric_kind("miser", TreeCascade, for_numeric, CCascade)
