"""C header writer: one self-contained header of const tables per model.

The header includes the runtime header of its family (fm_nb.h, ...) and
defines, besides the tables, a few generic names the firmware examples use
for any model kind::

    FM_N_FEATURES                 input vector length
    FM_PREDICT_VEC(x, n, out)     eager prediction into an fm_result
    FM_MODEL_KIND, FM_MODEL_NUMERIC
    FM_REPORTS_COST, FM_COST_UNIT, FM_RESULT_COST(r)   the COST column (pyruntime/costtext.py)
    FM_N_CLASSES, FM_LABELS, FM_LABEL_TEXT(i)          the class label table (label text of a class index)
    FM_LABEL_TEXT_MAX                                 bytes of the longest label text with its NUL
    FM_N_ROWS, FM_ROWS            embedded test rows (with --embed)
    (behind FM_NO_GENERIC_NAMES: one model's per program; a second header included after defining it keeps
    its own NAME_* names, name_labels, name_rows and its struct or name_predict_vec)
    NAME_TABLE_BYTES              bytes of the const arrays
    NAME_CONST_BYTES              bytes of all const model data (arrays + structs + the label table) on the
                                  target: its flash

Flash: ``flash_bytes`` counts the const data a model puts in flash on a target (``const_bytes``: the arrays,
each aligned to its element type, plus the model's structs laid out with the target's pointer size; and
``label_bytes``: the class label table, its pointers and texts);
``FLASH_BUDGETS`` is each target's default budget (``export-c --flash-budget``).

Tables are checked before they are written (the same checks the runtime
loader runs), so a header never holds an out-of-range index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from compiler.c_reserved import library_name
from compiler.pipeline_header import pipeline_section, window_rows
from pyruntime.costtext import no_label_text
from pyruntime.data import check_label_texts
from pyruntime.format import ModelFile
from pyruntime.layout import is_struct, struct_fields, struct_layout

TARGETS = {
    "host": "float32",
    "pi": "float32",
    "cortex-m0": "q15",
    "cortex-m3": "q15",
    "cortex-m4f": "float32",
    "cortex-m33": "float32",
}

# Default flash budget of each target (export-c --flash-budget): 256 KiB on the Cortex-M parts (the QEMU
# machines and typical M3/M4 parts: stm32f103rb 128 KiB, lm3s6965 256 KiB, stm32f405 1 MiB); none on the Pi/host.
FLASH_BUDGETS: dict[str, int | None] = {
    "host": None,
    "pi": None,
    "cortex-m0": 256 * 1024,
    "cortex-m3": 256 * 1024,
    "cortex-m4f": 256 * 1024,
    "cortex-m33": 256 * 1024,
}
POINTER_BYTES = {"host": 8, "pi": 8, "cortex-m0": 4, "cortex-m3": 4, "cortex-m4f": 4, "cortex-m33": 4}

# Stack bounds of the *_predict_vec calls (FM_VEC_MAX_FEATURES / FM_VEC_MAX_OUTPUTS in frugalml.h)
VEC_MAX_FEATURES = 512
VEC_MAX_OUTPUTS = 64


def vec_flags(bounds: tuple[int, int] | None, always: bool = False) -> str:
    """The -D flags that let a model of bounds (features, score outputs) through the FM_PREDICT_VEC stack bounds
    (its header's #error and export-c's warning name them); "" for None, and, unless always, within the defaults."""
    if bounds is None:
        return ""
    nf, no = bounds
    if not always and nf <= VEC_MAX_FEATURES and no <= VEC_MAX_OUTPUTS:
        return ""
    return f"-DFM_VEC_MAX_FEATURES={max(nf, VEC_MAX_FEATURES)} -DFM_VEC_MAX_OUTPUTS={max(no, VEC_MAX_OUTPUTS)}"

CTYPES = {
    "double": 8, "float": 4, "int32_t": 4, "uint32_t": 4, "int16_t": 2, "uint16_t": 2, "uint8_t": 1,
}


NUMERICS = ("float32", "q15")  # the numeric types of the tables (--numeric)


def check_numeric(numeric: str, name: str = "numeric") -> str:
    """numeric itself when it is one of NUMERICS, else a ValueError naming ``name`` (the one check of a numeric
    type: the CLI's --numeric, an estimator's parameter, a model file's record)."""
    if numeric not in NUMERICS:
        raise ValueError(f"{name} must be one of {', '.join(NUMERICS)}, got {numeric!r}")
    return numeric


def numeric_for(target: str | None, numeric: str | None) -> str:
    """The numeric type for a target, unless given explicitly."""
    if target is not None and target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    if numeric is not None:
        return check_numeric(numeric, "--numeric")
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
    fields: Mapping[str, Any]  # field name -> C expression, or a Mapping for a nested struct
    predict_vec: str  # function name taking (const model *, x, n, out)
    header: str  # runtime header to include
    struct_arrays: list[tuple[str, str, list[Any]]] = field(default_factory=list)
    # (name, struct type, fields of each element): const arrays of runtime structs (e.g. a skyline's models);
    # an element may also be its C initializer text (e.g. NB records, one line each)
    vec_bounds: tuple[int, int] | None = None
    # (n_features, score outputs) the *_predict_vec call checks against FM_VEC_MAX_FEATURES / _OUTPUTS;
    # None when FM_PREDICT_VEC has no stack bound for this model
    preamble: str | None = None  # C lines before the arrays (e.g. a runtime format test with its #error)

    @property
    def table_bytes(self) -> int:
        """Bytes of the arrays and the struct arrays (records), at a 32-bit target's layout."""
        return sum(a.nbytes for a in self.arrays) + sum(struct_layout(ctype, 4)[0] * len(elems)
                                                        for _n, ctype, elems in self.struct_arrays)


def parse_bytes(text: str) -> int | None:
    """A byte count with an optional K/M suffix (KiB/MiB: 1024-based); 0 or none: no limit (None)."""
    t = str(text).strip().lower().removesuffix("b").removesuffix("i")
    if t in ("none", "0"):
        return None
    scale = {"k": 1024, "m": 1024 * 1024}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not re.fullmatch(r"[0-9]+", digits):
        raise ValueError(f"--flash-budget must be a byte count with an optional K or M suffix (e.g. 262144, 256K, "
                         f"1M) or none, got {text!r}")
    return int(digits) * scale or None


def const_bytes(t: CTables, pointer_bytes: int) -> int:
    """Bytes of const model data in flash, an upper bound whatever order the linker puts the objects in:
    every array (at least one element) rounded up to 4 bytes (+4 of alignment slack for a double array), the
    struct arrays and the model struct at their target size."""
    total = 0
    for a in t.arrays:
        nbytes = CTYPES[a.ctype] * max(int(a.values.size), 1)
        total += (nbytes + 3) // 4 * 4 + (4 if a.ctype == "double" else 0)
    for _name, ctype, elems in t.struct_arrays:
        size, align = struct_layout(ctype, pointer_bytes)
        total += size * max(len(elems), 1) + (align - 4 if align > 4 else 0)
    size, align = struct_layout(t.struct_type, pointer_bytes)
    return total + size + (align - 4 if align > 4 else 0)


def label_bytes(classes: Sequence[str], pointer_bytes: int) -> int:
    """Flash of the class label table a header carries (label_macros), an upper bound: NAME_labels[K] (one
    pointer a class) and each text with its NUL, the no-class text too (FM_LABEL_TEXT's), each rounded up to 4
    bytes (a compiler may align a string literal's start)."""
    texts = [*classes, no_label_text(list(classes))]
    return len(classes) * pointer_bytes + sum((len(c.encode()) + 1 + 3) // 4 * 4 for c in texts)


def flash_bytes(model: ModelFile, t: CTables, pointer_bytes: int) -> int:
    """All const data a model's header puts in flash: its tables (const_bytes) and its label table (label_bytes):
    NAME_CONST_BYTES, the figure export-c's --flash-budget is checked against."""
    return const_bytes(t, pointer_bytes) + label_bytes(model.classes, pointer_bytes)


def c_float(v: float) -> str:
    f = np.float32(v)
    if np.isnan(f):
        return "NAN"
    if np.isposinf(f):
        return "INFINITY"
    if np.isneginf(f):
        return "(-INFINITY)"
    text = f"{float(f):.9g}"
    if "e" not in text and "." not in text and "n" not in text:
        text += ".0"
    return text + "f"


def c_double(v: float) -> str:
    """A C double literal that reads back exactly."""
    if np.isposinf(v):
        return "INFINITY"
    if np.isneginf(v):
        return "(-INFINITY)"
    text = repr(float(v))
    return text if ("e" in text or "." in text or "n" in text) else text + ".0"


def c_int(v: int) -> str:
    """An int32 literal; INT32_MIN as the macro (the literal -2147483648 is not an int in C)."""
    return "INT32_MIN" if int(v) == -(2**31) else str(int(v))


def c_uint(v: int) -> str:
    return f"{int(v)}u"


def struct_field_names(struct_type: str) -> list[tuple[str, str | None]]:
    """(field, nested struct type or None) of a runtime struct, in declaration order, from the cdef
    declarations (pyruntime/cdefs, read by pyruntime.layout), so initializers are built by name, never by
    position."""
    return [(f.name, f.ctype if is_struct(f.ctype) and not f.pointer and f.count == 1 else None)
            for f in struct_fields(struct_type)]


def c_zero(struct_type: str) -> dict[str, Any]:
    """Field values of an all-zero struct_type (0 for numbers, {0} for arrays, NULL for pointers, nested zeros):
    every member named, so C++'s -Wextra (missing-initializer) takes it where it refuses a bare {0}."""
    return {name: c_zero(sub) if sub is not None else "NULL" if f.pointer else "{0}" if f.count > 1 else "0"
            for (name, sub), f in zip(struct_field_names(struct_type), struct_fields(struct_type), strict=True)}


def c_init(struct_type: str, values: Mapping[str, Any], indent: str = "    ") -> str:
    """A C initializer of struct_type whose fields are given by name (nested structs as Mappings),
    written in declaration order; a missing or unknown field name is an error."""
    fields = struct_field_names(struct_type)
    names = [n for n, _ in fields]
    unknown = sorted(set(values) - set(names))
    missing = [n for n in names if n not in values]
    if unknown or missing:
        raise ValueError(f"{struct_type} initializer: unknown fields {unknown}, missing fields {missing}")
    inner = indent + "    "
    parts = []
    for name, sub in fields:
        v = values[name]
        if isinstance(v, Mapping):
            if sub is None:
                raise ValueError(f"{struct_type}.{name} is not a struct")
            v = c_init(sub, v, inner)
        parts.append(f"{inner}/* {name} */ {v}")
    return "{\n" + ",\n".join(parts) + f"\n{indent}}}"


def _fmt(a: CArray) -> str:
    vals = a.values.ravel()
    if a.ctype == "float":
        items = [c_float(v) for v in vals]
    elif a.ctype == "double":
        items = [c_double(v) for v in vals]
    elif a.ctype == "int32_t":
        items = [c_int(v) for v in vals]
    else:
        items = [str(int(v)) for v in vals]
    if not items:
        items = ["0"]  # C forbids empty arrays; lengths live in the struct
    lines = []
    for i in range(0, len(items), 12):
        lines.append("    " + ", ".join(items[i:i + 12]) + ",")
    return "\n".join(lines)


EMITTERS: dict[str, Callable[[object, str, str], CTables]] = {}


def register_emitter(kind: str, emitter: Callable[[object, str, str], CTables]) -> None:
    EMITTERS[kind] = emitter


def c_tables(model: ModelFile, numeric: str, name: str = "model") -> CTables:
    if model.kind not in EMITTERS:  # the families register their emitters when their kind modules load
        from compiler.kinds import load_file_kind  # noqa: PLC0415 - the kind modules import this one

        load_file_kind(model.kind)
    if model.kind not in EMITTERS:
        raise ValueError(f"export to C is not available for model kind {model.kind!r}")
    return EMITTERS[model.kind](model.tables, numeric, name)


C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
    bool true false alignas alignof asm catch class constexpr decltype delete explicit export friend mutable
    namespace new noexcept nullptr operator private protected public template this throw try typeid typename
    using virtual wchar_t
""".split())


def check_name(name: str) -> str:
    """A C identifier that is no C or C++ keyword, no name of the C standard headers (compiler.c_reserved) and no
    reserved name (the header is also compiled as C++ by the Arduino sketch)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", name):
        raise ValueError(f"--name must be a C identifier (letters, digits, _; at most 41), got {name!r}")
    if name in C_KEYWORDS:
        raise ValueError(f"--name {name!r} is a C/C++ keyword; choose another identifier")
    if library_name(name):
        raise ValueError(f"--name {name!r} is a name of the C standard library (the header includes its headers, and "
                         f"so do the firmware examples); choose another identifier, e.g. {name}_model")
    # any leading underscore: the header defines NAME.upper()_* macros (_x gives _X_KIND, reserved) and file-scope
    # arrays; a double underscore anywhere is reserved in C++ (the Arduino sketch)
    if name.startswith("_") or "__" in name or name.lower() == "fm" or name.lower().startswith("fm_"):
        raise ValueError(f"--name {name!r} is reserved (a leading or double underscore, or fm / fm_ in any case: the "
                         "runtime's prefix; NAME_N_FEATURES would redefine FM_N_FEATURES)")
    return name


def cost_macros(model: ModelFile, numeric: str) -> list[str]:
    """FM_REPORTS_COST (1: the firmware prints a COST column, as `frugalml predict` does), FM_COST_UNIT
    and FM_RESULT_COST(r), the float32 cost of an fm_result *r: r->cost for float32 tables,
    (float)r->cost_q * FM_COST_UNIT for q15 tables (pyruntime/costtext.py), r->cost again for tables whose cost is
    a float in both numeric types (``cost_is_float``: the skyline's polynomial)."""
    reports = bool(getattr(model.tables, "reports_cost", True))
    q_cost = numeric == "q15" and not getattr(model.tables, "cost_is_float", False)
    unit = 1.0
    if q_cost and reports:
        from pyruntime.evaluators import c_evaluator  # noqa: PLC0415 - the q15 tables' cost unit

        unit = float(c_evaluator(model, numeric).cost_unit)
    cost = "((float)(r)->cost_q * FM_COST_UNIT)" if q_cost else "((r)->cost)"
    return [f"#define FM_REPORTS_COST {int(reports)}", f"#define FM_COST_UNIT {c_float(unit)}",
            f"#define FM_RESULT_COST(r) {cost}"]


def c_string(text: str) -> str:
    """A C string literal of text (UTF-8; quotes, backslashes and non-printable bytes escaped; every "?" that
    a "?" follows closed and reopened ("?""?") so that no trigraph forms, also in runs of three or more: a
    non-overlapping replace of "??" left "???!" as "?""??!", a trigraph for "|")."""
    out = []
    for b in text.encode():
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + re.sub(r"\?(?=\?)", '?""', "".join(out)) + '"'


def label_macros(model: ModelFile, name: str) -> list[str]:
    """The class label table: FM_N_CLASSES, NAME_labels[] (the label texts in class-index order) and
    FM_LABEL_TEXT(i), the text of class index i (the runtime's fm_result.label), "-1" for an index
    outside 0 .. FM_N_CLASSES-1 (deferred, or nothing fits the budget; "none" when a class is named "-1"),
    as `frugalml predict` prints it."""
    classes = model.classes
    check_classes(len(classes), "the header's label table")
    check_label_texts(classes)  # a model made in Python: a NUL would end its C text early
    none = no_label_text(classes)
    return [
        f"#define {name.upper()}_N_CLASSES {len(classes)}u",
        f"static const char *const {name}_labels[{len(classes)}] = {{{', '.join(c_string(c) for c in classes)}}};",
        f"#define FM_N_CLASSES {name.upper()}_N_CLASSES",
        f"#define FM_LABELS {name}_labels",
        f"#define FM_LABEL_TEXT_MAX {max(len(c.encode()) + 1 for c in [none, *classes])}u",
        f"#define FM_LABEL_TEXT(i) ((i) >= 0 && (uint32_t)(i) < FM_N_CLASSES ? FM_LABELS[(i)] : {c_string(none)})",
    ]


def check_classes(n_classes: int, what: str) -> None:
    """Refuse more classes than every runtime call holds (FM_VEC_MAX_OUTPUTS)."""
    if n_classes > VEC_MAX_OUTPUTS:
        raise ValueError(f"{n_classes} classes are more than {what} holds (at most {VEC_MAX_OUTPUTS}, "
                         "FM_VEC_MAX_OUTPUTS): retrain one-vs-rest with --positive LABEL, or merge classes")


def header_tail(model: ModelFile, numeric: str, name: str, predict_vec: str, rows: np.ndarray | None, guard: str,
                form: bool = False, extra: Sequence[str] = (), after_rows: Sequence[str] = ()) -> list[str]:
    """The end every header shares (tables and code form): the generic FM_* names the firmware examples use,
    the embedded rows (with --embed) and the include guard's #endif. predict_vec: the C expression
    FM_PREDICT_VEC(x, n, out) stands for; form: also define FM_MODEL_FORM; extra: lines after the generic
    names (the window pipeline's); after_rows: lines after the embedded rows (embedded windows)."""
    up = name.upper()
    out = [f"#define FM_MODEL_KIND {up}_KIND",
           f'#define FM_MODEL_NUMERIC "{numeric}"', *([f"#define FM_MODEL_FORM {up}_FORM"] if form else []),
           f"#define FM_N_FEATURES {up}_N_FEATURES", f"#define FM_PREDICT_VEC(x, n, out) {predict_vec}",
           *cost_macros(model, numeric), *label_macros(model, name), *extra]
    if rows is not None:
        r = np.asarray(rows, dtype=np.float32)
        out += ["", f"/* {r.shape[0]} raw input rows for self-tests */", f"#define FM_N_ROWS {r.shape[0]}u",
                f"static const float {name}_rows[{max(r.shape[0], 1)}][{int(model.tables.n_features)}] = {{"]
        out += ["    {" + ", ".join(c_float(v) for v in row) + "}," for row in r]
        out += ["};", f"#define FM_ROWS {name}_rows"]
    named, generic = split_generic([*out, *after_rows])
    return [*named, "", *generic_block(generic, up), "", f"#endif /* {guard} */", ""]


def split_generic(lines: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the lines that name this model's own data, the generic ``#define FM_...`` lines with their continuation
    lines): a macro is expanded where it is used, so the generic ones can move to one block."""
    named: list[str] = []
    generic: list[str] = []
    into = named
    for line in lines:
        if into is named and line.startswith("#define FM_"):
            into = generic
        into.append(line)
        if into is generic and not line.endswith("\\"):
            into = named
    return named, generic


def generic_block(generic: Sequence[str], up: str) -> list[str]:
    """The generic FM_* names behind FM_NO_GENERIC_NAMES: one model's per program. A second model's header
    included without it stops at an #error saying what to do (it redefined FM_MODEL_KIND before)."""
    said = (f"a second frugalml model header: #define FM_NO_GENERIC_NAMES before including it (the generic FM_* "
            f"names are the first model's; use this one's {up}_* names)")
    return ["/* Generic names used by the firmware examples: one model's per program. Define FM_NO_GENERIC_NAMES",
            f" * before including a further model's header: its own {up}_* names, tables and functions stay. */",
            "#ifndef FM_NO_GENERIC_NAMES", "#ifdef FM_MODEL_KIND", f'#error "{said}"', "#else", *generic, "#endif",
            "#endif /* FM_NO_GENERIC_NAMES */"]


def render_header(model: ModelFile, numeric: str, name: str = "model", rows: np.ndarray | None = None,
                  target: str | None = None, windows: list[np.ndarray] | None = None) -> str:
    """The whole header text."""
    name = check_name(name)
    t = c_tables(model, numeric, name)
    ptr = POINTER_BYTES.get(target or "host", 8)
    flash = flash_bytes(model, t, ptr)
    guard = f"FRUGALML_{name.upper()}_H"
    n_features = int(model.tables.n_features)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    out = [
        f"/* Generated by frugalml on {stamp}: {model.kind} model, {numeric} tables"
        f"{', target ' + target if target else ''}. Do not edit. */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <math.h>", "#include <stdint.h>",
        f'#include "{t.header}"', "",
        f'#define {name.upper()}_KIND "{model.kind}"', f"#define {name.upper()}_N_FEATURES {n_features}u",
        f"#define {name.upper()}_TABLE_BYTES {t.table_bytes}u",
        f"/* const model data (flash): {flash:,} bytes with {ptr}-byte pointers */",
        f"#define {name.upper()}_CONST_BYTES {flash}u", "",
    ]
    if t.vec_bounds is not None:
        nf, no = t.vec_bounds
        out += [f"#if {nf} > FM_VEC_MAX_FEATURES || {no} > FM_VEC_MAX_OUTPUTS",
                f'#error "{name}: {nf} features / {no} outputs exceed the FM_PREDICT_VEC stack bounds: compile the '
                f'runtime and this file with {vec_flags(t.vec_bounds, always=True)}"', "#endif", ""]
    if t.preamble is not None:
        out += [t.preamble, ""]
    for a in t.arrays:
        out += [f"static const {a.ctype} {a.name}[{max(a.values.size, 1)}] = {{", _fmt(a), "};"]
    for arr_name, ctype, elems in t.struct_arrays:
        items = (",\n".join("    " + (e if isinstance(e, str) else c_init(ctype, e, "    ")) for e in elems)
                 or "    " + c_init(ctype, c_zero(ctype), "    "))  # the one placeholder of an empty array
        out += [f"static const {ctype} {arr_name}[{max(len(elems), 1)}] = {{", items, "};"]
    out.append("")
    out.append(f"static const {t.struct_type} {name} = {c_init(t.struct_type, t.fields, '')};")
    out.append("")
    out += header_tail(model, numeric, name, f"{t.predict_vec}(&{name}, (x), (n), (out))", rows, guard,
                       extra=pipeline_section(model.meta, t, name),
                       after_rows=window_rows(windows or [], name, model.meta, max(2, len(model.classes))))
    return "\n".join(out)
