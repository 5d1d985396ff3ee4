"""The histogram Newton booster core (compiler/boosting): C inner loops against numpy definitions."""

from __future__ import annotations

import numpy as np
import pytest
from boost_reference import best_split, codes_of, grow
from compiler.boosting._histboost import ffi, lib

from compiler.boosting.binning import FIT_SAMPLE, Binner
from compiler.boosting.booster import make_booster
from compiler.boosting.grow import BinnedData, TreeParams, grow_tree
from compiler.trees.cost_tree import ensemble_to_ir, ir_scores, ir_tree_features


def data(n: int = 600, d: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1])  # few distinct values
    X[:, 2] = 3.0  # constant: no threshold
    y = ((X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 3] + rng.normal(size=n) * 0.5) > 0).astype(np.int64)
    return X, y


def test_codes_equal_searchsorted_and_thresholds_partition_float_inputs() -> None:
    X, _ = data()
    b = Binner(16).fit(X)
    codes = b.transform(X)
    assert codes.dtype == np.uint8 and codes.flags["F_CONTIGUOUS"]
    np.testing.assert_array_equal(codes, codes_of(b, X))
    assert b.thresholds_[2].size == 0 and b.thresholds_[1].size == np.unique(X[:, 1]).size - 1
    for j, thr in enumerate(b.thresholds_):
        for k, t in enumerate(thr):  # x <= thr[k] exactly when code <= k
            np.testing.assert_array_equal(X[:, j] <= t, codes[:, j] <= k)
    Xn = np.random.default_rng(5).normal(size=(300, 6)).astype(np.float32)  # unseen values too
    np.testing.assert_array_equal(b.transform(Xn), codes_of(b, Xn))


def test_binning_fits_on_a_sample_above_fit_sample_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import compiler.boosting.binning as binning  # noqa: PLC0415

    monkeypatch.setattr(binning, "FIT_SAMPLE", 100)
    X = np.arange(1000, dtype=np.float32)[:, None]
    b = Binner(255).fit(X)
    assert b.thresholds_[0].size == 99  # 100 sampled distinct values
    assert FIT_SAMPLE == 200_000


def test_histogram_and_subtraction_equal_bincount() -> None:
    X, _ = data(n=500, d=5)
    fd = BinnedData.from_data(X, 32)
    rng = np.random.default_rng(1)
    g, h = rng.normal(size=500), rng.uniform(0.1, 1, size=500)
    rows = np.sort(rng.choice(500, 200, replace=False)).astype(np.int32)
    gh, cnt = np.zeros(5 * fd.n_bins * 2), np.zeros(5 * fd.n_bins, dtype=np.int32)
    scratch = np.empty(400)

    def add(rows_: np.ndarray | None, n: int, counts: np.ndarray | None) -> None:
        lib.hb_histogram(ffi.cast("uint8_t *", fd.codes.ctypes.data), 500, 5,
                         ffi.NULL if rows_ is None else ffi.cast("int32_t *", rows_.ctypes.data), n,
                         ffi.cast("double *", g.ctypes.data), ffi.cast("double *", h.ctypes.data), fd.n_bins,
                         ffi.cast("double *", scratch.ctypes.data), ffi.cast("double *", gh.ctypes.data),
                         ffi.NULL if counts is None else ffi.cast("int32_t *", counts.ctypes.data))

    add(rows, 200, cnt)
    GH, C = gh.reshape(5, fd.n_bins, 2), cnt.reshape(5, fd.n_bins)
    for j in range(5):
        c = fd.codes[rows, j]
        np.testing.assert_allclose(GH[j, :, 0], np.bincount(c, weights=g[rows], minlength=fd.n_bins), rtol=1e-12)
        np.testing.assert_allclose(GH[j, :, 1], np.bincount(c, weights=h[rows], minlength=fd.n_bins), rtol=1e-12)
        np.testing.assert_array_equal(C[j], np.bincount(c, minlength=fd.n_bins))
    out, out_c = np.empty_like(gh), np.empty_like(cnt)
    lib.hb_subtract(ffi.cast("double *", gh.ctypes.data), ffi.cast("double *", gh.ctypes.data), gh.size,
                    ffi.cast("double *", out.ctypes.data))
    lib.hb_subtract_counts(ffi.cast("int32_t *", cnt.ctypes.data), ffi.cast("int32_t *", cnt.ctypes.data), cnt.size,
                           ffi.cast("int32_t *", out_c.ctypes.data))
    assert not out.any() and not out_c.any()
    # every row, no counts (a further output of a shared histogram): the sums alone, counts untouched
    gh[:], before = 0.0, cnt.copy()
    add(None, 500, None)
    np.testing.assert_array_equal(cnt, before)
    for j in range(5):
        np.testing.assert_allclose(GH[j, :, 0], np.bincount(fd.codes[:, j], weights=g, minlength=fd.n_bins),
                                   rtol=1e-12)


