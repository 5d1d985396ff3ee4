"""Kind ``cstc`` for K classes (issue 19): binary routers, K class scorers per leaf (docs/cstc.md). The C
runtime equals the numpy reference bit for bit (label, score, features read, cost, leaf) on trained K = 3
(wine) and K = 10 (digits) trees and on random K-class trees up to 64 classes, float32 and q15; the loader
and fm_cstc*_check refuse bad K and shapes; a binary model is bit-identical to the one before K classes;
the CLI trains a string-labelled set without a flag and the compiled header prints what `predict` prints."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from host_build import PRINT_ROWS, run_with_header
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_wine
from test_cstc_runtime import random_tree, same
from test_multiclass import run, write_csv

from compiler.cstc.train import CSTCClassifier
from compiler.header import render_header
from pyruntime import format as fmt
from pyruntime.cstc.model import CCSTC, CSTCModel, cstc_struct
from pyruntime.errors import ModelFormatError

PROPS = settings(max_examples=40, derandomize=True, deadline=None)


def split(X: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple[np.ndarray, ...]:
    idx = np.random.default_rng(seed).permutation(len(y))
    a, b = int(0.6 * len(y)), int(0.8 * len(y))
    return X[idx[:a]], y[idx[:a]], X[idx[a:b]], y[idx[a:b]], X[idx[b:]], y[idx[b:]]


@pytest.fixture(scope="module")
def trained() -> dict[str, tuple[CSTCClassifier, CSTCModel, np.ndarray, np.ndarray]]:
    out = {}
    for name, loader, kw in (("wine", load_wine, {}),
                             ("digits", load_digits, {"depth": 2, "max_iter": 2, "n_starts": 1, "inner_iter": 4})):
        X, y = loader(return_X_y=True)
        Xtr, ytr, Xva, yva, Xte, yte = split(X, y)
        m = CSTCClassifier(random_state=0, **kw).fit(Xtr, ytr, eval_set=(Xva, yva))
        out[name] = (m, CSTCModel(**m.to_ir(), input_absmax=float(np.abs(Xtr).max())), Xte, yte)
    return out


@pytest.mark.parametrize(("name", "K", "least"), [("wine", 3, 0.85), ("digits", 10, 0.7)])
@pytest.mark.parametrize("q15", [False, True])
def test_trained_k_class_trees_c_equals_reference(trained: dict[str, Any], name: str, K: int, least: float,
                                                  q15: bool) -> None:
    m, tables, X, y = trained[name]
    assert tables.n_classes == K and m.n_classes_ == K
    t = tables.q15() if q15 else tables
    ref = t.predict_reference(X)
    same(ref, CCSTC(t).predict(X))
    assert np.mean(ref.label == y) >= least
    if not q15:  # the tables answer what the estimator answers (float32 vs float64 sums: all but a few rows)
        assert np.mean(m.classes_[ref.label] == m.predict(X)) >= 0.97
        assert np.allclose(ref.cost, m.test_time_cost(X))


def random_k_tree(rng: np.random.Generator, n_features: int, depth: int, K: int) -> CSTCModel:
    """A random binary tree (random_tree's routers) whose leaves get K random sparse class scorers."""
    base = random_tree(rng, n_features, depth)
    n = base.n_nodes
    leaves = [k for k in range(n) if base.is_leaf(k)]
    nnz = [int(base.term_start[k + 1] - base.term_start[k]) if not base.is_leaf(k) else 0 for k in range(n)]
    nnz += list(rng.integers(0, 4, size=len(leaves) * K))
    start = np.concatenate([[0], np.cumsum(nnz)])
    feat = [base.feature[base.term_start[k]:base.term_start[k + 1]] for k in range(n) if not base.is_leaf(k)]
    keep = np.concatenate([*feat, np.zeros(0, np.int32)])
    extra = rng.integers(0, n_features, size=int(start[-1]) - keep.size)
    first = np.zeros(n, np.uint32)
    for i, k in enumerate(leaves):
        first[k] = n + i * K
    bias = np.concatenate([np.where([base.is_leaf(k) for k in range(n)], 0.0, base.bias),
                           rng.normal(0, 1, len(leaves) * K)])
    # the routers' terms first (nodes in order, leaves empty), then the class scorers'
    feature = np.concatenate([keep, extra]).astype(np.int32)
    w = [base.weight[base.term_start[k]:base.term_start[k + 1]] for k in range(n) if not base.is_leaf(k)]
    weight = np.concatenate([*w, rng.normal(0, 2, extra.size)]).astype(np.float32)
    return CSTCModel(n_features=n_features, term_start=start, feature=feature, weight=weight, bias=bias,
                     threshold=base.threshold, upper=base.upper, lower=base.lower, costs=base.costs,
                     input_absmax=3.0, n_classes=K, class_first=first)


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n_features=st.integers(1, 9), depth=st.integers(0, 3),
       K=st.sampled_from([3, 4, 10, 64]))
def test_c_equals_reference_on_random_k_class_trees(seed: int, n_features: int, depth: int, K: int) -> None:
    rng = np.random.default_rng(seed)
    m = random_k_tree(rng, n_features, depth, K)
    X = rng.normal(0, 1.5, size=(30, n_features)).astype(np.float32)
    X[:5] = np.round(X[:5])
    for tables in (m, m.q15()):
        ref = tables.predict_reference(X)
        same(ref, CCSTC(tables).predict(X))
        assert np.all((ref.label >= 0) & (ref.label < K))


