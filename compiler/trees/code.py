"""Generated-code form of the tree cascades (kinds miser and cascade; compiler/codegen.py; TreeGen is shared with
compiler/gated/code.py): every tree becomes nested if/else on constant thresholds (raw float bits against
integer constants), each leaf adds its folded constant to the score; stages end with their exit test in place.

n_read and cost: the features at the roots of the first stage's trees are read by every prediction;
every other feature on a path is recorded at the leaf as bits OR-ed into uint32 masks (one constant
per mask word, no per-node "already read?" branch), and n_read / cost are summed from the masks at
the end when the costs are order-exact (costs absent, integer or power-of-two multiples; q15 cost
units always). Other float32 costs add each feature's cost at its first read (a per-feature flag),
in the reference's first-read order.

q15 only: leaves add their value minus a per-tree offset folded into the initial score (Ensemble.fold_offsets),
and on Thumb-2 the nodes compare the inputs' top 16 bits, read once and biased per feature, against
immediates (TreeGen._key16_bases); docs/runtime.md "Generated-code form".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compiler.codegen import (
    INT32_MAX,
    CodeBody,
    bits_expr,
    flag_lines,
    hi_helper,
    le_key,
    nonfinite_simd,
    nonfinite_test,
    order_exact,
    popcount_helper,
    register_code_form,
    sat_helper,
    thumb2_add_cost,
    thumb2_cmp_ok,
    thumb2_imm,
)
from compiler.header import c_float, c_int
from pyruntime.arrays import float_keys
from pyruntime.trees.cascade import TreeCascade, TreeCascadeQ15, as_cascade

MAX_DEPTH = 60  # nested blocks (C99 guarantees 127)
COMPACT_NODES = 256  # inner nodes from which a float32 walk's function gets <NAME>_FN_ATTR (TreeGen.compact_helpers)
COMPACT_OPTIONS = ("align-jumps=1", "align-labels=1")  # GCC x86 options of <NAME>_FN_ATTR

Lit = tuple[int, bool, int]  # (feature, went left, key): one decision of a path


def implies(path: tuple[Lit, ...], cond: tuple[Lit, ...]) -> bool:
    """Whether every input that takes the decisions `path` also takes those of `cond`. A node goes left
    iff le_key(bits, key), which for any bit pattern (NaN and inf included) holds for every key above
    the smallest one it holds for: left at key l implies left at every k >= l, right at l right at
    every k <= l."""
    return all(any(g == f and a == left and (k <= key if left else k >= key) for g, a, k in path)
               for f, left, key in cond)


def cascade_code(tables: Any, numeric: str, name: str, left_percent: list[int] | None = None) -> CodeBody:
    """left_percent (a code hint of training, see left_percents): per node the percentage of training rows
    that went left; the likelier side is laid out as the fall-through path (GCC/Clang branch hints), which
    shapes the code, never its answers."""
    m: TreeCascade | TreeCascadeQ15 = as_cascade(tables).q15() if numeric == "q15" else as_cascade(tables)
    return _Cascade(m, numeric == "q15", name, left_percent).body()


LIKELY_MARGIN = 20  # a node gets a branch hint when its training rows went one way at least 70 % of the time
# (measured on keel:satimage, 100 x depth 3, x86 float32 code form: 882 instructions per prediction without
# hints, 856 / 853 / 853 / 866 with margins 10 / 20 / 30 / 40)


def left_percents(tables: Any, X: np.ndarray) -> list[int]:
    """Per node of a cascade's trees: the percentage (0..100, rounded) of the rows of X reaching it that go
    left (50 where none does, and at leaves): the code form's `left_percent` hint, from the training rows.
    Every (row, tree) pair walks at once, a level per step (rows in chunks of about 2 M pairs)."""
    t = as_cascade(tables).trees
    X = np.asarray(X, np.float32)
    n_nodes = int(t.feature.shape[0])
    feature, left, right = np.asarray(t.feature), np.asarray(t.left), np.asarray(t.right)
    threshold = np.asarray(t.threshold, np.float32)
    roots = np.asarray(t.roots, np.int64)
    visits, lefts = np.zeros(n_nodes, np.int64), np.zeros(n_nodes, np.int64)
    chunk = max(1, 2_000_000 // max(roots.size, 1))
    for start in range(0, X.shape[0], chunk):
        part = X[start:start + chunk]
        node = np.tile(roots, part.shape[0])
        row = np.repeat(np.arange(part.shape[0]), roots.size)
        while node.size:
            inner = feature[node] >= 0
            node, row = node[inner], row[inner]
            go_left = part[row, feature[node]] <= threshold[node]
            visits += np.bincount(node, minlength=n_nodes)
            lefts += np.bincount(node[go_left], minlength=n_nodes)
            node = np.where(go_left, left[node], right[node])
    share = np.where(visits > 0, lefts / np.maximum(visits, 1), 0.5)
    return [int(round(100 * float(v))) for v in share]


class Ensemble:
    """One tree ensemble's arrays as the generator needs them (float32 or q15); its scores are the C
    locals <prefix>0 .. <prefix>{n_outputs-1}. likely: per node +1 (left likelier), -1 (right), 0."""

    def __init__(self, t: Any, q: bool, prefix: str, left_percent: list[int] | None = None) -> None:
        self.prefix = prefix
        self.likely = np.zeros(t.feature.shape[0], np.int64)
        self.left_share = np.full(t.feature.shape[0], 0.5)
        if left_percent is not None and len(left_percent) == t.feature.shape[0]:
            lp = np.asarray(left_percent, np.int64)
            self.left_share = np.clip(lp, 0, 100) / 100.0
            self.likely = np.where(lp >= 50 + LIKELY_MARGIN, 1, np.where(lp <= 50 - LIKELY_MARGIN, -1, 0))
        self.feature = t.feature.astype(np.int64)
        self.left, self.right = t.left.astype(np.int64), t.right.astype(np.int64)
        self.roots = t.roots.astype(np.int64)
        self.tree_output = t.tree_output.astype(np.int64)
        self.n_outputs = int(t.n_outputs)
        self.n_trees = int(t.n_trees)
        if q:
            self.keys = t.threshold_key.astype(np.int64)
            self.leaf = t.value_q.astype(np.int64)
            self.base: list[Any] = [int(v) for v in t.base_q]
            self.threshold: Any = int(t.decision_threshold_q)
        else:
            self.keys = float_keys(t.threshold).astype(np.int64)
            self.leaf = t.value
            self.base = [float(v) for v in t.base_score]
            self.threshold = float(t.decision_threshold)
        self.saturate = q and not self._no_overflow()
        # q15 leaf offsets (see fold_offsets): a leaf adds leaf - offset[tree]; the offsets of trees
        # 0..fold_end-1 are in the initial scores, those of later trees added before their walks
        self.offset = np.zeros(self.n_trees, np.int64)
        self.fold_end = self.n_trees
        if q and not self.saturate:
            self.fold_offsets()
        # q15 without saturation: right leaves add into <prefix><o>t, summed into <prefix><o> after the walk
        # (integer sums in any order are the same): on x86 two accumulators keep a depth-2 node a branch,
        # where one makes GCC select the constant (lea, lea, cmov: 4 instructions instead of about 2.5);
        # elsewhere <NAME>_TWIN(v) is v itself (Thumb-2 predicates the two adds more cheaply). Set by the
        # generator that emits the sum (TreeGen.twin_lines).
        self.twin = False

    def inner_features(self) -> set[int]:
        return {int(f) for f in self.feature[self.feature >= 0]}

    def root_features(self, first: int, end: int) -> set[int]:
        return {int(self.feature[r]) for r in self.roots[first:end] if self.feature[r] >= 0}

    def _no_overflow(self) -> bool:
        """No partial q15 sum can leave int32 (so plain adds equal the saturating ones)."""
        bound = [abs(b) for b in self.base]
        for t, r in enumerate(self.roots):
            bound[int(self.tree_output[t])] += max(abs(int(self.leaf[n])) for n in self._leaves(int(r)))
        return max(bound) <= INT32_MAX

    def fold_offsets(self) -> None:
        """Per tree an integer offset c subtracted from each of its leaves and added once to the score
        (integer sums in any order are the same): c is chosen so that the leaf adds are cheap Thumb-2
        immediates (a likely leaf adds nothing), weighted by the training rows' path shares (left_percent;
        1/2 a branch without it). Kept only when no partial sum can leave int32."""
        bound = [abs(b) for b in self.base]
        for t, r in enumerate(self.roots):
            leaves = self._leaf_shares(int(r))
            vals = [int(self.leaf[n]) for n, _ in leaves]
            cands = {0, *vals, *(v + d for v in vals for d in (-4095, 4095))}
            c = min(cands, key=lambda c: (sum(p * thumb2_add_cost(v - c) for v, (_, p) in zip(vals, leaves)),
                                          abs(c)))
            self.offset[t] = c
            bound[int(self.tree_output[t])] += abs(c) + max(abs(v - c) for v in vals)
        if max(bound) > INT32_MAX:
            self.offset[:] = 0

    def base_with_offsets(self) -> list[Any]:
        """The initial scores: the base plus the offsets of trees 0..fold_end-1."""
        out = list(self.base)
        for t in range(self.fold_end):
            out[int(self.tree_output[t])] += int(self.offset[t])
        return out

    def _leaf_shares(self, node: int) -> list[tuple[int, float]]:
        """(leaf, share of the rows reaching it) under node."""
        out, stack = [], [(node, 1.0)]
        while stack:
            n, p = stack.pop()
            if self.feature[n] < 0:
                out.append((n, p))
            else:
                lp = float(self.left_share[n])
                stack += [(int(self.left[n]), p * lp), (int(self.right[n]), p * (1.0 - lp))]
        return out

    def _leaves(self, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            if self.feature[n] < 0:
                out.append(n)
            else:
                stack += [int(self.left[n]), int(self.right[n])]
        return out


class TreeGen:
    """Emits tree walks of one or more ensembles sharing one touched-feature record (n_read, cost)."""

    def __init__(self, name: str, q: bool, n_features: int, costs: np.ndarray | None, parts: list[Ensemble],
                 always: set[int]) -> None:
        self.name, self.q, self.n_features, self.parts = name, q, n_features, parts
        self.always = sorted(always)
        used: set[int] = set()
        for e in parts:
            used |= e.inner_features()
        self.used = sorted(used)
        self.tracked = [f for f in self.used if f not in always]
        self.bit = {f: i for i, f in enumerate(self.tracked)}
        self.n_words = (len(self.tracked) + 31) // 32
        self.units: list[int] = []
        self.scale = 0
        if costs is None:
            self.mode = "count"
        elif q:
            self.mode, self.units = "units", [int(c) for c in costs]
        else:
            ex = order_exact(costs)
            if ex is None:
                self.mode = "general"
                self.costs_f = np.asarray(costs, np.float32)
            else:
                self.mode, (self.units, self.scale) = "units", ex
        self.seen_index = {f: i for i, f in enumerate(self.used)}
        self.saturate = any(e.saturate for e in parts)
        self.known: dict[int, list[tuple[Lit, ...]]] = {}
        self.hinted = False  # a walk used the branch hints (helpers then define them)
        self.base16 = self._key16_bases() if q else {}

    def _key16_bases(self) -> dict[int, int]:
        """q15 keys are 65536 k + 65535: for k >= 0, bits(x) <= key iff the top half h of the bits (signed)
        is <= k, for every bit pattern. Where <NAME>_KEY16 is on (Thumb-2), each feature's h is read once
        before the walks as d = h - B (B per feature) and the nodes compare d with k - B, which B makes a
        cmp immediate (a 32-bit key needs a constant load per node). Per feature with such nodes: B, a
        Thumb-2 immediate (0 or 0xXY00-like) that makes most of its nodes' k - B immediates."""
        ks: dict[int, list[int]] = {}
        for e in self.parts:
            for n in np.flatnonzero((e.feature >= 0) & (e.keys >= 0)):
                ks.setdefault(int(e.feature[n]), []).append(int(e.keys[n]) >> 16)
        out = {}
        for f, k in ks.items():
            cands = {0} | {(v - d) & ~0xFF for v in k for d in (0, 128, 255) if v - d >= 0}
            cands = {b for b in cands if b <= 4095 or thumb2_imm(b)}
            out[f] = min(cands, key=lambda b: (-sum(thumb2_cmp_ok(v - b) for v in k), b))
        return out

    # -- walks --
    def _leaf_lines(self, e: Ensemble, leaves: list[tuple[int, int]], lits: tuple[Lit, ...],
                    reads: list[int]) -> list[str]:
        """A leaf of a walk: per tree of the walk's group (leaves: (tree, leaf node), in tree order) the add of
        its value to its output, then the path's record of tracked features (once: the group's trees share
        the path)."""
        adds = []
        for t, node in leaves:
            v, off = e.leaf[node], (int(e.offset[t]) if self.q else 0)
            s = f"{e.prefix}{int(e.tree_output[t])}"
            if self.q:
                if int(v) == off:
                    continue  # the tree's offset is this leaf's value
                if e.twin and lits and not lits[-1][1]:  # a right leaf: the twin accumulator (see Ensemble.twin)
                    s = f"{self.name.upper()}_TWIN({s})"
                val = c_int(int(v) - off)
                adds.append(f"{s} = {self.name}_sat({s}, {val});" if e.saturate else f"{s} += {val};")
            else:
                adds.append(f"{s} = {s} + {c_float(float(v))};")
        words: dict[int, int] = {}
        for f in reads:
            if f in self.bit and not any(implies(lits, c) for c in self.known.get(f, ())):
                b = self.bit[f]
                words[b // 32] = words.get(b // 32, 0) | (1 << (b % 32))
        return adds + [f"t{w} |= {hex(mask)}u;" for w, mask in sorted(words.items())]

    def _node(self, e: Ensemble, nodes: list[tuple[int, int]], lits: tuple[Lit, ...], reads: list[int],
              out: list[str], ind: str, found: list[tuple[int, tuple[Lit, ...]]]) -> None:
        """The walk of a group of trees of equal splits (nodes: (tree, node) at the same place of each, the
        first tree's node deciding; see TreeGen.groups)."""
        node = nodes[0][1]
        if e.feature[node] < 0:
            out += [ind + line for line in self._leaf_lines(e, nodes, lits, reads)]
            return
        depth = len(lits)
        if depth >= MAX_DEPTH:
            raise ValueError(f"--form code: trees deeper than {MAX_DEPTH} levels; use --form tables")
        f, key = int(e.feature[node]), int(e.keys[node])
        if self.mode == "general" and f not in reads:
            k = self.seen_index[f]
            out += [ind + f"if (r[{k}] == 0u) {{", ind + f"    r[{k}] = 1u;",
                    ind + f"    c = c + {c_float(float(self.costs_f[f]))};", ind + "}"]
        found.append((f, lits))
        sub = reads + [f]
        if key >= 0 and f in self.base16:
            cond = f"{self.name.upper()}_LE({f}, {key}, {(key >> 16) - self.base16[f]})"
        else:
            cond = le_key(bits_expr(self.name, f), key)
        hint = int(e.likely[node])
        if hint:
            self.hinted = True
            cond = f"{self.name.upper()}_{'LIKELY' if hint > 0 else 'UNLIKELY'}({cond})"
        out.append(ind + f"if ({cond}) {{")
        self._node(e, [(t, int(e.left[n])) for t, n in nodes], lits + ((f, True, key),), sub, out, ind + "    ",
                   found)
        out.append(ind + "} else {")
        self._node(e, [(t, int(e.right[n])) for t, n in nodes], lits + ((f, False, key),), sub, out, ind + "    ",
                   found)
        out.append(ind + "}")

    @staticmethod
    def groups(e: Ensemble, first: int, end: int) -> list[list[int]]:
        """Trees first..end-1 in runs of consecutive trees with equal splits (the same features and keys in the
        same shape; a K-class model on shared trees, --class-trees shared, has one run of K per iteration): one
        walk per run whose leaves add each tree's own value. Each output's adds keep the trees' order and a
        run's trees read nothing their first tree did not, so scores, reads and costs are those of one walk
        per tree."""
        def same(a: int, b: int) -> bool:
            if e.feature[a] < 0 or e.feature[b] < 0:
                return bool(e.feature[a] < 0 and e.feature[b] < 0)
            return bool(e.feature[a] == e.feature[b] and e.keys[a] == e.keys[b]
                        and same(int(e.left[a]), int(e.left[b])) and same(int(e.right[a]), int(e.right[b])))

        out: list[list[int]] = []
        for t in range(first, end):
            if out and same(int(e.roots[out[-1][0]]), int(e.roots[t])):
                out[-1].append(t)
            else:
                out.append([t])
        return out

    def trees(self, e: Ensemble, first: int, end: int, ind: str = "") -> list[str]:
        """The walks of e's trees first..end-1, in order, one per group of equal splits (groups). A leaf records
        the tracked features of its path, except those an earlier walk has certainly recorded (self.known: per
        feature the path conditions under which an earlier walk read it; a condition implied by the leaf's own
        path holds)."""
        out: list[str] = []
        late = [0] * e.n_outputs  # the offsets not in the initial scores (Ensemble.fold_end)
        for t in range(max(first, e.fold_end), end):
            late[int(e.tree_output[t])] += int(e.offset[t])
        out += [ind + f"{e.prefix}{o} += {c_int(c)};" for o, c in enumerate(late) if c]
        for group in self.groups(e, first, end):
            what = f"tree {group[0]}" if len(group) == 1 else f"trees {group[0]}..{group[-1]} (equal splits)"
            out.append(ind + f"/* {e.prefix}: {what} */")
            found: list[tuple[int, tuple[Lit, ...]]] = []
            self._node(e, [(t, int(e.roots[t])) for t in group], (), [], out, ind, found)
            for f, cond in found:
                if f in self.bit:
                    self.known.setdefault(f, []).append(cond)
        return out

    def twin_lines(self, e: Ensemble) -> tuple[list[str], list[str]]:
        """(declarations, the sums after the walks) of e's twin accumulators (Ensemble.twin)."""
        if not e.twin:
            return [], []
        p = e.prefix
        return ([f"int32_t {', '.join(f'{p}{o}t = 0' for o in range(e.n_outputs))};"],
                [f"{p}{o} += {p}{o}t;" for o in range(e.n_outputs)])

    def snapshot(self) -> dict[int, list[tuple[Lit, ...]]]:
        """What the walks emitted so far have certainly recorded (for code that branches: restore it
        before the other branch's walks)."""
        return {f: list(c) for f, c in self.known.items()}

    def restore(self, known: dict[int, list[tuple[Lit, ...]]]) -> None:
        self.known = {f: list(c) for f, c in known.items()}

    # -- declarations, end --
    def declarations(self) -> list[str]:
        sc = "int32_t" if self.q else "float"
        L = [f"{sc} " + ", ".join(f"{e.prefix}{o} = {c_int(b) if self.q else c_float(b)}"
                                  for e in self.parts for o, b in enumerate(e.base_with_offsets())) + ";"]
        if self.n_words:
            L.append("uint32_t " + ", ".join(f"t{w} = 0u" for w in range(self.n_words)) + ";")
        L.append("uint32_t nf = 0u, nr;")
        if self.mode == "units":
            L.append("uint32_t u;")
        if self.mode == "general":
            L += [f"uint8_t r[{max(len(self.used), 1)}];", "float c = 0.0f;"]
        if self.base16:
            L += [f"#if {self.name.upper()}_KEY16", "int32_t " + ", ".join(f"d{f}" for f in sorted(self.base16)) + ";",
                  "#endif"]
        return L

    def start(self) -> list[str]:
        L = [f"if (x == NULL || out == NULL || n != {self.n_features}u) {{", "    return FM_E_ARG;", "}"]
        if self.mode == "general":
            L.append("memset(r, 0, sizeof r);")
        if self.base16:  # the top halves, once, with the non-finite flag (bit 15 of (h + 0x80) ^ h)
            up = self.name.upper()
            L += [f"#if {up}_KEY16", "{", "    int32_t h;"]
            for f in self.used:
                L += [f"    h = {self.name}_hi(x + {f});", "    nf |= (uint32_t)(h + 0x80) ^ (uint32_t)h;"]
                if f in self.base16:
                    L.append(f"    d{f} = {up}_D(h, {self.base16[f]});")
            L += ["}", "#endif"]
        return L

    def accounting(self) -> tuple[list[str], str, str]:
        """(lines: non-finite check, nr; cost C expression, cost_q C expression)."""
        name = self.name
        if self.base16:
            L = [f"#if !{name.upper()}_KEY16", *flag_lines(name, self.used), "#endif",
                 f"if (nf & {name.upper()}_NF_BIT) {{"]
        else:
            L = [*flag_lines(name, self.used), "if (nf & 0x80000000u) {"]
        for f in self.always:
            L += [f"    if ({nonfinite_test(bits_expr(name, f))}) {{", "        return FM_E_VALUE;", "    }"]
        for f in self.tracked:
            b = self.bit[f]
            L += [f"    if ((t{b // 32} & {hex(1 << (b % 32))}u) != 0u && {nonfinite_test(bits_expr(name, f))}) {{",
                  "        return FM_E_VALUE;", "    }"]
        L.append("}")
        pcs = " + ".join(f"{name}_pc(t{w})" for w in range(self.n_words))
        L.append(f"nr = {len(self.always)}u" + (f" + {pcs}" if pcs else "") + ";")
        cost, cost_q = "0.0f", "0u"
        if self.mode == "count":
            cost_q, cost = ("nr", cost) if self.q else (cost_q, "(float)nr")
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
                        L += [f"if ((t{b // 32} & {hex(1 << (b % 32))}u) != 0u) {{", f"    u += {self.units[f]}u;",
                              "}"]
            if self.q:
                cost_q = "u"
            else:
                cost = "(float)u" if self.scale == 0 else f"(float)u * {c_float(2.0 ** self.scale)}"
        else:
            cost = "c"
        return L, cost, cost_q

    def finish(self, e: Ensemble, label: str, score: str, ind: str = "") -> list[str]:
        """Lines setting the C lvalues `label` (int32_t) and `score` from e's scores (fm_trees_finish)."""
        p = e.prefix
        if e.n_outputs == 1:
            thr = c_int(e.threshold) if self.q else c_float(e.threshold)
            return [ind + f"{label} = {p}0 > {thr} ? 1 : 0;", ind + f"{score} = {p}0;"]
        sc = "int32_t" if self.q else "float"
        out = [ind + "{", ind + f"    {sc} best = {p}0;", ind + "    int32_t b = 0;"]
        for o in range(1, e.n_outputs):
            out += [ind + f"    if ({p}{o} > best) {{", ind + f"        best = {p}{o};", ind + f"        b = {o};",
                    ind + "    }"]
        return out + [ind + f"    {label} = b;", ind + f"    {score} = best;", ind + "}"]

    def helpers(self) -> list[str]:
        out = popcount_helper(self.name) if self.n_words else []
        up = self.name.upper()
        hints = ["#if defined(__GNUC__) && !defined(FM_PORTABLE)", f"#define {up}_LIKELY(c) __builtin_expect(!!(c), 1)",
                 f"#define {up}_UNLIKELY(c) __builtin_expect(!!(c), 0)", "#else", f"#define {up}_LIKELY(c) (c)",
                 f"#define {up}_UNLIKELY(c) (c)", "#endif"] if self.hinted else []
        twin = ["#if defined(__x86_64__) || defined(__i386__)", f"#define {up}_TWIN(v) v##t", "#else",
                f"#define {up}_TWIN(v) v", "#endif"] if any(e.twin for e in self.parts) else []
        return (out + (sat_helper(self.name) if self.saturate else []) + nonfinite_simd(self.name, self.used)
                + hints + twin + self._key16_helpers())

    def _key16_helpers(self) -> list[str]:
        """The switch and macros of the 16-bit compares (_key16_bases). <NAME>_KEY16: 1 on Thumb-2 unless
        FM_PORTABLE, else 0; -D<NAME>_KEY16=0/1 overrides. <NAME>_D keeps d opaque to GCC (an unsigned
        difference; a signed one is folded back into the 32-bit key compare); plain h - B elsewhere."""
        if not self.base16:
            return []
        up, name = self.name.upper(), self.name
        return [*hi_helper(name), f"#ifndef {up}_KEY16", "#if defined(__thumb2__) && !defined(FM_PORTABLE)",
                f"#define {up}_KEY16 1", "#else", f"#define {up}_KEY16 0", "#endif", "#endif",
                f"#if {up}_KEY16", f"#define {up}_LE(j, key, c) (d##j <= (c))", f"#define {up}_NF_BIT 0x8000u",
                "#else", f"#define {up}_LE(j, key, c) ({name}_bits(x + (j)) <= (key))",
                f"#define {up}_NF_BIT 0x80000000u", "#endif", "#if defined(__GNUC__) && !defined(FM_PORTABLE)",
                f"#define {up}_D(h, b) ((int32_t)((uint32_t)(h) - (b##u)))", "#else",
                f"#define {up}_D(h, b) ((h) - (b))", "#endif"]

    def compact(self) -> bool:
        """float32 only: on q15 the same attribute measured +0.1 instructions per prediction on x86."""
        return not self.q and sum(int((e.feature >= 0).sum()) for e in self.parts) >= COMPACT_NODES

    def compact_helpers(self) -> list[str]:
        """<NAME>_FN_ATTR, the function attribute of a large walk (COMPACT_NODES inner nodes or more): GCC on
        x86 (not clang, unless FM_PORTABLE; -D<NAME>_COMPACT=0/1 overrides) pads no jump target
        (-falign-jumps=1 -falign-labels=1; "no-align-jumps" is ignored there), saving about 4 bytes of nops
        after each leaf's jump, never executed (digits, 10 classes x 100 rounds x depth 3, float32:
        268621 -> 247789 bytes, benchmarks/runtime.py's code_bytes). Other compilers and targets: nothing
        (Cortex-M's counts and bytes as before)."""
        if not self.compact():
            return []
        up = self.name.upper()
        opts = ", ".join(f'"{o}"' for o in COMPACT_OPTIONS)
        return [f"#ifndef {up}_COMPACT",
                "#if defined(__GNUC__) && !defined(__clang__) && !defined(__INTEL_COMPILER) && "
                "(defined(__x86_64__) || defined(__i386__)) && !defined(FM_PORTABLE)",
                f"#define {up}_COMPACT 1", "#else", f"#define {up}_COMPACT 0", "#endif", "#endif",
                f"#if {up}_COMPACT && defined(__GNUC__)", f"#define {up}_FN_ATTR __attribute__((optimize({opts})))",
                "#else", f"#define {up}_FN_ATTR", "#endif"]

    def result(self, stage: str, cost: str, cost_q: str) -> list[str]:
        """Writes *out from the locals `lab` and `sco` (the answering part's label and score)."""
        return ["out->label = lab;", f"out->score = {'0.0f' if self.q else 'sco'};",
                f"out->score_q = {'sco' if self.q else '0'};", "out->n_read = nr;", f"out->cost = {cost};",
                f"out->stage = {stage};", f"out->cost_q = {cost_q};", "return FM_OK;"]


class _Cascade:
    def __init__(self, m: TreeCascade | TreeCascadeQ15, q: bool, name: str, left_percent: list[int] | None) -> None:
        self.m, self.q, self.name = m, q, name
        self.e = Ensemble(m.trees, q, "s", left_percent)
        self.stage_end = [int(v) for v in m.stage_end]
        self.g = TreeGen(name, q, int(m.n_features), m.trees.costs, [self.e],
                         self.e.root_features(0, self.stage_end[0]))

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
        g, e, q = self.g, self.e, self.q
        sc = "int32_t" if q else "float"
        no = e.n_outputs
        multi_stage = len(self.stage_end) > 1
        e.twin = q and not e.saturate and not multi_stage  # no exit test reads a partial score
        e.fold_end = self.stage_end[0]  # later stages add their trees' offsets after the exit test before them
        twin_decl, twin_sum = g.twin_lines(e)
        L = g.declarations() + twin_decl + ["int32_t lab;", f"{sc} sco;"]
        if multi_stage:
            L.append(f"uint32_t stage = {len(self.stage_end) - 1}u;")
        tests = [self._exit_test(s) for s in range(len(self.stage_end) - 1)]
        margin = self.m.exit_rule == "margin" and any(t is not None for t in tests)
        if margin:
            L.append(f"{sc} s[{no}];")
        L += g.start()
        start, jumps = 0, False
        for s, end in enumerate(self.stage_end):
            L += g.trees(e, start, end)
            start = end
            if s + 1 < len(self.stage_end):
                test = tests[s]
                if test is not None:
                    if margin:
                        L += [f"s[{o}] = s{o};" for o in range(no)]
                    L += [f"if ({test}) {{", f"    stage = {s}u;", "    goto done;", "}"]
                    jumps = True
        if jumps:
            L.append("done:")
        L += twin_sum
        acc, cost, cost_q = g.accounting()
        L += acc + g.finish(e, "lab", "sco") + g.result("stage" if multi_stage else "0u", cost, cost_q)
        helpers = g.helpers() + (self._margin_helper() if margin else []) + g.compact_helpers()
        return CodeBody(lines=L, helpers=helpers, fn_attr=f"{self.name.upper()}_FN_ATTR" if g.compact() else "")

    def _margin_helper(self) -> list[str]:
        """Best minus the largest other score (fm_cascade.c margin_f32 / margin_q)."""
        no, q, name = self.e.n_outputs, self.q, self.name
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


register_code_form(("miser", "cascade"), cascade_code)
