"""C header writer: one self-contained header of const tables per model.

The header includes the runtime header of its family (fm_nb.h, ...) and
defines, besides the tables, a few generic names the firmware examples use
for any model kind::

    FM_N_FEATURES                 input vector length
    FM_PREDICT_VEC(x, n, out)     eager prediction into an fm_result
    FM_MODEL_KIND, FM_MODEL_NUMERIC
    FM_N_ROWS, FM_ROWS            embedded test rows (with --embed)

Tables are checked before they are written (the same checks the runtime
loader runs), so a header never holds an out-of-range index.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from pyruntime.arrays import float_keys
from pyruntime.format import ModelFile
from pyruntime.nb import NB_KINDS, NBModel

TARGETS = {
    "host": "float32",
    "pi": "float32",
    "cortex-m0": "q15",
    "cortex-m3": "q15",
    "cortex-m4f": "float32",
    "cortex-m33": "float32",
}

CTYPES = {
    "float": 4, "int32_t": 4, "uint32_t": 4, "int16_t": 2, "uint16_t": 2, "uint8_t": 1,
}


def numeric_for(target: str | None, numeric: str | None) -> str:
    """The numeric type for a target, unless given explicitly."""
    if target is not None and target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    if numeric is not None:
        if numeric not in ("float32", "q15"):
            raise ValueError(f"--numeric must be float32 or q15, got {numeric!r}")
        return numeric
    return TARGETS[target] if target else "float32"


@dataclass
class CArray:
    name: str
    ctype: str
    values: np.ndarray

    @property
    def nbytes(self) -> int:
        return CTYPES[self.ctype] * int(self.values.size)


@dataclass
class CTables:
    """What a model kind emits: arrays, the struct initializer and the predict call."""

    arrays: list[CArray]
    struct_type: str
    fields: list[tuple[str, str]]  # (field, C expression)
    predict_vec: str  # function name taking (const model *, x, n, out)
    header: str  # runtime header to include

    @property
    def table_bytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)


def c_float(v: float) -> str:
    f = np.float32(v)
    if np.isposinf(f):
        return "INFINITY"
    if np.isneginf(f):
        return "(-INFINITY)"
    text = f"{float(f):.9g}"
    if "e" not in text and "." not in text and "n" not in text:
        text += ".0"
    return text + "f"


def _fmt(a: CArray) -> str:
    vals = a.values.ravel()
    if a.ctype == "float":
        items = [c_float(v) for v in vals]
    elif a.ctype == "int32_t":
        items = [str(int(v)) if int(v) != -(2**31) else "INT32_MIN" for v in vals]
    else:
        items = [str(int(v)) for v in vals]
    if not items:
        items = ["0"]  # C forbids empty arrays; lengths live in the struct
    lines = []
    for i in range(0, len(items), 12):
        lines.append("    " + ", ".join(items[i:i + 12]) + ",")
    return "\n".join(lines)


def _nb_tables(m: NBModel, numeric: str, p: str) -> CTables:
    arrays = [CArray(f"{p}_order", "uint32_t", m.order), CArray(f"{p}_stop_at", "uint32_t", m.stop_at)]
    if numeric == "float32":
        n_edges, edges, d = m.strided()
        arrays += [CArray(f"{p}_edges", "float", edges), CArray(f"{p}_d", "float", d),
                   CArray(f"{p}_stop_hi", "float", m.stop_hi), CArray(f"{p}_stop_lo", "float", m.stop_lo)]
        if m.costs is not None:
            arrays.append(CArray(f"{p}_costs", "float", m.costs))
        d0, thr = c_float(m.d0), c_float(m.threshold)
        struct, fn, edge_field = "fm_nb_f32", "fm_nb_f32_predict_vec", "edges"
    else:
        q = m.q15()
        n_edges, edges, d = m.strided(q.d)
        arrays += [CArray(f"{p}_edges", "int32_t", float_keys(edges)), CArray(f"{p}_d", "int16_t", d),
                   CArray(f"{p}_stop_hi", "int32_t", q.stop_hi), CArray(f"{p}_stop_lo", "int32_t", q.stop_lo)]
        if q.costs is not None:
            arrays.append(CArray(f"{p}_costs", "uint16_t", q.costs))
        d0 = str(q.d0) if q.d0 != -(2**31) else "INT32_MIN"
        thr = str(q.threshold) if q.threshold != -(2**31) else "INT32_MIN"
        struct, fn, edge_field = "fm_nb_q15", "fm_nb_q15_predict_vec", "edge_keys"
    fields = [
        ("n_features", f"{m.n_features}u"), ("n_used", f"{m.n_used}u"), ("n_edges", f"{n_edges}u"),
        ("order", f"{p}_order"), (edge_field, f"{p}_edges"), ("d", f"{p}_d"), ("d0", d0), ("threshold", thr),
        ("n_stops", f"{m.n_stops}u"), ("stop_at", f"{p}_stop_at"), ("stop_hi", f"{p}_stop_hi"),
        ("stop_lo", f"{p}_stop_lo"), ("costs", f"{p}_costs" if m.costs is not None else "NULL"),
    ]
    return CTables(arrays=arrays, struct_type=struct, fields=fields, predict_vec=fn, header="fm_nb.h")


EMITTERS: dict[str, Callable[[object, str, str], CTables]] = {kind: _nb_tables for kind in NB_KINDS}


def register_emitter(kind: str, emitter: Callable[[object, str, str], CTables]) -> None:
    EMITTERS[kind] = emitter


def c_tables(model: ModelFile, numeric: str, name: str = "model") -> CTables:
    if model.kind not in EMITTERS:
        raise ValueError(f"export to C is not available for model kind {model.kind!r}")
    return EMITTERS[model.kind](model.tables, numeric, name)


def check_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", name):
        raise ValueError(f"--name must be a C identifier, got {name!r}")
    return name


def render_header(model: ModelFile, numeric: str, name: str = "model", rows: np.ndarray | None = None,
                  target: str | None = None) -> str:
    """The whole header text."""
    name = check_name(name)
    t = c_tables(model, numeric, name)
    guard = f"FRUGALML_{name.upper()}_H"
    n_features = int(model.tables.n_features)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    out = [
        f"/* Generated by frugalml on {stamp}: {model.kind} model, {numeric} tables"
        f"{', target ' + target if target else ''}. Do not edit. */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <math.h>", "#include <stdint.h>",
        f'#include "{t.header}"', "",
        f'#define {name.upper()}_KIND "{model.kind}"', f"#define {name.upper()}_N_FEATURES {n_features}u",
        f"#define {name.upper()}_TABLE_BYTES {t.table_bytes}u", "",
    ]
    for a in t.arrays:
        out += [f"static const {a.ctype} {a.name}[{max(a.values.size, 1)}] = {{", _fmt(a), "};"]
    out.append("")
    out.append(f"static const {t.struct_type} {name} = {{")
    out += [f"    /* {f} */ {expr}," for f, expr in t.fields]
    out += ["};", ""]
    out += [
        "/* Generic names used by the firmware examples. */",
        f"#define FM_MODEL_KIND {name.upper()}_KIND",
        f'#define FM_MODEL_NUMERIC "{numeric}"',
        f"#define FM_N_FEATURES {name.upper()}_N_FEATURES",
        f"#define FM_PREDICT_VEC(x, n, out) {t.predict_vec}(&{name}, (x), (n), (out))",
    ]
    if rows is not None:
        r = np.asarray(rows, dtype=np.float32)
        out += [
            "", f"/* {r.shape[0]} raw input rows for self-tests */",
            f"#define FM_N_ROWS {r.shape[0]}u",
            f"static const float {name}_rows[{max(r.shape[0], 1)}][{n_features}] = {{",
        ]
        for row in r:
            out.append("    {" + ", ".join(c_float(v) for v in row) + "},")
        out += ["};", f"#define FM_ROWS {name}_rows"]
    out += ["", f"#endif /* {guard} */", ""]
    return "\n".join(out)
