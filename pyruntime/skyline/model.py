"""Budget-indexed model family (kind ``skyline``): a SkylineIndex plus each
indexed model's own runtime tables, the numpy reference and the cffi binding
of runtime_c/src/skyline/fm_skymodel.c.

One prediction for an item of size ``n`` under a budget ``B``: the index
picks the most accurate model whose cost polynomial at ``n`` is <= ``B``
(pyruntime.skyline), then that model is evaluated (naive Bayes tables,
pyruntime.nb.model.NBModel, for base ``nb`` with two classes, K-class tables,
pyruntime.nb.multi.NBMultiModel, with K classes, all with the same K; sparse linear scorers,
pyruntime.linear.LinearScorer, for base ``linear`` with two classes; K class scorers,
pyruntime.multilinear.MultiLinear, answering the class of the largest score, with K classes). The result
reports the
chosen model in ``stage``, and in ``cost`` the model's polynomial cost at
``n`` (float64 here; the C fm_result holds its float32 rounding and the
double goes to ``*spent``). When nothing fits: label FM_LABEL_DEFER (-1),
stage = n_models (one past the last model), nothing read, cost 0.

The default budget and size stored with the model serve the generic
``predict(X)`` (``frugalml eval`` / ``predict``) and FM_PREDICT_VEC.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyruntime.arrays import check_inputs, require, table_fields
from pyruntime.cbind import CEvaluator, LazyReader, c_ptr, results_to_predictions, x_ptr
from pyruntime.describe import feature_name, jsonable
from pyruntime.errors import FM_E_BUDGET, ModelFormatError, raise_for
from pyruntime.linear import LinearScorer, linear_struct, q15_input_scale
from pyruntime.multilinear import MultiLinear
from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.result import Predictions
from pyruntime.skyline.index import NO_MODEL, SkylineIndex, poly_cost

BASES = ("nb", "linear")
BASE_CODES = {"nb": 0, "linear": 1, "nbk": 2, "lineark": 3}  # FM_SKY_NB, _LINEAR, _NBK, _LINEARK
LABEL_DEFER = -1
MAX_VEC_FEATURES = 512  # FM_VEC_MAX_FEATURES (stack memo of the eager C forms, linear base)


class _Indexed:
    """What the float32 and q15 forms share: the index's dimensions and the per-row budget and size."""

    index: SkylineIndex
    default_budget: float
    default_size: float

    @property
    def n_features(self) -> int:
        return int(self.index.n_features)

    @property
    def n_models(self) -> int:
        return self.index.n_models

    def _per_row(self, rows: int, budget: Any, size: Any) -> tuple[np.ndarray, np.ndarray]:
        """Budget and size per row: scalars broadcast, arrays as given, None the stored default."""
        b = self.default_budget if budget is None else budget
        s = self.default_size if size is None else size
        return (np.ascontiguousarray(np.broadcast_to(np.asarray(b, np.float64), (rows,))),
                np.ascontiguousarray(np.broadcast_to(np.asarray(s, np.float64), (rows,))))


