"""Generated-code form of the tree cascades (kinds miser and cascade; compiler/codegen.py): every tree
becomes nested if/else on constant thresholds (raw float bits against integer constants), each leaf
adds its folded constant to the score; stages end with their exit test in place.

n_read and cost: the features at the roots of the first stage's trees are read by every prediction;
every other feature on a path is recorded at the leaf as bits OR-ed into uint32 masks (one constant
per mask word, no per-node "already read?" branch), and n_read / cost are summed from the masks at
the end when the costs are order-exact (costs absent, integer or power-of-two multiples; q15 cost
units always). Other float32 costs add each feature's cost at its first read (a per-feature flag),
in the reference's first-read order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compiler.codegen import (
    INT32_MAX,
    CodeBody,
    bits_expr,
    flag_lines,
    le_key,
    nonfinite_test,
    order_exact,
    popcount_helper,
    sat_helper,
)
from compiler.header import c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.trees.cascade import TreeCascade, TreeCascadeQ15, as_cascade

MAX_DEPTH = 60  # nested blocks (C99 guarantees 127)


def cascade_code(tables: Any, numeric: str, name: str) -> CodeBody:
    m: TreeCascade | TreeCascadeQ15 = as_cascade(tables).q15() if numeric == "q15" else as_cascade(tables)
    return _Gen(m, numeric == "q15", name).body()


class _Gen:
    def __init__(self, m: TreeCascade | TreeCascadeQ15, q: bool, name: str) -> None:
        t = m.trees
        self.m, self.q, self.name = m, q, name
        self.feature = t.feature.astype(np.int64)
        self.left, self.right = t.left.astype(np.int64), t.right.astype(np.int64)
        self.roots = t.roots.astype(np.int64)
        self.tree_output = t.tree_output.astype(np.int64)
        self.n_outputs = int(t.n_outputs)
        if q:
            self.keys = t.threshold_key.astype(np.int64)  # type: ignore[union-attr]
            self.leaf = t.value_q.astype(np.int64)  # type: ignore[union-attr]
            self.base = [int(v) for v in t.base_q]  # type: ignore[union-attr]
        else:
            self.keys = float_keys(t.threshold).astype(np.int64)  # type: ignore[union-attr]
            self.leaf = t.value  # type: ignore[union-attr]
            self.base = [float(v) for v in t.base_score]  # type: ignore[union-attr]
        self.stage_end = [int(v) for v in m.stage_end]
        first = range(0, self.stage_end[0])
        self.always = sorted({int(self.feature[r]) for r in self.roots[list(first)] if self.feature[r] >= 0})
        inner = self.feature[self.feature >= 0]
        used = sorted({int(f) for f in inner})
        self.used = used
        self.tracked = [f for f in used if f not in set(self.always)]
        self.bit = {f: i for i, f in enumerate(self.tracked)}
        self.n_words = (len(self.tracked) + 31) // 32
        costs = t.costs
        if q:
            self.mode, self.units, self.scale = ("count", [], 0) if costs is None else \
                ("units", [int(c) for c in costs], 0)
        elif costs is None:
            self.mode, self.units, self.scale = "count", [], 0
        else:
            ex = order_exact(costs)
            if ex is None:
                self.mode, self.units, self.scale = "general", [], 0
                self.costs_f = np.asarray(costs, np.float32)
            else:
                self.mode, self.units, self.scale = "units", ex[0], ex[1]
        self.seen_index = {f: i for i, f in enumerate(used)}
        self.saturate = q and not self._no_overflow()

    def _no_overflow(self) -> bool:
        """No partial q15 sum can leave int32 (so plain adds equal the saturating ones)."""
        bound = [abs(b) for b in self.base]
        for t, r in enumerate(self.roots):
            leaves = self._leaves(int(r))
            bound[int(self.tree_output[t])] += max(abs(int(self.leaf[n])) for n in leaves)
        return max(bound) <= INT32_MAX

    def _leaves(self, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            if self.feature[n] < 0:
                out.append(n)
            else:
                stack += [int(self.left[n]), int(self.right[n])]
        return out

    # -- emission --
    def _leaf_lines(self, node: int, o: int, path: set[int]) -> list[str]:
        v = self.leaf[node]
        if self.q:
            val = c_int(int(v))
            add = f"s{o} = {self.name}_sat(s{o}, {val});" if self.saturate else f"s{o} += {val};"
        else:
            add = f"s{o} = s{o} + {c_float(float(v))};"
        lines = [add]
        words: dict[int, int] = {}
        for f in path:
            if f in self.bit:
                b = self.bit[f]
                words[b // 32] = words.get(b // 32, 0) | (1 << (b % 32))
        lines += [f"t{w} |= {hex(mask)}u;" for w, mask in sorted(words.items())]
        return lines

    def _node(self, node: int, o: int, path: set[int], depth: int, out: list[str], ind: str) -> None:
        if self.feature[node] < 0:
            out += [ind + line for line in self._leaf_lines(node, o, path)]
            return
        if depth >= MAX_DEPTH:
            raise ValueError(f"--form code: trees deeper than {MAX_DEPTH} levels; use --form tables")
        f = int(self.feature[node])
        if self.mode == "general" and f not in path:
            k = self.seen_index[f]
            out += [ind + f"if (r[{k}] == 0u) {{", ind + f"    r[{k}] = 1u;",
                    ind + f"    c = c + {c_float(float(self.costs_f[f]))};", ind + "}"]
        sub = path | {f}
        out.append(ind + f"if ({le_key(bits_expr(self.name, f), int(self.keys[node]))}) {{")
        self._node(int(self.left[node]), o, sub, depth + 1, out, ind + "    ")
        out.append(ind + "} else {")
        self._node(int(self.right[node]), o, sub, depth + 1, out, ind + "    ")
        out.append(ind + "}")

    def _exit_test(self, s: int) -> str | None:
        m = self.m
        if self.q:
            hi, lo = int(m.exit_upper_q[s]), int(m.exit_lower_q[s])  # type: ignore[union-attr]
            never_hi, never_lo = hi == INT32_MAX, lo == -(2**31)
            fmt = c_int
        else:
            hi, lo = float(m.exit_upper[s]), float(m.exit_lower[s])  # type: ignore[union-attr,assignment]
            never_hi, never_lo = bool(np.isposinf(hi)), bool(np.isneginf(lo))
            fmt = c_float  # type: ignore[assignment]
        if m.exit_rule == "score":
            parts = ([] if never_hi else [f"s0 > {fmt(hi)}"]) + ([] if never_lo else [f"s0 < {fmt(lo)}"])
            return " || ".join(parts) if parts else None
        return None if never_hi else f"{self.name}_margin(s) > {fmt(hi)}"

    def body(self) -> CodeBody:
        name, q = self.name, self.q
        sc = "int32_t" if q else "float"
        L: list[str] = []
        no = self.n_outputs
        L.append(f"{sc} " + ", ".join(f"s{o} = {c_int(b) if q else c_float(b)}" for o, b in enumerate(self.base)) + ";")
        if self.n_words:
            L.append("uint32_t " + ", ".join(f"t{w} = 0u" for w in range(self.n_words)) + ";")
        L.append("uint32_t nf = 0u, nr;")
        multi_stage = len(self.stage_end) > 1
        if multi_stage:
            L.append(f"uint32_t stage = {len(self.stage_end) - 1}u;")
        if no > 1:
            L.append(f"{sc} s[{no}];")
        if self.mode == "units":
            L.append("uint32_t u;")
        if self.mode == "general":
            L += [f"uint8_t r[{max(len(self.used), 1)}];", "float c = 0.0f;"]
        flags = flag_lines(name, self.used)
        if any(line.startswith("for (j") for line in flags):
            L.append("uint32_t j;")
        L += ["if (x == NULL || out == NULL || n != " + f"{int(self.m.n_features)}u) {{", "    return FM_E_ARG;", "}"]
        if self.mode == "general":
            L.append("memset(r, 0, sizeof r);")
        start = 0
        jumps = False
        helpers: list[str] = []
        for s, end in enumerate(self.stage_end):
            for t in range(start, end):
                o = int(self.tree_output[t])
                L.append(f"/* tree {t} */")
                self._node(int(self.roots[t]), o, set(), 0, L, "")
            start = end
            if s + 1 < len(self.stage_end):
                test = self._exit_test(s)
                if test is not None:
                    if no > 1:
                        L += [f"s[{o}] = s{o};" for o in range(no)]
                    L += [f"if ({test}) {{", f"    stage = {s}u;", "    goto done;", "}"]
                    jumps = True
        if jumps:
            L.append("done:")
        # non-finite check: a cheap flag over every feature the model may read, exact on the rare hit
        L += flags
        L.append("if (nf & 0x80000000u) {")
        for f in self.always:
            L += [f"    if ({nonfinite_test(bits_expr(name, f))}) {{", "        return FM_E_VALUE;", "    }"]
        for f in self.tracked:
            b = self.bit[f]
            L += [f"    if ((t{b // 32} & {hex(1 << (b % 32))}u) != 0u && {nonfinite_test(bits_expr(name, f))}) {{",
                  "        return FM_E_VALUE;", "    }"]
        L.append("}")
        pcs = " + ".join(f"{name}_pc(t{w})" for w in range(self.n_words))
        L.append(f"nr = {len(self.always)}u" + (f" + {pcs}" if pcs else "") + ";")
        if self.n_words:
            helpers += popcount_helper(name)
        cost_q = "0u"
        cost = "0.0f"
        if self.mode == "count":
            if q:
                cost_q = "nr"
            else:
                cost = "(float)nr"
        elif self.mode == "units":
            ka = sum(self.units[f] for f in self.always)
            tracked_units = [self.units[f] for f in self.tracked]
            if tracked_units and len(set(tracked_units)) == 1:
                L.append(f"u = {ka}u + {tracked_units[0]}u * ({pcs});")
            else:
                L.append(f"u = {ka}u;")
                for f in self.tracked:
                    b = self.bit[f]
                    if self.units[f]:
                        L += [f"if ((t{b // 32} & {hex(1 << (b % 32))}u) != 0u) {{", f"    u += {self.units[f]}u;", "}"]
            if q:
                cost_q = "u"
            else:
                cost = "(float)u" if self.scale == 0 else f"(float)u * {c_float(2.0 ** self.scale)}"
        else:
            cost = "c"
        if no == 1:
            thr = c_int(int(self.m.trees.decision_threshold_q)) if q else \
                c_float(float(self.m.trees.decision_threshold))  # type: ignore[union-attr]
            L.append(f"out->label = s0 > {thr} ? 1 : 0;")
            best = "s0"
        else:
            L += [f"s[{o}] = s{o};" for o in range(no)]
            L += ["{", "    uint32_t o, b = 0u;", f"    for (o = 1u; o < {no}u; ++o) {{",
                  "        if (s[o] > s[b]) {", "            b = o;", "        }", "    }",
                  "    out->label = (int32_t)b;", "    s0 = s[b];", "}"]
            best = "s0"
        L += [f"out->score = {'0.0f' if q else best};", f"out->score_q = {best if q else '0'};",
              "out->n_read = nr;", f"out->cost = {cost};", f"out->stage = {'stage' if multi_stage else '0u'};",
              f"out->cost_q = {cost_q};", "return FM_OK;"]
        if self.saturate:
            helpers += sat_helper(name)
        if self.m.exit_rule == "margin" and multi_stage:
            helpers += self._margin_helper()
        return CodeBody(lines=L, helpers=helpers)

    def _margin_helper(self) -> list[str]:
        """Best minus the largest other score (fm_cascade.c margin_f32 / margin_q)."""
        no, q, name = self.n_outputs, self.q, self.name
        sc = "int32_t" if q else "float"
        diff = ["    {", "        int64_t d = (int64_t)s[b] - (int64_t)second;",
                "        return d > (int64_t)INT32_MAX ? INT32_MAX : (int32_t)d;", "    }"] if q else \
            ["    return s[b] - second;"]
        return [
            f"static inline {sc} {name}_margin(const {sc} *s)",
            "{",
            "    uint32_t o, b = 0u;",
            f"    {sc} second;",
            f"    for (o = 1u; o < {no}u; ++o) {{",
            "        if (s[o] > s[b]) {",
            "            b = o;",
            "        }",
            "    }",
            "    second = b == 0u ? s[1] : s[0];",
            f"    for (o = 0u; o < {no}u; ++o) {{",
            "        if (o != b && s[o] > second) {",
            "            second = s[o];",
            "        }",
            "    }",
            *diff,
            "}",
        ]
