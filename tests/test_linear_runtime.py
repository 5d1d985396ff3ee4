"""Sparse linear scorer runtime: C (runtime_c/src/core/fm_linear.c) against the numpy reference
(pyruntime/linear.py), float32 and integer-only q15, lazy reads, a memo shared with a tree
ensemble, load-time checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from dict_round_trip import assert_round_trips
from host_build import trees_module
from hypothesis import given, settings
from hypothesis import strategies as st
from logging_reader import logging_reader

from pyruntime.errors import FM_E_MODEL, FM_E_VALUE, FM_OK, ModelFormatError, RuntimeCError
from pyruntime.fixedpoint import INT32_MAX, INT32_MIN, float_to_fixed
from pyruntime.linear import CLinear, LinearScorer, LinearScorerQ15, in_shift_for, linear_struct, quantize_linear
from pyruntime.memo import ReadState
from pyruntime.trees.ensemble import CTrees, TreeEnsemble

PROPS = settings(max_examples=60, derandomize=True, deadline=None)


@pytest.fixture(scope="module")
def cmod(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return trees_module(tmp_path_factory.mktemp("cffi_linear"), "_fm_linear_test")


GRID = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e-40, -1e-40, 1e30, -7e9], np.float32)


def random_scorer(rng: np.random.Generator, n_features: int, nnz: int, with_costs: bool) -> LinearScorer:
    return LinearScorer(n_features=n_features, feature=rng.integers(n_features, size=nnz),
                        weight=rng.normal(size=nnz) * rng.choice([1e-3, 1.0, 50.0]), bias=float(rng.normal()),
                        decision_threshold=float(rng.normal() * 0.3),
                        costs=rng.choice([0.1, 1.0, 5.0, 20.0, 150.0], n_features) if with_costs else None)


def random_inputs(rng: np.random.Generator, rows: int, n_features: int, nonfinite: bool) -> np.ndarray:
    X = np.where(rng.random((rows, n_features)) < 0.4, rng.choice(GRID, (rows, n_features)),
                 rng.normal(size=(rows, n_features)) * rng.choice([0.01, 1.0, 1e3])).astype(np.float32)
    if nonfinite:
        mask = rng.random((rows, n_features)) < 0.08
        X[mask] = rng.choice(np.array([np.nan, np.inf, -np.inf], np.float32), int(mask.sum()))
    return X


def assert_same(cl: CLinear, ref: Any, X32: np.ndarray) -> None:
    pred, status = ref.reference(X32)
    q = isinstance(ref, LinearScorerQ15)
    for i in range(X32.shape[0]):
        try:
            g = cl.predict_raw(X32[i : i + 1])
        except RuntimeCError as exc:
            assert exc.code == status[i]
            continue
        assert status[i] == FM_OK
        assert g.label[0] == pred.label[i] and g.n_read[0] == pred.n_read[i]
        if q:
            assert g.score[0] == pred.score[i] and g.cost[0] == pred.cost[i]
        else:
            assert g.score.view(np.uint32)[0] == pred.score[i : i + 1].view(np.uint32)[0]
            assert g.cost.view(np.uint32)[0] == pred.cost[i : i + 1].view(np.uint32)[0]


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n_features=st.integers(1, 8), nnz=st.integers(0, 12))
def test_c_equals_numpy_float32(cmod: Any, seed: int, n_features: int, nnz: int) -> None:
    rng = np.random.default_rng(seed)
    m = random_scorer(rng, n_features, nnz, with_costs=bool(seed % 3))
    assert_same(CLinear(m, cmod.ffi, cmod.lib), m, random_inputs(rng, 24, n_features, seed % 2 == 0))


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n_features=st.integers(1, 8), nnz=st.integers(0, 12),
       in_shift=st.integers(0, 30))
def test_c_equals_numpy_q15(cmod: Any, seed: int, n_features: int, nnz: int, in_shift: int) -> None:
    rng = np.random.default_rng(seed)
    q = random_scorer(rng, n_features, nnz, with_costs=bool(seed % 3)).q15(in_shift=in_shift)
    extreme = int(rng.choice([q.bias_q, INT32_MAX - 3, INT32_MIN + 3]))
    q2 = LinearScorerQ15(**{**q.to_dict(), "bias_q": extreme})
    for model in (q, q2):
        X = random_inputs(rng, 24, n_features, seed % 2 == 0)
        assert_same(CLinear(model, cmod.ffi, cmod.lib), model, X)


def test_float_to_fixed_matches_c(cmod: Any) -> None:
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, size=4000, dtype=np.uint64).astype(np.uint32)
    bits = bits[(bits & 0x7F800000) != 0x7F800000]  # finite only
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -1.75, 2.0**31, -(2.0**31), 2147483520.0, 3e38,
                        -3e38, 1e-45, -1e-45, 1e-38, 65535.99, -0.999], np.float32).view(np.uint32)
    bits = np.concatenate([bits, special])
    x = bits.view(np.float32)
    for shift in (0, 1, 7, 8, 15, 16, 23, 24, 30):
        got = np.array([cmod.lib.fm_float_to_fixed(int(b), shift) for b in bits], np.int64)
        ref = float_to_fixed(x, shift).astype(np.int64)
        np.testing.assert_array_equal(got, ref)
        # the definition: trunc(x * 2**shift) saturated to +-INT32_MAX (exact in float64 for these)
        exact = np.clip(np.trunc(x.astype(np.float64) * 2.0**shift), -INT32_MAX, INT32_MAX)
        np.testing.assert_array_equal(ref, exact.astype(np.int64))


# -- known answers -------------------------------------------------------------------------

def test_hand_built_known_answers(cmod: Any) -> None:
    # acc = 0.125 + 0.5*x2 - 2*x0 + 0.25*x2; feature 1 is never read
    m = LinearScorer(n_features=3, feature=[2, 0, 2], weight=[0.5, -2.0, 0.25], bias=0.125,
                     decision_threshold=0.0, costs=[1.0, 10.0, 100.0])
    X = np.array([[1.0, np.nan, 3.0], [1.0, 0.0, 2.0], [0.0, np.inf, -0.0]], np.float32)
    pred, status = m.reference(X)
    assert list(status) == [FM_OK] * 3
    c = CLinear(m, cmod.ffi, cmod.lib)
    for p in (pred, *[c.predict_raw(X[i : i + 1]) for i in range(3)]):
        assert p.n_read[0] == 2 and p.cost[0] == 101.0
    assert list(pred.score) == [0.375, -0.375, 0.125] and list(pred.label) == [1, 0, 1]
    assert [c.predict_raw(X[i : i + 1]).score[0] for i in range(3)] == [0.375, -0.375, 0.125]
    q = quantize_linear(m, in_shift=8)
    # |w| <= 2 must stay within +-32767: w_shift 13
    assert q.w_shift == 13 and list(q.weight_q) == [4096, -16384, 2048] and q.bias_q == 1024
    pq, _ = q.reference(X)
    # x2 = 3 -> 768: 4096*768 >> 8 = 12288; x0 = 1 -> 256: -16384; 2048*768 >> 8 = 6144
    assert pq.score[0] == 1024 + 12288 - 16384 + 6144
    assert list(pq.score) == [round(s * 2**13) for s in (0.375, -0.375, 0.125)]
    assert list(CLinear(q, cmod.ffi, cmod.lib).predict_raw(X[:2]).score) == list(pq.score[:2])
    with pytest.raises(RuntimeCError) as err:
        c.predict_raw(np.array([[1.0, 0.0, np.nan]], np.float32))
    assert err.value.code == FM_E_VALUE


def test_q15_truncation_and_saturation(cmod: Any) -> None:
    # w = -1 (w_shift 0), in_shift 4: x = 0.3 -> trunc(4.8) = 4; p = -4 >> 4 -> trunc(-0.25) = 0
    q = LinearScorerQ15(n_features=1, feature=[0, 0, 0], weight_q=[-1, 32767, 32767], bias_q=0,
                        decision_threshold_q=0, in_shift=4, w_shift=0)
    X = np.array([[0.3], [-0.3], [1e9], [-1e9]], np.float32)
    pred, _ = q.reference(X)
    c = CLinear(q, cmod.ffi, cmod.lib).predict_raw(X)
    # row 0: 0 + 0 + 2*trunc(32767*4/16)=2*8191; row 1: 0 - 2*8191; rows 2, 3 saturate
    expected = [2 * 8191, -2 * 8191, INT32_MAX, INT32_MIN]
    assert list(pred.score) == expected and list(c.score) == expected
    assert list(c.n_read) == [1] * 4


def test_in_shift_for() -> None:
    assert in_shift_for(1.0) == 30
    assert in_shift_for(1000.0) == 21  # 1000 * 2**21 < 2**31 <= 1000 * 2**22
    x = np.array([1000.0, -1000.0], np.float32)
    assert np.all(np.abs(float_to_fixed(x, in_shift_for(1000.0))) < INT32_MAX)


def test_shared_memo_linear_then_trees(cmod: Any) -> None:
    """A gate (linear) and a tree model in one prediction read each feature once, in C and numpy."""
    ffi, lib = cmod.ffi, cmod.lib
    g = LinearScorer(n_features=4, feature=[1, 3], weight=[1.0, -1.0], bias=0.0, costs=[1, 2, 4, 8])
    t = TreeEnsemble(n_features=4, n_outputs=1, feature=[3, 0, -1, -1, -1], threshold=[0.0, 0.5, 0, 0, 0],
                     left=[1, 2, -1, -1, -1], right=[4, 3, -1, -1, -1], value=[0, 1.0, 2.0, 0, 3.0],
                     roots=[0], tree_output=[0], base_score=[0.0], costs=[1, 2, 4, 8])
    X = np.array([[0.0, 5.0, 9.0, -1.0], [0.0, 5.0, 9.0, 1.0]], np.float32)
    state = ReadState.start(2, 4)
    acc = np.zeros(2, np.float32)
    g.score_into(X, state, acc)
    scores = t.start_scores(2)
    t.accumulate_into(X, state, scores)
    assert list(state.n_read) == [3, 2] and list(state.cost) == [11.0, 10.0]
    ct, cg = CTrees(t, ffi, lib), CLinear(g, ffi, lib)
    for i in range(2):
        v = ffi.new("fm_vector *", {"x": ffi.cast("const float *", ffi.from_buffer(X[i])), "n": 4})
        r = ffi.new("fm_reader *", {"read": lib.fm_vector_read, "ctx": v})
        res = ffi.new("fm_result *")
        a = ffi.new("float *", 0.0)
        lib.fm_memo_start(ct.memo, res)
        assert lib.fm_linear_score(cg.struct, r, ct.memo, a, res) == FM_OK
        assert lib.fm_trees_begin(ct.struct, ct.scores) == FM_OK
        assert lib.fm_trees_accumulate(ct.struct, 0, 1, r, ct.memo, ct.scores, res) == FM_OK
        assert a[0] == acc[i] and ct.scores[0] == scores[i, 0]
        assert res.n_read == state.n_read[i] and res.cost == state.cost[i]


@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_lazy_reads_in_stored_order_once(cmod: Any, seed: int) -> None:
    ffi, lib = cmod.ffi, cmod.lib
    rng = np.random.default_rng(seed)
    m = random_scorer(rng, 6, int(rng.integers(0, 10)), with_costs=True)
    cl = CLinear(m, ffi, lib)
    x = random_inputs(rng, 1, 6, nonfinite=False)[0]
    log: list[int] = []
    r, _callback = logging_reader(ffi, x, log)
    res = ffi.new("fm_result *")
    assert lib.fm_linear_predict(cl.struct, r, cl.memo, res) == FM_OK
    assert log == list(dict.fromkeys(m.feature.tolist()))
    assert res.n_read == len(log)


# -- checks, round trip ------------------------------------------------------------------------

BAD_F32 = {
    "feature out of range": {"feature": [0, 3]},
    "negative feature": {"feature": [-1, 0]},
    "length mismatch": {"weight": [1.0]},
    "non-finite weight": {"weight": [1.0, np.nan]},
    "non-finite bias": {"bias": np.inf},
    "negative cost": {"costs": [1.0, -1.0, 0.0]},
    "nan cost": {"costs": [1.0, np.nan, 0.0]},
}


@pytest.mark.parametrize("what", sorted(BAD_F32))
def test_check_rejects_corruption(cmod: Any, what: str) -> None:
    good = LinearScorer(n_features=3, feature=[0, 2], weight=[1.0, 2.0], bias=0.5, costs=[1, 1, 1]).to_dict()
    keep: list[Any] = []
    assert cmod.lib.fm_linear_check(linear_struct(cmod.ffi, good, keep)) == FM_OK
    bad = {**good, **{k: (np.asarray(v) if isinstance(v, list) else v) for k, v in BAD_F32[what].items()}}
    with pytest.raises(ModelFormatError):
        LinearScorer.from_dict(bad)
    if what != "length mismatch":  # C sees lengths through nnz only
        assert cmod.lib.fm_linear_check(linear_struct(cmod.ffi, bad, keep)) == FM_E_MODEL


@pytest.mark.parametrize("change", [{"feature": [0, 3]}, {"in_shift": 31}, {"w_shift": 31},
                                    {"term_shift": np.array([16, 15], np.uint8)},
                                    {"term_shift": np.array([16, 61], np.uint8)}])
def test_q15_check_rejects_corruption(cmod: Any, change: dict[str, Any]) -> None:
    good = LinearScorer(n_features=3, feature=[0, 2], weight=[1.0, 2.0], bias=0.5).q15().to_dict()
    bad = {**good, **change}
    with pytest.raises(ModelFormatError):
        LinearScorerQ15.from_dict(bad)
    assert cmod.lib.fm_linear_q15_check(linear_struct(cmod.ffi, bad, [])) == FM_E_MODEL


def test_round_trip_dict() -> None:
    m = random_scorer(np.random.default_rng(5), 5, 7, with_costs=True)
    assert_round_trips(m, m.q15(in_shift=12))
    with pytest.raises(ModelFormatError):
        LinearScorer.from_dict({"n_features": 2})


def test_term_shifts_keep_small_weights_beside_large_ones(cmod: Any) -> None:
    """Weights 6.6 on a feature near 1 and 0.0015 on one up to 2600 (keel:bands' l1-gate had both): at the
    one weight shift of 6.6 (12) the small weight keeps 3 bits (6 / 4096, 2.3% off) and the score errs by
    up to 0.09; with term shifts it keeps 16 bits and the score errs by the truncation of each term only.
    C equals numpy in both forms; weights exact at w_shift keep it (no term_shift)."""
    m = LinearScorer(n_features=2, feature=[0, 1], weight=[6.6, 0.0015], bias=-3.0)
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(0, 1, 400), rng.uniform(0, 2600, 400)]).astype(np.float32)
    exact = m.reference(X)[0].score.astype(np.float64)
    shift = in_shift_for(2600.0)
    plain, fine = quantize_linear(m, in_shift=shift, term_shifts=False), quantize_linear(m, in_shift=shift)
    assert plain.term_shift is None and plain.w_shift == fine.w_shift == 12 and plain.weight_q[1] == 6
    e = 24 - 12  # 0.0015 * 2**24 = 25166 fits int16, 2**25 would not
    assert list(fine.term_shift) == [shift, shift + e] and fine.weight_q[1] == round(0.0015 * 2**24)
    err = {}
    for name, q in (("plain", plain), ("fine", fine)):
        pred = q.reference(X)[0]
        assert_same(CLinear(q, cmod.ffi, cmod.lib), q, X[:40])
        err[name] = float(np.max(np.abs(pred.score / 2.0**q.w_shift - exact)))
    assert err["fine"] <= 2 * 2.0**-12 + 1e-6 < 0.05 < err["plain"]
    assert quantize_linear(LinearScorer(n_features=1, feature=[0], weight=[0.5], bias=0.0)).term_shift is None
    # a map written before term shifts loads as one shift for every term
    old = {k: v for k, v in fine.to_dict().items() if k != "term_shift"}
    assert LinearScorerQ15.from_dict(old).term_shift is None


def test_weight_shift_keeps_the_score_bound_of_large_inputs_in_int32(cmod: Any) -> None:
    """Features of order 1e6 and weights of order 1e-6 (a standardisation folded into the weights): the weight
    shift of the largest |w| alone (30) saturated the bias (3 * 2**30 > 2**31) and q15 lost every label; with
    the inputs' largest |x| the shift keeps |bias| + |threshold| + sum |w| * absmax in half the int32 range and
    q15 gives float32's label on every row, the C scorer equal to the reference."""
    rng = np.random.default_rng(5)
    X = (rng.normal(size=(400, 3)) * 1e6).astype(np.float32)
    m = LinearScorer(n_features=3, feature=np.arange(3), weight=np.array([1.1e-6, -4.2e-7, 3e-7]), bias=3.0,
                     decision_threshold=3.0)
    absmax = float(np.abs(X).max())
    f32 = m.predict_reference(X).label
    old = m.q15(in_shift=in_shift_for(absmax))  # no bound: the weight shift of the largest |w|
    assert old.w_shift == 30 and old.bias_q == INT32_MAX
    assert 0.3 < np.mean(f32) < 0.7 and np.mean(old.predict_reference(X).label == f32) < 0.7
    q = m.q15(in_shift=in_shift_for(absmax), absmax=absmax)
    assert q.w_shift < 30 and abs(q.bias_q) < INT32_MAX // 2
    assert 2.0**q.w_shift * m.score_bound(absmax) <= INT32_MAX // 2
    assert 2.0 ** (q.w_shift + 1) * m.score_bound(absmax) > INT32_MAX // 2  # the largest such shift
    assert np.array_equal(q.predict_reference(X).label, f32)
    assert_same(CLinear(q, cmod.ffi, cmod.lib), q, X[:40])
    # inputs of order 1: the bound does not bind and the tables are as before
    small = LinearScorer(n_features=3, feature=np.arange(3), weight=np.array([1.5, -0.5, 0.25]), bias=0.3)
    bounded, unbounded = small.q15(in_shift=28, absmax=4.0).to_dict(), small.q15(in_shift=28).to_dict()
    assert bounded.keys() == unbounded.keys()
    assert all(np.array_equal(np.asarray(bounded[k]), np.asarray(unbounded[k])) for k in bounded)
    assert small.q15(in_shift=28, absmax=4.0).w_shift == small.q15(in_shift=28).w_shift
