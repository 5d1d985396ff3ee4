"""emlearn's C (a header from ``emlearn.convert(...).save(name="peer")``) counted on Cortex-M under QEMU, the way
frugalml's firmware is counted (benchmarks/common/qemu_count.py): the rows are embedded in the header, the
bare-metal harness benchmarks/c/em_trees_selftest.c predicts each, and instructions per prediction are the
difference of a REPEAT=2 and a REPEAT=1 run over the rows. Flash bytes: the whole REPEAT=1 image.

The inputs are given as emlearn's C takes them: int16 for its trees (emlearn quantizes the thresholds), float for
its Gaussian NB (software floating point on a Cortex-M3, the FPU on a Cortex-M4F).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.common.qemu_count import count_cortex_m, flash_bytes

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "benchmarks" / "c" / "em_trees_selftest.c"


def embed_rows(X: np.ndarray, feature_t: str) -> str:
    """The C text of PEER_ROWS (typed ``feature_t``: "int16_t" or "float") and its size macros."""
    if feature_t == "int16_t":
        vals = np.clip(np.round(np.asarray(X, dtype=np.float64)), -32768, 32767).astype(np.int64)
        fmt = str
    elif feature_t == "float":
        vals = np.asarray(X, dtype=np.float32)
        fmt = lambda v: f"{float(v):.9e}f"  # noqa: E731 - exact float32 text
    else:
        raise ValueError(f"feature_t must be int16_t or float, got {feature_t!r}")
    n, d = vals.shape
    body = ",\n".join("    {" + ", ".join(fmt(v) for v in r) + "}" for r in vals)
    return (f"\n#define FM_N_ROWS {n}\n#define PEER_N_ROWS {n}u\n#define PEER_N_FEATURES {d}\n"
            f"static const {feature_t} PEER_ROWS[{n}][{d}] = {{\n{body}\n}};\n")


def emlearn_cortex_m(header: Path, X: np.ndarray, feature_t: str, target: str, work: Path,
                     include: str | None = None) -> tuple[float, int]:
    """(instructions per prediction, flash bytes) of the emlearn header on the rows X under QEMU.
    ``include``: emlearn's C include folder (its loadable forms include eml_trees.h / eml_bayes.h)."""
    work.mkdir(parents=True, exist_ok=True)
    h = work / f"{header.stem}_{target}.h"
    h.write_text(header.read_text() + embed_rows(X, feature_t))
    flags = "-O2 -Wno-unused-parameter -Wno-unused-function" + (f" -isystem {include}" if include else "")
    extra = [f"APP={HARNESS}", f"CFLAGS={flags}"]
    return count_cortex_m(h, target, extra=extra), flash_bytes(h, target, extra=extra)
