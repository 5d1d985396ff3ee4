"""Generated-code form of the NB kinds (nb-static, nb-stop; compiler/codegen.py): the features in
reading order, each binned by a binary search of compares on constant edges (raw float bits against
integer constants) that adds its table entry; every stop point is its two compares in place, and
the exit writes constants (n_read, cost and stage are known at each stop point).

Where the exact-zero test goes: a zero (+0 or -0) compares into one interval of the search (the one
with #{edges < 0} edges below it), so the test can sit either in front of the search (a zero costs
one test, every other value one test more) or inside that interval's leaf only (every other value
saves it, a zero pays the search first). With the share of zeros per position seen in training
(``zero_share``, recorded by ``frugalml train nb-*`` as a code hint) a position whose zeros are rare
(share < ZERO_FIRST_SHARE) gets the test in the leaf; without hints every position keeps it in front.
Both layouts give the same answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from compiler.codegen import (
    INT32_MAX,
    CodeBody,
    bits_expr,
    c_function,
    le_key,
    nonfinite_test,
    register_code_form,
    sat_helper,
)
from compiler.header import c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.nb.model import NBModel, _cum_costs
from pyruntime.nb.multi import NBMultiModel

# Share of zeros at or above which the exact-zero test goes in front of the search: with 2 edges and
# the mean-std bins (about 16/68/16 % of the non-zero values per interval) the test in the zero's leaf
# saves about 0.84 tests per non-zero value and costs 2 per zero; even at a share of about 0.3.
ZERO_FIRST_SHARE = 0.25

# K-class q15 code form: consecutive positions between stop points are nested while their leaves make at most
# this many paths (each leaf of a position holds the code of the next), a leaf of the last adding the sum of the
# rows on its path: one add a class for the group instead of one a position. Digits (four leaves a position):
# pairs, 33.1 -> 27.1 instructions per feature read on the Cortex-M3, the code 17.7 -> 28.9 kB (triples: 25.1,
# 58.7 kB).
NBK_GROUP = 16


def same_entries(a: Any, b: Any) -> bool:
    """Whether two slots add the same bits (an entry, or a row of K class entries): +0 and -0 differ."""
    return bool(np.asarray(a).tobytes() == np.asarray(b).tobytes())


def slot_search(bits: str, e_keys: list[int], row: np.ndarray, add: Callable[[Any], list[str]], lo: int, hi: int,
                out: list[str], ind: str, zero_at: int) -> None:
    """The compares of one position: c = number of edges < x is in [lo, hi]: add(row[1 + c]) (row[s]: slot s's
    entry, or its K class entries). A NaN or infinite x compares as beyond every (finite) edge (le_key: -inf
    and negative NaNs below, +inf and positive NaNs above), so only the first and the last interval's leaves
    test it, each for its own side, and fail at once. zero_at: the interval whose leaf tests for an exact
    zero first (adding row[0]), -1 for none."""
    vals = row[1 + lo:2 + hi]
    if lo == hi or all(same_entries(v, vals[0]) for v in vals):
        leaf = []
        if lo == 0 and hi == len(e_keys):
            test = nonfinite_test(bits)
        elif lo == 0:
            test = f"(uint32_t){bits} >= 0xff800000u"  # -inf or a NaN with the sign bit
        elif hi == len(e_keys):
            test = f"{bits} > 0x7f7fffff"  # +inf or a NaN without it
        else:
            test = ""
        if test:
            leaf += [f"if ({test}) {{", "    return FM_E_VALUE;", "}"]
        leaf += add(row[1 + lo])
        if lo <= zero_at <= hi and not same_entries(row[0], row[1 + lo]):
            out += [ind + f"if (((uint32_t){bits} & 0x7fffffffu) == 0u) {{",
                    *(ind + "    " + line for line in add(row[0])),
                    ind + "} else {", *(ind + "    " + line for line in leaf), ind + "}"]
        else:
            out += [ind + line for line in leaf]
        return
    mid = (lo + hi) // 2
    out.append(ind + f"if ({le_key(bits, e_keys[mid])}) {{")
    slot_search(bits, e_keys, row, add, lo, mid, out, ind + "    ", zero_at)
    out.append(ind + "} else {")
    slot_search(bits, e_keys, row, add, mid + 1, hi, out, ind + "    ", zero_at)
    out.append(ind + "}")


def position_lines(m: NBModel | NBMultiModel, p: int, name: str, row: np.ndarray, add: Callable[[Any], list[str]],
                   zero_share: list[float] | None) -> list[str]:
    """Position p's code: the exact-zero test in front of the search when the position has a zero slot of its own
    and its zeros are common (or no hints), else in the zero's interval; then the search (slot_search)."""
    j = int(m.order[p])
    e_keys = [int(v) for v in float_keys(m.edges[int(m.edge_start[p]):int(m.edge_start[p + 1])])]
    bits = bits_expr(name, j)
    out = [f"/* position {p}: feature {j} */"]
    zero_test = bool(m.zero_bin[p]) and not all(same_entries(r, row[0]) for r in row)
    if zero_test and (zero_share is None or zero_share[p] >= ZERO_FIRST_SHARE):
        out += [f"if (((uint32_t){bits} & 0x7fffffffu) == 0u) {{", *("    " + line for line in add(row[0])), "} else {"]
        slot_search(bits, e_keys, row, add, 0, len(e_keys), out, "    ", -1)
        out.append("}")
    else:
        # +0 and -0 compare into the interval with every edge < 0 below it (le_key: x <= edge for every edge >= 0,
        # for either zero)
        zero_at = int(np.count_nonzero(np.asarray(e_keys) < 0)) if zero_test else -1
        slot_search(bits, e_keys, row, add, 0, len(e_keys), out, "", zero_at)
    return out


