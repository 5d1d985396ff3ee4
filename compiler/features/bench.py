"""``frugalml bench MODEL --data DATA --on TARGET``: instructions per prediction of the whole pipeline (raw window in,
label out) on a target, counted as ``profile-costs`` counts (QEMU's TCG plugin on Cortex-M and the Pi, callgrind on
the host): the lazy pipeline (features computed as the model reads them), the eager baseline (every planned feature
first, then the same model), and the eager extraction and the model apart. runtime_c/tools/fm_bench_window.c runs
the calls on DATA's first windows, embedded in the export-c header with the model's plan.

The lazy extraction is the lazy pipeline less the model on the same values (the model's reads through a vector
reader): what computing the features the model asked for cost. With a costs CSV (``--costs``, e.g. the one
``profile-costs`` or ``train --costs measured`` wrote for the same target), each window's extraction is also
predicted by the cost model: the features the model reads on that window (pyruntime's reference prediction on
the window's feature row), each group once (FeatureCosts.cost_of at the window's length); ``profiled_error`` is
the mean over windows of |predicted - measured| / measured.

The header holds windows of one length (FM_WINDOW_LEN): DATA's first windows of unequal lengths are counted with
one build a length (a stderr line says so), each window at its own length, so none is left out.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np

from compiler.costs import FeatureCosts, load_costs
from compiler.features.profile import RUNTIME, ProfileError, count_steps
from compiler.header import numeric_for, render_header
from compiler.pipeline_header import LAZY_CALLS
from pyruntime import format as fmt
from pyruntime import memo
from pyruntime.data import load_dataset

APP = RUNTIME / "tools" / "fm_bench_window.c"
STEPS_PER_WINDOW = 4  # lazy, eager, eager extraction, model


@dataclass
class Bench:
    target: str
    numeric: str
    windows: int
    window_len: int
    lazy: np.ndarray  # per window, whole lazy pipeline
    eager: np.ndarray  # per window, whole eager pipeline
    eager_extraction: np.ndarray
    model: np.ndarray  # the model alone on precomputed values
    profiled: np.ndarray | None = None  # per window, the cost model's extraction of the features read
    lengths: np.ndarray | None = None  # per window, its length (None: every window has window_len samples)

    @property
    def extraction(self) -> np.ndarray:
        return self.lazy - self.model

    def report(self) -> dict[str, object]:
        lazy, eager, model = float(self.lazy.mean()), float(self.eager.mean()), float(self.model.mean())
        extra: dict[str, object] = {}
        if self.profiled is not None:
            measured = self.extraction
            extra = {"profiled_extraction_instructions": round(float(self.profiled.mean()), 1),
                     "profiled_error": round(float(np.mean(np.abs(self.profiled - measured) / measured)), 4)}
        return {
            "target": self.target, "numeric": self.numeric, "windows": self.windows, "window_len": self.window_len,
            "instructions_per_prediction": round(lazy, 1),
            "extraction_instructions": round(lazy - model, 1),
            "model_instructions": round(model, 1),
            "eager_instructions_per_prediction": round(eager, 1),
            "eager_extraction_instructions": round(float(self.eager_extraction.mean()), 1),
            "eager_over_lazy": round(eager / lazy, 2) if lazy > 0 else None,
            "max_instructions_per_prediction": int(self.lazy.max()),
            **extra,
            **self._lengths(),
        }

    def _lengths(self) -> dict[str, object]:
        """Windows of unequal lengths: the lengths counted (window_len is then their median)."""
        if self.lengths is None or np.unique(self.lengths).size < 2:
            return {}
        return {"window_lengths": sorted({int(n) for n in self.lengths})}


def read_sets(tables: object, X: np.ndarray) -> np.ndarray:
    """Bool (rows, features): the features a lazy prediction of each row reads (pyruntime's reference, which
    reads as the C runtime does). NB tables read a prefix of their reading order; the others account their reads
    in a pyruntime.memo.ReadState, whose ``seen`` is taken here."""
    X32 = np.asarray(X, dtype=np.float32)
    order = getattr(tables, "order", None)
    if order is not None:
        n_read = np.asarray(tables.predict_reference(X32).n_read, dtype=np.int64)  # type: ignore[attr-defined]
        out = np.zeros(X32.shape, dtype=bool)
        for i, k in enumerate(n_read.tolist()):
            out[i, np.asarray(order[:k], dtype=np.int64)] = True
        return out
    states: list[memo.ReadState] = []
    start = memo.ReadState.__dict__["start"]

    def capture(cls: type[memo.ReadState], rows: int, n_features: int) -> memo.ReadState:
        st = start.__func__(cls, rows, n_features)
        states.append(st)
        return st

    memo.ReadState.start = classmethod(capture)  # type: ignore[assignment,method-assign]
    try:
        tables.predict_reference(X32)  # type: ignore[attr-defined]
    finally:
        memo.ReadState.start = start  # type: ignore[method-assign]
    if len(states) != 1:
        raise ProfileError(f"cannot tell the features read by {type(tables).__name__}")
    return states[0].seen.copy()


def profiled_extraction(costs: FeatureCosts, read: np.ndarray, length: int | np.ndarray) -> np.ndarray:
    """Per row of a read mask: the cost model's instructions (own parts plus each group once) at a length (one for
    every row, or each row's own)."""
    sizes = np.broadcast_to(np.asarray(length, dtype=np.float64), (read.shape[0],))
    return np.array([costs.cost_of(np.flatnonzero(r), size=float(n)) for r, n in zip(read, sizes, strict=True)],
                    dtype=np.float64)


