"""An independent numpy reference of the histogram Newton booster (compiler.boosting), for tests.

Written from the definitions, not from the C core: codes by np.searchsorted on the binner's
thresholds, every split candidate's gain from cumulative sums, depth-wise or leaf-wise growth,
leaf values -G/(H + l2) times the learning rate in float32, scores accumulated in float32.

Sums are taken in the order the core takes them, so that near-ties between split candidates
resolve alike whatever the rounding: a node's totals are its histogram's bins added in order,
and of two children only the smaller one's histogram is counted from its rows, the larger one's
is the parent's minus it (the histogram subtraction every histogram booster does). Summing the
same gradients another way (numpy's pairwise ``sum``) moves the last bits, and with them which
of two equal-looking candidates wins, by the CPU's vector width.
"""

from __future__ import annotations

import numpy as np

from compiler.boosting.binning import Binner


def codes_of(binner: Binner, X: np.ndarray) -> np.ndarray:
    X32 = np.asarray(X, dtype=np.float32)
    return np.column_stack([np.searchsorted(t, X32[:, j], side="left") for j, t in enumerate(binner.thresholds_)])


def histogram(codes: np.ndarray, rows: np.ndarray, g: np.ndarray, h: np.ndarray, n_thr: np.ndarray) -> np.ndarray:
    """(d, bins, 3): per feature and bin the sums of g, h and the count of ``rows``, each added in row order."""
    n_bins = int(n_thr.max()) + 1
    out = np.zeros((codes.shape[1], n_bins, 3))
    for j in range(codes.shape[1]):
        c = codes[rows, j]
        out[j, :, 0] = np.bincount(c, weights=g[rows], minlength=n_bins)
        out[j, :, 1] = np.bincount(c, weights=h[rows], minlength=n_bins)
        out[j, :, 2] = np.bincount(c, minlength=n_bins)
    return out


