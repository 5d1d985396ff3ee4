"""C-header emitter of the tree family: the fm_cascade[_q15] tables of the miser and cascade kinds. The
fm_trees / fm_linear blocks it embeds (shared with the gated and skyline writers) are in
compiler.header_blocks; their names are re-exported here.

Initializers are built by field name (compiler.header.c_init checks the names against the
runtime's struct declarations)."""

from __future__ import annotations

from typing import Any

import numpy as np

from compiler.header import CArray, CTables, c_uint
from compiler.header_blocks import linear_fields, trees_fields
from pyruntime.trees.cascade import TreeCascade, TreeCascadeQ15

__all__ = ["cascade_tables", "linear_fields", "trees_fields"]


def cascade_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_cascade / fm_cascade_q15 initializer (fm_cascade.h) of TreeCascade tables."""
    m: TreeCascade | TreeCascadeQ15 = tables.q15() if numeric == "q15" else tables
    q = numeric == "q15"
    arrays: list[CArray] = []
    costs = "NULL"
    if m.trees.costs is not None and not bool(np.all(np.asarray(m.trees.costs) == 1)):
        # NULL means cost 1 each: no table, and the eager walk skips the cost sum
        arrays.append(CArray(f"{p}_costs", "uint16_t" if q else "float", m.trees.costs))
        costs = f"{p}_costs"
    fields: dict[str, Any] = {"trees": trees_fields(m.trees, p, costs, arrays), "n_stages": c_uint(m.n_stages),
                              "stage_end": f"{p}_stage_end",
                              "exit_rule": "FM_EXIT_SCORE" if m.exit_rule == "score" else "FM_EXIT_MARGIN"}
    arrays.append(CArray(f"{p}_stage_end", "uint32_t", m.stage_end))
    if q:
        arrays += [CArray(f"{p}_exit_upper_q", "int32_t", m.exit_upper_q),
                   CArray(f"{p}_exit_lower_q", "int32_t", m.exit_lower_q)]
        fields.update(exit_upper_q=f"{p}_exit_upper_q", exit_lower_q=f"{p}_exit_lower_q")
    else:
        arrays += [CArray(f"{p}_exit_upper", "float", m.exit_upper), CArray(f"{p}_exit_lower", "float", m.exit_lower)]
        fields.update(exit_upper=f"{p}_exit_upper", exit_lower=f"{p}_exit_lower")
    suffix = "_q15" if q else ""
    return CTables(arrays=arrays, struct_type=f"fm_cascade{suffix}", fields=fields,
                   predict_vec=f"fm_cascade{suffix}_predict_vec", header="fm_cascade.h",
                   vec_bounds=(int(m.trees.n_features), int(m.trees.n_outputs)))