def test_sixty_four_classes_and_the_round_trip() -> None:
    m = random_k_tree(np.random.default_rng(11), 6, 2, 64)
    back = fmt.loads(fmt.dumps(fmt.ModelFile("cstc", m, {"classes": [f"c{i}" for i in range(64)]}))).tables
    assert back.n_classes == 64
    for name, v in m.to_dict().items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(getattr(back, name), v)
    X = np.random.default_rng(0).normal(size=(50, 6)).astype(np.float32)
    same(m.predict_reference(X), CCSTC(back).predict(X))
    with pytest.raises(ModelFormatError, match="63 class labels for tables of 64 classes"):
        fmt.loads(fmt.dumps(fmt.ModelFile("cstc", m, {"classes": [f"c{i}" for i in range(63)]})))


def test_a_binary_record_has_no_class_fields() -> None:
    d = random_tree(np.random.default_rng(2), 4, 2).to_dict()
    assert "n_classes" not in d and "class_first" not in d


BAD_K = {
    "n_classes must be in 2..64": {"n_classes": 65},
    "n_classes must be in 2..64, got 1": {"n_classes": 1},
    "class scorers must lie in the class scorers": {"class_first": "past-end"},
    "a binary CSTC tree has no class scorers": {"n_classes": 2},
    "class_first needs one entry per node": {"class_first": "short"},
    "term_start needs n_nodes": {"bias": "short"},
}


@pytest.mark.parametrize("message", sorted(BAD_K))
def test_the_loader_refuses_bad_k_class_tables(message: str) -> None:
    m = random_k_tree(np.random.default_rng(4), 5, 2, 3)
    d = m.to_dict()
    for key, v in BAD_K[message].items():
        if v == "past-end":
            leaf = int(np.flatnonzero(m.upper < 0)[0])
            d["class_first"] = d["class_first"].copy()
            d["class_first"][leaf] = m.n_scorers - 2
        elif v == "short":
            d[key] = d[key][:-1]
        else:
            d[key] = v
    with pytest.raises(ModelFormatError, match=message):
        CSTCModel.from_dict(d)


def test_the_c_check_refuses_bad_k_and_shapes() -> None:
    from pyruntime._frugalml_c import ffi, lib  # noqa: PLC0415

    m = random_k_tree(np.random.default_rng(6), 5, 2, 10)
    leaf = int(np.flatnonzero(m.upper < 0)[0])
    for tables, check in ((m, lib.fm_cstc_check), (m.q15(), lib.fm_cstc_q15_check)):
        keep: list[object] = []
        s = cstc_struct(ffi, tables, keep)
        assert check(s) == 0
        for field, bad in (("n_classes", 1), ("n_classes", 65), ("n_class_scorers", 9),
                           ("n_class_scorers", 0xFFFFFFFF), ("class_first", ffi.NULL)):
            saved = getattr(s, field)
            setattr(s, field, bad)
            assert check(s) != 0, (field, bad)
            setattr(s, field, saved)
        saved = s.class_first[leaf]
        for bad in (0, tables.n_scorers - 9, tables.n_scorers):  # a node scorer, the last K past the end
            s.class_first[leaf] = bad
            assert check(s) != 0, bad
        s.class_first[leaf] = saved
        assert check(s) == 0


def _digest() -> str:
    """Tables, q15 tables and answers of a small binary tree (compared with main fcd805d, before K classes)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(160, 6))
    y = np.where(X[:, 0] + 0.5 * X[:, 2] - 0.4 * X[:, 4] + 0.3 * rng.normal(size=160) > 0, "yes", "no")
    m = CSTCClassifier(depth=2, max_iter=3, n_starts=2, costs=[1, 2, 3, 1, 2, 3], random_state=0)
    m.fit(X[:120], y[:120], eval_set=(X[120:], y[120:]))
    t = CSTCModel(**m.to_ir(), input_absmax=3.0)
    h = hashlib.sha256()
    for d in (t.to_dict(), t.q15().to_dict()):
        for k in sorted(d):
            h.update(k.encode())
            h.update(np.asarray(d[k]).tobytes())
    h.update(np.asarray(m.predict(X)).tobytes())
    h.update(np.asarray(m.decision_function(X)).tobytes())
    return h.hexdigest()[:16]


def _avx2() -> bool:
    try:
        return platform.machine() in ("x86_64", "AMD64") and "avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not _avx2(), reason="the digest was taken with OpenBLAS's Haswell kernels (x86-64 with AVX2)")
def test_a_binary_model_is_bit_identical_to_before_k_classes() -> None:
    """The training's float64 products go through numpy's OpenBLAS, whose kernels (picked by the CPU) sum in
    different orders: on an AVX-512 machine (SkylakeX kernels) the tables differ in their last bits. The digest is
    taken in a child process with the Haswell kernels pinned (OPENBLAS_CORETYPE), the ones it was recorded with."""
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); " \
           "from test_cstc_multiclass import _digest; print(_digest())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "869a694c483d9d98"


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_cli_trains_string_labels_and_the_header_prints_what_predict_prints(tmp_path: Path, numeric: str) -> None:
    X, y = load_wine(return_X_y=True)
    names = ["barolo", "grigno lino", 'bar"bera']  # a space and a quote: the header escapes them
    data = write_csv(tmp_path / "wine.csv", X, [names[int(t)] for t in y])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "cstc", data, "-o", out)
    assert code == 0, err
    m = fmt.load(out)
    assert m.tables.n_classes == 3 and m.classes == sorted(names)
    code, text, err = run("predict", out, data, "--numeric", numeric, "--rows", "40")
    assert code == 0, err
    lines = run_with_header(render_header(m, numeric, "model", X[:40]), PRINT_ROWS, tmp_path)
    assert lines == [" ".join(t.split(" ")[:-1]) for t in text.splitlines()]
    code, text, err = run("inspect", out)
    assert code == 0, err
    # a quote in a class text: inspect quotes every text (round 64), so the line reads as three classes
    assert 'classes: "bar\\"bera", "barolo", "grigno lino"' in text and "n classes: 3" in text
