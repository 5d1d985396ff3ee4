"""The result type every evaluator returns: one row per prediction, the
fields of the C runtime's fm_result."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Predictions:
    """Per-row outcome of a batch of predictions (same fields as fm_result)."""

    label: np.ndarray  # int32
    score: np.ndarray  # float32 (float models) or int32 table units (q15)
    n_read: np.ndarray  # uint32
    cost: np.ndarray  # float64 (q15: integer units times cost_unit)
    stage: np.ndarray  # uint32: stop point it ended at, 0 = read all features

    def __len__(self) -> int:
        return int(self.label.shape[0])
