"""Gated low-cost / high-cost models (kind ``gated``: ADAPT-LIN, ADAPT-GBRT, L1 baseline): IR, q15
quantization, the numpy reference evaluator, the cffi binding of runtime_c/src/gated/fm_gated.c and
``predict_with_fallback`` for inputs deferred to an off-device f0.

A gated model has three parts, each a sparse linear scorer (:mod:`pyruntime.linear`), K linear scorers
(:mod:`pyruntime.multilinear`, f1 or f0 of a K-class linear model) or a flat tree ensemble
(:mod:`pyruntime.trees`): a gate g, a low-cost model f1 and a high-cost model f0; f0 may be ``None``
(remote: it lives off-device). The gate is binary whatever the number of classes. Per input:

1. g is evaluated; its label is 1 iff its score > its decision threshold;
2. the input is hard iff (label == 1 and gate_above == "f0") or (label == 0 and gate_above == "f1");
3. easy: f1 answers (stage 0); hard: f0 answers (stage 1), or, when f0 is remote, the label is
   FM_LABEL_DEFER (-1), the score the gate's, stage 1.

The gate may instead be f1's own confidence (:class:`MarginGate`, FM_PART_MARGIN; f1 K linear scorers or a
tree ensemble of K outputs, gate_above "f1"): f1 is scored first, its score is the largest class score minus the
second largest (float32 subtraction; q15: of the int32 accumulators or tree scores, in int64), and the input is
easy iff that margin > the gate's threshold; an easy input keeps f1's answer, a hard one goes to f0 (a deferred
one carries the margin as its score, q15 saturated to INT32_MAX). The margin gate reads no feature of its own.

Every part shares one read memo, so a feature read by g and by f1 is read and paid for once; n_read
and cost count the distinct features read on the device. The feature costs are one vector shared by
every part (``costs``); ``input_absmax`` (largest |x| seen in training) sets the q15 input scale of
linear parts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import as_array, check_inputs, f32_scalar, kind_tables, require, table_fields
from pyruntime.cbind import CEvaluator
from pyruntime.describe import feature_name, features_with_costs, tree_summary
from pyruntime.errors import DataError, ModelFormatError
from pyruntime.linear import LinearScorer, LinearScorerQ15, linear_struct, q15_input_scale
from pyruntime.memo import ReadState, quantize_costs
from pyruntime.multilinear import MultiLinear, MultiLinearQ15, multi_eval, multi_struct
from pyruntime.result import Predictions
from pyruntime.trees.ensemble import TreeEnsemble, TreeEnsembleQ15, ensemble_struct

FM_LABEL_DEFER = -1
PART_LINEAR, PART_TREES, PART_REMOTE, PART_LINEAR_K, PART_MARGIN = 0, 1, 2, 3, 4
GATE_ABOVE = {"f0": 0, "f1": 1}
PARTS = ("gate", "f1", "f0")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True, eq=False)
class MarginGate:
    """The gate as f1's own confidence (FM_PART_MARGIN): easy iff f1's largest class score minus its second
    largest (float32) > ``threshold``. f1 must be K linear scorers or a tree ensemble of K > 1 outputs; the gate
    reads no feature."""

    n_features: int
    threshold: float

    def __post_init__(self) -> None:
        require(isinstance(self.n_features, int) and self.n_features >= 0, "n_features must be an int >= 0")
        require(isinstance(self.threshold, (int, float, np.floating)) and np.isfinite(self.threshold),
                "a margin gate's threshold must be a finite number")
        object.__setattr__(self, "threshold", f32_scalar(self.threshold, "a margin gate's threshold"))

    def to_dict(self) -> dict[str, Any]:
        return {"n_features": self.n_features, "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MarginGate:
        table_fields(data, ("n_features", "threshold"), "margin gate")
        return cls(n_features=data["n_features"], threshold=data["threshold"])

    def q15(self, w_shift: int) -> MarginGateQ15:
        """The threshold in f1's q15 score units (score x 2^w_shift: the K scorers' shared w_shift, or the trees'
        leaf shift), rounded down, within int32."""
        t = int(np.clip(np.floor(np.float64(self.threshold) * 2.0**w_shift), INT32_MIN, INT32_MAX))
        return MarginGateQ15(n_features=self.n_features, threshold_q=t)


@dataclass(frozen=True, eq=False)
class MarginGateQ15:
    """q15 margin gate: easy iff int64(best) - int64(second) of f1's int32 accumulators > ``threshold_q``."""

    n_features: int
    threshold_q: int

    def __post_init__(self) -> None:
        require(isinstance(self.threshold_q, (int, np.integer)) and INT32_MIN <= self.threshold_q <= INT32_MAX,
                "a q15 margin gate's threshold must be an int32")
        object.__setattr__(self, "threshold_q", int(self.threshold_q))


