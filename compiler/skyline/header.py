"""C-header emitter of the skyline kind: fm_skymodel or fm_skymodel_q15 (fm_skymodel.h): the budget index
(doubles, in both) and a const array of the indexed models (NB, K-class NB, linear, or K class scorers per
model for the K-class linear base), in float32 or their q15 form."""

from __future__ import annotations

from typing import Any

from compiler.header import CArray, CTables, c_double, c_uint
from compiler.header_blocks import linear_fields
from compiler.nb.header import nb_tables
from pyruntime.skyline.model import SkylineModel


def skyline_tables(tables: Any, numeric: str, p: str) -> CTables:
    """fm_skymodel (float32) or fm_skymodel_q15 initializer (fm_skymodel.h)."""
    if numeric not in ("float32", "q15"):
        raise ValueError(f"skyline models export float32 or q15 tables, not {numeric}")
    m: SkylineModel = tables
    q = numeric == "q15"
    # the linear bases' q15 scorers (raises for a model file without input_absmax); nb_tables quantizes the NB ones
    q_models = m.q15().models if q and m.base == "linear" else None
    ix = m.index
    arrays = [CArray(f"{p}_model_coef", "double", ix.model_coef.ravel()),
              CArray(f"{p}_feat_ptr", "uint32_t", ix.feat_ptr), CArray(f"{p}_feat_idx", "uint32_t", ix.feat_idx),
              CArray(f"{p}_breaks", "double", ix.breaks),
              CArray(f"{p}_sky_ptr", "uint32_t", ix.sky_ptr), CArray(f"{p}_sky_model", "uint32_t", ix.sky_model)]
    index = {"n_features": c_uint(ix.n_features), "n_models": c_uint(ix.n_models), "n_ranges": c_uint(ix.n_ranges),
             "model_coef": f"{p}_model_coef", "feat_ptr": f"{p}_feat_ptr", "feat_idx": f"{p}_feat_idx",
             "breaks": f"{p}_breaks", "sky_ptr": f"{p}_sky_ptr", "sky_model": f"{p}_sky_model"}
    struct_arrays: list[tuple[str, str, list[Any]]] = []
    preamble = None
    suffix = "_q15" if q else ""
    if m.base_code in ("nb", "nbk"):  # the NB kinds' own tables, in the layouts they choose
        ctype = f"fm_{m.base_code}{suffix}"
        elems = []
        for k, model in enumerate(m.models):
            t = nb_tables(model, numeric, f"{p}_m{k}")
            arrays += t.arrays
            struct_arrays += t.struct_arrays
            preamble = preamble or t.preamble
            elems.append(t.fields)
    else:  # linear; lineark: model k's class c at k * n_classes + c
        ctype = f"fm_linear{suffix}"
        models = q_models if q_models is not None else m.models
        elems = [linear_fields(sc, f"{p}_m{k}" + (f"c{c}" if m.base_code == "lineark" else ""), "NULL", arrays)
                 for k, model in enumerate(models)
                 for c, sc in enumerate(model.scorers if m.base_code == "lineark" else (model,))]
    models_name = f"{p}_models" if elems else "NULL"
    base = {"nb": "FM_SKY_NB", "nbk": "FM_SKY_NBK", "linear": "FM_SKY_LINEAR",
            "lineark": "FM_SKY_LINEARK"}[m.base_code]
    fields = {"index": index, "base": base, "nb": models_name if m.base_code == "nb" else "NULL",
              "linear": models_name if m.base_code == "linear" else "NULL",
              "nbk": models_name if m.base_code == "nbk" else "NULL",
              "default_budget": c_double(m.default_budget), "default_size": c_double(m.default_size),
              "n_classes": c_uint(m.n_classes if m.base_code == "lineark" else 0),
              "lineark": models_name if m.base_code == "lineark" else "NULL"}
    if elems:
        struct_arrays.append((f"{p}_models", ctype, elems))
    return CTables(arrays=arrays, struct_type=f"fm_skymodel{suffix}", fields=fields,
                   predict_vec=f"fm_skymodel{suffix}_predict_vec", header="fm_skymodel.h",
                   struct_arrays=struct_arrays, vec_bounds=(int(ix.n_features), 1) if m.base == "linear" else None,
                   preamble=preamble)
