"""The model-file dictionaries' round trip, shared by the runtime structures' tests."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_round_trips(*models: Any) -> None:
    """Each model's ``to_dict`` holds plain values only and ``from_dict`` gives back every field."""
    for model in models:
        d = model.to_dict()
        assert all(isinstance(v, (int, float, np.ndarray, type(None))) for v in d.values())
        back = type(model).from_dict(d)
        for k, v in d.items():
            np.testing.assert_array_equal(getattr(back, k), v)


def assert_same_tables(a: Any, b: Any) -> None:
    """Two models' ``to_dict`` hold the same fields with the same bytes (dtype and every bit), naming the first
    field that differs."""
    da, db = a.to_dict(), b.to_dict()
    assert da.keys() == db.keys()
    for key, value in da.items():
        assert np.asarray(value).tobytes() == np.asarray(db[key]).tobytes(), key
