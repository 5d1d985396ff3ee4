"""K linear scorers answering the largest score's class (fm_linear_argmax in fm_linear.h): the K-class
low-cost model f1 of the linear gated trainers (ADAPT-LIN, L1 baseline), part type ``linear-k`` of a
gated model (FM_PART_LINEAR_K in fm_gated.h), and each indexed model of a K-class skyline with the
linear base (FM_SKY_LINEARK in fm_skymodel.h).

Class c's score is computed exactly as a :class:`pyruntime.linear.LinearScorer` (float32: from its bias,
terms in stored order; q15: from bias_q, saturating), classes 0, 1, .., K-1 in turn over one read memo;
the label is the class of the largest score (the first on ties), the score that largest score. In q15
every scorer has the same input and weight shifts, so the scores compare in one unit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import check_inputs, require
from pyruntime.fixedpoint import scorers_weight_shift
from pyruntime.linear import LinearScorer, LinearScorerQ15, linear_struct
from pyruntime.memo import ReadState
from pyruntime.result import Predictions


class _Scorers:
    """What both K-linear forms answer from their scorers."""

    scorers: tuple[Any, ...]

    def _check_scorers(self, form: type, form_message: str, shared: Callable[[Any], Any], shared_message: str) -> None:
        """Keep the scorers as a tuple of two or more ``form`` scorers that agree in ``shared``."""
        object.__setattr__(self, "scorers", tuple(self.scorers))
        require(len(self.scorers) >= 2, "a K-linear part needs at least two scorers")
        require(all(isinstance(s, form) for s in self.scorers), form_message)
        require(len({shared(s) for s in self.scorers}) == 1, shared_message)

    @property
    def n_features(self) -> int:
        return self.scorers[0].n_features

    @property
    def n_outputs(self) -> int:
        return len(self.scorers)

    @property
    def costs(self) -> np.ndarray | None:
        return self.scorers[0].costs

    @property
    def feature(self) -> np.ndarray:
        """Every scorer's feature indices, concatenated (with repeats)."""
        return np.concatenate([s.feature for s in self.scorers])

    @property
    def nnz(self) -> int:
        return sum(s.nnz for s in self.scorers)

    def predict_reference(self, X: Any) -> Predictions:
        """One K-class prediction per row, as fm_linear[_q15]_argmax after fm_memo_start (label = class
        index; q15: the score in int32 table units and the cost in cost units * cost_unit)."""
        X32 = check_inputs(X, self.n_features)
        q15 = isinstance(self, MultiLinearQ15)
        state = ReadState.start(X32.shape[0], self.n_features)
        label, score = multi_eval(self, X32, state, np.arange(X32.shape[0]), q15)
        cost = state.cost_q.astype(np.float64) * self.cost_unit if q15 else state.cost
        return Predictions(label=label, score=score, n_read=state.n_read, cost=cost,
                           stage=np.zeros(X32.shape[0], np.uint32))


@dataclass(frozen=True, eq=False)
class MultiLinear(_Scorers):
    """One float32 LinearScorer per class (the decision thresholds are unused)."""

    scorers: tuple[LinearScorer, ...]

    def __post_init__(self) -> None:
        self._check_scorers(LinearScorer, "K-linear scorers must be linear", lambda s: s.n_features,
                            "K-linear scorers differ in n_features")


    def with_costs(self, costs: np.ndarray | None) -> MultiLinear:
        return MultiLinear(tuple(LinearScorer(**{**s.to_dict(), "costs": costs}) for s in self.scorers))

    def to_dict(self) -> dict[str, Any]:
        return {"classes": [{k: v for k, v in s.to_dict().items() if k != "costs"} for s in self.scorers]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MultiLinear:
        scorers = data.get("classes")
        require(isinstance(scorers, list), "a linear-k part needs a list of class scorers")
        return cls(tuple(LinearScorer.from_dict({**s, "costs": data.get("costs")}) for s in scorers))

    def nbytes(self) -> int:
        """Table bytes: every scorer's feature indices and weights."""
        return int(sum(s.feature.nbytes + s.weight.nbytes for s in self.scorers))

    def q15(self, in_shift: int, *, absmax: float | None = None) -> MultiLinearQ15:
        """Every scorer with the same in_shift and one weight shift: the largest that keeps every scorer's weights
        in int16 and (given the inputs' largest |x|) every scorer's score bound in half the int32 range."""
        w_shift = scorers_weight_shift([s.bound_terms() for s in self.scorers], absmax)
        return MultiLinearQ15(tuple(s.q15(in_shift=in_shift, w_shift=w_shift) for s in self.scorers))


@dataclass(frozen=True, eq=False)
class MultiLinearQ15(_Scorers):
    """One LinearScorerQ15 per class, all of one in_shift and w_shift."""

    scorers: tuple[LinearScorerQ15, ...]

    def __post_init__(self) -> None:
        self._check_scorers(LinearScorerQ15, "K-linear scorers must be q15 linear",
                            lambda s: (s.n_features, s.in_shift, s.w_shift),
                            "K-linear q15 scorers differ in n_features or shifts")


    @property
    def cost_unit(self) -> float:
        return self.scorers[0].cost_unit


def multi_eval(part: MultiLinear | MultiLinearQ15, X32: np.ndarray, state: ReadState, rows: np.ndarray,
               q15: bool, margin: bool = False) -> Any:
    """(label, score) over all rows of X32, scored (with reads) only on `rows`, as the C argmax; with
    ``margin`` also the largest score minus the second largest (0 on a tie at the top), as the gated
    runtime's margin gate: float32 subtraction, q15 int64 of the int32 accumulators."""
    n = X32.shape[0]
    best = np.zeros(n, np.int64 if q15 else np.float32)
    second = best.copy()
    label = np.zeros(n, np.int32)
    for c, s in enumerate(part.scorers):
        if q15:
            acc: np.ndarray = np.full(n, s.bias_q, np.int64)
        else:
            acc = np.full(n, s.bias, np.float32)
        s.score_into(X32, state, acc, rows=rows)
        better = acc > best if c else np.ones(n, bool)
        if c:
            second = np.where(better, best, np.where((acc > second) | (c == 1), acc, second))
        best = np.where(better, acc, best)
        label = np.where(better, c, label).astype(np.int32)
    out = (label, best.astype(np.int32) if q15 else best)
    if not margin:
        return out
    return (*out, (best - second) if q15 else (best - second).astype(np.float32))


def multi_struct(ffi: Any, part: MultiLinear | MultiLinearQ15, keep: list[Any]) -> tuple[int, Any]:
    """(n_classes, const fm_linear(_q15) * array) of a K-linear part."""
    q = isinstance(part, MultiLinearQ15)
    arr = ffi.new("fm_linear_q15[]" if q else "fm_linear[]", len(part.scorers))
    for i, s in enumerate(part.scorers):
        arr[i] = linear_struct(ffi, s.to_dict(), keep)[0]
    keep.append(arr)
    return len(part.scorers), arr