@dataclass
class SkylineModel(_Indexed):
    """A budget index and the tables of the models it indexes (one per index model)."""

    cost_is_float = True  # the cost is the index's polynomial (fm_result.cost) in float32 and q15 alike

    index: SkylineIndex
    base: str
    models: list[Any] = field(default_factory=list)
    default_budget: float = float("inf")
    default_size: float = 0.0
    input_absmax: float | None = None  # the training inputs' largest |x|: the q15 linear scorers' input shift

    def __post_init__(self) -> None:
        self.default_budget = float(self.default_budget)
        self.default_size = float(self.default_size)
        if self.input_absmax is not None:
            self.input_absmax = float(self.input_absmax)
        self.check()

    @property
    def multiclass(self) -> bool:
        """K-class tables (fm_nbk, base code FM_SKY_NBK; K linear scorers, FM_SKY_LINEARK) rather than
        the binary ones."""
        return bool(self.models) and isinstance(self.models[0], NBMultiModel | MultiLinear)

    @property
    def n_classes(self) -> int:
        """K of the K-class tables; 2 for the binary ones."""
        return int(self.models[0].n_outputs if self.base == "linear" else self.models[0].n_classes) \
            if self.multiclass else 2

    @property
    def base_code(self) -> str:
        """The C base: nb, nbk (K-class NB), linear or lineark (K class scorers)."""
        return self.base + "k" if self.multiclass else self.base

    def describe(self, feature_names: Sequence[str]) -> dict[str, Any]:
        """What `frugalml inspect` shows: base, search method, the indexed models (features, validation
        accuracy, cost polynomial c0 + c1*n + c2*n^2, cost at the default size), the size ranges and the
        default budget (null: +inf, the most accurate model) and size."""
        ix = self.index
        cost = poly_cost(ix.model_coef, self.default_size) if self.n_models else np.zeros(0)
        models = [{"features": [feature_name(feature_names, int(j)) for j in ix.features_of(k)],
                   "validation_accuracy": float(ix.model_acc[k]), "cost_coef": ix.model_coef[k].tolist(),
                   "cost_at_default_size": float(cost[k])} for k in range(self.n_models)]
        return jsonable({"base": self.base, "method": ix.method, "n_models": self.n_models,
                         "n_size_ranges": ix.n_ranges, "size_breaks": ix.breaks.tolist(),
                         "default_budget": self.default_budget, "default_size": self.default_size,
                         "models": models})

    def check(self) -> None:
        """Raise ModelFormatError unless every model is consistent and reads only its indexed features."""
        require(self.base in BASES, f"base must be one of {', '.join(BASES)}, got {self.base!r}")
        require(not np.isnan(self.default_budget), "default_budget must not be NaN")
        require(self.input_absmax is None or bool(np.isfinite(self.input_absmax) and self.input_absmax >= 0),
                "input_absmax must be finite and >= 0")
        require(bool(np.isfinite(self.default_size)), "default_size must be finite")
        require(len(self.models) == self.n_models, "one model table per index model is needed")
        cls = {"nb": NBModel, "nbk": NBMultiModel, "linear": LinearScorer, "lineark": MultiLinear}[self.base_code]
        for k, m in enumerate(self.models):
            require(isinstance(m, cls), f"model {k} is not a {cls.__name__}")
            k_m = m.n_outputs if isinstance(m, MultiLinear) else getattr(m, "n_classes", 2)
            require(k_m == self.n_classes, f"model {k}: n_classes differs from model 0")
            require(m.n_features == self.n_features, f"model {k}: n_features differs from the index")
            used = m.order if self.base == "nb" else m.feature
            require(bool(np.all(np.isin(used, self.index.features_of(k)))),
                    f"model {k} reads features outside its indexed set")

    def nbytes(self) -> int:
        """Table bytes: the index plus every model's arrays."""
        total = self.index.nbytes()
        for m in self.models:
            if self.base == "nb":
                _, edges, d = m.strided()
                total += m.order.nbytes + edges.nbytes + d.nbytes
            elif isinstance(m, MultiLinear):
                total += m.nbytes()
            else:
                total += m.feature.nbytes + m.weight.nbytes
        return int(total)

    # -- serialization -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {"index": self.index.to_dict(), "base": self.base,
               "models": [m.to_dict() for m in self.models],
               "default_budget": self.default_budget, "default_size": self.default_size}
        if self.input_absmax is not None:  # optional: files written before q15 skyline tables lack it
            out["input_absmax"] = self.input_absmax
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkylineModel:
        table_fields(data, ("index", "base", "models", "default_budget", "default_size"), "skyline tables")
        require(isinstance(data["models"], list), "models must be a list")
        require(isinstance(data["index"], dict), "index must be a map")
        require(isinstance(data["default_budget"], int | float), "default_budget must be a number")
        require(isinstance(data["default_size"], int | float), "default_size must be a number")
        absmax = data.get("input_absmax")
        require(absmax is None or isinstance(absmax, int | float), "input_absmax must be a number")
        base = data["base"]
        require(base in BASES, f"base must be one of {', '.join(BASES)}")
        for m in data["models"]:
            require(isinstance(m, dict), "each model must be a map")
        try:
            models = [(NBMultiModel if "n_classes" in m else NBModel).from_dict(m) if base == "nb"
                      else (MultiLinear if "classes" in m else LinearScorer).from_dict(m) for m in data["models"]]
        except TypeError as exc:
            raise ModelFormatError(f"bad model tables: {exc}") from None
        return cls(index=SkylineIndex.from_dict(data["index"]), base=base, models=models,
                   default_budget=data["default_budget"], default_size=data["default_size"], input_absmax=absmax)

    def q15(self) -> SkylineQ15:
        """The q15 tables: the same index, budgets and defaults, each model's q15 form (NB: fm_nb_q15 /
        fm_nbk_q15; linear: fm_linear_q15 with the input shift of the training inputs' largest |x|, a weight shift that
        keeps the score bound over such inputs in int32 and, for K class scorers, one weight shift for all K)."""
        if self.base == "linear":
            if self.input_absmax is None:
                raise ValueError("this skyline model file has no input_absmax (written before q15 skyline tables): "
                                 "the linear scorers' q15 input shift is unknown; retrain it, or export float32")
            shift, amax = q15_input_scale(self.input_absmax)
            models = [m.q15(shift, absmax=amax) if isinstance(m, MultiLinear) else m.q15(in_shift=shift, absmax=amax)
                      for m in self.models]
        else:
            models = [m.q15() for m in self.models]
        return SkylineQ15(index=self.index, base_code=self.base_code, models=models,
                          default_budget=self.default_budget, default_size=self.default_size,
                          n_classes=self.n_classes, source=self)

    # -- evaluation ----------------------------------------------------------------
    def predict_reference(self, X: Any, budget: Any = None, size: Any = None) -> Predictions:
        """Numpy reference: budget/size scalars or one per row (None: the stored defaults)."""
        return indexed_predict(self, X, budget, size, np.float32)