def c_layout(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Histograms (K, d, bins, 3) or (d, bins, 3) in the C core's layout: the K outputs' gradient and hessian sums
    (float64, 2 a bin) back to back, and one array of counts (int32, the same for every output)."""
    hist = hist.reshape((-1, *hist.shape[-3:]))
    return np.ascontiguousarray(hist[..., :2].reshape(-1)), np.ascontiguousarray(hist[0, ..., 2].reshape(-1),
                                                                                dtype=np.int32)


def best_split(codes: np.ndarray, rows: np.ndarray, g: np.ndarray, h: np.ndarray, n_thr: np.ndarray, pen: np.ndarray,
               scale: float, l2: float, mcw: float, msl: int, hist: np.ndarray | None = None) -> tuple[int, int, float]:
    """(feature, bin, net gain) of the best valid split of ``rows`` (whose histogram ``hist`` is, if given);
    feature -1 if none."""
    best = (-1, -1, -np.inf)
    hist = histogram(codes, rows, g, h, n_thr) if hist is None else hist
    G, H = np.cumsum(hist[0, :, 0])[-1], np.cumsum(hist[0, :, 1])[-1]
    for j in range(codes.shape[1]):
        nb = int(n_thr[j])
        if nb == 0:
            continue
        gl = np.cumsum(hist[j, :, 0])[:nb]
        hl = np.cumsum(hist[j, :, 1])[:nb]
        cl = np.cumsum(hist[j, :, 2])[:nb]
        gr, hr, cr = G - gl, H - hl, rows.size - cl
        ok = (hl >= mcw) & (hr >= mcw) & (cl >= msl) & (cr >= msl) & (hl + l2 > 0) & (hr + l2 > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = scale * 0.5 * (gl**2 / (hl + l2) + gr**2 / (hr + l2) - G**2 / (H + l2)) - pen[j]
        gain = np.where(ok, gain, -np.inf)
        b = int(np.argmax(gain))
        if gain[b] > best[2]:
            best = (j, b, float(gain[b]))
    return best


def grow(codes: np.ndarray, g: np.ndarray, h: np.ndarray, n_thr: np.ndarray, *, depth: int, leaves: int | None,
         pen: np.ndarray, used: np.ndarray, scale: float, l2: float = 0.0, mcw: float = 1e-3,
         msl: int = 1, read: np.ndarray | None = None) -> tuple[dict, np.ndarray, np.ndarray]:
    """One tree on all rows: (nodes dict of lists, leaf of each row, used after). ``read`` (bool (n, d), updated
    in place): the per-row charge, a node's split on j costs pen[j] times its rows that have not read j over n."""
    used = used.copy()
    node_rows = [np.arange(codes.shape[0])]
    node_hist = [histogram(codes, node_rows[0], g, h, n_thr)]
    t = {"feature": [-1], "bin": [-1], "left": [-1], "right": [-1], "depth": [0]}

    def split(i: int, j: int, b: int) -> list[int]:
        rows = node_rows[i]
        go = codes[rows, j] <= b
        kids = []
        left, right = rows[go], rows[~go]
        left_small = left.size <= right.size
        small = histogram(codes, left if left_small else right, g, h, n_thr)
        hists = (small, node_hist[i] - small) if left_small else (node_hist[i] - small, small)
        for part, hist in zip((left, right), hists, strict=True):
            node_rows.append(part)
            node_hist.append(hist)
            for key, v in (("feature", -1), ("bin", -1), ("left", -1), ("right", -1), ("depth", t["depth"][i] + 1)):
                t[key].append(v)
            kids.append(len(node_rows) - 1)
        t["feature"][i], t["bin"][i], t["left"][i], t["right"][i] = j, b, kids[0], kids[1]
        used[j] = True
        if read is not None:
            read[rows, j] = True
        return kids

    def search(i: int) -> tuple[int, int, float]:
        if t["depth"][i] >= depth or node_rows[i].size < 2:
            return (-1, -1, -np.inf)
        rows = node_rows[i]
        p = np.where(used, 0.0, pen) if read is None else pen * (~read[rows]).sum(axis=0) / codes.shape[0]
        return best_split(codes, rows, g, h, n_thr, p, scale, l2, mcw, msl, node_hist[i])

    if leaves is None:
        level = [0]
        while level:
            nxt = []
            for i in level:
                j, b, gain = search(i)
                if j >= 0 and gain > 0:
                    nxt += split(i, j, b)
            level = nxt
    else:
        open_, n_leaves = [0], 1
        while n_leaves < leaves and open_:
            found = [(search(i), i) for i in open_]
            cand = [(s, i) for s, i in found if s[0] >= 0 and s[2] > 0]
            if not cand:
                break
            (j, b, _), i = max(cand, key=lambda c: c[0][2])  # first of equal gains, like the core
            open_.remove(i)
            open_ += split(i, j, b)
            n_leaves += 1
    leaf = np.zeros(codes.shape[0], dtype=np.int64)
    for i, rows in enumerate(node_rows):
        if t["feature"][i] < 0:
            leaf[rows] = i
    return t, leaf, used


def boost(X: np.ndarray, y01: np.ndarray, n_iter: int, *, loss: str, step: float, depth: int, leaves: int | None = None,
          max_bins: int = 255, msl: int = 20, costs: np.ndarray | None = None, lam: float = 0.0,
          X_eval: np.ndarray | None = None) -> np.ndarray:
    """Binary boosting (squared on +-1 or logistic on 0/1); float32 scores of X_eval (default X)."""
    binner = Binner(max_bins).fit(X)
    codes = codes_of(binner, X)
    n_thr = np.array([t.size for t in binner.thresholds_])
    costs = np.zeros(X.shape[1]) if costs is None else np.asarray(costs, dtype=float)
    pen = lam * costs / costs.sum() if costs.sum() > 0 else np.zeros_like(costs)
    if loss == "squared":
        target = 2.0 * y01 - 1.0
        base = np.float32(target.mean())
    else:
        p = np.clip(y01.mean(), 1e-6, 1 - 1e-6)
        base = np.float32(np.log(p / (1 - p)))
    F = np.full(len(y01), base, dtype=np.float32)
    Xe = X if X_eval is None else X_eval
    ce = codes_of(binner, Xe)
    out = np.full(len(Xe), base, dtype=np.float32)
    used = np.zeros(X.shape[1], dtype=bool)
    for _ in range(n_iter):
        F64 = F.astype(np.float64)
        if loss == "squared":
            g, h, factor = F64 - target, np.ones(len(F64)), 2.0
        else:
            p = 1.0 / (1.0 + np.exp(-F64))
            g, h, factor = p - y01, p * (1 - p), 2.0  # LOG_GAIN_UNIT
        t, leaf, used = grow(codes, g, h, n_thr, depth=depth, leaves=leaves, pen=pen, used=used,
                             scale=factor / len(F64), msl=msl)
        n_nodes = len(t["feature"])
        G = np.bincount(leaf, weights=g, minlength=n_nodes)
        H = np.bincount(leaf, weights=h, minlength=n_nodes)
        value = (step * np.divide(-G, H, out=np.zeros(n_nodes), where=H > 0)).astype(np.float32)
        F = F + value[leaf]
        out = out + value[apply(t, ce)]
    return out


def apply(t: dict, codes: np.ndarray) -> np.ndarray:
    node = np.zeros(codes.shape[0], dtype=np.int64)
    feature, bins = np.asarray(t["feature"]), np.asarray(t["bin"])
    left, right = np.asarray(t["left"]), np.asarray(t["right"])
    while True:
        inner = feature[node] >= 0
        if not inner.any():
            return node
        r = np.flatnonzero(inner)
        n = node[r]
        go = codes[r, feature[n]] <= bins[n]
        node[r] = np.where(go, left[n], right[n])