def count_windows(model: fmt.ModelFile, model_path: str, num: str, target: str, windows: list[np.ndarray],
                  work: Path, runtime_obj: Path | None = None) -> np.ndarray:
    """(windows, STEPS_PER_WINDOW) instructions of windows of one length: one header, one build, one run in work
    (runtime_obj: the compiled runtime shared with the other lengths' builds)."""
    text = render_header(model, num, "model", None, target, windows)
    if "FM_PREDICT_WINDOW" not in text:
        kinds = ", ".join(sorted(LAZY_CALLS))
        raise ProfileError(f"{model_path}: a {model.kind} model has no lazy window pipeline (tables {kinds})")
    work.mkdir(parents=True, exist_ok=True)
    header = work / "model.h"
    header.write_text(text)
    n_steps = 1 + STEPS_PER_WINDOW * len(windows)
    counts = np.array(count_steps(header, target, work, n_steps, app=APP, runtime_obj=runtime_obj), dtype=np.float64)
    return (counts[1:] - counts[0]).reshape(len(windows), STEPS_PER_WINDOW)


def count_by_length(model: fmt.ModelFile, model_path: str, num: str, target: str,
                    series: list[np.ndarray]) -> np.ndarray:
    """(windows, STEPS_PER_WINDOW) instructions of windows of any lengths, in their order: a header holds windows of
    one length, so each length is counted in a build of its own (the runtime compiled once for them all)."""
    lengths = np.array([s.shape[1] for s in series], dtype=np.int64)
    per = np.empty((len(series), STEPS_PER_WINDOW), dtype=np.float64)
    with tempfile.TemporaryDirectory(prefix="fm_bench_") as tmp:
        distinct = np.unique(lengths)
        shared = Path(tmp) / "runtime" if distinct.size > 1 else None
        for n in distinct.tolist():
            pick = np.flatnonzero(lengths == n)
            work = Path(tmp) if shared is None else Path(tmp) / f"len{n}"
            per[pick] = count_windows(model, model_path, num, target, [series[i] for i in pick], work, shared)
    return per


def bench(model_path: str, data: str, target: str, rows: int = 20, costs: str | None = None) -> Bench:
    model = fmt.load(model_path)
    if "feature_plan" not in model.meta:
        raise ProfileError(f"{model_path}: not trained on raw windows (no feature plan); bench runs the whole "
                           "pipeline from raw windows")
    num = numeric_for(target, None)
    ds = load_dataset(data, None, model.meta["feature_plan"])
    series = ds.windows.series[:rows]
    fc = load_costs(costs, ds.feature_names) if costs is not None else None
    lengths = np.array([s.shape[1] for s in series], dtype=np.int64)
    lo, hi = int(lengths.min()), int(lengths.max())
    if lo != hi:
        click.echo(f"bench: the first {len(series)} windows have {np.unique(lengths).size} lengths, {lo} to {hi} "
                   "samples: each length is counted in a build of its own", err=True)
    per = count_by_length(model, model_path, num, target, series)
    profiled = None
    if fc is not None:
        profiled = profiled_extraction(fc, read_sets(model.tables, ds.X[: len(series)]), lengths)
    length = lo if lo == hi else int(np.round(np.median(lengths)))
    return Bench(target, num, len(series), length, per[:, 0], per[:, 1], per[:, 2], per[:, 3], profiled, lengths)
