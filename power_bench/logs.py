"""Run logs: a CSV of raw bytes and decoded samples flushed per line, a summary JSON, a PNG plot."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .sources import Sample

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


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_summary(path: str | Path, summary: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(_clean(summary), indent=2) + "\n", encoding="utf-8")


def plot_run(path: str | Path, points: Sequence[tuple[float, float, bool]], idle: tuple[float, float] | None,
             segments: Sequence[tuple[str, float, float]], unit: str, title: str) -> None:
    """Current (or power) over time; idle window shaded grey, load windows coloured per model,
    readings left out of the figure (wrong unit, OL) marked with red crosses at the plot's bottom."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4))
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
        ax.axvspan(start, end, color=colours.get(label, "tab:green"), alpha=0.25,
                   label=None if label in seen else f"load {label}")
        seen.add(label)
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel(unit)
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
