"""Plots of `frugalml eval --plot`: the confusion matrix (matplotlib, imported only when asked)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from pyruntime.costtext import unused_text
from pyruntime.outfiles import write_file

PLOT_FORMATS = ("png", "svg", "pdf")  # what `--plot FILE` writes, by FILE's suffix


def plot_format(path: str | Path) -> str | None:
    """The image format a plot file's suffix names (png, svg or pdf); None for any other suffix or none, which
    matplotlib would have replaced by a PNG written to FILE.png (round 68) or refused after the whole run."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix if suffix in PLOT_FORMATS else None


def save_figure(fig: Any, path: str | Path, dpi: int) -> None:
    """``fig`` into exactly ``path``, in the format its suffix names, through write_file (a temporary file renamed
    over it: a failed write leaves the old file whole)."""
    fmt = plot_format(path)
    if fmt is None:
        raise ValueError(f"{path}: a plot is written as {', '.join('.' + f for f in PLOT_FORMATS)}")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    write_file(path, buf.getvalue())


def plot_confusion(confusion: dict[str, Any], path: str, title: str) -> str:
    """Write the confusion matrix of an eval report (rows: true class, columns: predicted) as a PNG (or the SVG
    or PDF the path's suffix names)."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    labels = [str(v) for v in confusion["labels"]]
    m = np.asarray(confusion["matrix"], dtype=np.int64)
    if any(confusion["none"]):
        m = np.column_stack([m, np.asarray(confusion["none"], dtype=np.int64)])
    k = len(labels)
    side = min(4.0 + 0.35 * k, 16.0)
    fig, ax = plt.subplots(figsize=(side + 1.0, side))
    try:
        im = ax.imshow(m, cmap="Blues")
        fig.colorbar(im, ax=ax)
        # labels and the title drawn as given: "$5-$10" is a price band, not mathtext
        none = [unused_text("none", labels)] if m.shape[1] > k else []
        ax.set_xticks(range(m.shape[1]), labels=labels + none, rotation=90, parse_math=False)
        ax.set_yticks(range(k), labels=labels, parse_math=False)
        ax.set_xlabel("predicted class")
        ax.set_ylabel("true class")
        ax.set_title(title, parse_math=False)
        if k <= 30:
            peak = m.max() if m.size else 0
            for (i, j), v in np.ndenumerate(m):
                if v:
                    ax.text(j, i, str(v), ha="center", va="center", fontsize=7,
                            color="white" if v > peak / 2 else "black")
        fig.tight_layout()
        save_figure(fig, path, dpi=100)
    finally:
        plt.close(fig)
    return str(path)