def nb_code(tables: Any, numeric: str, name: str, zero_share: list[float] | None = None) -> CodeBody:
    if isinstance(tables, NBMultiModel):
        return nbk_code(tables, numeric, name, zero_share)
    m: NBModel = tables
    if zero_share is not None and len(zero_share) != m.n_used:
        raise ValueError(f"code hint zero_share has {len(zero_share)} values, the model reads {m.n_used} positions")
    q = numeric == "q15"
    k = m.n_used
    if q:
        qm = m.q15()
        n_edges, _, d = m.strided(qm.d)
        entries = d.astype(np.int64).reshape(k, n_edges + 2)
        d0: Any = int(qm.d0)
        thr: Any = int(qm.threshold)
        hi_b, lo_b = [int(v) for v in qm.stop_hi], [int(v) for v in qm.stop_lo]
        cum = _cum_costs(qm.costs, m.order, np.int64)
        bound = abs(d0) + int(np.abs(entries).max(axis=1).sum()) if k else abs(d0)
        saturate = bound > INT32_MAX
        fmt = c_int
    else:
        n_edges, _, d = m.strided()
        entries = d.reshape(k, n_edges + 2)
        d0, thr = float(m.d0), float(m.threshold)
        hi_b, lo_b = [float(v) for v in m.stop_hi], [float(v) for v in m.stop_lo]
        cum = _cum_costs(m.costs, m.order, np.float32)
        saturate = False
        fmt = c_float  # type: ignore[assignment]

    def add(v: Any) -> str:
        if q:
            return f"a = {name}_sat(a, {c_int(int(v))});" if saturate else f"a += {c_int(int(v))};"
        return f"a = a + {c_float(float(v))};"

    def add_row(v: Any) -> list[str]:
        return [add(v)]

    L: list[str] = [f"{'int32_t' if q else 'float'} a = {fmt(d0)};",
                    f"if (x == NULL || out == NULL || n != {int(m.n_features)}u) {{", "    return FM_E_ARG;", "}"]
    stops = {int(s): i for i, s in enumerate(m.stop_at)}
    for p in range(k):
        L += position_lines(m, p, name, entries[p], add_row, zero_share)
        if p + 1 in stops:
            s = stops[p + 1]
            for bound, label, never, op in ((hi_b[s], "1", _never_hi(hi_b[s], q), ">"),
                                            (lo_b[s], "0", _never_lo(lo_b[s], q), "<")):
                if never:
                    continue
                L.append(f"if (a {op} {fmt(bound)}) {{")
                L += ["    " + line for line in exit_lines(q, cum, label, "a", s + 1, p + 1)]
                L.append("}")
    L += exit_lines(q, cum, f"a > {fmt(thr)} ? 1 : 0", "a", 0, k)
    return CodeBody(lines=L, helpers=sat_helper(name) if saturate else [])


