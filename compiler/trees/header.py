"""C-header emitter of the tree kinds (miser, cascade): fm_cascade[_q15] tables."""

from __future__ import annotations

from typing import Any

from compiler.header import CArray, CTables, c_float
from pyruntime.trees.cascade import TreeCascade


def _int(v: int) -> str:
    return "INT32_MIN" if int(v) == -(2**31) else str(int(v))


def cascade_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_cascade / fm_cascade_q15 initializer (fm_cascade.h) of TreeCascade tables."""
    m: TreeCascade = tables
    t = m.trees
    common = [CArray(f"{p}_feature", "int32_t", t.feature), CArray(f"{p}_left", "int32_t", t.left),
              CArray(f"{p}_right", "int32_t", t.right), CArray(f"{p}_roots", "int32_t", t.roots),
              CArray(f"{p}_tree_output", "int32_t", t.tree_output),
              CArray(f"{p}_stage_end", "uint32_t", m.stage_end)]
    head = [f"{t.n_features}u", f"{t.n_outputs}u", f"{t.n_nodes}u", f"{t.n_trees}u", f"{p}_feature"]
    rule = "FM_EXIT_SCORE" if m.exit_rule == "score" else "FM_EXIT_MARGIN"
    if numeric == "float32":
        arrays = common + [CArray(f"{p}_threshold", "float", t.threshold), CArray(f"{p}_value", "float", t.value),
                           CArray(f"{p}_base_score", "float", t.base_score),
                           CArray(f"{p}_exit_upper", "float", m.exit_upper),
                           CArray(f"{p}_exit_lower", "float", m.exit_lower)]
        if t.costs is not None:
            arrays.append(CArray(f"{p}_costs", "float", t.costs))
        inner = head + [f"{p}_threshold", f"{p}_left", f"{p}_right", f"{p}_value", f"{p}_roots",
                        f"{p}_tree_output", f"{p}_base_score", f"{p}_costs" if t.costs is not None else "NULL",
                        c_float(t.decision_threshold)]
        fields = [("trees", "{ " + ", ".join(inner) + " }"), ("n_stages", f"{m.n_stages}u"),
                  ("stage_end", f"{p}_stage_end"), ("exit_upper", f"{p}_exit_upper"),
                  ("exit_lower", f"{p}_exit_lower"), ("exit_rule", rule)]
        return CTables(arrays=arrays, struct_type="fm_cascade", fields=fields,
                       predict_vec="fm_cascade_predict_vec", header="fm_cascade.h")
    q = m.q15()
    tq = q.trees
    arrays = common + [CArray(f"{p}_threshold_key", "int32_t", tq.threshold_key),
                       CArray(f"{p}_value_q", "int16_t", tq.value_q), CArray(f"{p}_base_q", "int32_t", tq.base_q),
                       CArray(f"{p}_exit_upper_q", "int32_t", q.exit_upper_q),
                       CArray(f"{p}_exit_lower_q", "int32_t", q.exit_lower_q)]
    if tq.costs is not None:
        arrays.append(CArray(f"{p}_costs", "uint16_t", tq.costs))
    inner = head + [f"{p}_threshold_key", f"{p}_left", f"{p}_right", f"{p}_value_q", f"{p}_roots",
                    f"{p}_tree_output", f"{p}_base_q", f"{p}_costs" if tq.costs is not None else "NULL",
                    _int(tq.decision_threshold_q), f"{tq.shift}u"]
    fields = [("trees", "{ " + ", ".join(inner) + " }"), ("n_stages", f"{q.n_stages}u"),
              ("stage_end", f"{p}_stage_end"), ("exit_upper_q", f"{p}_exit_upper_q"),
              ("exit_lower_q", f"{p}_exit_lower_q"), ("exit_rule", rule)]
    return CTables(arrays=arrays, struct_type="fm_cascade_q15", fields=fields,
                   predict_vec="fm_cascade_q15_predict_vec", header="fm_cascade.h")
