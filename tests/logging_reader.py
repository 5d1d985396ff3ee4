"""An fm_reader over a row that logs the feature indices the C runtime asks for (the lazy reading order)."""

from __future__ import annotations

from typing import Any

import numpy as np


def logging_reader(ffi: Any, x: np.ndarray, log: list[int]) -> tuple[Any, Any]:
    """(fm_reader *, its callback: keep it alive while the reader is used) that appends each index it is
    asked for to log and answers x[index]."""

    @ffi.callback("int(void *, uint32_t, float *)")
    def read(ctx: Any, index: int, value: Any) -> int:
        log.append(int(index))
        value[0] = float(x[index])
        return 0

    return ffi.new("fm_reader *", {"read": read, "ctx": ffi.NULL}), read
