"""C-header emitter of kind ``cstc``: fm_cstc / fm_cstc_q15 tables (fm_cstc.h)."""

from __future__ import annotations

from typing import Any

from compiler.header import CArray, CTables
from pyruntime.cstc.model import CSTCModel


def cstc_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_cstc / fm_cstc_q15 initializer of CSTCModel tables."""
    m: CSTCModel = tables
    m.validate()
    common = [CArray(f"{p}_term_start", "uint32_t", m.term_start), CArray(f"{p}_feature", "int32_t", m.feature),
              CArray(f"{p}_upper", "int32_t", m.upper), CArray(f"{p}_lower", "int32_t", m.lower)]
    head = [("n_features", f"{m.n_features}u"), ("n_nodes", f"{m.n_nodes}u"), ("term_start", f"{p}_term_start"),
            ("feature", f"{p}_feature")]
    # K classes: the leaves' class scorers (a binary tree: zeros, its arrays as before)
    if m.n_classes > 2:
        assert m.class_first is not None
        common.append(CArray(f"{p}_class_first", "uint32_t", m.class_first))
        k_fields = [("n_classes", f"{m.n_classes}u"), ("n_class_scorers", f"{m.n_scorers - m.n_nodes}u"),
                    ("class_first", f"{p}_class_first")]
    else:
        k_fields = [("n_classes", "0u"), ("n_class_scorers", "0u"), ("class_first", "NULL")]
    if numeric == "float32":
        arrays = common + [CArray(f"{p}_weight", "float", m.weight), CArray(f"{p}_bias", "float", m.bias),
                           CArray(f"{p}_threshold", "float", m.threshold)]
        if m.costs is not None:
            arrays.append(CArray(f"{p}_costs", "float", m.costs))
        fields = head + [("weight", f"{p}_weight"), ("bias", f"{p}_bias"), ("threshold", f"{p}_threshold"),
                         ("upper", f"{p}_upper"), ("lower", f"{p}_lower"),
                         ("costs", f"{p}_costs" if m.costs is not None else "NULL"), *k_fields]
        return CTables(arrays=arrays, struct_type="fm_cstc", fields=dict(fields), predict_vec="fm_cstc_predict_vec",
                       header="fm_cstc.h", vec_bounds=(int(m.n_features), 1))
    q = m.q15()
    arrays = common + [CArray(f"{p}_weight_q", "int16_t", q.weight_q), CArray(f"{p}_bias_q", "int32_t", q.bias_q),
                       CArray(f"{p}_threshold_q", "int32_t", q.threshold_q),
                       CArray(f"{p}_w_shift", "uint8_t", q.w_shift)]
    if q.costs is not None:
        arrays.append(CArray(f"{p}_costs", "uint16_t", q.costs))
    fields = head + [("weight_q", f"{p}_weight_q"), ("bias_q", f"{p}_bias_q"), ("threshold_q", f"{p}_threshold_q"),
                     ("w_shift", f"{p}_w_shift"), ("upper", f"{p}_upper"), ("lower", f"{p}_lower"),
                     ("in_shift", f"{q.in_shift}u"), ("costs", f"{p}_costs" if q.costs is not None else "NULL"),
                     *k_fields]
    return CTables(arrays=arrays, struct_type="fm_cstc_q15", fields=dict(fields), predict_vec="fm_cstc_q15_predict_vec",
                   header="fm_cstc.h", vec_bounds=(int(m.n_features), 1))