Part = LinearScorer | TreeEnsemble | MultiLinear | MarginGate
PartQ15 = LinearScorerQ15 | TreeEnsembleQ15 | MultiLinearQ15 | MarginGateQ15
_F32_PARTS = (LinearScorer, TreeEnsemble, MultiLinear)
_Q15_PARTS = (LinearScorerQ15, TreeEnsembleQ15, MultiLinearQ15)
_MARGIN = (MarginGate, MarginGateQ15)


def part_type(part: Any) -> str:
    if part is None:
        return "remote"
    if isinstance(part, _MARGIN):
        return "margin"
    if isinstance(part, (MultiLinear, MultiLinearQ15)):
        return "linear-k"
    return "linear" if isinstance(part, (LinearScorer, LinearScorerQ15)) else "trees"


def n_classes_of(part: Any) -> int:
    """Labels a part can answer: 2 for a linear scorer or a one-output ensemble, else n_outputs."""
    if isinstance(part, (TreeEnsemble, TreeEnsembleQ15, MultiLinear, MultiLinearQ15)) and part.n_outputs > 1:
        return int(part.n_outputs)
    return 2


def part_from_dict(data: Any, costs: np.ndarray | None, what: str) -> Part | None:
    """A float32 part from its stored map {"type": linear|linear-k|trees|remote, ...} (costs injected)."""
    require(isinstance(data, dict), f"{what} must be a map")
    kind = data.get("type")
    if kind == "remote":
        return None
    body = {k: v for k, v in data.items() if k != "type"}
    body["costs"] = costs
    if kind == "linear":
        return LinearScorer.from_dict(body)
    if kind == "trees":
        return TreeEnsemble.from_dict(body)
    if kind == "linear-k":
        return MultiLinear.from_dict(body)
    if kind == "margin":
        require(what == "gate", f"{what}: only the gate may be a margin gate")
        body.pop("costs")
        return MarginGate.from_dict(body)
    raise ModelFormatError(f"{what}: type must be linear, linear-k, trees, margin or remote, got {kind!r}")


def part_to_dict(part: Part | None) -> dict[str, Any]:
    if part is None:
        return {"type": "remote"}
    body = part.to_dict()
    body.pop("costs", None)
    return {"type": part_type(part), **body}


def _check(m: GatedModel | GatedModelQ15) -> None:
    require(isinstance(m.n_features, int) and m.n_features >= 0, "n_features must be an int >= 0")
    require(m.gate_above in GATE_ABOVE, "gate_above must be 'f0' or 'f1'")
    for name in PARTS:
        part = getattr(m, name)
        if part is None:
            require(name == "f0", f"{name} cannot be remote")
            continue
        require(part.n_features == m.n_features, f"{name} has {part.n_features} features, the model "
                f"{m.n_features}")
    if isinstance(m.gate, (TreeEnsemble, TreeEnsembleQ15)):
        require(m.gate.n_outputs == 1, "a tree gate needs one output")
    require(not isinstance(m.gate, (MultiLinear, MultiLinearQ15)), "the gate cannot be a K-linear part")
    require(not isinstance(m.f1, _MARGIN) and not isinstance(m.f0, _MARGIN), "only the gate may be a margin gate")
    if isinstance(m.gate, _MARGIN):
        require(isinstance(m.f1, (MultiLinear, MultiLinearQ15))
                or (isinstance(m.f1, (TreeEnsemble, TreeEnsembleQ15)) and m.f1.n_outputs > 1),
                "a margin gate needs f1 of K linear scorers or trees of K > 1 outputs")
        require(m.gate_above == "f1", "a margin gate lets f1 answer above its threshold: gate_above must be 'f1'")
    if m.f0 is not None:
        require(n_classes_of(m.f0) == n_classes_of(m.f1), "f1 and f0 answer different numbers of classes")


