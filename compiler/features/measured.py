"""``train --costs measured --on TARGET``: profile the task's feature plan on TARGET (profile-costs' counters) at the
lengths of its windows, write the costs CSV with groups next to the model (MODEL.costs.csv), and train with it.
``measured_costs`` writes a temporary file beside MODEL.costs.csv; ``train`` renames it when training succeeded and
removes it when not, so a failed train leaves no costs file behind. Windows of unequal lengths: the costs at their
median length (``typical_length``), one cost a feature as the trainers charge it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click
import numpy as np

from compiler.features.profile import TARGETS, profile, write_costs
from pyruntime.errors import DataError
from pyruntime.outfiles import new_file_mode

WINDOWS_PER_LENGTH = 2
MAX_LENGTHS = 4


def costs_path_for(output: str) -> Path:
    return Path(f"{output}.costs.csv")


def typical_length(lengths: np.ndarray) -> int | None:
    """The window length the costs are written at: None when every window has one length (the profile holds that
    length's counts), else the median length. The trainers charge one cost a feature, a costs file's cost at size
    0 (c0): a size fit over unequal lengths would charge its intercept, far below any window's count."""
    if lengths.size == 0 or int(lengths.min()) == int(lengths.max()):
        return None
    return int(np.round(np.median(lengths)))


def measured_costs(data: object, target: str | None, output: str) -> Path:
    """Profile data's plan on target; returns the written costs CSV. DataError when the data are no raw windows or
    the target is missing or unknown."""
    plan = getattr(data, "plan", None)
    windows = getattr(data, "windows", None)
    if plan is None or windows is None:
        raise DataError("--costs measured needs raw windows (.ts, 3-D NPZ, uea:NAME): it counts the instructions of "
                        "the feature library on the target")
    if target is None or target not in TARGETS:
        raise DataError(f"--costs measured needs --on TARGET ({', '.join(TARGETS)})")
    all_lengths = np.asarray(windows.lengths, dtype=np.int64)
    lengths = sorted({int(n) for n in all_lengths})
    if len(lengths) > MAX_LENGTHS:  # unequal lengths: a few quantiles for the size fit
        lengths = sorted({int(v) for v in np.quantile(lengths, np.linspace(0, 1, MAX_LENGTHS)).round()})
    prof = profile(plan, target, lengths, "float32", WINDOWS_PER_LENGTH)
    final = costs_path_for(output)
    # a name of its own beside MODEL.costs.csv (not MODEL.costs.csv.tmp: a file of that name would be lost); the
    # caller renames it to MODEL.costs.csv once the model is written
    fd, name = tempfile.mkstemp(dir=final.resolve().parent, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    path = Path(name)
    path.chmod(new_file_mode())
    at = typical_length(all_lengths)
    if at is not None:
        click.echo(f"--costs measured: windows of {int(all_lengths.min())} to {int(all_lengths.max())} samples: the "
                   f"costs are written at their median length, {at} (the trainers charge one cost a feature)",
                   err=True)
    try:
        write_costs(path, prof, at)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path
