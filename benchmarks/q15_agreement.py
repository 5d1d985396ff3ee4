"""q15 against float32 tables of the linear kinds on data with features of very different scales.

    .venv/bin/python benchmarks/q15_agreement.py [--sets keel:bands,keel:german] [--kinds l1-gate,adapt-lin]
        [--write-docs]

Each kind is trained as `frugalml train KIND DATA` trains it (defaults, split seed 0); its tables are then
quantized twice, with one product shift for every term of a linear scorer (the form before round 26) and with a
term shift per weight (fm_linear_q15.term_shift, the default), and both run in the C runtime on the test part.
Printed per model: the share of test rows whose q15 label equals the float32 label, the q15 accuracies, and
the same share for f0's trees alone (their 16-bit threshold keys; no linear part in it), which bounds what
the linear parts can fix. --quick: keel:bands with l1-gate only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.kinds import kind_spec  # noqa: E402
from pyruntime import linear  # noqa: E402
from pyruntime.evaluators import c_evaluator  # noqa: E402

SETS = "keel:bands,keel:german,keel:crx,keel:magic,keel:sonar,keel:segment"
KINDS = "l1-gate,adapt-lin"


@contextlib.contextmanager
def one_shift() -> Iterator[None]:
    """quantize_linear without term shifts while the block runs (every part's q15() goes through it): its
    keyword-only default ``term_shifts`` set to False, every other default kept."""
    saved = linear.quantize_linear.__kwdefaults__
    assert saved is not None and "term_shifts" in saved
    linear.quantize_linear.__kwdefaults__ = {**saved, "term_shifts": False}
    try:
        yield
    finally:
        linear.quantize_linear.__kwdefaults__ = saved


def labels(model: Any, X: np.ndarray, numeric: str) -> np.ndarray:
    return np.asarray(c_evaluator(model, numeric).predict(X).label)


def f0_agreement(model: Any, X: np.ndarray) -> float:
    f0 = getattr(model.tables, "f0", None)
    if f0 is None:
        return float("nan")
    return float(np.mean(f0.predict_reference(X).label == f0.q15().predict_reference(X).label))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=None, help=f"comma-separated data specs [{SETS}]")
    ap.add_argument("--kinds", default=None, help=f"comma-separated kinds [{KINDS}]")
    ap.add_argument("--quick", action="store_true", help="keel:bands, l1-gate")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    sets = (args.sets or ("keel:bands" if args.quick else SETS)).split(",")
    kinds = (args.kinds or ("l1-gate" if args.quick else KINDS)).split(",")
    print(f"{'data':<14} {'kind':<10} {'test rows':>9} {'one shift':>10} {'term shifts':>12} "
          f"{'acc f32':>8} {'acc q15 one':>12} {'acc q15 term':>13} {'f0 trees':>9}")
    for spec in sets:
        task = tasks.prepare(spec, seed=0)
        X = task.data.X[task.test].astype(np.float32)
        y = task.y[task.test]
        for kind in kinds:
            model = kind_spec(kind).train(kind, task, {}, None)
            f32 = labels(model, X, "float32")
            term = labels(model, X, "q15")
            with one_shift():
                one = labels(model, X, "q15")
            print(f"{spec:<14} {kind:<10} {len(y):>9} {np.mean(one == f32):>10.4f} {np.mean(term == f32):>12.4f} "
                  f"{np.mean(f32 == y):>8.4f} {np.mean(one == y):>12.4f} {np.mean(term == y):>13.4f} "
                  f"{f0_agreement(model, X):>9.4f}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
