"""The named high-cost models f0 of the gated trainers and their size form (``--hpc rf:30:8``), without
scikit-learn: the CLI checks ``--hpc`` before any work (compiler/gated/kind.py), the trainers build from it
(compiler/gated/common.py make_f0)."""

from __future__ import annotations

from typing import Any

from pyruntime.numtext import parse_index

F0_KINDS = ("rf", "gbrt", "svm-rbf")


class F0Error(ValueError):
    """A high-cost model f0 that cannot be built or loaded."""


def f0_spec(kind: Any) -> tuple[str, int | None, int | None] | None:
    """A named f0 as (name, trees, depth): "rf", "gbrt" or "svm-rbf", the tree kinds optionally sized as
    NAME:TREES or NAME:TREES:DEPTH ("rf:30:8": 30 trees of depth <= 8, small enough for a microcontroller's
    flash); None for anything else (a pickle path). A malformed size is an F0Error naming the form."""
    if not isinstance(kind, str):
        return None
    name, colon, size = kind.partition(":")
    if name not in F0_KINDS:
        return None
    if not colon:
        return name, None, None
    try:
        numbers = [parse_index(v) for v in size.split(":")]
    except ValueError:
        numbers = []
    if name == "svm-rbf" or not numbers or len(numbers) > 2 or min(numbers) < 1:
        raise F0Error(f"hpc {kind!r}: the tree kinds take rf|gbrt[:TREES[:DEPTH]] with whole numbers >= 1 "
                      "(e.g. rf:30:8); svm-rbf takes no size")
    return name, numbers[0], (numbers[1] if len(numbers) > 1 else None)
