"""C-header blocks several families' writers embed: the fm_trees[_q15] block of a tree ensemble (in the
cascade, gated and skyline tables) and the fm_linear[_q15] block of a linear scorer (gated, cstc, skyline).

Initializers are built by field name (compiler.header.c_init checks the names against the
runtime's struct declarations)."""

from __future__ import annotations

from typing import Any

from compiler.header import CArray, c_float, c_int, c_uint
from pyruntime.trees.ensemble import compact_tables


def trees_fields(t: Any, p: str, costs: str, arrays: list[CArray]) -> dict[str, str]:
    """fm_trees / fm_trees_q15 fields of the compact tables (pyruntime.trees.ensemble.compact_tables) of a
    TreeEnsemble(Q15) whose arrays are named p_*; appends the arrays. costs: the C expression of the cost
    table (shared between parts, or NULL)."""
    c = compact_tables(t.to_dict())
    dict_ = c.get("split") is not None  # float32 split dictionary: codes in place of feature / threshold
    per_node = CArray(f"{p}_split", "uint16_t", c["split"]) if dict_ else \
        CArray(f"{p}_feature", "uint16_t", c["feature"])
    arrays += [CArray(f"{p}_node_end", "uint32_t", c["node_end"]), per_node,
               CArray(f"{p}_tree_output", "uint16_t", c["tree_output"])]
    f = {"n_features": c_uint(c["n_features"]), "n_outputs": c_uint(c["n_outputs"]), "n_trees": c_uint(c["n_trees"]),
         "n_nodes": c_uint(c["n_nodes"]), "node_end": f"{p}_node_end", "feature": "NULL" if dict_ else f"{p}_feature",
         "child": "NULL", "tree_output": f"{p}_tree_output", "costs": costs, "depth": c_uint(c["depth"]),
         "run": c_uint(c["run"]), "shared_splits": c_uint(c["shared_splits"])}
    if c["child"] is not None:
        arrays.append(CArray(f"{p}_child", "uint32_t", c["child"]))
        f["child"] = f"{p}_child"
    if "leaf_q" in c:
        arrays += [CArray(f"{p}_threshold_q", "uint16_t", c["threshold_q"]),
                   CArray(f"{p}_leaf_q", "int16_t", c["leaf_q"]), CArray(f"{p}_base_q", "int32_t", c["base_q"])]
        f.update(threshold_q=f"{p}_threshold_q", leaf_q=f"{p}_leaf_q", base_q=f"{p}_base_q",
                 decision_threshold_q=c_int(c["decision_threshold_q"]), shift=c_uint(c["shift"]))
    else:
        if dict_:
            arrays += [CArray(f"{p}_split_feature", "uint16_t", c["split_feature"]),
                       CArray(f"{p}_split_threshold", "float", c["split_threshold"])]
            f.update(threshold="NULL", split=f"{p}_split", split_feature=f"{p}_split_feature",
                     split_threshold=f"{p}_split_threshold", n_splits=c_uint(c["n_splits"]))
        else:
            arrays.append(CArray(f"{p}_threshold", "float", c["threshold"]))
            f.update(threshold=f"{p}_threshold", split="NULL", split_feature="NULL", split_threshold="NULL",
                     n_splits=c_uint(0))
        arrays += [CArray(f"{p}_leaf", "float", c["leaf"]), CArray(f"{p}_base_score", "float", c["base_score"])]
        f.update(leaf=f"{p}_leaf", base_score=f"{p}_base_score",
                 decision_threshold=c_float(c["decision_threshold"]), exact_costs=c_uint(c["exact_costs"]))
    return f


def linear_fields(m: Any, p: str, costs: str, arrays: list[CArray]) -> dict[str, str]:
    """fm_linear / fm_linear_q15 fields of a LinearScorer(Q15) whose arrays are named p_*."""
    arrays.append(CArray(f"{p}_feature", "int32_t", m.feature))
    f = {"n_features": c_uint(m.n_features), "nnz": c_uint(m.nnz), "feature": f"{p}_feature", "costs": costs}
    if hasattr(m, "weight_q"):
        arrays.append(CArray(f"{p}_weight_q", "int16_t", m.weight_q))
        f.update(weight_q=f"{p}_weight_q", bias_q=c_int(m.bias_q),
                 decision_threshold_q=c_int(m.decision_threshold_q), in_shift=c_uint(m.in_shift),
                 w_shift=c_uint(m.w_shift), term_shift="NULL")
        if m.term_shift is not None:
            arrays.append(CArray(f"{p}_term_shift", "uint8_t", m.term_shift))
            f["term_shift"] = f"{p}_term_shift"
    else:
        arrays.append(CArray(f"{p}_weight", "float", m.weight))
        f.update(weight=f"{p}_weight", bias=c_float(m.bias), decision_threshold=c_float(m.decision_threshold))
    return f
