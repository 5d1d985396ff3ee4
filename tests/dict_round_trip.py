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
