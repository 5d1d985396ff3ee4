"""Numbers in text files (CSV, ARFF, libsvm, .ts, costs files): Python's float() without its underscores."""

from __future__ import annotations


def parse_number(text: str) -> float:
    """float(text), but ``1_0`` is an error (float() reads it as 10: a typo in a data file, not a number)."""
    if "_" in text:
        raise ValueError(f"could not convert string to float: {text!r}")
    return float(text)
