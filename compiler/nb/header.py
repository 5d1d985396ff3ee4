"""C-header emitter of the NB kinds (nb-static, nb-stop): fm_nb / fm_nb_q15 tables.

Models with at most two edges per position (the default mean-std bins) get the record layout: one
const fm_nb_pos / fm_nb_q15_pos per reading position (feature, edges, four entries) and the prefix
costs cum_cost, so the eager walk advances one pointer and reads the cost with one load; in q15 the
records are the 24-byte steps fm_nb_q15_hot (raw-bit thresholds, int16 entry pairs, a stop point marked
in the step after it, an end step) that the eager walk runs with one load per step (fm_nb.h). Others (more
edges, or q15 sums that could saturate) get the fixed-stride arrays (order, edges, d).
"""

from __future__ import annotations

from compiler.header import CArray, CTables, c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.nb.records import hot_steps, pos_records


def nbk_tables(m: NBMultiModel, numeric: str, p: str) -> CTables:
    """fm_nbk / fm_nbk_q15 tables of a K-class model (fixed-stride layout, class index fastest; q15: the
    packed lane words, FM_NBK_Q15_PACKED)."""
    if numeric == "float32":
        n_edges, edges, d = m.strided()
        arrays = [CArray(f"{p}_edges", "float", edges), CArray(f"{p}_d", "float", d.ravel()),
                  CArray(f"{p}_d0", "float", m.d0), CArray(f"{p}_stop_margin", "float", m.stop_margin)]
        costs, cost_type, struct, edge_field = m.costs, "float", "fm_nbk", "edges"
        guard = None
    else:
        q = m.q15()
        n_edges, edges, d = m.strided(q.words)
        arrays = [CArray(f"{p}_edges", "int32_t", float_keys(edges)), CArray(f"{p}_d", "uint32_t", d.ravel()),
                  CArray(f"{p}_d0", "uint32_t", q.d0_words), CArray(f"{p}_stop_margin", "int32_t", q.stop_margin)]
        costs, cost_type, struct, edge_field = q.costs, "uint16_t", "fm_nbk_q15", "edge_keys"
        guard = (f"#ifndef FM_NBK_Q15_PACKED\n#error \"{p}: K-class q15 tables in the packed format "
                 f"(FM_NBK_Q15_PACKED 1); this fm_nb.h is older: update runtime_c\"\n#endif")
    arrays += [CArray(f"{p}_order", "uint32_t", m.order), CArray(f"{p}_stop_at", "uint32_t", m.stop_at)]
    if costs is not None:
        arrays.append(CArray(f"{p}_costs", cost_type, costs))
    fields = {"n_features": f"{m.n_features}u", "n_used": f"{m.n_used}u", "n_classes": f"{m.n_classes}u",
              "n_edges": f"{n_edges}u", "order": f"{p}_order", edge_field: f"{p}_edges", "d": f"{p}_d",
              "d0": f"{p}_d0", "n_stops": f"{m.n_stops}u", "stop_at": f"{p}_stop_at",
              "stop_margin": f"{p}_stop_margin", "costs": f"{p}_costs" if costs is not None else "NULL"}
    return CTables(arrays=arrays, struct_type=struct, fields=fields, predict_vec=f"{struct}_predict_vec",
                   header="fm_nb.h", vec_bounds=(0, m.n_classes), preamble=guard)


def nb_tables(m: NBModel | NBMultiModel, numeric: str, p: str) -> CTables:
    if isinstance(m, NBMultiModel):
        return nbk_tables(m, numeric, p)
    arrays = [CArray(f"{p}_stop_at", "uint32_t", m.stop_at)]
    q = m.q15() if numeric != "float32" else None
    rec = pos_records(m, q)
    if q is None:
        n_edges, edges, d = m.strided()
        arrays += [CArray(f"{p}_stop_hi", "float", m.stop_hi), CArray(f"{p}_stop_lo", "float", m.stop_lo)]
        costs, cum = m.costs, m.cum_cost()
        cost_type, fmt = "float", c_float
        d0, thr = c_float(m.d0), c_float(m.threshold)
        struct, fn, edge_field = "fm_nb", "fm_nb_predict_vec", "edges"
    else:
        n_edges, edges, d = m.strided(q.d)
        arrays += [CArray(f"{p}_stop_hi", "int32_t", q.stop_hi), CArray(f"{p}_stop_lo", "int32_t", q.stop_lo)]
        costs, cum = q.costs, q.cum_cost()
        cost_type, fmt = "uint16_t", c_int  # type: ignore[assignment]
        d0, thr = c_int(q.d0), c_int(q.threshold)
        struct, fn, edge_field = "fm_nb_q15", "fm_nb_q15_predict_vec", "edge_keys"
    fields = {"n_features": f"{m.n_features}u", "n_used": f"{m.n_used}u", "d0": d0, "threshold": thr,
              "n_stops": f"{m.n_stops}u", "stop_at": f"{p}_stop_at", "stop_hi": f"{p}_stop_hi",
              "stop_lo": f"{p}_stop_lo"}
    struct_arrays = []
    if rec is None:
        arrays += [CArray(f"{p}_order", "uint32_t", m.order),
                   CArray(f"{p}_edges", "float", edges) if q is None
                   else CArray(f"{p}_edges", "int32_t", float_keys(edges)),
                   CArray(f"{p}_d", "float" if q is None else "int16_t", d)]
        if costs is not None:
            arrays.append(CArray(f"{p}_costs", cost_type, costs))
        fields.update({"n_edges": f"{n_edges}u", "order": f"{p}_order", edge_field: f"{p}_edges", "d": f"{p}_d",
                       "costs": f"{p}_costs" if costs is not None else "NULL", "pos": "NULL", "cum_cost": "NULL"})
        if q is not None:
            fields["hot"] = "NULL"
    else:
        if cum is not None:
            arrays.append(CArray(f"{p}_cum_cost", "float" if q is None else "uint32_t", cum))
        fields.update({"n_edges": "2u", "order": "NULL", edge_field: "NULL", "d": "NULL", "costs": "NULL",
                       "cum_cost": f"{p}_cum_cost" if cum is not None else "NULL"})
        if q is None:
            elems = [f"{{{int(r['feature'])}u, {{{fmt(r['edge'][0])}, {fmt(r['edge'][1])}}}, "
                     f"{{{', '.join(fmt(v) for v in r['d'])}}}}}" for r in rec]
            struct_arrays.append((f"{p}_pos", "fm_nb_pos", elems))
            fields["pos"] = f"{p}_pos"
        else:
            steps = [f"{{{int(h['feature'])}u, {{{int(h['above'][0])}u, {int(h['above'][1])}u}}, {int(h['d12'])}u, "
                     f"{int(h['d30'])}u, {c_int(h['key'])}}}" for h in hot_steps(rec, m.stop_at)]
            struct_arrays.append((f"{p}_hot", "fm_nb_q15_hot", steps))
            fields.update({"pos": "NULL", "hot": f"{p}_hot"})
    return CTables(arrays=arrays, struct_type=struct, fields=fields, predict_vec=fn, header="fm_nb.h",
                   struct_arrays=struct_arrays)
