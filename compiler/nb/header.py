"""C-header emitter of the NB kinds (nb-static, nb-stop): fm_nb / fm_nb_q15 tables."""

from __future__ import annotations

from compiler.header import CArray, CTables, c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.nb.model import NBModel


def nb_tables(m: NBModel, numeric: str, p: str) -> CTables:
    arrays = [CArray(f"{p}_order", "uint32_t", m.order), CArray(f"{p}_stop_at", "uint32_t", m.stop_at)]
    if numeric == "float32":
        n_edges, edges, d = m.strided()
        arrays += [CArray(f"{p}_edges", "float", edges), CArray(f"{p}_d", "float", d),
                   CArray(f"{p}_stop_hi", "float", m.stop_hi), CArray(f"{p}_stop_lo", "float", m.stop_lo)]
        if m.costs is not None:
            arrays.append(CArray(f"{p}_costs", "float", m.costs))
        d0, thr = c_float(m.d0), c_float(m.threshold)
        struct, fn, edge_field = "fm_nb", "fm_nb_predict_vec", "edges"
    else:
        q = m.q15()
        n_edges, edges, d = m.strided(q.d)
        arrays += [CArray(f"{p}_edges", "int32_t", float_keys(edges)), CArray(f"{p}_d", "int16_t", d),
                   CArray(f"{p}_stop_hi", "int32_t", q.stop_hi), CArray(f"{p}_stop_lo", "int32_t", q.stop_lo)]
        if q.costs is not None:
            arrays.append(CArray(f"{p}_costs", "uint16_t", q.costs))
        d0, thr = c_int(q.d0), c_int(q.threshold)
        struct, fn, edge_field = "fm_nb_q15", "fm_nb_q15_predict_vec", "edge_keys"
    fields = dict([
        ("n_features", f"{m.n_features}u"), ("n_used", f"{m.n_used}u"), ("n_edges", f"{n_edges}u"),
        ("order", f"{p}_order"), (edge_field, f"{p}_edges"), ("d", f"{p}_d"), ("d0", d0), ("threshold", thr),
        ("n_stops", f"{m.n_stops}u"), ("stop_at", f"{p}_stop_at"), ("stop_hi", f"{p}_stop_hi"),
        ("stop_lo", f"{p}_stop_lo"), ("costs", f"{p}_costs" if m.costs is not None else "NULL"),
    ])
    return CTables(arrays=arrays, struct_type=struct, fields=fields, predict_vec=fn, header="fm_nb.h")