@dataclass
class SkylineQ15(_Indexed):
    """The q15 form of a SkylineModel (SkylineModel.q15): the index, budgets and defaults as they are, the
    models' q15 tables (fm_skymodel_q15). Scores are int32 table units; costs the polynomial's doubles."""

    index: SkylineIndex
    base_code: str
    models: list[Any]
    default_budget: float
    default_size: float
    n_classes: int
    source: SkylineModel  # the float32 tables (the NB models' C structs are built from them)

    @property
    def multiclass(self) -> bool:
        return self.base_code in ("nbk", "lineark")

    def predict_reference(self, X: Any, budget: Any = None, size: Any = None) -> Predictions:
        return indexed_predict(self, X, budget, size, np.int32)


def indexed_predict(m: SkylineModel | SkylineQ15, X: Any, budget: Any, size: Any, score_type: type) -> Predictions:
    """The index's pick per row (budget/size scalars, one per row, or None: the stored defaults), then that
    model's reference prediction; cost = the pick's polynomial cost (float64), stage = the pick, or
    n_models with label FM_LABEL_DEFER when nothing fits."""
    X32 = check_inputs(X, m.n_features)
    rows = X32.shape[0]
    b, s = m._per_row(rows, budget, size)
    model, cost = m.index.lookup_many(b, s)
    out = Predictions(label=np.full(rows, LABEL_DEFER, np.int32), score=np.zeros(rows, score_type),
                      n_read=np.zeros(rows, np.uint32), cost=np.zeros(rows, np.float64),
                      stage=np.full(rows, m.n_models, np.uint32))
    for k in np.unique(model):
        if k == NO_MODEL:
            continue
        r = np.flatnonzero(model == k)
        p = m.models[int(k)].predict_reference(X32[r])
        out.label[r] = p.label
        out.score[r] = p.score
        out.n_read[r] = p.n_read
        out.stage[r] = k
        out.cost[r] = cost[r]
    return out


class SkylineReference:
    """The numpy reference evaluator (generic interface: predict(X) at the stored defaults)."""

    def __init__(self, model: SkylineModel, numeric: str = "float32") -> None:
        self.model = tables_for(model, numeric)

    def predict(self, X: Any, budget: Any = None, size: Any = None) -> Predictions:
        return self.model.predict_reference(X, budget, size)


