"""The generated-code form of a C header (`frugalml export-c --form code`): the model written as C
code (nested branches on constant thresholds, unrolled adds) behind the same generic macros as the
tables form (FM_PREDICT_VEC, FM_N_FEATURES, FM_N_ROWS, FM_ROWS, fm_result, FM_OK), bit-identical to
the tables and to the numpy reference.

Shared pieces used by the family generators (compiler/trees/code.py, compiler/nb/code.py):

- feature compares on the raw bits of the float input, against one integer constant per node:
  for a threshold of fm_key_bits key T (float32 thresholds: their key; q15: the 16-bit tables'
  65536 * k + 65535), ``x <= threshold`` iff ``(int32)bits(x) <= T`` when T >= 0 and
  ``(uint32)bits(x) >= 0x80000000 + (-T)`` when T < 0, for every finite x (no key transform);
- a per-prediction touched-feature set as bit masks in locals, summed at the end (n_read, cost)
  when the costs are order-exact (every float32 partial sum exact, so any order gives the
  first-read-order sum); a first-read-order path for other float32 costs;
- a non-finite check: one cheap flag over the features the model may read; only when it is set
  does the generated code test exactly the features touched (FM_E_VALUE, as the tables).

Code form = the eager FM_PREDICT_VEC only (no lazy reader); `out` is left unspecified when a
prediction fails.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from compiler.header import check_name, header_tail
from pyruntime.format import ModelFile

INT32_MAX = 2**31 - 1

# kind -> generator of the body of <name>_predict_vec. Registered like kinds: each family's
# compiler/<family>/code.py calls register_code_form at import, load_code_modules imports them all.
CODE_FORMS: dict[str, Callable[..., CodeBody]] = {}


def register_code_form(kinds: tuple[str, ...], generate: Callable[..., CodeBody]) -> None:
    for kind in kinds:
        CODE_FORMS[kind] = generate


def load_code_modules() -> dict[str, Callable[..., CodeBody]]:
    """Import every family's code.py (each registers the kinds it generates code for)."""
    from compiler import __path__ as pkg_path

    for fam in pkgutil.iter_modules(list(pkg_path)):
        if fam.ispkg and importlib.util.find_spec(f"compiler.{fam.name}.code") is not None:
            importlib.import_module(f"compiler.{fam.name}.code")
    return CODE_FORMS


def code_kinds() -> list[str]:
    return sorted(load_code_modules())


def check_code_kind(kind: str) -> None:
    if kind not in load_code_modules():
        raise ValueError(f"--form code is not available for kind {kind!r}; kinds with a code form: "
                         f"{', '.join(code_kinds())} (use --form tables)")


@dataclass
class CodeBody:
    """What a family generator returns: helper definitions and the function body lines (indented by
    4 spaces, after the argument checks); `x`, `out` are the arguments."""

    lines: list[str]
    helpers: list[str]
    fn_attr: str = ""  # a macro (defined by the helpers) placed after FM_CODE_FN in the function's definition


def generator(kind: str) -> Callable[..., CodeBody]:
    check_code_kind(kind)
    return CODE_FORMS[kind]


# ---------------------------------------------------------------------------------- compares ----
def bits_expr(name: str, j: int) -> str:
    """The int32 bits of x[j]."""
    return f"{name}_bits(x + {j})"


def le_key(bits: str, key: int) -> str:
    """C condition: the float whose int32 bits are `bits` is <= the value of fm_key_bits key `key`."""
    key = int(key)
    if key >= 0:
        return f"{bits} <= {key}"
    return f"(uint32_t){bits} >= {0x80000000 + (-key)}u"


def thumb2_imm(v: int) -> bool:
    """Whether the uint32 v is a Thumb-2 modified immediate (an 8-bit value, 0x00XY00XY, 0xXY00XY00,
    0xXYXYXYXY, or 1bcdefgh rotated), the operand of cmp / cmn / add / sub without a constant load."""
    v &= 0xFFFFFFFF
    b = v & 0xFF
    if v < 256 or v in (b * 0x00010001, ((v >> 8) & 0xFF) * 0x01000100, b * 0x01010101):
        return True
    return any(128 <= (((v << r) | (v >> (32 - r))) & 0xFFFFFFFF) < 256 for r in range(1, 32))


def thumb2_add_cost(v: int) -> int:
    """Thumb-2 instructions of `s += v` (v an int32 constant): 0 for 0, 1 when add/sub take it as an
    immediate (modified immediate, or addw/subw's 0..4095), else 2."""
    if v == 0:
        return 0
    return 1 if abs(v) <= 4095 or thumb2_imm(abs(v)) else 2