def test_histogram_of_more_rows_than_a_gather_block_equals_one_pass() -> None:
    """Rows gathered a block at a time (HB_GATHER_BLOCK): every cell's sum is the in-order sum of its rows, the
    same floating-point result as numpy adding them one by one."""
    n = 3 * lib.HB_GATHER_BLOCK + 17
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    fd = BinnedData.from_data(X, 16)
    g, h = rng.normal(size=n) * 1e3, rng.uniform(0.1, 1, size=n)
    rows = np.sort(rng.choice(n, n - 1000, replace=False)).astype(np.int32)
    gh, cnt = np.zeros(3 * fd.n_bins * 2), np.zeros(3 * fd.n_bins, dtype=np.int32)
    scratch = np.empty(2 * lib.HB_GATHER_BLOCK)
    lib.hb_histogram(ffi.cast("uint8_t *", fd.codes.ctypes.data), n, 3, ffi.cast("int32_t *", rows.ctypes.data),
                     rows.size, ffi.cast("double *", g.ctypes.data), ffi.cast("double *", h.ctypes.data), fd.n_bins,
                     ffi.cast("double *", scratch.ctypes.data), ffi.cast("double *", gh.ctypes.data),
                     ffi.cast("int32_t *", cnt.ctypes.data))
    GH = gh.reshape(3, fd.n_bins, 2)
    for j in range(3):
        for b in range(fd.n_bins):
            total = 0.0
            for v in g[rows[fd.codes[rows, j] == b]]:
                total += v  # in row order, one at a time
            assert GH[j, b, 0] == total
        np.testing.assert_array_equal(cnt.reshape(3, -1)[j], np.bincount(fd.codes[rows, j], minlength=fd.n_bins))


@pytest.mark.parametrize(("depth", "leaves", "l2", "msl"), [(3, None, 0.0, 1), (2, None, 1.0, 20),
                                                            (16, 8, 0.0, 20), (3, 5, 0.5, 5)])
def test_tree_equals_the_numpy_definition(depth: int, leaves: int | None, l2: float, msl: int) -> None:
    X, y = data()
    fd = BinnedData.from_data(X, 64)
    p = np.full(len(y), y.mean())
    g, h = p - y, p * (1 - p)
    costs = np.array([5.0, 1.0, 1.0, 1.0, 20.0, 1.0])
    pen = 0.02 * costs
    used = np.array([False, True, False, False, False, False])
    rows = np.arange(len(y), dtype=np.int32)
    tree, used_after = grow_tree(fd, g, h, rows, TreeParams(depth, leaves, l2, 1e-3, msl), penalty=pen, used=used,
                                 gain_scale=1.0 / len(y), step=0.1)
    t, leaf, used_ref = grow(fd.codes, g, h, fd.n_thr, depth=depth, leaves=leaves, pen=pen, used=used,
                             scale=1.0 / len(y), l2=l2, msl=msl)
    # same nodes up to numbering: compare the partitions and the splits in row terms
    mine = fd.apply_add(tree, fd.codes, None, 0, want_leaves=True)
    assert {tuple(np.flatnonzero(mine == v)) for v in np.unique(mine)} == \
        {tuple(np.flatnonzero(leaf == v)) for v in np.unique(leaf)}
    np.testing.assert_array_equal(used_after, used_ref)
    assert int((tree.feature < 0).sum()) == sum(f < 0 for f in t["feature"])
    for node in np.flatnonzero(tree.feature < 0):
        in_leaf = mine == node
        assert tree.value[node] == pytest.approx(0.1 * -g[in_leaf].sum() / (h[in_leaf].sum() + l2), rel=1e-12)
        assert in_leaf.sum() >= msl
    if leaves is not None:
        assert int((tree.feature < 0).sum()) <= leaves


