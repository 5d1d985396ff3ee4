"""Cascades of tree-ensemble stages with early exits (kinds ``cascade`` and
``miser``): IR, q15 quantization, the numpy reference evaluator and the cffi
binding of runtime_c/src/trees/fm_cascade.c.

A cascade is one flat tree ensemble (:mod:`pyruntime.trees`) cut into stages:
stage s holds trees ``stage_end[s-1] .. stage_end[s]-1`` (``stage_end``
non-decreasing, last = n_trees). Scores accumulate across stages and every
stage shares one read memo (a feature read by stage 0 is free later). After
every stage but the last the input exits when

- ``exit_rule == "score"`` (one output): score > exit_upper[s] or score < exit_lower[s];
- ``exit_rule == "margin"`` (several outputs): best - second-best score > exit_upper[s]
  (float32 subtraction; q15: saturating int32 subtraction).

The label is the tree decision on the partial score at exit; ``stage`` is the
exit stage and ``stage_end[stage]`` the number of trees evaluated. A Greedy
Miser model is a cascade of one stage. ``tree_eval_cost`` (the per-tree
evaluation cost e of the test-time cost) is kept for reporting only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyruntime.arrays import as_array, check_inputs, kind_tables, require, table_fields
from pyruntime.cbind import CEvaluator, c_ptr
from pyruntime.describe import tree_summary
from pyruntime.fixedpoint import INT32_MAX, to_fixed
from pyruntime.memo import ReadState
from pyruntime.result import Predictions
from pyruntime.trees.ensemble import TreeEnsemble, TreeEnsembleQ15, ensemble_struct

EXIT_RULES = ("score", "margin")
RULE_CODE = {"score": 0, "margin": 1}
_FIELDS = ("trees", "stage_end", "exit_upper", "exit_lower", "exit_rule", "tree_eval_cost")


def _check_stages(trees: TreeEnsemble | TreeEnsembleQ15, stage_end: np.ndarray, upper: np.ndarray,
                  lower: np.ndarray, rule: str, tree_eval_cost: float) -> None:
    S = stage_end.shape[0]
    require(S >= 1, "a cascade needs at least one stage")
    require(upper.shape == (S,) and lower.shape == (S,), "exit thresholds need one entry per stage")
    require(bool(np.all(np.diff(stage_end.astype(np.int64)) >= 0)), "stage_end must be non-decreasing")
    require(int(stage_end[-1]) == trees.n_trees, "the last stage must end at the last tree")
    require(rule in EXIT_RULES, f"exit_rule must be one of {', '.join(EXIT_RULES)}")
    if rule == "score":
        require(trees.n_outputs == 1, "exit_rule 'score' needs one output")
    else:
        require(trees.n_outputs >= 2, "exit_rule 'margin' needs two or more outputs")
    require(isinstance(tree_eval_cost, float) and np.isfinite(tree_eval_cost) and tree_eval_cost >= 0,
            "tree_eval_cost must be finite and >= 0")


@dataclass(frozen=True, eq=False)
class TreeCascade:
    """Float32 tables of a cascade (see the module docstring)."""

    trees: TreeEnsemble
    stage_end: np.ndarray  # uint32 [n_stages]
    exit_upper: np.ndarray  # float32 [n_stages]; +inf = never exits
    exit_lower: np.ndarray  # float32 [n_stages]; -inf = never exits (ignored by "margin")
    exit_rule: str = "score"
    tree_eval_cost: float = 0.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.trees, dict):
            set_(self, "trees", TreeEnsemble.from_dict(self.trees))
        require(isinstance(self.trees, TreeEnsemble), "trees must be a float32 tree ensemble")
        set_(self, "stage_end", as_array(self.stage_end, "u4", "stage_end"))
        set_(self, "exit_upper", as_array(self.exit_upper, "f4", "exit_upper"))
        set_(self, "exit_lower", as_array(self.exit_lower, "f4", "exit_lower"))
        set_(self, "tree_eval_cost", float(self.tree_eval_cost))
        self.validate()

    @property
    def n_features(self) -> int:
        return self.trees.n_features

    @property
    def n_classes(self) -> int:
        """Classes of the label: 2 for one score output (its sign), else one per output (argmax)."""
        return max(2, int(self.trees.n_outputs))

    @property
    def n_stages(self) -> int:
        return int(self.stage_end.shape[0])

    @property
    def n_used(self) -> int:
        """Distinct features the trees split on (the most a prediction can read; `inspect`'s budget)."""
        return int(np.unique(self.trees.feature[self.trees.feature >= 0]).size)

    def validate(self) -> None:
        _check_stages(self.trees, self.stage_end, self.exit_upper, self.exit_lower, self.exit_rule,
                      self.tree_eval_cost)
        require(not bool(np.any(np.isnan(self.exit_upper)) or np.any(np.isnan(self.exit_lower))),
                "exit thresholds must not be NaN")

    def to_dict(self) -> dict[str, Any]:
        return {"trees": self.trees.to_dict(), "stage_end": self.stage_end, "exit_upper": self.exit_upper,
                "exit_lower": self.exit_lower, "exit_rule": self.exit_rule, "tree_eval_cost": self.tree_eval_cost}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TreeCascade:
        table_fields(data, _FIELDS, "cascade tables")
        require(isinstance(data["trees"], dict), "trees must be a map")
        require(isinstance(data["exit_rule"], str), "exit_rule must be a string")
        require(isinstance(data["tree_eval_cost"], (int, float)), "tree_eval_cost must be a number")
        return cls(**{n: data[n] for n in _FIELDS})

    @classmethod
    def from_ir(cls, ir: dict[str, Any]) -> TreeCascade:
        """From the compiler's flat IR dict (compiler.trees.cost_tree.ensemble_to_ir keys, plus optionally
        stage_end / exit_upper / exit_lower / exit_rule / tree_eval_cost; without them: one stage)."""
        names = ("n_features", "n_outputs", "feature", "threshold", "left", "right", "value", "roots",
                 "tree_output", "base_score", "decision_threshold", "costs")
        trees = TreeEnsemble(**{n: ir.get(n) for n in names})
        S_end = ir.get("stage_end", [trees.n_trees])
        S = len(S_end)
        return cls(trees=trees, stage_end=S_end,
                   exit_upper=ir.get("exit_upper", np.full(S, np.inf, np.float32)),
                   exit_lower=ir.get("exit_lower", np.full(S, -np.inf, np.float32)),
                   exit_rule=ir.get("exit_rule", "score" if trees.n_outputs == 1 else "margin"),
                   tree_eval_cost=float(ir.get("tree_eval_cost", 0.0)))

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: trees and depth, stages and their exits, features used with costs."""
        out = tree_summary(self.trees, feature_names)
        out["n_features_used"] = len(out["features_used"])
        out.update({"n_stages": self.n_stages, "stage_end_tree": self.stage_end.tolist(), "exit_rule": self.exit_rule,
                    "exit_upper": self.exit_upper.tolist(), "exit_lower": self.exit_lower.tolist(),
                    "tree_eval_cost": self.tree_eval_cost})
        return out

    def trees_at(self, stage: np.ndarray) -> np.ndarray:
        """Trees evaluated by predictions that exited at the given stages."""
        return self.stage_end[np.asarray(stage, np.int64)].astype(np.int64)

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, self.trees, self.exit_upper, self.exit_lower, np.asarray(X32, np.float32),
                          q15=False)

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]

    def q15(self, shift: int | None = None) -> TreeCascadeQ15:
        """Fixed-point tables: the trees by quantize_trees, exit thresholds as round(t * 2**shift)
        saturated to int32 (+-inf become INT32_MAX / INT32_MIN: never exit)."""
        tq = self.trees.q15(shift)
        return TreeCascadeQ15(trees=tq, stage_end=self.stage_end.copy(),
                              exit_upper_q=[to_fixed(v, tq.shift) for v in self.exit_upper],
                              exit_lower_q=[to_fixed(v, tq.shift) for v in self.exit_lower],
                              exit_rule=self.exit_rule, tree_eval_cost=self.tree_eval_cost)


@dataclass(frozen=True, eq=False)
class TreeCascadeQ15:
    """Fixed-point tables of a cascade: thresholds in score units of 2**-shift."""

    trees: TreeEnsembleQ15
    stage_end: np.ndarray  # uint32 [n_stages]
    exit_upper_q: np.ndarray  # int32 [n_stages]
    exit_lower_q: np.ndarray  # int32 [n_stages]
    exit_rule: str = "score"
    tree_eval_cost: float = 0.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        require(isinstance(self.trees, TreeEnsembleQ15), "trees must be a q15 tree ensemble")
        set_(self, "stage_end", as_array(self.stage_end, "u4", "stage_end"))
        set_(self, "exit_upper_q", as_array(self.exit_upper_q, "i4", "exit_upper_q"))
        set_(self, "exit_lower_q", as_array(self.exit_lower_q, "i4", "exit_lower_q"))
        set_(self, "tree_eval_cost", float(self.tree_eval_cost))
        _check_stages(self.trees, self.stage_end, self.exit_upper_q, self.exit_lower_q, self.exit_rule,
                      self.tree_eval_cost)

    @property
    def n_features(self) -> int:
        return self.trees.n_features

    @property
    def n_stages(self) -> int:
        return int(self.stage_end.shape[0])

    @property
    def cost_unit(self) -> float:
        return self.trees.cost_unit

    def trees_at(self, stage: np.ndarray) -> np.ndarray:
        return self.stage_end[np.asarray(stage, np.int64)].astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        return {"trees": self.trees.to_dict(), "stage_end": self.stage_end, "exit_upper_q": self.exit_upper_q,
                "exit_lower_q": self.exit_lower_q, "exit_rule": self.exit_rule,
                "tree_eval_cost": self.tree_eval_cost}

    def reference(self, X32: np.ndarray) -> tuple[Predictions, np.ndarray]:
        return _reference(self, self.trees, self.exit_upper_q, self.exit_lower_q, np.asarray(X32, np.float32),
                          q15=True)

    def predict_reference(self, X: Any) -> Predictions:
        return self.reference(check_inputs(X, self.n_features))[0]


def _margin(scores: np.ndarray, q15: bool) -> np.ndarray:
    """Best minus the largest other score (fm_cascade.c margin_f32 / margin_q)."""
    rows = np.arange(scores.shape[0])
    best = np.argmax(scores, axis=1)  # first index of the largest
    others = scores.astype(np.float64 if not q15 else np.int64, copy=True)
    others[rows, best] = -np.inf if not q15 else np.iinfo(np.int64).min
    second = others.max(axis=1)
    if q15:
        return np.minimum(scores[rows, best].astype(np.int64) - second, INT32_MAX)
    return (scores[rows, best].astype(np.float32) - second.astype(np.float32)).astype(np.float32)


def _reference(m: TreeCascade | TreeCascadeQ15, trees: TreeEnsemble | TreeEnsembleQ15, upper: np.ndarray,
               lower: np.ndarray, X32: np.ndarray, q15: bool) -> tuple[Predictions, np.ndarray]:
    rows = X32.shape[0]
    state = ReadState.start(rows, trees.n_features)
    scores = trees.start_scores(rows)
    stage = np.full(rows, m.n_stages - 1, np.uint32)
    open_ = np.ones(rows, bool)
    start = 0
    for s, end in enumerate(m.stage_end.tolist()):
        r = state.active(np.flatnonzero(open_))
        trees.accumulate_into(X32, state, scores, start, end, rows=r)
        start = end
        if s == m.n_stages - 1:
            break
        r = state.active(r)
        sc = scores[r]
        if m.exit_rule == "score":
            out = (sc[:, 0] > upper[s]) | (sc[:, 0] < lower[s])
        else:
            out = _margin(sc, q15) > upper[s]
        stage[r[out]] = s
        open_[r[out]] = False
    label, score = trees.finish(scores)
    if q15:
        cost = state.cost_q.astype(np.float64) * trees.cost_unit
    else:
        cost = state.cost
    return Predictions(label=label, score=score, n_read=state.n_read, cost=cost, stage=stage), state.status


# -- C binding -------------------------------------------------------------------------

def cascade_struct(ffi: Any, model: TreeCascade | TreeCascadeQ15, keep: list[Any]) -> Any:
    """fm_cascade / fm_cascade_q15 over the model's arrays (not validated: C checks it)."""
    q = isinstance(model, TreeCascadeQ15)
    s = ffi.new("fm_cascade_q15 *" if q else "fm_cascade *")
    t = ensemble_struct(ffi, model.trees, keep)
    keep.append(t)
    s.trees = t[0]
    s.n_stages = model.n_stages
    s.stage_end = c_ptr(ffi, keep, "const uint32_t *", model.stage_end, "u4")
    if q:
        s.exit_upper_q = c_ptr(ffi, keep, "const int32_t *", model.exit_upper_q, "i4")
        s.exit_lower_q = c_ptr(ffi, keep, "const int32_t *", model.exit_lower_q, "i4")
    else:
        s.exit_upper = c_ptr(ffi, keep, "const float *", model.exit_upper, "f4")
        s.exit_lower = c_ptr(ffi, keep, "const float *", model.exit_lower, "f4")
    s.exit_rule = RULE_CODE[model.exit_rule]
    return s


class CCascade(CEvaluator):
    """The C evaluator over a cascade's tables (float32 or q15 by the model's type)."""

    family, what = "cascade", "cascade"

    def make_struct(self) -> Any:
        return cascade_struct(self.ffi, self.model, self._keep)

    def n_scores(self) -> int:
        return int(self.model.trees.n_outputs)


def as_cascade(tables: Any) -> TreeCascade:
    return kind_tables(tables, TreeCascade, "cascade")


def for_numeric(tables: Any, numeric: str) -> TreeCascade | TreeCascadeQ15:
    return kind_tables(tables, TreeCascade, "cascade", numeric)


__all__ = ["CCascade", "TreeCascade", "TreeCascadeQ15", "cascade_struct", "for_numeric"]