@dataclass(frozen=True, eq=False)
class GatedModel:
    """Float32 tables of a gated model (see the module docstring)."""

    n_features: int
    gate: Part
    f1: Part
    f0: Part | None  # None = remote (off-device)
    gate_above: str = "f0"  # which part answers when the gate's score > its threshold
    costs: np.ndarray | None = None  # float32 [n_features] shared by every part; None = 1 each
    input_absmax: float = 32767.0
    f0_kind: str = ""  # description of f0 (rf, gbrt, svm-rbf, pickle, ...)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.costs is not None:
            set_(self, "costs", as_array(self.costs, "f4", "costs"))
        require(isinstance(self.input_absmax, (int, float)) and np.isfinite(self.input_absmax)
                and self.input_absmax >= 0, "input_absmax must be finite and >= 0")
        set_(self, "input_absmax", float(self.input_absmax))
        for name in PARTS:
            part = getattr(self, name)
            allowed = _F32_PARTS + ((MarginGate,) if name == "gate" else ())
            require(part is None or isinstance(part, allowed),
                    f"{name} must be a linear scorer, K linear scorers or a tree ensemble"
                    + (" or a margin gate" if name == "gate" else ""))
            if isinstance(part, MarginGate):
                continue
            if isinstance(part, MultiLinear) and not _same_costs(part.costs, self.costs):
                set_(self, name, part.with_costs(self.costs))
            elif part is not None and not _same_costs(part.costs, self.costs):
                set_(self, name, dataclasses.replace(part, costs=self.costs))
        _check(self)

    @property
    def remote(self) -> bool:
        return self.f0 is None

    @property
    def n_classes(self) -> int:
        return n_classes_of(self.f1)

    @property
    def n_used(self) -> int:
        """Distinct features the device may read (all parts on the device)."""
        used: set[int] = set()
        for part in (self.gate, self.f1, self.f0):
            if isinstance(part, (LinearScorer, MultiLinear)):
                used.update(part.feature.tolist())
            elif isinstance(part, TreeEnsemble):
                used.update(part.feature[part.feature >= 0].tolist())
        return len(used)

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: each part (gate g, low-cost f1, high-cost f0 or remote), which
        part answers when the gate's score is above its threshold, the features used with costs."""
        def part(p: Part | None) -> dict[str, Any] | str:
            if p is None:
                return "remote (the device answers DEFER, -1)"
            if isinstance(p, MarginGate):
                return {"type": "margin", "threshold": p.threshold,
                        "rule": "easy (f1 answers) iff f1's largest class score - its second largest > threshold",
                        "features": []}
            if isinstance(p, (LinearScorer, MultiLinear)):
                # each feature once, in first-read order (K class scorers repeat the features they share)
                return {"type": part_type(p), "n_classes": n_classes_of(p), "nnz": int(p.nnz),
                        "features": [feature_name(feature_names, int(j)) for j in dict.fromkeys(p.feature.tolist())]}
            t = tree_summary(p, feature_names)
            return {"type": "trees", "n_trees": t["n_trees"], "max_depth": t["max_depth"],
                    "features": [f["feature"] for f in t["features_used"]]}

        used: set[int] = set()
        for p in (self.gate, self.f1, self.f0):
            if isinstance(p, (LinearScorer, MultiLinear)):
                used.update(int(j) for j in p.feature)
            elif isinstance(p, TreeEnsemble):
                used.update(int(j) for j in p.feature[p.feature >= 0])
        return {"gate": part(self.gate), "f1": part(self.f1), "f0": part(self.f0), "f0_kind": self.f0_kind,
                "gate_above_sends_to": self.gate_above, "n_features_used": len(used),
                "features_used": features_with_costs(sorted(used), self.costs, feature_names)}

    def to_dict(self) -> dict[str, Any]:
        return {"n_features": self.n_features, "gate_above": self.gate_above, "costs": self.costs,
                "input_absmax": self.input_absmax, "f0_kind": self.f0_kind,
                **{name: part_to_dict(getattr(self, name)) for name in PARTS}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GatedModel:
        table_fields(data, ("n_features", "gate_above", "costs", "input_absmax", "f0_kind", *PARTS), "gated tables")
        require(isinstance(data["gate_above"], str) and isinstance(data["f0_kind"], str),
                "gate_above and f0_kind must be strings")
        costs = None if data["costs"] is None else as_array(data["costs"], "f4", "costs")
        parts = {name: part_from_dict(data[name], costs, name) for name in PARTS}
        require(parts["gate"] is not None and parts["f1"] is not None, "only f0 may be remote")
        return cls(n_features=data["n_features"], gate_above=data["gate_above"], costs=costs,
                   input_absmax=data["input_absmax"], f0_kind=data["f0_kind"], **parts)

    def with_remote_f0(self) -> GatedModel:
        """The same model with f0 declared off-device."""
        return dataclasses.replace(self, f0=None)

    def f0_alone(self) -> Part | None:
        return self.f0

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, np.asarray(X32, np.float32), q15=False, cost_unit=1.0)

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]

    def q15(self) -> GatedModelQ15:
        """Fixed-point tables: linear parts with the input scale of linear.q15_input_scale(input_absmax) and the
        weight shift that keeps their score bound over such inputs in int32 (fixedpoint.scorers_weight_shift),
        trees by quantize_trees; the shared costs quantized once (same units in every part)."""
        shift, amax = q15_input_scale(self.input_absmax)

        def q(part: Part | None) -> PartQ15 | None:
            if part is None:
                return None
            return (part.q15(in_shift=shift, absmax=amax) if isinstance(part, (LinearScorer, MultiLinear))
                    else part.q15())

        _, unit = quantize_costs(self.costs)
        f1 = q(self.f1)
        # a margin gate's threshold in f1's score units (its K scorers share one w_shift; trees: the leaf shift)
        if isinstance(self.gate, MarginGate):
            gate: PartQ15 | None = self.gate.q15(f1.shift if isinstance(f1, TreeEnsembleQ15) else f1.scorers[0].w_shift)
        else:
            gate = q(self.gate)
        return GatedModelQ15(n_features=self.n_features, gate=gate, f1=f1, f0=q(self.f0),
                             gate_above=self.gate_above, cost_unit=unit, f0_kind=self.f0_kind)