def test_best_split_respects_penalty_and_allowed_mask() -> None:
    X, y = data()
    fd = BinnedData.from_data(X, 64)
    g, h = 0.5 - y, np.full(len(y), 0.25)
    rows = np.arange(len(y), dtype=np.int32)
    free = best_split(fd.codes, rows, g, h, fd.n_thr, np.zeros(6), 1.0 / len(y), 0.0, 1e-3, 1)
    assert free[0] == 0  # the strongest feature
    big = np.array([1.0, 0, 0, 0, 0, 0])  # feature 0 too costly: another one wins
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(1), penalty=big, gain_scale=1.0 / len(y))
    assert tree.feature[0] not in (-1, 0)
    allowed = np.array([0, 0, 0, 1, 0, 0], dtype=bool)
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(2), allowed=allowed, gain_scale=1.0 / len(y))
    assert set(tree.feature[tree.feature >= 0].tolist()) == {3}
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(3), penalty=np.full(6, 10.0), gain_scale=1.0 / len(y))
    assert tree.n_nodes == 1  # nothing pays its cost: a single leaf


def test_booster_scores_equal_the_ir_and_cost_is_charged_once_per_iteration() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 5)).astype(np.float32)
    y = np.argmax(X[:, :3] + rng.normal(size=(900, 3)) * 0.3, axis=1)
    costs = np.array([1.0, 1.0, 1.0, 50.0, 50.0])
    b = make_booster(X[:600], y[:600], np.ones(600), 3, "multiclass-log", costs, 0.2, 3, X_val=X[600:],
                     max_leaves=6, min_child_weight=1e-3)
    for _ in range(12):
        b.iterate(0.05)
    ir = ensemble_to_ir(b.trees, b.tree_output, b.base_score, 5, costs)
    np.testing.assert_array_equal(ir_scores(ir, X[:600]), b.F)
    np.testing.assert_array_equal(ir_scores(ir, X[600:]), b.F_val)
    assert b.tree_output[:6] == [0, 1, 2, 0, 1, 2]
    assert set(np.flatnonzero(b.used)) == set(np.unique(ir["feature"][ir["feature"] >= 0]).tolist())
    assert not b.used[3:].any()  # the costly features are never worth it here