def thumb2_cmp_ok(c: int) -> bool:
    """Whether `d <= c` compiles to one cmp / cmn with an immediate (GCC may also use d < c + 1)."""
    return any(thumb2_imm(abs(v)) for v in (c, c + 1))


def hi_helper(name: str) -> list[str]:
    """<name>_hi(p): the top 16 bits of *p's bits as a signed value (one ldrsh on a little-endian GNU
    target with unaligned loads; shifts elsewhere: on the Cortex-M0 the two-byte memcpy would be a call)."""
    return [f"static inline int32_t {name}_hi(const float *p)", "{",
            "#if defined(__GNUC__) && !defined(FM_PORTABLE) && defined(__BYTE_ORDER__) && "
            "__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (!defined(__arm__) || defined(__ARM_FEATURE_UNALIGNED))",
            "    int16_t h;", "    memcpy(&h, (const char *)p + 2, sizeof h);", "    return h;", "#else",
            f"    return (int32_t)(((uint32_t){name}_bits(p) >> 16) ^ 0x8000u) - 0x8000;", "#endif", "}"]


def nonfinite_term(bits: str) -> str:
    """A uint32 whose bit 31 is set iff the float is NaN or infinite."""
    return f"(((uint32_t){bits} & 0x7fffffffu) + 0x00800000u)"


def nonfinite_test(bits: str) -> str:
    return f"(((uint32_t){bits} & 0x7f800000u) == 0x7f800000u)"


def flag_lines(name: str, feats: Iterable[int], var: str = "nf") -> list[str]:
    """Lines OR-ing the non-finite terms of the features into `var`: one loop over a dense range (with
    SSE2, the helper of nonfinite_simd instead; see there), else one line per feature."""
    fs = sorted(set(int(f) for f in feats))
    if not fs:
        return []
    lo, hi = fs[0], fs[-1] + 1
    if len(fs) >= 8 and 2 * len(fs) >= hi - lo:
        return [f"#if defined({name.upper()}_SSE2)", f"{var} = {name}_nonfinite(x);", "#else", "{",
                "    uint32_t j;", f"    for (j = {lo}u; j < {hi}u; ++j) {{",
                f"        {var} |= {nonfinite_term(bits_expr(name, 'j'))};", "    }", "}", "#endif"]  # type: ignore[arg-type]
    return [f"{var} |= {nonfinite_term(bits_expr(name, f))};" for f in fs]


def nonfinite_simd(name: str, feats: Iterable[int]) -> list[str]:
    """The helper flag_lines calls for a dense range lo..hi-1 of features on x86 with SSE2 (unless
    FM_PORTABLE): bit 31 set if one of x[lo..hi-1] is NaN or infinite. Their float sum four lanes at a
    time (the last step overlaps when 4 does not divide the range): a NaN or an infinity makes its lane
    NaN or infinite, finite values a finite lane unless the sum overflows (then the caller's exact test
    of the features read finds nothing: a slower prediction, the same answer); a lane's exponent is all
    ones iff ((bits << 1) >> 24) == 0xff. 2 instructions per 4 floats (the loop: 7 per 4, vectorized
    by gcc), integer tests only (no float compare that -ffinite-math-only could fold)."""
    fs = sorted(set(int(f) for f in feats))
    if not fs:
        return []
    lo, hi = fs[0], fs[-1] + 1
    if not (len(fs) >= 8 and 2 * len(fs) >= hi - lo):
        return []
    starts = list(range(lo, hi - 3, 4)) + ([hi - 4] if (hi - lo) % 4 else [])
    steps = [f"    m = _mm_add_ps(m, _mm_loadu_ps(x + {j}));" for j in starts[1:]]
    return ["#if defined(__SSE2__) && !defined(FM_PORTABLE)", "#include <emmintrin.h>",
            f"#define {name.upper()}_SSE2 1", f"static inline uint32_t {name}_nonfinite(const float *x)", "{",
            f"    __m128 m = _mm_loadu_ps(x + {starts[0]});", "    __m128i e;", *steps,
            "    e = _mm_castps_si128(m);",
            "    e = _mm_cmpeq_epi8(_mm_add_epi32(e, e), _mm_set1_epi8(-1));",
            "    return (_mm_movemask_epi8(e) & 0x8888) != 0 ? 0x80000000u : 0u;", "}", "#endif"]


