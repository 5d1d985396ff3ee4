"""Numbers in text files (CSV, ARFF, libsvm, .ts, costs files): Python's float() and int() without what they take
beyond a number as written in a data file: underscores, and digits of other scripts (full-width ``１０``,
Arabic-Indic ``١٠``)."""

from __future__ import annotations


def parse_number(text: str) -> float:
    """float(text), but ``1_0`` and non-ASCII digits are errors (float() reads both as 10: a typo or another
    script's digits in a data file, not a number)."""
    if "_" in text or not text.isascii():
        raise ValueError(f"could not convert string to float: {text!r}")
    return float(text)


def is_number(text: str) -> bool:
    """Whether ``parse_number`` reads ``text``."""
    try:
        parse_number(text)
    except ValueError:
        return False
    return True


def parse_index(text: str) -> int:
    """int(text) of ASCII digits with an optional sign (int() also takes ``1_0``, ``١٠`` and ``１０``)."""
    body = text.strip()
    body = body[1:] if body[:1] in "+-" else body
    if not (body.isascii() and body.isdigit()):
        raise ValueError(f"invalid literal for int(): {text!r}")
    return int(text)
