"""``frugalml bench MODEL --data DATA --on TARGET``: instructions per prediction of the whole pipeline (raw window in,
label out) on a target, counted as ``profile-costs`` counts (QEMU's TCG plugin on Cortex-M and the Pi, callgrind on
the host): the lazy pipeline (features computed as the model reads them), the eager baseline (every planned feature
first, then the same model), and the eager extraction and the model apart. runtime_c/tools/fm_bench_window.c runs
the calls on DATA's first windows, embedded in the export-c header with the model's plan.

The lazy extraction is the lazy pipeline less the model on the same values (the model's reads through a vector
reader): what computing the features the model asked for cost.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from compiler.features.profile import RUNTIME, ProfileError, count_steps
from compiler.header import numeric_for, render_header
from compiler.pipeline_header import LAZY_CALLS
from pyruntime import format as fmt
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

    def report(self) -> dict[str, object]:
        lazy, eager, model = float(self.lazy.mean()), float(self.eager.mean()), float(self.model.mean())
        return {
            "target": self.target, "numeric": self.numeric, "windows": self.windows, "window_len": self.window_len,
            "instructions_per_prediction": round(lazy, 1),
            "extraction_instructions": round(lazy - model, 1),
            "model_instructions": round(model, 1),
            "eager_instructions_per_prediction": round(eager, 1),
            "eager_extraction_instructions": round(float(self.eager_extraction.mean()), 1),
            "eager_over_lazy": round(eager / lazy, 2) if lazy > 0 else None,
            "max_instructions_per_prediction": int(self.lazy.max()),
        }


def bench(model_path: str, data: str, target: str, rows: int = 20) -> Bench:
    model = fmt.load(model_path)
    if "feature_plan" not in model.meta:
        raise ProfileError(f"{model_path}: not trained on raw windows (no feature plan); bench runs the whole "
                           "pipeline from raw windows")
    num = numeric_for(target, None)
    ds = load_dataset(data, None, model.meta["feature_plan"])
    series = ds.windows.series
    length = series[0].shape[1]
    windows = [s for s in series if s.shape[1] == length][:rows]
    text = render_header(model, num, "model", None, target, windows)
    if "FM_PREDICT_WINDOW" not in text:
        kinds = ", ".join(sorted(LAZY_CALLS))
        raise ProfileError(f"{model_path}: a {model.kind} model has no lazy window pipeline (tables {kinds})")
    with tempfile.TemporaryDirectory(prefix="fm_bench_") as tmp:
        work = Path(tmp)
        header = work / "model.h"
        header.write_text(text)
        n_steps = 1 + STEPS_PER_WINDOW * len(windows)
        counts = np.array(count_steps(header, target, work, n_steps, app=APP), dtype=np.float64)
    per = (counts[1:] - counts[0]).reshape(len(windows), STEPS_PER_WINDOW)
    return Bench(target, num, len(windows), length, per[:, 0], per[:, 1], per[:, 2], per[:, 3])
