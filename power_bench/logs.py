"""Run logs: a CSV of raw bytes and decoded samples flushed per line, a summary JSON, a PNG plot."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pyruntime.jsontext import json_text

from .sources import Sample

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CSV_COLUMNS = ("t_s", "wall_time", "phase", "kind", "raw_hex", "value", "unit", "coupling", "overload",
               "range", "flags", "note")


class CsvLog:
    """One row per framed packet or dropped stretch, written and flushed as it arrives, so a crash or
    Ctrl-C loses nothing already read. ``t_s`` is seconds since ``t0`` (time.monotonic())."""

    def __init__(self, path: str | Path, t0: float) -> None:
        self.path = Path(path)
        self.t0 = t0
        self._fh: TextIO = open(self.path, "w", newline="", encoding="utf-8")  # noqa: SIM115
        self._writer = csv.writer(self._fh)
        self._writer.writerow(CSV_COLUMNS)
        self._fh.flush()

    def write(self, sample: Sample, phase: str) -> None:
        r = sample.reading
        wall = datetime.fromtimestamp(sample.wall, timezone.utc).isoformat(timespec="milliseconds")
        if r is None:
            row = [f"{sample.t - self.t0:.4f}", wall, phase, sample.kind, sample.raw.hex(" "), "", "", "", "",
                   "", "", sample.note]
        else:
            value = "OL" if r.overload else repr(r.value)
            row = [f"{sample.t - self.t0:.4f}", wall, phase, sample.kind, sample.raw.hex(" "), value, r.unit,
                   r.coupling, int(r.overload), r.range, " ".join(r.flags), sample.note]
        self._writer.writerow(row)
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


def write_summary(path: str | Path, summary: dict[str, Any]) -> None:
    Path(path).write_text(json_text(summary, indent=2) + "\n", encoding="utf-8")


def si_joules(x: float) -> str:
    """``5.443e-08`` -> ``54.43 nJ``: four significant digits with an SI prefix."""
    if not math.isfinite(x):
        return f"{x} J"
    if x == 0:
        return "0 J"
    steps = ((1.0, ""), (1e-3, "m"), (1e-6, "\u00b5"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"))
    factor, prefix = next(((f, p) for f, p in steps if abs(x) >= f), steps[-1])
    return f"{x / factor:.4g} {prefix}J"


def model_names(paths: Mapping[str, str]) -> dict[str, str]:
    """Label -> file name of the model (the full path when two models share a file name)."""
    names = {label: Path(p).name for label, p in paths.items()}
    if len(set(names.values())) < len(names):
        return dict(paths)
    return names


def energy_text(entry: Mapping[str, Any]) -> str:
    """``54.43 nJ/prediction (95% CI 54.21 .. 54.65 nJ)`` or why there is no figure."""
    joules = entry.get("energy_per_prediction_j")
    if joules is None:
        return "no energy figure"
    lo, hi = entry.get("ci95_j") or (math.nan, math.nan)
    return f"{si_joules(joules)}/prediction (95% CI {si_joules(lo)} .. {si_joules(hi)})"


def ratio_text(ratio: Mapping[str, Any] | None, names: Mapping[str, str]) -> str:
    if not ratio or "B" not in names or "A" not in names:
        return ""
    return (f"energy ratio B/A ({names['B']} / {names['A']}) = {ratio['value']:.4g} "
            f"(95% CI {ratio['ci95_low']:.4g} .. {ratio['ci95_high']:.4g})")


def plot_run(path: str | Path, points: Sequence[tuple[float, float, bool]], idle: tuple[float, float] | None,
             segments: Sequence[tuple[str, float, float]], unit: str, title: str,
             models: Mapping[str, Mapping[str, Any]] | None = None,
             ratio: Mapping[str, Any] | None = None) -> Figure:
    """Current (or power) over time; idle window shaded grey, load windows coloured per model, readings left
    out of the figure (wrong unit, OL) marked with red crosses at the plot's bottom.

    ``models`` maps a label ("A", "B") to its summary entry (``model`` path, ``energy_per_prediction_j``,
    ``ci95_j``): the legend names each model by its file name with its energy per prediction and interval,
    and the title carries ``ratio`` (B/A). The legend sits below the axes, never over the data. Returns the
    (closed) figure, whose texts tests can read.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = models or {}
    names = model_names({label: str(entry.get("model", label)) for label, entry in models.items()})
    fig, ax = plt.subplots(figsize=(10, 5.2))
    used = [(t, v) for t, v, ok in points if ok]
    left = [t for t, _v, ok in points if not ok]
    if used:
        xs, ys = [t for t, _ in used], [v for _, v in used]
        ax.plot(xs, ys, ".-", lw=0.6, ms=3, color="black", label="readings")
    if left:
        y = min((v for _, v in used), default=0.0)
        ax.plot(left, [y] * len(left), "x", color="red", label="left out (wrong unit / OL)")
    if idle is not None:
        ax.axvspan(idle[0], idle[1], color="grey", alpha=0.25, label="idle window")
    colours = {"A": "tab:orange", "B": "tab:blue"}
    seen: set[str] = set()
    for label, start, end in segments:
        text = f"{label}: {names[label]}, {energy_text(models[label])}" if label in models else f"load {label}"
        ax.axvspan(start, end, color=colours.get(label, "tab:green"), alpha=0.25,
                   label=None if label in seen else text)
        seen.add(label)
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel({"A": "current (A)", "W": "power (W)", "V": "voltage (V)"}.get(unit, unit))
    heading = title
    if names:
        heading += "\n" + " vs ".join(f"{label}: {name}" for label, name in names.items())
    extra = ratio_text(ratio, names)
    if extra:
        heading += "\n" + extra
    ax.set_title(heading, fontsize="medium")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, fontsize="small", frameon=False)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return fig
