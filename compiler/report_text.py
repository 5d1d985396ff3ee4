"""`eval`'s text tables with class labels as given: padded by their width on a terminal (a CJK character takes two
columns, a combining mark none), never cut so that two labels read alike."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyruntime.costtext import unused_text

LABEL_COLUMNS = 8  # a confusion matrix whose labels are all this wide or narrower heads its columns by label
LONG_COUNTS = 16  # a list of counts longer than this (an exit histogram over 100 stages) prints its nonzero entries


def display_width(text: str) -> int:
    """Terminal columns of text: 2 for wide and full-width characters, 0 for combining marks, else 1."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
               for ch in text)


def rjust(text: str, width: int) -> str:
    """text right-aligned in width terminal columns (str.rjust counts characters)."""
    return " " * max(0, width - display_width(text)) + text


def ljust(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def per_class_lines(per_class: dict[str, dict[str, Any]]) -> list[str]:
    """One line per true class: rows, accuracy, mean features read and cost."""
    w = max([display_width("class"), *(display_width(n) for n in per_class)])
    lines = [f"{rjust('class', w)} {'rows':>6} {'accuracy':>9} {'features':>9} {'cost':>10}"]
    for name, c in per_class.items():
        lines.append(f"{rjust(name, w)} {c['n']:>6} {c['accuracy']:>9.4f} {c['mean_features']:>9.2f} "
                     f"{c['mean_cost']:>10.4g}")
    return lines


def confusion_lines(labels: Sequence[str], matrix: Sequence[Sequence[int]], none: Sequence[int]) -> list[str]:
    """The confusion matrix (rows: true class, columns: predicted; a `none` column when some rows got no class,
    `none_` when a class is called none).
    Labels up to LABEL_COLUMNS columns wide head the columns; longer ones are numbered, each row naming its number
    and its whole label."""
    texts = [str(v) for v in labels]
    numbered = any(display_width(t) > LABEL_COLUMNS for t in texts)
    heads = [str(i) for i in range(len(texts))] if numbered else texts
    rows = [f"{i} {t}" for i, t in enumerate(texts)] if numbered else texts
    show_none = any(none)
    none_head = unused_text("none", texts)  # a class may be called none
    cells = [str(v) for r in matrix for v in r] + ([str(v) for v in none] if show_none else [])
    cw = max([display_width(h) for h in heads] + [len(c) for c in cells]
             + [display_width(none_head) if show_none else 0, 4]) + 1
    rw = max(display_width(r) for r in rows) if rows else 0
    out = [(ljust("", rw) if numbered else rjust("", rw)) + "".join(rjust(h, cw) for h in heads)
           + (rjust(none_head, cw) if show_none else "")]
    for name, row, extra in zip(rows, matrix, none, strict=True):
        out.append((ljust(name, rw) if numbered else rjust(name, rw)) + "".join(rjust(str(v), cw) for v in row)
                   + (rjust(str(extra), cw) if show_none else ""))
    return out


def counts_text(counts: Sequence[Any]) -> str:
    """A histogram for a report line: as a list when short, else its nonzero entries as {index: count} and the
    length (an exit histogram over 100 stages is mostly zeros), or, with more than LONG_COUNTS of them (a
    cascade exiting at most of its 300 stages), the indices by which a quarter, half, three quarters and all of
    the counts are reached and the count at the last index."""
    values = list(counts)
    if len(values) <= LONG_COUNTS:
        return str(values)
    nonzero = [(i, v) for i, v in enumerate(values) if v]
    if len(nonzero) <= LONG_COUNTS:
        return "{" + ", ".join(f"{i}: {v}" for i, v in nonzero) + f"}} of {len(values)}"
    total = sum(values)
    cum = np.cumsum(np.asarray(values, dtype=np.int64))
    by = "/".join(str(int(np.searchsorted(cum, q * total / 4))) for q in (1, 2, 3, 4))
    return f"{total} over {len(values)}: 25/50/75/100% by {by}, {values[-1]} at {len(values) - 1}"


def figure_text(value: Any) -> str:
    """One figure of a report line: floats to 4 significant digits, long count lists by counts_text, None as
    "none", a mapping as "key: value, ..." (a nested one in parentheses) rather than Python's repr (round 68:
    `stop_histogram: {'6': 35}`, `budget: None`)."""
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return counts_text(value)
    if isinstance(value, dict):
        if not value:
            return "none"
        return ", ".join(f"{k}: " + (f"({figure_text(v)})" if isinstance(v, dict) else
                                     index_list_text(v) if k == "features" else figure_text(v))
                         for k, v in value.items())
    return str(value)


def index_list_text(values: Sequence[Any], limit: int = 12) -> str:
    """A list of feature indices (not counts: counts_text would fold it into a histogram), the first ``limit``."""
    shown = ", ".join(str(v) for v in list(values)[:limit])
    return f"[{shown}{f', ... ({len(values)} in all)' if len(values) > limit else ''}]"


def records_lines(records: Sequence[dict[str, Any]]) -> list[str]:
    """A list of records with the same keys (eval's budget_sweep) as a table: a header of the keys, a row each."""
    keys = list(records[0])
    cells = [[figure_text(r.get(k)) for k in keys] for r in records]
    widths = [max(display_width(k), *(display_width(row[i]) for row in cells)) + 2 for i, k in enumerate(keys)]
    return ["".join(rjust(k, w) for k, w in zip(keys, widths, strict=True))] + [
        "".join(rjust(c, w) for c, w in zip(row, widths, strict=True)) for row in cells]
