"""Registers kind ``miser`` (Greedy Miser cost-aware boosted trees): a cascade of one stage, so it
shares the cascade IR, reference evaluator and C runtime (fm_cascade.c)."""

from __future__ import annotations

from pyruntime.evaluators import register_evaluators
from pyruntime.format import register_kind
from pyruntime.trees.kind_cascade import CascadeReference, TreeCascade, cascade_c

register_kind("miser", TreeCascade)
register_evaluators("miser", cascade_c, CascadeReference)
