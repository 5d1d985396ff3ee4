"""One regression tree grown on gradient/hessian histograms of binned features.

Newton gain of a split (XGBoost/LightGBM form) times ``gain_scale`` minus the Greedy Miser
penalty of its feature when the feature is not yet used (Xu et al., ICML 2012): a feature's
penalty is charged once; features chosen earlier in the tree (or by earlier trees, ``used``) are
free. With a per-row read mask (``read``, charge "row") the penalty is instead charged per row: a
split on feature j costs its penalty times the share of the training rows in the node whose path
has not read j yet (in an earlier tree or above in this one) -- the expected cost a lazy runtime
pays, which only reads the features on a row's path (CEGB's "lazy" penalty, Peter et al. 2017).
A node splits only if its best net gain is > 0, each child keeping hessian >=
``min_child_weight`` and >= ``min_samples_leaf`` rows. Leaf value: -G / (H + l2).

Growth: depth-wise (every node of a level in order, the paper's trees) or leaf-wise (the leaf
with the largest gain first, up to ``max_leaves``; LightGBM's). Only the smaller child of a split
gets its histogram from the rows; the larger one is the parent's minus it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.boosting._histboost import ffi, lib
from compiler.boosting.binning import Binner
from compiler.boosting.penalty import GroupedCosts
from compiler.boosting.tree import CostTree, TreeFit


@dataclass(frozen=True)
class TreeParams:
    """Shape and regularisation of one tree."""

    max_depth: int = 3
    max_leaves: int | None = None  # None: depth-wise; else leaf-wise (best first) up to this many leaves
    l2: float = 0.0
    min_child_weight: float = 1e-3
    min_samples_leaf: int = 1
    # > 0: each leaf's Newton step -G/(H+l2) clipped to +-max_delta_step before the shrinkage (XGBoost's and
    # LightGBM's max_delta_step): where the hessian vanishes (a logistic fit to targets of exactly 0 or 1) the
    # step is otherwise unbounded. 0: no cap.
    max_delta_step: float = 0.0

    def __post_init__(self) -> None:
        if self.max_depth < 1:
            raise ValueError("max_depth must be >= 1")
        if self.max_leaves is not None and self.max_leaves < 2:
            raise ValueError("max_leaves must be >= 2")
        if not self.l2 >= 0 or not self.min_child_weight >= 0 or not self.max_delta_step >= 0:
            raise ValueError("l2, min_child_weight and max_delta_step must be >= 0")
        if self.min_samples_leaf < 1:
            raise ValueError("min_samples_leaf must be >= 1")


def _dp(a: np.ndarray) -> object:
    return ffi.cast("double *", a.ctypes.data)


def _ip(a: np.ndarray) -> object:
    return ffi.cast("int32_t *", a.ctypes.data)


def fortran_codes(codes: np.ndarray) -> np.ndarray:
    """uint8 codes (n, d) in Fortran order (each feature contiguous: the core's layout)."""
    return np.asfortranarray(codes, dtype=np.uint8)


def _cp(codes: np.ndarray) -> object:
    assert codes.dtype == np.uint8 and codes.flags["F_CONTIGUOUS"]
    return ffi.cast("uint8_t *", codes.ctypes.data)


class BinnedData:
    """A training set binned once: uint8 codes (n, d) in Fortran order and the binner's thresholds."""

    def __init__(self, binner: Binner, codes: np.ndarray) -> None:
        self.binner = binner
        self.codes = fortran_codes(codes)
        self.n_samples, self.n_features = self.codes.shape
        self.n_bins = binner.n_bins
        self.n_thr = np.array([t.size for t in binner.thresholds_], dtype=np.int32)
        self._codes_p = _cp(self.codes)

    @classmethod
    def from_data(cls, X: np.ndarray, max_bins: int = 255) -> BinnedData:
        binner = Binner(max_bins).fit(X)
        return cls(binner, binner.transform(X))

    def apply_add(self, tree: CostTree, codes: np.ndarray, F: np.ndarray | None, col: int,
                  want_leaves: bool = False) -> np.ndarray | None:
        """Walk the rows of ``codes`` (binned like this set, Fortran order) through ``tree``; add its float32 leaf
        values to column ``col`` of F (float32, C order) and return the leaves if asked."""
        n = codes.shape[0]
        leaves = np.empty(n, dtype=np.int32) if want_leaves else None
        value = np.ascontiguousarray(tree.value, dtype=np.float32)
        assert tree.bin is not None
        f_p = ffi.NULL if F is None else ffi.cast("float *", F.ctypes.data)
        if F is not None:
            assert F.dtype == np.float32 and F.flags["C_CONTIGUOUS"] and F.shape[0] == n
        lib.hb_apply_add(_cp(codes), n, _ip(tree.feature),
                         _ip(tree.bin), _ip(tree.left), _ip(tree.right), ffi.cast("float *", value.ctypes.data),
                         f_p, 0 if F is None else F.shape[1], col, ffi.NULL if leaves is None else _ip(leaves))
        return leaves


@dataclass
class _Node:
    start: int
    end: int
    depth: int
    G: float | np.ndarray  # (K,) for a tree shared by K outputs
    H: float | np.ndarray
    C: float
    hist: np.ndarray | None = None
    unread: np.ndarray | None = None  # charge "row": per feature, the node's rows that have not read it
    # (penalty version, its best split: feature, bin, gain, gl, hl, cl)
    best: tuple[int, tuple[int, int, float, float, float, float]] | None = None
    bound: float | None = None  # its best gain were every feature free (the histogram's, fixed while it is open)
    left_sums: tuple[np.ndarray, np.ndarray] | None = None  # K outputs: its best split's left sums, hist released


class _Grower:
    def __init__(self, data: BinnedData, g: np.ndarray, h: np.ndarray, rows: np.ndarray, params: TreeParams,
                 penalty: np.ndarray | GroupedCosts, used: np.ndarray, allowed: np.ndarray | None,
                 gain_scale: float, read: np.ndarray | None = None) -> None:
        self.data, self.params, self.gain_scale = data, params, gain_scale
        self.g, self.h = g, h  # (n,) or, for one tree shared by K outputs, (K, n)
        self.K = 1 if g.ndim == 1 else int(g.shape[0])
        self.work = np.empty(4 * self.K, dtype=np.float64)
        self.rows = rows
        # one scratch buffer, used in turn: a partition's right-hand rows (int32, up to a node's rows) and a
        # histogram's gathered g and h (2 float64 per row of a block of HB_GATHER_BLOCK rows)
        buf = np.empty(max(2 * min(rows.size, lib.HB_GATHER_BLOCK), (rows.size + 1) // 2, 1), dtype=np.float64)
        self.scratch = buf.view(np.int32)[:max(rows.size, 1)]
        self.gh_scratch = buf
        self.groups = penalty if isinstance(penalty, GroupedCosts) else None
        self.used = used.copy()
        self.read = read
        if read is not None:
            if self.groups is not None:
                raise ValueError("the per-row charge does not take feature groups")
            assert read.dtype == np.uint8 and read.flags["C_CONTIGUOUS"]
            assert read.shape == (data.n_samples, data.n_features)
            self.row_pen = np.asarray(penalty, dtype=np.float64) / max(rows.size, 1)
        self.pen = self._penalty(penalty)
        self.version = 0  # counts the changes of self.pen: a leaf's best split is kept until it changes
        self.allowed = None if allowed is None else np.ascontiguousarray(allowed, dtype=np.uint8)
        self.no_penalty = np.zeros(data.n_features)  # a leaf's bound: its best gain were every feature free
        # a histogram is one float64 buffer: K outputs' gradient and hessian sums (2 doubles a bin each), then the
        # counts (one int32 a bin, shared by the K outputs): hb_histogram's gh and cnt
        self.hist_size = data.n_features * data.n_bins * 2
        self.hist_total = self.hist_size * self.K
        self.cnt_size = data.n_features * data.n_bins
        self.hist_buffer = self.hist_total + (self.cnt_size + 1) // 2
        self.feature: list[int] = []
        self.bin: list[int] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.nodes: list[_Node] = []
        self.out = ffi.new("hb_split *")

    def _penalty(self, penalty: np.ndarray | GroupedCosts) -> np.ndarray:
        if isinstance(penalty, GroupedCosts):
            return np.ascontiguousarray(penalty.penalty(self.used), dtype=np.float64)
        return np.ascontiguousarray(np.where(self.used, 0.0, penalty), dtype=np.float64)

    def histogram(self, start: int, end: int) -> np.ndarray:
        """The rows' histogram: K outputs' sums back to back, then the counts (hb_best_split_multi's layout)."""
        hist = np.zeros(self.hist_buffer, dtype=np.float64)
        d = self.data
        rows_p = ffi.NULL if (start == 0 and end == d.n_samples) else _ip(self.rows[start:end])
        g2, h2 = self.g.reshape(self.K, -1), self.h.reshape(self.K, -1)
        for k in range(self.K):
            lib.hb_histogram(d._codes_p, d.n_samples, d.n_features, rows_p, end - start, _dp(g2[k]), _dp(h2[k]),
                             d.n_bins, _dp(self.gh_scratch), _dp(hist[k * self.hist_size:]),
                             self._counts(hist) if k == 0 else ffi.NULL)
        return hist

    def _counts(self, hist: np.ndarray) -> object:
        return ffi.cast("int32_t *", hist[self.hist_total:].ctypes.data)

    def new_node(self, node: _Node) -> int:
        self.nodes.append(node)
        self.feature.append(-1)
        self.bin.append(-1)
        self.left.append(-1)
        self.right.append(-1)
        return len(self.nodes) - 1

    def node_penalty(self, node: _Node) -> np.ndarray:
        """The penalties of a node's split: per feature (charge "row") the rows of the node that have not read it."""
        if self.read is None:
            return self.pen
        if node.unread is None:
            seg = self.rows[node.start:node.end]
            node.unread = (seg.size - self.read[seg].sum(axis=0, dtype=np.int64)).astype(np.float64)
        return np.ascontiguousarray(self.row_pen * node.unread)

    def best_split(self, node: _Node, pen: np.ndarray | None = None) -> tuple[int, int, float, float, float, float]:
        """The node's best split under its penalties (or under ``pen``, one per feature)."""
        d, p, o = self.data, self.params, self.out
        assert node.hist is not None
        pen = self.node_penalty(node) if pen is None else pen
        allowed = ffi.NULL if self.allowed is None else ffi.cast("uint8_t *", self.allowed.ctypes.data)
        if self.K == 1:
            lib.hb_best_split(_dp(node.hist), self._counts(node.hist), d.n_features, d.n_bins, _ip(d.n_thr),
                              _dp(pen), allowed, p.l2, p.min_child_weight, float(p.min_samples_leaf),
                              self.gain_scale, o)
        else:
            lib.hb_best_split_multi(_dp(node.hist), self._counts(node.hist), self.K, d.n_features, d.n_bins,
                                    _ip(d.n_thr), _dp(pen), allowed, p.l2, p.min_child_weight,
                                    float(p.min_samples_leaf), self.gain_scale, _dp(self.work), o)
        return (int(o.feature), int(o.bin), float(o.gain), float(o.gl), float(o.hl), float(o.cl))

    def evaluate(self, node: _Node) -> tuple[int, int, float, float, float, float]:
        """The open leaf's best split under the current penalties, from its histogram only when they changed since it
        was last evaluated (the same C call on the same histogram and penalties: the same split)."""
        if node.best is None or node.best[0] != self.version:
            node.best = (self.version, self.best_split(node))
        return node.best[1]

    def penalty_free_gain(self, node: _Node) -> float:
        """The leaf's best gain were every feature free: a bound on its gain under any penalties to come."""
        if node.bound is None:
            s = self.best_split(node, self.no_penalty)
            node.bound = s[2] if s[0] >= 0 else 0.0
        return node.bound

    def can_split(self, node: _Node) -> bool:
        return node.hist is not None and node.depth < self.params.max_depth and node.end - node.start >= 2

    def split(self, idx: int, split: tuple[int, int, float, float, float, float], last: bool = False
              ) -> tuple[int, int]:
        """Split node ``idx``; its children get histograms (the smaller one's built, the larger one's by subtraction)
        unless they are at the depth limit or the split is the tree's ``last``."""
        node = self.nodes[idx]
        j, b, _, gl, hl, cl = split
        d = self.data
        seg = self.rows[node.start:node.end]
        if self.read is not None:  # every row of the node reads j, whichever side it goes
            self.read[seg, j] = 1
        n_left = int(lib.hb_partition(d._codes_p, d.n_samples, _ip(seg), seg.size, j, b, _ip(self.scratch)))
        mid = node.start + n_left
        depth = node.depth + 1
        if self.K > 1:  # every output's left sums, from the node's histograms (or kept when they were released)
            gl, hl = self._left_sums(node, j, b) if node.hist is not None else node.left_sums
        lnode = _Node(node.start, mid, depth, gl, hl, cl)
        rnode = _Node(mid, node.end, depth, node.G - gl, node.H - hl, node.C - cl)
        if depth < self.params.max_depth and node.hist is not None and not last:
            small, large = (lnode, rnode) if n_left <= node.end - mid else (rnode, lnode)
            small.hist = self.histogram(small.start, small.end)
            lib.hb_subtract(_dp(node.hist), _dp(small.hist), self.hist_total, _dp(node.hist))
            lib.hb_subtract_counts(self._counts(node.hist), self._counts(small.hist), self.cnt_size,
                                   self._counts(node.hist))
            large.hist = node.hist
        node.hist = None
        li, ri = self.new_node(lnode), self.new_node(rnode)
        self.feature[idx], self.bin[idx] = j, b
        self.left[idx], self.right[idx] = li, ri
        self._mark_used(j)
        return li, ri

    def _left_sums(self, node: _Node, j: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        assert node.hist is not None
        d = self.data
        cells = node.hist[:self.hist_total].reshape(self.K, d.n_features, d.n_bins, 2)[:, j, :b + 1]
        return cells[:, :, 0].sum(axis=1), cells[:, :, 1].sum(axis=1)

    def _mark_used(self, j: int) -> None:
        if self.used[j]:
            return
        self.used[j] = True
        if self.groups is not None:  # the feature's groups are paid for: cheaper for their other features
            self.pen = self._penalty(self.groups)
        else:
            self.pen[j] = 0.0
        if self.read is None:  # charge "row": a node's penalties are its own rows', never changed by other splits
            self.version += 1

    def _settle(self, open_: list[int], j: int) -> None:
        """Before the tree's last split but one (on feature ``j``): the penalties are final once ``j`` is used (the
        last split changes nothing that is evaluated after it) and the last split builds no histograms, so the other
        open leaves are evaluated now and release theirs (a shared tree keeps its split's K left sums): the pool
        then holds only the split's own two during it. The tree is the same."""
        self._mark_used(j)
        for i in open_:
            node = self.nodes[i]
            if node.hist is None:
                continue
            s = self.evaluate(node)
            if self.K > 1 and s[0] >= 0:
                node.left_sums = self._left_sums(node, s[0], s[1])
            node.hist = None

    def grow(self) -> None:
        n = self.rows.size
        # every row (rows sorted, so 0..n-1): the sums of g and h as they are, without a gathered copy
        pick = slice(None) if n == self.data.n_samples else self.rows
        if self.K == 1:
            root = _Node(0, n, 0, float(self.g[pick].sum()), float(self.h[pick].sum()), float(n))
        else:
            root = _Node(0, n, 0, self.g[:, pick].sum(axis=1), self.h[:, pick].sum(axis=1), float(n))
        if n >= 2 and self.params.max_depth >= 1:
            root.hist = self.histogram(0, n)
        self.new_node(root)
        if self.params.max_leaves is None:
            self._grow_depthwise()
        else:
            self._grow_leafwise(int(self.params.max_leaves))

    def _grow_depthwise(self) -> None:
        level = [0]
        for _ in range(self.params.max_depth):
            if not level:  # nothing left to split: an unreachable depth limit costs nothing
                break
            nxt: list[int] = []
            for idx in level:
                node = self.nodes[idx]
                if not self.can_split(node):
                    continue
                s = self.best_split(node)
                if s[0] < 0 or not s[2] > 0.0:
                    node.hist = None
                    continue
                nxt += list(self.split(idx, s))
            level = nxt

    def _grow_leafwise(self, max_leaves: int) -> None:
        open_: list[int] = [0]
        n_leaves = 1
        while n_leaves < max_leaves and open_:
            best_i, best_s = -1, None
            gains: dict[int, float] = {}
            for i in open_:  # a C call per open leaf whose penalties changed (features became used) since the last
                s = self.evaluate(self.nodes[i])
                if s[0] >= 0 and s[2] > 0.0:
                    gains[i] = s[2]
                    if best_s is None or s[2] > best_s[2]:
                        best_i, best_s = i, s
            if best_s is None:
                break
            remaining = max_leaves - n_leaves
            if remaining > 1:  # the last split builds no histograms: nothing to release before it
                open_ = self._hopeless_dropped(open_, gains, remaining)
            open_.remove(best_i)
            n_leaves += 1
            if remaining == 2:
                self._settle(open_, best_s[0])
            li, ri = self.split(best_i, best_s, last=n_leaves == max_leaves)
            open_ += [c for c in (li, ri) if self.can_split(self.nodes[c])]

    def _hopeless_dropped(self, open_: list[int], gains: dict[int, float], remaining: int) -> list[int]:
        """The open leaves that may still be split, the others' histograms released (memory: with no penalty left,
        as at lambda 0, the pool then holds at most ``remaining`` of them). A leaf's gain never exceeds its split's
        gain without penalty (penalties only fall as features become used), and every leaf whose gain now is
        higher is split before it (best first, those gains only rise): with ``remaining`` such leaves, or a
        penalty-free gain <= 0, it is never split. The tree is the same as with every histogram kept."""
        if len(open_) <= remaining and len(gains) == len(open_):
            return open_
        ahead = np.sort(np.fromiter(gains.values(), dtype=np.float64, count=len(gains)))
        keep = []
        for i in open_:
            node = self.nodes[i]
            if np.any(self.node_penalty(node)):
                bound = self.penalty_free_gain(node)
            else:
                bound = gains.get(i, 0.0)
            if bound > 0.0 and ahead.size - np.searchsorted(ahead, bound, side="right") < remaining:
                keep.append(i)
            else:
                node.hist = None
        return keep

    def result(self, step: float) -> tuple[CostTree, np.ndarray]:
        """The tree (leaf values step * -G/(H+l2), float64; capped by max_delta_step) and the used mask after it."""
        trees = self.results(step)
        return trees[0], self.used

    def results(self, step: float) -> list[CostTree]:
        """One tree per output (the same splits; output k's leaf values step * -G_k/(H_k+l2), float64)."""
        feat = np.asarray(self.feature, dtype=np.int32)
        G = np.array([nd.G for nd in self.nodes], dtype=np.float64).reshape(len(self.nodes), -1)
        H = np.array([nd.H for nd in self.nodes], dtype=np.float64).reshape(len(self.nodes), -1)
        den = np.maximum(H + self.params.l2, 1e-300)
        raw = np.where((feat < 0)[:, None] & (H + self.params.l2 > 0), -G / den, 0.0)
        if self.params.max_delta_step > 0:
            raw = np.clip(raw, -self.params.max_delta_step, self.params.max_delta_step)
        thr = np.zeros(feat.size, dtype=np.float32)
        bins = np.asarray(self.bin, dtype=np.int32)
        for i in np.flatnonzero(feat >= 0):
            thr[i] = self.data.binner.thresholds_[feat[i]][bins[i]]
        left, right = np.asarray(self.left, dtype=np.int32), np.asarray(self.right, dtype=np.int32)
        return [CostTree(feature=feat, threshold=thr, left=left, right=right, value=step * raw[:, k], bin=bins)
                for k in range(raw.shape[1])]


def _row_list(rows: np.ndarray, overwrite: bool) -> np.ndarray:
    """The rows as the int32 list a tree partitions: ``rows`` itself when the caller lets it be overwritten (and it
    is int32 already), else a copy."""
    return np.asarray(rows, dtype=np.int32) if overwrite else np.array(rows, dtype=np.int32)


def grow_tree(data: BinnedData, g: np.ndarray, h: np.ndarray, rows: np.ndarray, params: TreeParams, *,
              penalty: np.ndarray | GroupedCosts | None = None, used: np.ndarray | None = None,
              allowed: np.ndarray | None = None,
              gain_scale: float = 1.0, step: float = 1.0,
              read: np.ndarray | None = None, overwrite_rows: bool = False) -> tuple[CostTree, np.ndarray]:
    """Grow one tree on the rows ``rows`` (int32, sorted) of ``data`` with per-row gradients ``g`` and
    hessians ``h`` (float64, length n_samples, C order). ``penalty[j]`` (gain units) is charged when the
    split's feature is not in ``used`` (a GroupedCosts: its own part plus its groups that no used feature
    has paid for). ``read`` (uint8 (n_samples, d), C order; charge "row"): which features each row has read;
    ``penalty[j]`` is then charged per row of a node that has not read j (scaled by the rows grown on), and the
    rows of every split node are marked as reading its feature, in place. Returns the tree (leaf values
    ``step * -G/(H+l2)``) and the updated used mask (a copy). ``overwrite_rows``: ``rows`` (int32, C order) is
    partitioned in place instead of a copy of it (the caller's last use of it)."""
    d = data.n_features
    pen: np.ndarray | GroupedCosts = np.zeros(d) if penalty is None else (
        penalty if isinstance(penalty, GroupedCosts) else np.asarray(penalty, dtype=np.float64))
    u = np.zeros(d, dtype=bool) if used is None else np.asarray(used, dtype=bool)
    gr = _Grower(data, np.ascontiguousarray(g, dtype=np.float64), np.ascontiguousarray(h, dtype=np.float64),
                 _row_list(rows, overwrite_rows), params, pen, u, allowed, gain_scale, read)
    gr.grow()
    return gr.result(step)


def grow_shared_trees(data: BinnedData, g: np.ndarray, h: np.ndarray, rows: np.ndarray, params: TreeParams, *,
                      penalty: np.ndarray | GroupedCosts, used: np.ndarray, allowed: np.ndarray | None = None,
                      gain_scale: float = 1.0, step: float = 1.0, overwrite_rows: bool = False
                      ) -> tuple[list[CostTree], np.ndarray]:
    """Grow one tree structure for K outputs at once (``g``, ``h``: (n_samples, K)): each split maximises the sum of
    the K outputs' Newton gains minus the feature's penalty, charged once for all K (its gain fits the whole loss,
    where :func:`grow_tree`'s per-output trees each fit 1/K of it). Returns K trees with the same splits, output
    k's leaves holding ``step * -G_k/(H_k+l2)``, and the used mask after them (a copy). A row reads at most the
    depth's features per iteration, not K times as many. ``overwrite_rows``: as :func:`grow_tree`'s."""
    pen: np.ndarray | GroupedCosts = penalty if isinstance(penalty, GroupedCosts) else np.asarray(penalty,
                                                                                              dtype=np.float64)
    gr = _Grower(data, np.ascontiguousarray(np.asarray(g, dtype=np.float64).T),
                 np.ascontiguousarray(np.asarray(h, dtype=np.float64).T), _row_list(rows, overwrite_rows), params, pen,
                 np.asarray(used, dtype=bool), allowed, gain_scale)
    gr.grow()
    return gr.results(step), gr.used


class CostTreeFitter(BinnedData):
    """Cost-aware least-squares regression trees on one binned training set (Greedy Miser's and
    ADAPT-GBRT's split rule; ``penalty = 0`` is plain least-squares CART).

    The gain of a split is the weighted SSE reduction divided by the total weight of the samples
    given, minus ``penalty * costs[j]`` if feature j is unused."""

    @classmethod
    def from_data(cls, X: np.ndarray, max_bins: int = 64) -> CostTreeFitter:
        binner = Binner(max_bins).fit(X)
        return cls(binner, binner.transform(X))

    @property
    def thresholds(self) -> list[np.ndarray]:
        return self.binner.thresholds_

    def fit(
        self,
        target: np.ndarray,
        weight: np.ndarray | None = None,
        *,
        max_depth: int = 3,
        penalty: float = 0.0,
        costs: np.ndarray | None = None,
        used: np.ndarray | None = None,
        min_samples_leaf: int = 1,
        sample_mask: np.ndarray | None = None,
    ) -> TreeFit:
        """Grow one tree to ``target`` (float64, n) with weights (default 1); leaves hold the weighted mean."""
        n, d = self.n_samples, self.n_features
        r = np.asarray(target, dtype=np.float64)
        if r.shape != (n,):
            raise ValueError(f"target must have shape ({n},), got {r.shape}")
        w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
        if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("weight must be a finite non-negative vector of length n_samples")
        if sample_mask is not None:
            w = np.where(sample_mask, w, 0.0)
        c = np.zeros(d) if costs is None else np.asarray(costs, dtype=np.float64)
        u = np.zeros(d, dtype=bool) if used is None else np.asarray(used, dtype=bool)
        total_w = float(w.sum())
        rows = np.flatnonzero(w > 0).astype(np.int32)
        params = TreeParams(max_depth=max_depth, min_child_weight=0.0, min_samples_leaf=min_samples_leaf)
        tree, used_after = grow_tree(self, -w * r, w, rows, params, penalty=penalty * c, used=u,
                                     gain_scale=2.0 / total_w if total_w > 0 else 0.0, overwrite_rows=True)
        tree.value = np.where(tree.feature >= 0, 0.0, tree.value)
        leaves = self.apply_add(tree, self.codes, None, 0, want_leaves=True)
        assert leaves is not None
        return TreeFit(tree=tree, leaf_of_sample=leaves.astype(np.int64), new_features=np.flatnonzero(used_after & ~u))


def leaf_ratio(leaf_of_sample: np.ndarray, num: np.ndarray, den: np.ndarray, n_nodes: int,
               eps: float = 1e-12) -> np.ndarray:
    """Per-node sum(num)/sum(den) over the samples in each leaf (Newton leaf values)."""
    s_num = np.bincount(leaf_of_sample, weights=num, minlength=n_nodes)
    s_den = np.bincount(leaf_of_sample, weights=den, minlength=n_nodes)
    return np.divide(s_num, np.maximum(s_den, eps), out=np.zeros(n_nodes), where=s_den > 0)
