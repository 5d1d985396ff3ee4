"""benchmarks/q15_agreement.py's "one shift" column: quantize_linear without term shifts. Round 32 added ``absmax``
after ``term_shifts``; a patch of the last positional default would have set absmax to False (a bias-only score
bound) and left term shifts on. Both are keyword-only now and the patch sets ``term_shifts`` by name."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.q15_agreement import one_shift  # noqa: E402
from pyruntime import linear  # noqa: E402


def defaults() -> dict[str, object]:
    """quantize_linear's defaults as a call sees them now (inspect reads __defaults__ and __kwdefaults__ live)."""
    return {p.name: p.default for p in inspect.signature(linear.quantize_linear).parameters.values()
            if p.default is not inspect.Parameter.empty}


def test_one_shift_turns_off_term_shifts_only() -> None:
    before = defaults()
    assert before["term_shifts"] is True and before["absmax"] is None
    with one_shift():
        inside = defaults()
    assert inside == {**before, "term_shifts": False}
    assert defaults() == before
