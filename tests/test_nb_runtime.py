"""The C evaluator and the numpy reference agree exactly (label, score bits,
features read, cost), in float32 and q15, eager and lazy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nb_strategies import inputs_for, nb_models

from pyruntime.errors import DataError, ModelFormatError
from pyruntime.nb.binding import CNaiveBayes
from pyruntime.nb.model import NBModel

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same(a, b) -> None:
    np.testing.assert_array_equal(a.label, b.label)
    np.testing.assert_array_equal(a.n_read, b.n_read)
    np.testing.assert_array_equal(a.stage, b.stage)
    if a.score.dtype == np.float32:
        np.testing.assert_array_equal(a.score.view(np.uint32), b.score.view(np.uint32))
    else:
        np.testing.assert_array_equal(a.score, b.score)
    np.testing.assert_array_equal(np.asarray(a.cost, np.float64), np.asarray(b.cost, np.float64))


@SETTINGS
@given(data=st.data(), model=nb_models())
def test_c_equals_reference_float32(data, model: NBModel) -> None:
    X = data.draw(inputs_for(model))
    assert_same(CNaiveBayes(model, "float32").predict(X), model.predict_reference(X))


@SETTINGS
@given(data=st.data(), model=nb_models())
def test_c_equals_reference_q15(data, model: NBModel) -> None:
    X = data.draw(inputs_for(model))
    assert_same(CNaiveBayes(model, "q15").predict(X), model.q15().predict_reference(X))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=nb_models(), numeric=st.sampled_from(["float32", "q15"]))
def test_lazy_reads_each_feature_once_in_order(data, model: NBModel, numeric: str) -> None:
    X = data.draw(inputs_for(model, rows=5))
    c = CNaiveBayes(model, numeric)
    batch = c.predict(X)
    for r in range(X.shape[0]):
        seen: list[int] = []

        def read(j: int, row: int = r, log: list[int] = seen) -> float:
            log.append(j)
            return float(X[row, j])

        one = c.predict_lazy(read)
        assert len(seen) == len(set(seen)) == int(one.n_read[0])
        assert seen == [int(j) for j in model.order[: len(seen)]]
        assert one.label[0] == batch.label[r] and one.n_read[0] == batch.n_read[r]


def test_q15_is_close_to_float_on_a_real_model() -> None:
    rng = np.random.default_rng(1)
    model = NBModel(n_features=3, order=[2, 0, 1], zero_bin=[1, 0, 0], edge_start=[0, 2, 3, 4],
                    edges=np.float32([-1, 1, 0, 0.5]), table_start=[0, 4, 6, 8],
                    d=np.float32([0.1, -1.2, 0.3, 2.2, -0.7, 0.7, 0.05, -0.05]), d0=-0.2, threshold=0.1)
    X = rng.normal(size=(500, 3))
    f = model.predict_reference(X)
    q = model.q15()
    assert q.shift >= 10  # 2.2 * 2**13 fits int16
    np.testing.assert_allclose(q.predict_reference(X).score / 2.0**q.shift, f.score, atol=4 * 2.0**-q.shift)


def test_bad_inputs_raise_data_error() -> None:
    model = NBModel(n_features=2, order=[1, 0], zero_bin=[1, 0], edge_start=[0, 2, 3],
                    edges=np.float32([-1, 1, 0.5]), table_start=[0, 4, 6],
                    d=np.float32([0, -2, 0.25, 2, -0.5, 0.5]), d0=0.125, threshold=0.0)
    c = CNaiveBayes(model)
    with pytest.raises(DataError, match="NaN or infinite"):
        c.predict([[np.nan, 1.0]])
    with pytest.raises(DataError, match="NaN or infinite"):
        model.predict_reference([[1.0, np.inf]])
    with pytest.raises(DataError, match="expects 2"):
        c.predict([[1.0, 2.0, 3.0]])
    with pytest.raises(DataError, match="numeric"):
        c.predict([["a", "b"]])
    with pytest.raises(DataError, match="callback failed"):
        c.predict_lazy(lambda j: 1 / 0)
    with pytest.raises(DataError, match="overflows float32"):
        c.predict([[1e300, 0.0]])


def test_c_loader_rejects_tables_corrupted_after_validation() -> None:
    model = NBModel(n_features=2, order=[1, 0], zero_bin=[1, 0], edge_start=[0, 2, 3],
                    edges=np.float32([-1, 1, 0.5]), table_start=[0, 4, 6],
                    d=np.float32([0, -2, 0.25, 2, -0.5, 0.5]), d0=0.125, threshold=0.0)
    model.order[1] = 9  # bypasses the Python checks: the C check must catch it
    with pytest.raises(ModelFormatError):
        CNaiveBayes(model)
    with pytest.raises(ModelFormatError):
        CNaiveBayes(model, "q15")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"order": [1, 5]}, "out of range"),
        ({"order": [1, 1]}, "twice"),
        ({"table_start": [0, 4, 7]}, "table"),
        ({"edges": np.float32([1, -1, 0.5])}, "not sorted"),
        ({"stop_at": [1, 1], "stop_hi": [1, 1], "stop_lo": [0, 0]}, "strictly increasing"),
        ({"stop_at": [2], "stop_hi": [1], "stop_lo": [0]}, "outside"),
        ({"stop_at": [1], "stop_hi": [1, 2], "stop_lo": [0]}, "differ in length"),
        ({"zero_bin": [1]}, "zero_bin length"),
        ({"costs": [1.0]}, "one entry per feature"),
        ({"d": np.float32([0, -2, 0.25, np.nan, -0.5, 0.5])}, "finite"),
    ],
)
def test_inconsistent_tables_are_rejected(change: dict, message: str) -> None:
    base = dict(n_features=2, order=[1, 0], zero_bin=[1, 0], edge_start=[0, 2, 3], edges=np.float32([-1, 1, 0.5]),
                table_start=[0, 4, 6], d=np.float32([0, -2, 0.25, 2, -0.5, 0.5]), d0=0.125, threshold=0.0)
    with pytest.raises(ModelFormatError, match=message):
        NBModel(**{**base, **change})