def exit_lines(q: bool, cum: Any, label: str, score: str, stage: int, p: int) -> list[str]:
    """An answer after p features read: the fm_result fields (label and score as C expressions; cost in float32,
    cost_q in q15 integer units, from the cumulative costs ``cum``, None: one per feature) and the return."""
    if q:
        cost, cost_q = "0.0f", f"{p if cum is None else int(cum[p])}u"
    else:
        cost, cost_q = c_float(float(p) if cum is None else float(cum[p])), "0u"
    return [f"out->label = {label};", f"out->stage = {stage}u;",
            f"out->score = {'0.0f' if q else score};", f"out->score_q = {score if q else '0'};",
            f"out->n_read = {p}u;", f"out->cost = {cost};", f"out->cost_q = {cost_q};", "return FM_OK;"]


LEAD = "(int32_t)lead"  # the K-class form's label: the leader's class index


def _never_hi(v: Any, q: bool) -> bool:
    return v == INT32_MAX if q else bool(np.isposinf(v))


def _never_lo(v: Any, q: bool) -> bool:
    return v == -(2**31) if q else bool(np.isneginf(v))


register_code_form(("nb-static", "nb-stop"), nb_code)


def nbk_code(m: NBMultiModel, numeric: str, name: str, zero_share: list[float] | None = None) -> CodeBody:
    """The K-class NB (fm_nbk) as code: the K class scores in a local array, each position's compares (the
    binary form's search) ending in a leaf that adds its slot's K constants; at a stop point the leader (the
    first class of largest score) and its margin over the runner-up (NAME_lead, as fm_nbk's), compared with
    the stop point's margin; q15: int32 sums of the int16 entries (saturating only when some class's sum could
    leave int32), the margin in int32 when it fits (else int64); without saturation the positions between stop
    points nest in groups (NBK_GROUP), a leaf adding its path's summed rows."""
    if zero_share is not None and len(zero_share) != m.n_used:
        raise ValueError(f"code hint zero_share has {len(zero_share)} values, the model reads {m.n_used} positions")
    q = numeric == "q15"
    k, n_classes = m.n_used, m.n_classes
    if q:
        qm = m.q15()
        n_edges, _, d = m.strided(qm.d)
        entries: np.ndarray = d.astype(np.int64).reshape(k, n_edges + 2, n_classes)
        d0: list[Any] = [int(v) for v in qm.d0]
        margins: list[Any] = [int(v) for v in qm.stop_margin]
        cum = _cum_costs(qm.costs, m.order, np.int64)
        bound = np.abs(np.asarray(d0, np.int64)) + (np.abs(entries).max(axis=1).sum(axis=0) if k else 0)
        saturate = bool(np.any(bound > INT32_MAX))
    else:
        n_edges, _, d = m.strided()
        entries = d.reshape(k, n_edges + 2, n_classes)
        d0 = [float(v) for v in m.d0]
        margins = [float(v) for v in m.stop_margin]
        cum = _cum_costs(m.costs, m.order, np.float32)
        saturate = False
    # q15: the margin in int32 when no two scores can differ by more (every score within +-bound, the margins
    # int32 constants), else in int64
    narrow = q and 2 * int(np.max(bound)) <= INT32_MAX and all(abs(int(v)) <= INT32_MAX for v in margins)
    score_t, margin_t = ("int32_t", "int32_t" if narrow else "int64_t") if q else ("float", "float")
    neg_zero = np.float32(-0.0).tobytes()

    def add_row(row: Any) -> list[str]:
        """s[c] += the slot's entry of class c, for every class (an integer 0 or a float -0 adds nothing)."""
        out = []
        for c, v in enumerate(row):
            if q:
                if int(v) != 0:
                    out.append(f"s[{c}] = {name}_sat(s[{c}], {c_int(int(v))});" if saturate else
                               f"s[{c}] += {c_int(int(v))};")
            elif np.float32(v).tobytes() != neg_zero:
                out.append(f"s[{c}] = s[{c}] + {c_float(float(v))};")
        return out

    init = ", ".join(c_int(v) if q else c_float(v) for v in d0)
    L: list[str] = [f"{score_t} s[{n_classes}] = {{{init}}};", f"{margin_t} margin;", "uint32_t lead;",
                    f"if (x == NULL || out == NULL || n != {int(m.n_features)}u) {{", "    return FM_E_ARG;", "}"]
    stops = {int(s): i for i, s in enumerate(m.stop_at)}
    group = NBK_GROUP if q and not saturate else 1

    def group_lines(ps: list[int], acc: Any) -> list[str]:
        """Positions ps nested: each leaf of the first holds the code of the rest, the last one's leaves add the
        sum of the rows on their path (q15 sums, exact while no class's sum can leave int32)."""
        def add(row: Any) -> list[str]:
            total = row if acc is None else acc + row
            return add_row(total) if len(ps) == 1 else group_lines(ps[1:], total)
        return position_lines(m, ps[0], name, entries[ps[0]], add, zero_share)

    def n_leaves(p: int) -> int:
        count = [0]

        def leaf(_: Any) -> list[str]:
            count[0] += 1
            return []
        position_lines(m, p, name, entries[p], leaf, zero_share)
        return count[0]

    leaves = [n_leaves(p) for p in range(k)] if group > 1 else [0] * k
    start, paths = 0, 1
    for p in range(k):
        paths *= max(leaves[p], 1)
        if group > 1 and p + 1 < k and p + 1 not in stops and paths * max(leaves[p + 1], 1) <= group:
            continue
        L += group_lines(list(range(start, p + 1)), None)
        start, paths = p + 1, 1
        if p + 1 in stops and not (not q and _never_hi(margins[stops[p + 1]], q)):  # q15: always tested
            t = stops[p + 1]
            L += [f"lead = {name}_lead(s, &margin);",
                  f"if (margin > {c_int(margins[t]) if q else c_float(margins[t])}) {{",
                  *("    " + line for line in exit_lines(q, cum, LEAD, "s[lead]", t + 1, p + 1)), "}"]
    L += [f"lead = {name}_lead(s, &margin);", "(void)margin;", *exit_lines(q, cum, LEAD, "s[lead]", 0, k)]
    lead = c_function(f"static inline uint32_t {name}_lead(const {score_t} *s, {margin_t} *margin)",
                      *lead_lines(n_classes, q, margin_t))
    return CodeBody(lines=L, helpers=(sat_helper(name) if saturate else []) + lead)


