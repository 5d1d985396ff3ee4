"""Argument types shared by the benchmark scripts."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer >= 1 (argparse type): counts of trees, rows, sets or seeds, where 0 would otherwise be
    mistaken for "not given" and run the default silently."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value