# ------------------------------------------------------------------------------------- costs ----
def order_exact(costs: np.ndarray | None) -> tuple[list[int], int] | None:
    """(integer units k_j, exponent e) with costs[j] == k_j * 2**e exactly and sum k_j < 2**24 (every
    partial float32 sum exact, in any order, and the total as (float)units * 2**e), or None."""
    if costs is None:
        return [], 0
    c = np.asarray(costs, np.float32).astype(np.float64)
    nz = c[c != 0]
    if nz.size == 0:
        return [0] * c.size, 0
    exps = []
    for v in nz:
        m, e = np.frexp(v)  # v = m * 2**e, 0.5 <= m < 1; float32 mantissa: 24 bits
        k = int(m * 2**24)
        while k % 2 == 0:
            k //= 2
            e += 1  # noqa: PLW2901
        exps.append(int(e) - 24)
    e = min(exps)
    if e < -126 or e > 100:
        return None
    units = [int(v / 2.0**e) for v in c]
    if any(u * 2.0**e != v for u, v in zip(units, c)) or sum(units) >= 2**24:
        return None
    return units, e


def c_function(signature: str, *body: str) -> list[str]:
    """The lines of a C function: its signature, the body indented, the braces."""
    return [signature, "{", *(f"    {line}" for line in body), "}"]


def popcount_helper(name: str) -> list[str]:
    return c_function(f"static inline uint32_t {name}_pc(uint32_t v)", "v = v - ((v >> 1) & 0x55555555u);",
                      "v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);",
                      "return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;")


def bits_helper(name: str) -> list[str]:
    """<name>_bits(p): the bits of *p, through frugalml.h's fm_float_bits. The float is read as a float first: a
    memcpy straight from p is a call to memcpy where the target has no unaligned loads (GCC, Thumb-1: the pointer's
    type does not vouch for its alignment), one load from a float object."""
    return c_function(f"static inline int32_t {name}_bits(const float *p)", "return (int32_t)fm_float_bits(*p);")


def sat_helper(name: str) -> list[str]:
    return c_function(f"static inline int32_t {name}_sat(int32_t a, int32_t b)",
                      "int64_t r = (int64_t)a + (int64_t)b;",
                      "return r > (int64_t)INT32_MAX ? INT32_MAX : r < (int64_t)INT32_MIN ? INT32_MIN : (int32_t)r;")


# ------------------------------------------------------------------------------------ header ----
def render_code_header(model: ModelFile, numeric: str, name: str = "model", rows: np.ndarray | None = None,
                       target: str | None = None) -> str:
    """The whole header text of the code form."""
    name = check_name(name)
    # code hints: generator keyword arguments a trainer recorded from the training data (e.g. NB's share
    # of zeros per position); they change the code's shape, never its answers
    hints = model.meta.get("training", {}).get("code_hints") or {}
    make = generator(model.kind)
    # only the hints this generator takes: a file's hints are its trainer's, a foreign file's may be others
    taken = inspect.signature(make).parameters
    body = make(model.tables, numeric, name, **{k: v for k, v in hints.items() if k in taken})
    guard = f"FRUGALML_{name.upper()}_H"
    n_features = int(model.tables.n_features)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    up = name.upper()
    out = [
        f"/* Generated by frugalml on {stamp}: {model.kind} model, {numeric} generated code"
        f"{', target ' + target if target else ''}. Do not edit. */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <math.h>", "#include <stdint.h>",
        "#include <string.h>", '#include "frugalml.h"', "",
        f'#define {up}_KIND "{model.kind}"', f"#define {up}_N_FEATURES {n_features}u",
        f"#define {up}_TABLE_BYTES 0u", f'#define {up}_FORM "code"', "",
        "/* FM_CODE_FN: specifiers of the generated function (default inline; e.g. __attribute__((noinline))",
        "   to count its instructions) */",
        "#ifndef FM_CODE_FN", "#define FM_CODE_FN inline", "#endif", "",
        *bits_helper(name), "",
    ]
    for h in body.helpers:
        out.append(h)
    out += [
        "",
        f"/* Eager prediction from x[n], n == {up}_N_FEATURES: fills *out as the {numeric} tables do;",
        "   FM_E_ARG for bad arguments, FM_E_VALUE when a feature read is NaN or infinite. */",
        f"static FM_CODE_FN {body.fn_attr + ' ' if body.fn_attr else ''}int {name}_predict_vec(const float *x, "
        "uint32_t n, fm_result *out)",
        "{",
    ]
    out += ["    " + line if line and not line.startswith("#") else line for line in body.lines]
    out += [
        "}",
        "",
    ]
    out += header_tail(model, numeric, name, f"{name}_predict_vec((x), (n), (out))", rows, guard, form=True)
    return "\n".join(out)