@pytest.mark.parametrize(("depth", "leaves"), [(3, None), (16, 8)])
def test_row_charge_tree_equals_the_numpy_definition(depth: int, leaves: int | None) -> None:
    """charge "row": a split costs its feature's penalty times the node's rows that have not read it (/ n)."""
    X, y = data()
    fd = BinnedData.from_data(X, 64)
    p = np.full(len(y), y.mean())
    g, h = p - y, p * (1 - p)
    pen = 0.02 * np.array([5.0, 1.0, 1.0, 1.0, 20.0, 1.0])
    rng = np.random.default_rng(4)
    start = rng.random((len(y), 6)) < np.array([0.9, 0.0, 0.5, 0.1, 0.0, 0.3])  # features rows read before
    read = start.astype(np.uint8)
    rows = np.arange(len(y), dtype=np.int32)
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(depth, leaves, 0.0, 1e-3, 20), penalty=pen,
                        gain_scale=1.0 / len(y), step=0.1, read=read)
    read_ref = start.copy()
    _, leaf, _ = grow(fd.codes, g, h, fd.n_thr, depth=depth, leaves=leaves, pen=pen, used=np.zeros(6, bool),
                      scale=1.0 / len(y), msl=20, read=read_ref)
    mine = fd.apply_add(tree, fd.codes, None, 0, want_leaves=True)
    assert {tuple(np.flatnonzero(mine == v)) for v in np.unique(mine)} == \
        {tuple(np.flatnonzero(leaf == v)) for v in np.unique(leaf)}
    np.testing.assert_array_equal(read.astype(bool), read_ref)
    # the model charge on the same inputs makes a different tree: the charge matters here
    other, _ = grow_tree(fd, g, h, rows, TreeParams(depth, leaves, 0.0, 1e-3, 20), penalty=pen,
                         gain_scale=1.0 / len(y), step=0.1)
    assert not np.array_equal(fd.apply_add(other, fd.codes, None, 0, want_leaves=True), mine)


def test_row_charge_prefers_a_feature_the_rows_have_read() -> None:
    X, y = data()
    fd = BinnedData.from_data(X, 64)
    g, h = 0.5 - y, np.full(len(y), 0.25)
    rows = np.arange(len(y), dtype=np.int32)
    pen = np.full(6, 10.0)
    alone, _ = grow_tree(fd, g, h, rows, TreeParams(1), penalty=pen, gain_scale=1.0 / len(y))
    assert alone.n_nodes == 1  # no feature pays its cost
    read = np.zeros((len(y), 6), dtype=np.uint8)
    read[:, 3] = 1  # every row has read feature 3 (a weak one) already: free for the row charge
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(1), penalty=pen, gain_scale=1.0 / len(y), read=read)
    assert tree.feature[0] == 3
    read[: len(y) // 2, 3] = 0  # half the rows must read it: it no longer pays
    tree, _ = grow_tree(fd, g, h, rows, TreeParams(1), penalty=pen, gain_scale=1.0 / len(y), read=read)
    assert tree.n_nodes == 1


def test_booster_row_charge_read_mask_is_the_paths_of_every_training_row() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(700, 6)).astype(np.float32)
    y = np.argmax(X[:, :3] + rng.normal(size=(700, 3)) * 0.5, axis=1)
    b = make_booster(X, y, np.ones(700), 3, "multiclass-log", np.arange(1.0, 7.0), 0.2, 3, max_leaves=6,
                     subsample=0.6, seed=1, charge="row")
    for _ in range(6):
        b.iterate(0.5)
    ir = ensemble_to_ir(b.trees, b.tree_output, b.base_score, 6, np.arange(1.0, 7.0))
    want = np.zeros((700, 6), dtype=bool)
    for r in ir_tree_features(ir, X):
        want |= r
    np.testing.assert_array_equal(b.read.astype(bool), want)  # rows left out of a subsample included
    with pytest.raises(ValueError, match="charge"):
        make_booster(X, y, np.ones(700), 3, "multiclass-log", np.ones(6), 0.2, 3, charge="lazy")


def test_subsampling_is_seeded_and_changes_the_trees() -> None:
    X, y = data(n=800)
    def run(seed: int, sub: float, col: float) -> np.ndarray:
        b = make_booster(X, y, np.ones(len(y)), 2, "logistic", np.ones(6), 0.1, 3, subsample=sub, colsample=col,
                         seed=seed)
        for _ in range(5):
            b.iterate(0.0)
        return b.F.copy()
    a, same, other, full = run(1, 0.5, 0.5), run(1, 0.5, 0.5), run(2, 0.5, 0.5), run(1, 1.0, 1.0)
    np.testing.assert_array_equal(a, same)
    assert not np.array_equal(a, other) and not np.array_equal(a, full)
    with pytest.raises(ValueError, match="subsample"):
        run(1, 0.0, 1.0)


