"""C-header emitter of the gated kind: fm_gated / fm_gated_q15 (fm_gated.h), each part (gate, f1,
f0) a linear scorer, K linear scorers (a const array of fm_linear), a tree ensemble or absent (remote
f0), and the gate also f1's margin (FM_PART_MARGIN: its threshold in the part's linear member, every
other member zero); every part points at one cost table."""

from __future__ import annotations

from typing import Any

from compiler.header import CArray, CTables, c_float, c_int, c_uint, c_zero
from compiler.header_blocks import linear_fields, trees_fields
from pyruntime.gated.model import MarginGate, MarginGateQ15, for_numeric
from pyruntime.multilinear import MultiLinear, MultiLinearQ15
from pyruntime.trees.ensemble import TreeEnsemble, TreeEnsembleQ15


def part_fields(part: Any, p: str, costs: str, q: bool, arrays: list[CArray],
                structs: list[tuple[str, str, list[Any]]]) -> dict[str, Any]:
    """fm_gated_part(_q15) fields of one part; appends the part's arrays (and struct arrays)."""
    suffix = "_q15" if q else ""
    f: dict[str, Any] = {"type": "FM_PART_REMOTE", "linear": c_zero(f"fm_linear{suffix}"),
                         "trees": c_zero(f"fm_trees{suffix}"), "n_classes": c_uint(0), "classes": "NULL"}
    if part is None:
        return f
    if isinstance(part, (MarginGate, MarginGateQ15)):
        threshold = ({"decision_threshold_q": c_int(part.threshold_q)} if q
                     else {"decision_threshold": c_float(part.threshold)})
        f.update(type="FM_PART_MARGIN", linear={**f["linear"], "n_features": c_uint(part.n_features), **threshold})
    elif isinstance(part, (MultiLinear, MultiLinearQ15)):
        elems = [linear_fields(s, f"{p}_c{i}", costs, arrays) for i, s in enumerate(part.scorers)]
        structs.append((f"{p}_classes", f"fm_linear{suffix}", elems))
        f.update(type="FM_PART_LINEAR_K", n_classes=c_uint(len(elems)), classes=f"{p}_classes")
    elif isinstance(part, (TreeEnsemble, TreeEnsembleQ15)):
        f.update(type="FM_PART_TREES", trees=trees_fields(part, p, costs, arrays))
    else:
        f.update(type="FM_PART_LINEAR", linear=linear_fields(part, p, costs, arrays))
    return f


def gated_c_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_gated / fm_gated_q15 initializer of gated tables."""
    m = for_numeric(tables, numeric)
    q = numeric == "q15"
    arrays: list[CArray] = []
    costs = "NULL"
    if q:
        part_costs = next((x.costs for x in (m.gate, m.f1, m.f0)
                           if x is not None and not isinstance(x, MarginGateQ15)), None)
        if part_costs is not None:
            arrays.append(CArray(f"{p}_costs", "uint16_t", part_costs))
            costs = f"{p}_costs"
    elif m.costs is not None:
        arrays.append(CArray(f"{p}_costs", "float", m.costs))
        costs = f"{p}_costs"
    fields: dict[str, Any] = {"n_features": c_uint(m.n_features),
                              "gate_above": "FM_GATE_ABOVE_F0" if m.gate_above == "f0" else "FM_GATE_ABOVE_F1"}
    structs: list[tuple[str, str, list[Any]]] = []
    for name in ("gate", "f1", "f0"):
        fields[name] = part_fields(getattr(m, name), f"{p}_{name}", costs, q, arrays, structs)
    outs = [x.n_outputs for x in (m.gate, m.f1, m.f0) if isinstance(x, (TreeEnsemble, TreeEnsembleQ15))]
    suffix = "_q15" if q else ""
    return CTables(arrays=arrays, struct_type=f"fm_gated{suffix}", fields=fields,
                   predict_vec=f"fm_gated{suffix}_predict_vec", header="fm_gated.h", struct_arrays=structs,
                   vec_bounds=(int(m.n_features), max(outs, default=1)))