def _same_costs(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.array_equal(a, b))


@dataclass(frozen=True, eq=False)
class GatedModelQ15:
    """Fixed-point tables of a gated model (built by GatedModel.q15)."""

    n_features: int
    gate: PartQ15
    f1: PartQ15
    f0: PartQ15 | None
    gate_above: str = "f0"
    cost_unit: float = 1.0
    f0_kind: str = ""

    def __post_init__(self) -> None:
        for name in PARTS:
            part = getattr(self, name)
            allowed = _Q15_PARTS + ((MarginGateQ15,) if name == "gate" else ())
            require(part is None or isinstance(part, allowed),
                    f"{name} must be a q15 linear scorer, K linear scorers or tree ensemble"
                    + (" or a margin gate" if name == "gate" else ""))
        _check(self)
        units = {float(p.cost_unit) for p in (self.gate, self.f1, self.f0)
                 if p is not None and not isinstance(p, _MARGIN)}
        require(units <= {float(self.cost_unit)}, "every part must use the same cost units")

    @property
    def remote(self) -> bool:
        return self.f0 is None

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, np.asarray(X32, np.float32), q15=True, cost_unit=self.cost_unit)

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]


# -- numpy reference -------------------------------------------------------------------

def _part_eval(part: Any, X32: np.ndarray, state: ReadState, rows: np.ndarray,
               q15: bool) -> tuple[np.ndarray, np.ndarray]:
    """(label, score) of the part over all rows of X32, evaluated (with reads) only on `rows`."""
    n = X32.shape[0]
    if isinstance(part, (MultiLinear, MultiLinearQ15)):
        return multi_eval(part, X32, state, rows, q15)
    if isinstance(part, (LinearScorer, LinearScorerQ15)):
        if q15:
            acc = np.full(n, part.bias_q, np.int64)
            part.score_into(X32, state, acc, rows=rows)
            return (acc > part.decision_threshold_q).astype(np.int32), acc.astype(np.int32)
        acc32 = np.full(n, part.bias, np.float32)
        part.score_into(X32, state, acc32, rows=rows)
        return (acc32 > np.float32(part.decision_threshold)).astype(np.int32), acc32
    scores = part.start_scores(n)
    part.accumulate_into(X32, state, scores, rows=rows)
    label, score = part.finish(scores)
    return label.astype(np.int32), score


