"""What the text-file readers (CSV, libsvm, ARFF, .ts, costs files) say about a file that is not UTF-8."""

from __future__ import annotations


def not_utf8(what: str, exc: UnicodeDecodeError) -> str:
    """The one-line message for ``what`` (a file, named as the reader names it) that failed to decode."""
    return f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8"
