"""Trees shared by K outputs (``class_trees="shared"``): one split structure per iteration, K leaf values.

The split rule is checked against a numpy definition written from the formula (the sum over the outputs of the
Newton gains, the feature's penalty charged once), the booster and the estimator against their contracts: K trees
per iteration with equal splits, the runtime's scores equal the estimator's, a row reads at most one path's
features per iteration, two classes unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from boost_reference import c_layout, histogram
from cli_work import run
from compiler.boosting._histboost import ffi, lib

from compiler.boosting.booster import make_booster
from compiler.boosting.grow import BinnedData, TreeParams, grow_shared_trees
from compiler.trees.cost_tree import ir_scores
from compiler.trees.miser import GreedyMiserClassifier
from pyruntime import format as fmt
from pyruntime.evaluators import c_evaluator, reference_evaluator


def _problem(seed: int, n: int = 240, d: int = 6, K: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (np.digitize(X[:, 0] + 0.5 * X[:, 2] * (seed % 2), [-0.5, 0.6]) + (X[:, 4] > 1.2)) % K
    return X, y.astype(np.int64), rng.uniform(0.5, 2.0, size=d)


def _first_gradients(seed: int, bins: int, K: int = 3) -> tuple[BinnedData, np.ndarray, np.ndarray, np.ndarray]:
    """A K-class problem binned, the log-loss gradients and hessians of its first iteration (uniform scores),
    (n, K) each, and every row."""
    X, y, _ = _problem(seed, K=K)
    Y = np.eye(K)[y]
    P = np.full_like(Y, 1.0 / K)
    return BinnedData.from_data(X, bins), P - Y, P * (1 - P), np.arange(len(y), dtype=np.int32)


def _reference_split(hist: np.ndarray, n_thr: np.ndarray, pen: np.ndarray, scale: float, l2: float,
                     mcw: float, msl: float) -> tuple[int, int, float]:
    """The best (feature, bin, net gain) of K histograms (K, d, bins, 3) by the formula."""
    K, d = hist.shape[:2]
    G, H = hist[:, 0, :, 0].sum(axis=1), hist[:, 0, :, 1].sum(axis=1)
    C = hist[0, 0, :, 2].sum()
    best = (-1, -1, -np.inf)
    for j in range(d):
        nb = int(n_thr[j])
        if nb == 0:
            continue
        gl = np.cumsum(hist[:, j, :, 0], axis=1)[:, :nb]
        hl = np.cumsum(hist[:, j, :, 1], axis=1)[:, :nb]
        cl = np.cumsum(hist[0, j, :, 2])[:nb]
        gr, hr = G[:, None] - gl, H[:, None] - hl
        score = (gl**2 / (hl + l2) + gr**2 / (hr + l2)).sum(axis=0) - (G**2 / (H + l2)).sum()
        gain = scale * 0.5 * score - pen[j]
        ok = (hl.sum(axis=0) >= mcw) & (hr.sum(axis=0) >= mcw) & (cl >= msl) & (C - cl >= msl)
        gain = np.where(ok, gain, -np.inf)
        b = int(np.argmax(gain))
        if gain[b] > best[2] + 1e-12:
            best = (j, b, float(gain[b]))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("l2", [0.0, 1.0])
def test_multi_split_equals_the_summed_newton_gain(seed: int, l2: float) -> None:
    _, y, costs = _problem(seed)
    data, g, h, rows = _first_gradients(seed, 16)
    K = 3
    hist = np.stack([histogram(data.codes, rows, g[:, k], h[:, k], data.n_thr) for k in range(K)])
    pen = 0.02 * costs
    gh, cnt = c_layout(hist)
    out, work = ffi.new("hb_split *"), np.empty(4 * K)
    lib.hb_best_split_multi(ffi.cast("double *", gh.ctypes.data), ffi.cast("int32_t *", cnt.ctypes.data), K,
                            data.n_features, data.n_bins,
                            ffi.cast("int32_t *", data.n_thr.ctypes.data), ffi.cast("double *", pen.ctypes.data),
                            ffi.NULL, l2, 1e-3, 5.0, 1.0 / len(y), ffi.cast("double *", work.ctypes.data), out)
    j, b, gain = _reference_split(hist, data.n_thr, pen, 1.0 / len(y), l2, 1e-3, 5.0)
    assert (out.feature, out.bin) == (j, b)
    assert out.gain == pytest.approx(gain, rel=1e-9, abs=1e-12)


def test_multi_split_of_one_output_is_the_single_split() -> None:
    X, y, costs = _problem(4)
    data = BinnedData.from_data(X, 32)
    g = np.where(y == 1, -0.5, 0.5)
    h = np.full(len(y), 0.25)
    rows = np.arange(len(y), dtype=np.int32)
    gh, cnt = c_layout(histogram(data.codes, rows, g, h, data.n_thr))
    hist = (ffi.cast("double *", gh.ctypes.data), ffi.cast("int32_t *", cnt.ctypes.data))
    pen = 0.01 * costs
    args = (data.n_features, data.n_bins, ffi.cast("int32_t *", data.n_thr.ctypes.data),
            ffi.cast("double *", pen.ctypes.data), ffi.NULL, 0.5, 1e-3, 3.0, 1.0 / len(y))
    one, multi, work = ffi.new("hb_split *"), ffi.new("hb_split *"), np.empty(4)
    lib.hb_best_split(*hist, *args, one)
    lib.hb_best_split_multi(*hist, 1, *args,
                            ffi.cast("double *", work.ctypes.data), multi)
    assert (multi.feature, multi.bin, multi.gl, multi.hl, multi.cl) == (one.feature, one.bin, one.gl, one.hl, one.cl)
    assert multi.gain == pytest.approx(one.gain, rel=1e-12)


def test_shared_trees_have_one_structure_and_each_outputs_newton_leaves() -> None:
    X, _, _ = _problem(5)
    data, g, h, rows = _first_gradients(5, 32)
    K = 3
    trees, used = grow_shared_trees(data, g, h, rows, TreeParams(max_depth=2, min_samples_leaf=5),
                                    penalty=np.zeros(X.shape[1]), used=np.zeros(X.shape[1], bool), step=0.5)
    assert len(trees) == K
    for t in trees[1:]:
        assert np.array_equal(t.feature, trees[0].feature) and np.array_equal(t.bin, trees[0].bin)
        assert np.array_equal(t.left, trees[0].left) and np.array_equal(t.right, trees[0].right)
    leaves = trees[0].apply(X)
    for k, t in enumerate(trees):
        for leaf in np.unique(leaves):
            m = leaves == leaf
            assert t.value[leaf] == pytest.approx(-0.5 * g[m, k].sum() / h[m, k].sum(), rel=1e-9)
    assert set(np.flatnonzero(used)) == set(trees[0].features_used())


def test_shared_penalty_is_charged_once_for_the_k_outputs() -> None:
    """A feature whose summed gain is under its penalty is not bought; with the penalty K times smaller (what
    separate trees charge each output) it is."""
    data, g, h, rows = _first_gradients(6, 32)
    K, y = 3, rows
    params = TreeParams(max_depth=1, min_samples_leaf=5)
    free, _ = grow_shared_trees(data, g, h, rows, params, penalty=np.zeros(6), used=np.zeros(6, bool),
                                gain_scale=1.0 / len(y))
    j = int(free[0].feature[0])
    hist = np.stack([histogram(data.codes, rows, g[:, k], h[:, k], data.n_thr) for k in range(K)])
    _, _, gain = _reference_split(hist, data.n_thr, np.zeros(6), 1.0 / len(y), 0.0, 1e-3, 5.0)
    pen = np.full(6, 1.5 * gain)  # every feature costs more than the best summed gain
    none, _ = grow_shared_trees(data, g, h, rows, params, penalty=pen, used=np.zeros(6, bool),
                                gain_scale=1.0 / len(y))
    assert none[0].feature[0] == -1
    used = np.zeros(6, bool)
    used[j] = True  # already paid for: free again
    again, _ = grow_shared_trees(data, g, h, rows, params, penalty=pen, used=used, gain_scale=1.0 / len(y))
    assert again[0].feature[0] == j


def test_booster_with_shared_trees_scores_equal_the_ir() -> None:
    X, y, costs = _problem(7, n=300)
    b = make_booster(X, y, np.ones(len(y)), 3, "multiclass-log", costs, 0.3, 3, 32, 5, class_trees="shared")
    for _ in range(4):
        b.iterate(0.0)
    assert len(b.trees) == 12 and b.tree_output == [0, 1, 2] * 4
    m = GreedyMiserClassifier(lam=0.0, n_trees=4, max_depth=3, step=0.3, max_bins=32, min_samples_leaf=5,
                              validation_fraction=0.0, class_trees="shared").fit(X, y)
    ir = m.to_tree_ensemble()
    assert np.array_equal(ir_scores(ir, X), b.F)


@pytest.mark.parametrize("kind", ["miser", "cascade"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_shared_trees_from_the_cli_read_one_path_per_iteration_in_c(tmp_path: Path, kind: str, numeric: str) -> None:
    """`train miser|cascade --class-trees shared` on 4 classes: the C runtime equals the reference, and a row
    reads at most the depth's features per iteration walked (separate trees read up to K times that)."""
    X, y, _ = _problem(8, n=400, d=8, K=4)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    opts = ["--early-exit-every", "2"] if kind == "cascade" else ["--lambda", "0"]
    code, _, err = run("train", kind, tmp_path / "d.npz", "-o", tmp_path / "m.fml", "--trees", "6", "--depth", "2",
                       "--class-trees", "shared", *opts)
    assert code == 0, err
    m = fmt.load(tmp_path / "m.fml")
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    for name in ("label", "n_read", "stage"):
        np.testing.assert_array_equal(getattr(c, name), getattr(ref, name))
    trees = m.tables.trees
    feature, roots = np.asarray(trees.feature), np.asarray(trees.roots)
    K = int(trees.n_outputs)
    assert K == 4 and roots.size % K == 0
    for it in range(roots.size // K):  # the K trees of an iteration split alike
        first = feature[roots[it * K]:roots[it * K + 1]]
        for k in range(1, K):
            end = roots[it * K + k + 1] if it * K + k + 1 < roots.size else feature.size
            assert np.array_equal(feature[roots[it * K + k]:end], first)
    walked = m.tables.trees_at(c.stage) // K
    assert np.all(c.n_read <= 2 * walked)
    assert np.mean(c.label == y) > 0.8
    # the C tables walk each iteration's K trees once (fm_trees.run = K), and inspect says so
    code, out, err = run("inspect", tmp_path / "m.fml", "--json")
    assert code == 0, err
    assert json.loads(out)["n_walks"] == roots.size // K
    header = tmp_path / "m.h"
    code, _, err = run("export-c", tmp_path / "m.fml", "-o", header, "--numeric", numeric)
    assert code == 0, err
    assert re.search(r"/\* run \*/ 4u", header.read_text())


def test_two_classes_ignore_class_trees() -> None:
    X, y, costs = _problem(9, K=2)
    a = GreedyMiserClassifier(lam=0.5, n_trees=5, costs=costs, validation_fraction=0.0).fit(X, y)
    b = GreedyMiserClassifier(lam=0.5, n_trees=5, costs=costs, validation_fraction=0.0,
                              class_trees="shared").fit(X, y)
    for key, v in a.to_tree_ensemble().items():
        w = b.to_tree_ensemble()[key]
        assert np.array_equal(v, w) if isinstance(v, np.ndarray) else v == w


@pytest.mark.parametrize(("params", "message"), [({"class_trees": "both"}, "class_trees must be one of"),
                                                 ({"class_trees": "shared", "charge": "row"}, "charge='row'")])
def test_bad_class_trees_are_refused_at_fit(params: dict, message: str) -> None:
    X, y, _ = _problem(10)
    with pytest.raises(ValueError, match=message):
        GreedyMiserClassifier(n_trees=2, **params).fit(X, y)


def test_the_cascade_defaults_to_shared_trees_for_k_classes_and_records_the_form(tmp_path: Path) -> None:
    X, y, _ = _problem(11, n=300, d=6, K=3)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    forms = {}
    for given in ([], ["--class-trees", "separate"]):
        out = tmp_path / f"c{len(given)}.fml"
        code, _, err = run("train", "cascade", tmp_path / "d.npz", "-o", out, "--trees", "4", "--depth", "2",
                           "--early-exit-every", "2", *given)
        assert code == 0, err
        m = fmt.load(out)
        t = m.tables.trees
        roots, feature = np.asarray(t.roots), np.asarray(t.feature)
        first_iteration = [feature[roots[k]:roots[k + 1]] for k in range(3)]
        forms[m.meta["training"]["class_trees"]] = all(np.array_equal(f, first_iteration[0])
                                                       for f in first_iteration)
    assert forms == {"shared": True, "separate": False}
    X2, y2, _ = _problem(12, n=200, K=2)
    np.savez(tmp_path / "b.npz", X=X2, y=y2)
    code, _, err = run("train", "cascade", tmp_path / "b.npz", "-o", tmp_path / "b.fml", "--trees", "4",
                       "--early-exit-every", "2")
    assert code == 0, err
    assert "class_trees" not in fmt.load(tmp_path / "b.fml").meta["training"]  # one output: nothing to share


@pytest.mark.parametrize("kind", ["miser", "cascade"])
def test_class_trees_is_documented_and_checked_by_the_cli(tmp_path: Path, kind: str) -> None:
    code, out, _ = run("train", kind, "--help")
    assert code == 0 and "--class-trees" in out
    X, y, _ = _problem(13, n=120)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, _, err = run("train", kind, tmp_path / "d.npz", "-o", tmp_path / "m.fml", "--class-trees", "both")
    assert code == 2 and "'both' is not one of 'separate', 'shared'" in err
    assert not (tmp_path / "m.fml").exists()


@pytest.mark.parametrize(("charge", "class_trees", "message"), [
    ("bogus", "separate", r"charge must be one of \('model', 'row'\), got 'bogus'"),
    ("model", "bogus", r"class_trees must be one of \('separate', 'shared'\), got 'bogus'"),
    ("row", "shared", "class_trees='shared' does not take charge='row'"),
])
def test_the_booster_and_the_estimator_refuse_the_same_charge_and_tree_forms(
        charge: str, class_trees: str, message: str) -> None:
    # one check (compiler.boosting.booster.check_charge) serves the booster and GreedyMiserClassifier
    X, y, costs = _problem(1)
    with pytest.raises(ValueError, match=message):
        make_booster(X, y, np.ones(len(y)), 3, "multiclass-log", costs, 0.1, 3, charge=charge, class_trees=class_trees)
    with pytest.raises(ValueError, match=message):
        GreedyMiserClassifier(n_trees=2, charge=charge, class_trees=class_trees).fit(X, y)
