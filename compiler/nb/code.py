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

from typing import Any

import numpy as np

from compiler.codegen import INT32_MAX, CodeBody, bits_expr, le_key, nonfinite_test, register_code_form, sat_helper
from compiler.header import c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.nb.model import NBModel, _cum_costs

# Share of zeros at or above which the exact-zero test goes in front of the search: with 2 edges and
# the mean-std bins (about 16/68/16 % of the non-zero values per interval) the test in the zero's leaf
# saves about 0.84 tests per non-zero value and costs 2 per zero; even at a share of about 0.3.
ZERO_FIRST_SHARE = 0.25


def nb_code(tables: Any, numeric: str, name: str, zero_share: list[float] | None = None) -> CodeBody:
    if not isinstance(tables, NBModel):
        raise ValueError("--form code is available for two-class naive Bayes only so far; export this "
                         f"{tables.n_classes}-class model with --form tables")
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

    def cost_at(p: int) -> tuple[str, str]:
        """(cost, cost_q) C expressions after reading p features."""
        if q:
            return "0.0f", f"{p if cum is None else int(cum[p])}u"
        return c_float(float(p) if cum is None else float(cum[p])), "0u"

    def search(bits: str, e_keys: list[int], row: np.ndarray, lo: int, hi: int, out: list[str], ind: str,
               zero_at: int) -> None:
        """c = number of edges < x is in [lo, hi]: add row[1 + c]. A NaN or infinite x compares as beyond
        every (finite) edge (le_key: -inf and negative NaNs below, +inf and positive NaNs above), so
        only the first and the last interval's leaves test it, each for its own side, and fail at once.
        zero_at: the interval whose leaf tests for an exact zero first (adding row[0]), -1 for none."""
        vals = row[1 + lo:2 + hi]
        if lo == hi or bool(np.all(vals == vals[0])):
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
            leaf.append(add(row[1 + lo]))
            if lo <= zero_at <= hi and row[0] != row[1 + lo]:
                out += [ind + f"if (((uint32_t){bits} & 0x7fffffffu) == 0u) {{", ind + "    " + add(row[0]),
                        ind + "} else {", *(ind + "    " + line for line in leaf), ind + "}"]
            else:
                out += [ind + line for line in leaf]
            return
        mid = (lo + hi) // 2
        out.append(ind + f"if ({le_key(bits, e_keys[mid])}) {{")
        search(bits, e_keys, row, lo, mid, out, ind + "    ", zero_at)
        out.append(ind + "} else {")
        search(bits, e_keys, row, mid + 1, hi, out, ind + "    ", zero_at)
        out.append(ind + "}")

    def exit_lines(label: str, stage: int, p: int) -> list[str]:
        cost, cost_q = cost_at(p)
        return [f"out->label = {label};", f"out->stage = {stage}u;",
                f"out->score = {'0.0f' if q else 'a'};", f"out->score_q = {'a' if q else '0'};",
                f"out->n_read = {p}u;", f"out->cost = {cost};", f"out->cost_q = {cost_q};", "return FM_OK;"]

    L: list[str] = [f"{'int32_t' if q else 'float'} a = {fmt(d0)};",
                    f"if (x == NULL || out == NULL || n != {int(m.n_features)}u) {{", "    return FM_E_ARG;", "}"]
    stops = {int(s): i for i, s in enumerate(m.stop_at)}
    for p in range(k):
        j = int(m.order[p])
        ne = int(m.edge_start[p + 1] - m.edge_start[p])
        e_keys = [int(v) for v in float_keys(m.edges[int(m.edge_start[p]):int(m.edge_start[p + 1])])]
        row = entries[p]
        bits = bits_expr(name, j)
        L.append(f"/* position {p}: feature {j} */")
        zero_test = bool(m.zero_bin[p]) and not bool(np.all(row == row[0]))
        if zero_test and (zero_share is None or zero_share[p] >= ZERO_FIRST_SHARE):
            L.append(f"if (((uint32_t){bits} & 0x7fffffffu) == 0u) {{")
            L.append("    " + add(row[0]))
            L.append("} else {")
            search(bits, e_keys, row, 0, ne, L, "    ", -1)
            L.append("}")
        else:
            # +0 and -0 compare into the interval with every edge < 0 below it (le_key: x <= edge for
            # every edge >= 0, for either zero)
            zero_at = int(np.count_nonzero(np.asarray(e_keys) < 0)) if zero_test else -1
            search(bits, e_keys, row, 0, ne, L, "", zero_at)
        if p + 1 in stops:
            s = stops[p + 1]
            for bound, label, never, op in ((hi_b[s], "1", _never_hi(hi_b[s], q), ">"),
                                            (lo_b[s], "0", _never_lo(lo_b[s], q), "<")):
                if never:
                    continue
                L.append(f"if (a {op} {fmt(bound)}) {{")
                L += ["    " + line for line in exit_lines(label, s + 1, p + 1)]
                L.append("}")
    L += exit_lines(f"a > {fmt(thr)} ? 1 : 0", 0, k)
    return CodeBody(lines=L, helpers=sat_helper(name) if saturate else [])


def _never_hi(v: Any, q: bool) -> bool:
    return v == INT32_MAX if q else bool(np.isposinf(v))


def _never_lo(v: Any, q: bool) -> bool:
    return v == -(2**31) if q else bool(np.isneginf(v))


register_code_form(("nb-static", "nb-stop"), nb_code)