def _margin_eval(part: Any, X32: np.ndarray, state: ReadState, rows: np.ndarray,
                 q15: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(label, score, margin) of f1 under a margin gate: K linear scorers (multi_eval), or trees of K outputs
    (fm_trees_finish's first largest; the margin its score minus the largest of the other outputs, float32
    subtraction, q15 in int64)."""
    if isinstance(part, (MultiLinear, MultiLinearQ15)):
        return multi_eval(part, X32, state, rows, q15, margin=True)
    n = X32.shape[0]
    scores = part.start_scores(n)
    part.accumulate_into(X32, state, scores, rows=rows)
    label, score = part.finish(scores)
    idx = np.arange(n)
    others = scores.copy()
    others[idx, label] = np.iinfo(np.int64).min if q15 else -np.inf
    second = others.max(axis=1)
    margin = scores[idx, label].astype(np.int64) - second if q15 else (scores[idx, label] - second).astype(np.float32)
    return label.astype(np.int32), score, margin


def _reference(m: GatedModel | GatedModelQ15, X32: np.ndarray, q15: bool,
               cost_unit: float) -> tuple[Predictions, np.ndarray]:
    n = X32.shape[0]
    state = ReadState.start(n, m.n_features)
    all_rows = np.arange(n)
    label = np.zeros(n, np.int32)
    score = np.zeros(n, np.int32 if q15 else np.float32)
    if isinstance(m.gate, _MARGIN):  # f1 first; its top-2 margin decides, and easy rows keep its answer
        lab, sc, margin = _margin_eval(m.f1, X32, state, all_rows, q15)
        hard = ~(margin > (m.gate.threshold_q if q15 else np.float32(m.gate.threshold)))
        g_score = np.minimum(margin, INT32_MAX).astype(np.int32) if q15 else margin
        easy_rows = state.active(np.flatnonzero(~hard))
        hard_rows = state.active(np.flatnonzero(hard))
    else:
        g_label, g_score = _part_eval(m.gate, X32, state, all_rows, q15)
        hard = (g_label == 1) if m.gate_above == "f0" else (g_label == 0)
        easy_rows = state.active(np.flatnonzero(~hard))
        hard_rows = state.active(np.flatnonzero(hard))
        lab, sc = _part_eval(m.f1, X32, state, easy_rows, q15)
    stage = hard.astype(np.uint32)
    label[easy_rows], score[easy_rows] = lab[easy_rows], sc[easy_rows]
    if m.f0 is None:
        label[hard_rows], score[hard_rows] = FM_LABEL_DEFER, g_score[hard_rows]
    else:
        lab, sc = _part_eval(m.f0, X32, state, hard_rows, q15)
        label[hard_rows], score[hard_rows] = lab[hard_rows], sc[hard_rows]
    cost = state.cost_q.astype(np.float64) * cost_unit if q15 else state.cost
    return Predictions(label=label, score=score, n_read=state.n_read, cost=cost, stage=stage), state.status


# -- C binding -------------------------------------------------------------------------

def gated_struct(ffi: Any, model: GatedModel | GatedModelQ15, keep: list[Any]) -> Any:
    """fm_gated / fm_gated_q15 over the model's arrays (not validated: C checks it)."""
    q = isinstance(model, GatedModelQ15)
    s = ffi.new("fm_gated_q15 *" if q else "fm_gated *")
    s.n_features = model.n_features
    s.gate_above = GATE_ABOVE[model.gate_above]
    for name in PARTS:
        part = getattr(model, name)
        slot = getattr(s, name)
        kind = part_type(part)
        if kind == "remote":
            slot.type = PART_REMOTE
        elif kind == "margin":  # the threshold in the gate's linear member; its other members unused
            slot.type = PART_MARGIN
            slot.linear.n_features = model.n_features
            if q:
                slot.linear.decision_threshold_q = part.threshold_q
            else:
                slot.linear.decision_threshold = part.threshold
        elif kind == "linear":
            slot.type = PART_LINEAR
            slot.linear = linear_struct(ffi, part.to_dict(), keep)[0]
        elif kind == "linear-k":
            slot.type = PART_LINEAR_K
            slot.n_classes, slot.classes = multi_struct(ffi, part, keep)
        else:
            slot.type = PART_TREES
            slot.trees = ensemble_struct(ffi, part, keep)[0]
    return s


def _max_outputs(model: GatedModel | GatedModelQ15) -> int:
    outs = [p.n_outputs for p in (model.gate, model.f1, model.f0) if isinstance(p, (TreeEnsemble, TreeEnsembleQ15))]
    return max(outs, default=1)


class CGated(CEvaluator):
    """The C evaluator over a gated model's tables (float32 or q15 by the model's type)."""

    family, what = "gated", "gated model"

    def make_struct(self) -> Any:
        return gated_struct(self.ffi, self.model, self._keep)

    def n_scores(self) -> int:
        return _max_outputs(self.model)


def for_numeric(tables: Any, numeric: str) -> GatedModel | GatedModelQ15:
    return kind_tables(tables, GatedModel, "gated", numeric)


# -- deferred inputs -------------------------------------------------------------------

def predict_with_fallback(evaluator: Any, X: Any, fallback: Any) -> Predictions:
    """Predict X with a gated evaluator (C or reference) and answer the deferred rows (label -1, the
    inputs a remote f0 must answer) with ``fallback``: a callable taking the deferred rows (float32
    matrix) and returning their labels, or an object with ``predict`` (e.g. the f0 estimator).
    Deferred rows keep stage 1; their n_read/cost stay the device's."""
    n_features = int(evaluator.model.n_features) if hasattr(evaluator, "model") else None
    X32 = check_inputs(X, n_features) if n_features is not None else np.asarray(X, np.float32)
    pred = evaluator.predict(X32)
    deferred = np.flatnonzero(pred.label == FM_LABEL_DEFER)
    if deferred.size == 0:
        return pred
    fn = fallback.predict if hasattr(fallback, "predict") else fallback
    if not callable(fn):
        raise DataError("fallback must be a callable or have a predict method")
    answers = np.asarray(fn(X32[deferred])).reshape(-1)
    if answers.shape[0] != deferred.size:
        raise DataError(f"fallback answered {answers.shape[0]} rows, {deferred.size} were deferred")
    label = pred.label.copy()
    label[deferred] = answers.astype(np.int32)
    return dataclasses.replace(pred, label=label)


__all__ = ["FM_LABEL_DEFER", "CGated", "GatedModel", "GatedModelQ15", "MarginGate", "MarginGateQ15", "for_numeric",
           "gated_struct", "predict_with_fallback"]