def test_tree_params_reject_bad_values() -> None:
    for kw in ({"max_depth": 0}, {"max_leaves": 1}, {"l2": -1.0}, {"min_samples_leaf": 0}, {"max_delta_step": -1.0}):
        with pytest.raises(ValueError):
            TreeParams(**kw)


@pytest.mark.parametrize("shared", [False, True])
def test_max_delta_step_caps_each_leafs_newton_step(shared: bool) -> None:
    """A vanishing hessian (a logistic fit to targets of exactly 0 or 1) makes -G/H huge: each leaf's step is
    clipped to +-max_delta_step before the shrinkage, the leaves whose step is smaller keep it exactly."""
    from compiler.boosting.grow import grow_shared_trees  # noqa: PLC0415

    X, y = data()
    fd = BinnedData.from_data(X, 64)
    g = np.where(y == 1, -1.0, 0.01)
    h = np.where(y == 1, 1e-9, 0.25)  # class-1 rows: the step -G/H is about 1e9
    rows = np.arange(len(y), dtype=np.int32)

    def trees(cap: float) -> list:
        params = TreeParams(2, None, 0.0, 0.0, 1, max_delta_step=cap)
        if shared:
            return grow_shared_trees(fd, np.column_stack([g, -g]), np.column_stack([h, h]), rows, params,
                                     penalty=np.zeros(X.shape[1]), used=np.zeros(X.shape[1], bool), step=0.5)[0]
        return [grow_tree(fd, g, h, rows, params, step=0.5)[0]]

    for free, capped in zip(trees(0.0), trees(3.0), strict=True):
        leaves = capped.feature < 0
        np.testing.assert_array_equal(free.feature, capped.feature)  # the cap moves values, not splits
        want = np.clip(free.value[leaves] / 0.5, -3.0, 3.0) * 0.5
        np.testing.assert_array_equal(capped.value[leaves], want)
        assert np.abs(free.value[leaves]).max() > 1e6 and np.abs(capped.value[leaves]).max() == 1.5


@pytest.mark.parametrize(("depth", "leaves"), [(3, None), (16, 8)])
def test_tree_on_a_subset_of_the_rows_equals_the_definition_on_those_rows(depth: int, leaves: int | None) -> None:
    """A subsample's root histogram gathers its rows' g and h into the grower's scratch (sized for it) and, with
    ``overwrite_rows``, partitions the caller's row list in place: the tree is the definition's on those rows."""
    X, y = data(n=900)
    fd = BinnedData.from_data(X, 64)
    p = np.full(len(y), y.mean())
    g, h = p - y, p * (1 - p)
    rows = np.sort(np.random.default_rng(3).choice(len(y), 500, replace=False)).astype(np.int32)
    params = TreeParams(depth, leaves, 0.0, 1e-3, 5)
    kept = rows.copy()
    tree, _ = grow_tree(fd, g, h, rows, params, gain_scale=1.0 / rows.size, step=0.1)
    np.testing.assert_array_equal(rows, kept)  # a private copy partitioned
    again, _ = grow_tree(fd, g, h, rows, params, gain_scale=1.0 / rows.size, step=0.1, overwrite_rows=True)
    assert not np.array_equal(rows, kept) and np.array_equal(np.sort(rows), kept)  # the caller's, partitioned
    np.testing.assert_array_equal(again.value, tree.value)
    t, leaf, _ = grow(fd.codes[kept], g[kept], h[kept], fd.n_thr, depth=depth, leaves=leaves,
                      pen=np.zeros(X.shape[1]), used=np.zeros(X.shape[1], bool), scale=1.0 / kept.size, l2=0.0, msl=5)
    mine = fd.apply_add(tree, np.asfortranarray(fd.codes[kept]), None, 0, want_leaves=True)
    assert {tuple(np.flatnonzero(mine == v)) for v in np.unique(mine)} == \
        {tuple(np.flatnonzero(leaf == v)) for v in np.unique(leaf)}
    assert int((tree.feature < 0).sum()) == sum(f < 0 for f in t["feature"])