def lead_lines(n_classes: int, q: bool, margin_t: str = "int64_t") -> list[str]:
    """The body of NAME_lead, unrolled over the K classes: the leader (first class of largest score) and its margin
    over the largest other class. q15: one pass (best and second, each class tested once against second: most
    fail there), exact for integers, the margin in margin_t; float32: fm_nbk's two passes as they are (equal
    even with a NaN score)."""
    if q:
        body = ["int32_t best = s[0], second = INT32_MIN;", "uint32_t lead = 0u;"]
        for c in range(1, n_classes):
            body += [f"if (s[{c}] > second) {{", f"    if (s[{c}] > best) {{",
                     "        second = best;", f"        best = s[{c}];", f"        lead = {c}u;", "    } else {",
                     f"        second = s[{c}];", "    }", "}"]
        return [*body, f"*margin = ({margin_t})best - ({margin_t})second;", "return lead;"]
    body = ["float best = s[0], second;", "uint32_t lead = 0u;"]
    body += [line for c in range(1, n_classes)
             for line in (f"if (s[{c}] > best) {{", f"    best = s[{c}];", f"    lead = {c}u;", "}")]
    body.append("second = lead == 0u ? s[1] : s[0];")
    body += [line for c in range(1, n_classes)
             for line in (f"if (lead != {c}u && s[{c}] > second) {{", f"    second = s[{c}];", "}")]
    return [*body, "*margin = best - second;", "return lead;"]
