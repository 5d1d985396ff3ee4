"""Kind ``cstc`` in the runtime: the C evaluator (fm_cstc.c) equals the numpy reference bit for bit
(labels, scores, features read, cost, leaf) on random trees, float32 and q15; only the path's features
are read, each once; the model file round-trips and inconsistent tables are refused (loader and C)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyruntime import format as fmt
from pyruntime.cstc.model import CCSTC, CSTCModel
from pyruntime.errors import FM_E_VALUE, ModelFormatError, RuntimeCError

PROPS = settings(max_examples=60, derandomize=True, deadline=None)


def random_tree(rng: np.random.Generator, n_features: int, max_depth: int, costs: bool = True) -> CSTCModel:
    """A random tree of sparse linear nodes, breadth-first numbered (children after parents)."""
    upper, lower, depth = [-1], [-1], [0]
    queue = [0]
    while queue:
        k = queue.pop(0)
        if depth[k] < max_depth and rng.random() < 0.75:
            for side in (upper, lower):
                side[k] = len(depth)
                upper.append(-1)
                lower.append(-1)
                depth.append(depth[k] + 1)
                queue.append(side[k])
    n = len(depth)
    nnz = rng.integers(0, 4, size=n)
    start = np.concatenate([[0], np.cumsum(nnz)])
    feature = rng.integers(0, n_features, size=int(start[-1]))
    weight = rng.normal(0, 2, size=feature.size).astype(np.float32)
    return CSTCModel(n_features=n_features, term_start=start, feature=feature, weight=weight,
                     bias=rng.normal(0, 1, n), threshold=rng.normal(0, 1, n), upper=upper, lower=lower,
                     costs=rng.integers(0, 20, n_features).astype(np.float32) if costs else None,
                     input_absmax=3.0)


def same(a: Any, b: Any) -> None:
    for f in ("label", "score", "n_read", "cost", "stage"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n_features=st.integers(1, 9), depth=st.integers(0, 4),
       costs=st.booleans())
def test_c_equals_reference_on_random_trees(seed: int, n_features: int, depth: int, costs: bool) -> None:
    rng = np.random.default_rng(seed)
    m = random_tree(rng, n_features, depth, costs)
    X = rng.normal(0, 1.5, size=(40, n_features)).astype(np.float32)
    X[:5] = np.round(X[:5])  # ties with integer-ish thresholds and zeros
    for tables in (m, m.q15()):
        ref = tables.predict_reference(X)
        c = CCSTC(tables).predict(X)
        same(ref, c)
        assert all(m.is_leaf(int(s)) for s in c.stage)


def path_features(m: CSTCModel, x: np.ndarray) -> tuple[list[int], int]:
    """Features of the nodes on x's path (first-read order, distinct) and the leaf, walked by hand in float64
    (the test trees keep margins so the float32 walk agrees)."""
    k, seen = 0, []
    while True:
        a, b = int(m.term_start[k]), int(m.term_start[k + 1])
        for f in m.feature[a:b].tolist():
            if f not in seen:
                seen.append(f)
        if m.is_leaf(k):
            return seen, k
        s = float(m.bias[k]) + float(np.dot(m.weight[a:b].astype(np.float64), x[m.feature[a:b]]))
        k = int(m.upper[k]) if s > float(m.threshold[k]) else int(m.lower[k])


def test_lazy_reads_only_the_path_each_feature_once() -> None:
    # root on x0 (cost 1); upper child reads x1, x2; lower child reads x3 twice and x0 again
    m = CSTCModel(n_features=5, term_start=[0, 1, 3, 6], feature=[0, 1, 2, 3, 3, 0],
                  weight=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], bias=[0, 0, 0], threshold=[0.0, 0.0, 0.0],
                  upper=[1, -1, -1], lower=[2, -1, -1], costs=[1, 10, 20, 40, 80])
    c = CCSTC(m)
    for x, want, cost, leaf in (([1, 2, 3, 4, 5], [0, 1, 2], 31.0, 1), ([-1, 2, 3, 4, 5], [0, 3], 41.0, 2)):
        asked: list[int] = []

        def read(j: int, x: list[int] = x, asked: list[int] = asked) -> float:
            asked.append(j)
            return float(x[j])

        p = c.predict_lazy(read)
        assert asked == want and path_features(m, np.array(x, float)) == (want, leaf)
        assert int(p.n_read[0]) == len(want) and float(p.cost[0]) == cost and int(p.stage[0]) == leaf
    for tables in (m, m.q15()):
        X = np.array([[1, 2, 3, 4, 5], [-1, 2, 3, 4, 5]], np.float32)
        p = CCSTC(tables).predict(X)
        assert p.n_read.tolist() == [3, 2] and p.cost.tolist() == [31.0, 41.0] and p.stage.tolist() == [1, 2]


def test_nan_on_the_path_fails_off_the_path_does_not() -> None:
    m = random_tree(np.random.default_rng(1), 4, 0)  # a single leaf
    used = set(m.feature.tolist())
    unused = [j for j in range(4) if j not in used]
    X = np.ones((1, 4), np.float32)
    if unused:
        X[0, unused[0]] = np.nan
        same(m.reference(X)[0], CCSTC(m).predict_raw(X))
    if used:
        X[0, next(iter(used))] = np.nan
        _, status = m.reference(X)
        assert status[0] == FM_E_VALUE
        with pytest.raises(RuntimeCError):
            CCSTC(m).predict_raw(X)


def test_round_trip_is_exact() -> None:
    m = random_tree(np.random.default_rng(5), 6, 3)
    back = fmt.loads(fmt.dumps(fmt.ModelFile("cstc", m, {"classes": ["0", "1"]}))).tables
    for name, v in m.to_dict().items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(getattr(back, name), v)
            assert getattr(back, name).dtype == v.dtype
        else:
            assert getattr(back, name) == v


def _good() -> dict[str, Any]:
    return random_tree(np.random.default_rng(7), 5, 2).to_dict() | {
        "term_start": np.array([0, 1, 2, 3], np.uint32), "feature": np.array([0, 1, 2], np.int32),
        "weight": np.ones(3, np.float32), "bias": np.zeros(3, np.float32), "threshold": np.zeros(3, np.float32),
        "upper": np.array([1, -1, -1], np.int32), "lower": np.array([2, -1, -1], np.int32)}


BAD = {
    "feature out of range": {"feature": np.array([0, 1, 5], np.int32)},
    "negative feature": {"feature": np.array([0, -1, 2], np.int32)},
    "term_start not ending at nnz": {"term_start": np.array([0, 1, 2, 2], np.uint32)},
    "term_start decreasing": {"term_start": np.array([0, 2, 1, 3], np.uint32)},
    "term_start not from 0": {"term_start": np.array([1, 1, 2, 3], np.uint32)},
    "short bias": {"bias": np.zeros(2, np.float32)},
    "cycle": {"upper": np.array([1, 0, -1], np.int32), "lower": np.array([2, 2, -1], np.int32)},
    "child before parent": {"upper": np.array([1, -1, 0], np.int32), "lower": np.array([2, -1, 1], np.int32)},
    "two parents": {"upper": np.array([1, 2, -1], np.int32), "lower": np.array([2, -1, -1], np.int32)},
    "one child": {"upper": np.array([1, -1, -1], np.int32), "lower": np.array([-1, -1, -1], np.int32)},
    "child out of range": {"upper": np.array([1, -1, -1], np.int32), "lower": np.array([3, -1, -1], np.int32)},
    "same child twice": {"upper": np.array([1, -1, -1], np.int32), "lower": np.array([1, -1, -1], np.int32)},
    "unreachable node": {"upper": np.array([-1, -1, -1], np.int32), "lower": np.array([-1, -1, -1], np.int32)},
    "nan weight": {"weight": np.array([1, np.nan, 1], np.float32)},
    "inf threshold": {"threshold": np.array([0, np.inf, 0], np.float32)},
    "negative cost": {"costs": -np.ones(5, np.float32)},
    "costs of wrong length": {"costs": np.ones(4, np.float32)},
    "no nodes": {"term_start": np.array([0], np.uint32), "feature": np.zeros(0, np.int32),
                 "weight": np.zeros(0, np.float32), "bias": np.zeros(0, np.float32),
                 "threshold": np.zeros(0, np.float32), "upper": np.zeros(0, np.int32),
                 "lower": np.zeros(0, np.int32)},
}


def test_good_tables_load() -> None:
    m = CSTCModel.from_dict(_good())
    assert m.n_nodes == 3
    CCSTC(m)


@pytest.mark.parametrize("defect", sorted(BAD))
def test_inconsistent_tables_are_refused_by_loader_and_c(defect: str) -> None:
    tables = _good() | BAD[defect]
    blob = fmt.dumps(fmt.ModelFile("cstc", _Raw(tables), {}))
    with pytest.raises(ModelFormatError):
        fmt.loads(blob)
    # the C check refuses the same tables on its own (a header or a file read without the Python loader)
    cm = object.__new__(CSTCModel)
    for k, v in tables.items():
        object.__setattr__(cm, k, v)
    if defect in ("short bias", "costs of wrong length", "term_start not ending at nnz"):
        return  # lengths are not visible to C (pointers only); the loader's job
    with pytest.raises(ModelFormatError):
        CCSTC(cm)
    if defect not in ("nan weight", "inf threshold", "negative cost"):
        with pytest.raises(ModelFormatError):
            CCSTC(_q15_unchecked(tables))


def _q15_unchecked(t: dict[str, Any]) -> Any:
    from pyruntime.cstc.model import CSTCModelQ15

    q = object.__new__(CSTCModelQ15)
    n = len(t["bias"])
    fields = {"n_features": t["n_features"], "term_start": t["term_start"], "feature": t["feature"],
              "weight_q": np.ones(len(t["feature"]), np.int16), "bias_q": np.zeros(n, np.int32),
              "threshold_q": np.zeros(n, np.int32), "w_shift": np.full(n, 8, np.uint8), "upper": t["upper"],
              "lower": t["lower"], "in_shift": 16, "costs": None, "cost_unit": 1.0}
    for k, v in fields.items():
        object.__setattr__(q, k, v)
    return q


def test_q15_shift_out_of_range_is_refused_by_c() -> None:
    q = CSTCModel.from_dict(_good()).q15()
    object.__setattr__(q, "w_shift", np.array([31, 0, 0], np.uint8))
    with pytest.raises(ModelFormatError):
        CCSTC(q)


class _Raw:
    """Tables written without validation (to build inconsistent files)."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def to_dict(self) -> dict[str, Any]:
        return self.d