def tables_for(model: SkylineModel, numeric: str) -> SkylineModel | SkylineQ15:
    """The float32 tables (the model itself) or their q15 form."""
    if numeric not in ("float32", "q15"):
        raise ValueError(f"numeric must be float32 or q15, not {numeric!r}")
    return model if numeric == "float32" else model.q15()


class CSkyModel(CEvaluator):
    """The C evaluator (fm_skymodel) over a skyline model's tables; each call may carry its own
    budget and item size (default: the stored ones)."""

    family, what = "skymodel", "skyline model"

    def __init__(self, model: SkylineModel, numeric: str = "float32", ffi: Any = None, lib: Any = None) -> None:
        self._sub: list[Any] = []  # NB models: their own evaluators build (and keep) each struct
        super().__init__(tables_for(model, numeric), ffi, lib)
        if model.base == "linear" and model.n_features > MAX_VEC_FEATURES:
            raise ModelFormatError(f"the eager C forms handle at most {MAX_VEC_FEATURES} features (linear base)")

    def is_q15(self, model: Any) -> bool:
        return isinstance(model, SkylineQ15)

    def make_scratch(self) -> tuple[Any, ...]:
        return ()

    def make_struct(self) -> Any:
        ffi, model, keep = self.ffi, self.model, self._keep
        ix = model.index
        s = ffi.new("fm_skymodel_q15 *" if self.q else "fm_skymodel *")
        s.index.n_features, s.index.n_models, s.index.n_ranges = ix.n_features, ix.n_models, ix.n_ranges
        s.index.model_coef = c_ptr(ffi, keep, "const double *", ix.model_coef.ravel(), "f8")
        s.index.feat_ptr = c_ptr(ffi, keep, "const uint32_t *", ix.feat_ptr, "u4")
        s.index.feat_idx = c_ptr(ffi, keep, "const uint32_t *", ix.feat_idx, "u4")
        s.index.breaks = c_ptr(ffi, keep, "const double *", ix.breaks, "f8")
        s.index.sky_ptr = c_ptr(ffi, keep, "const uint32_t *", ix.sky_ptr, "u4")
        s.index.sky_model = c_ptr(ffi, keep, "const uint32_t *", ix.sky_model, "u4")
        s.base = BASE_CODES[model.base_code]
        s.nbk, s.lineark, s.n_classes = ffi.NULL, ffi.NULL, 0
        s.nb, s.linear = ffi.NULL, ffi.NULL
        if model.base_code in ("nb", "nbk"):
            arr = self._nb_structs()
            if model.base_code == "nbk":
                s.nbk = arr
            else:
                s.nb = arr
        else:
            scorers = [c for m in model.models for c in (m.scorers if model.multiclass else (m,))]
            arr = ffi.new("fm_linear_q15[]" if self.q else "fm_linear[]", max(len(scorers), 1))
            for k, m in enumerate(scorers):
                one = linear_struct(ffi, m.to_dict(), keep)
                keep.append(one)
                arr[k] = one[0]
            if model.multiclass:
                s.n_classes, s.lineark = model.n_classes, arr
            else:
                s.linear = arr
        keep.append(arr)
        s.default_budget, s.default_size = model.default_budget, model.default_size
        return s

    def _nb_structs(self) -> Any:
        """fm_nb[] / fm_nbk[] (or their q15 forms) of the indexed NB models, each struct built by the NB kind's
        own evaluator from the float32 tables (and, in q15, their q15 forms in this SkylineQ15), without that
        evaluator's check: fm_skymodel[_q15]_check checks every model (and that it reads only its indexed
        features)."""
        from pyruntime.nb.binding import CNaiveBayes, CNaiveBayesK  # noqa: PLC0415 - header emitters skip it

        model = self.model
        sub = CNaiveBayesK if model.base_code == "nbk" else CNaiveBayes
        floats = model.source.models if self.q else model.models
        arr = self.ffi.new(f"fm_{model.base_code}{'_q15' if self.q else ''}[]", max(len(floats), 1))
        for k, m in enumerate(floats):  # q15: the models SkylineModel.q15 quantized, not quantized again
            ev = sub(m, "q15" if self.q else "float32", self.ffi, self.lib, check=False,
                     q15=model.models[k] if self.q else None)
            self._sub.append(ev)
            arr[k] = ev.struct[0]
        return arr

    def _results(self, out: Any, rows: int) -> Predictions:
        """fm_result[rows] as Predictions: the float32 cost field (the polynomial's rounding; the callers put
        the double in) and, in q15, score_q as the score."""
        p = results_to_predictions(self.ffi, out, rows, False)
        if self.q:
            p.score = results_to_predictions(self.ffi, out, rows, True).score
        return p

    def predict(self, X: Any, budget: Any = None, size: Any = None) -> Predictions:
        """Batch prediction (budget/size: scalars, one per row, or None for the stored defaults)."""
        X32 = check_inputs(X, self.model.n_features)
        return self.predict_raw(X32, budget, size)[0]

    def predict_raw(self, X32: np.ndarray, budget: Any = None, size: Any = None) -> tuple[Predictions, np.ndarray]:
        """Predictions (cost = the double *spent) and the float32 fm_result.cost of each row."""
        X32 = np.ascontiguousarray(X32, dtype=np.float32)
        rows = X32.shape[0]
        out = self.ffi.new("fm_result[]", max(rows, 1))
        spent = self._call(X32, out, budget, size)
        p = self._results(out, rows)
        c32 = np.asarray(p.cost, np.float32).copy()
        p.cost = spent[:rows].copy()
        return p, c32

    def _call(self, X32: np.ndarray, out: Any, budget: Any = None, size: Any = None) -> np.ndarray:
        ffi, rows = self.ffi, X32.shape[0]
        b, s = self._per_row_arrays(rows, budget, size)
        spent = np.zeros(max(rows, 1), np.float64)
        done = ffi.new("uint32_t *")
        rc = self._batch(self.struct, x_ptr(ffi, X32), rows, self.model.n_features,
                         ffi.cast("const double *", ffi.from_buffer(b)), ffi.cast("const double *", ffi.from_buffer(s)),
                         out, ffi.cast("double *", ffi.from_buffer(spent)), done)
        raise_for(rc, f"{self.what}, row {done[0]}")
        return spent

    def _per_row_arrays(self, rows: int, budget: Any, size: Any) -> tuple[np.ndarray, np.ndarray]:
        b, s = self.model._per_row(max(rows, 1), budget, size) if rows else (np.zeros(1), np.zeros(1))
        return np.ascontiguousarray(b, np.float64), np.ascontiguousarray(s, np.float64)

    def predict_one(self, x: Any, budget: float, size: float) -> tuple[int, Predictions]:
        """One eager prediction through fm_skymodel_predict_vec_at: (return code, result)."""

        x32 = np.ascontiguousarray(np.asarray(x, np.float32).ravel())
        out = self.ffi.new("fm_result[]", 1)
        spent = self.ffi.new("double *")
        rc = self.fn("predict_vec_at")(self.struct, self.ffi.cast("const float *", self.ffi.from_buffer(x32)),
                                       x32.size, float(budget), float(size), out, spent)
        p = self._results(out, 1)
        p.cost = np.array([spent[0]])
        return int(rc), p


    def predict_lazy(self, read: Any, budget: float | None = None, size: float | None = None) -> Predictions:
        """One prediction whose features come from read(index), each at most once, only those of the
        model the budget picks (cost = the double *spent). Nothing fitting the budget is an answer, as in
        predict: label -1, stage n_models, nothing read (round 68: it raised)."""
        lazy = LazyReader(self.ffi, read)
        memo = self.new_memo(self.n_features)
        out = self.ffi.new("fm_result[]", 1)
        spent = self.ffi.new("double *")
        b = self.model.default_budget if budget is None else float(budget)
        s = self.model.default_size if size is None else float(size)
        rc = self._lazy(self.struct, lazy.reader, memo, b, s, out, spent)
        lazy.raise_for_read()
        if rc != FM_E_BUDGET:  # nothing fits: an answer (label -1, stage n_models), as predict and predict_one give
            raise_for(rc, f"{self.what}, lazy prediction")
        p = self._results(out, 1)
        p.cost = np.array([spent[0]])
        return p
