"""Refining a sweep's grid between two neighbours (``--refine``): the rule miser's lambda sweep and the gated
kinds' gamma sweep share.

A sweep's grid steps by a factor of about 3; where the kept point's neighbour lost too much (miser: the next
cheaper lambda) or is merely the next larger (gated: the next gamma), two new values at a third and two thirds
of the way between them, geometrically, give the rule a closer look. A low end of 0 starts from a ninth of the
high end (and that ninth is tried too, when the grid does not hold it).
"""

from __future__ import annotations

from collections.abc import Iterable


def thirds_between(lo: float, hi: float, known: Iterable[float]) -> list[float]:
    """Two values at a third and two thirds of the way from ``lo`` to ``hi`` (geometrically; ``lo`` 0 is taken as
    ``hi / 9``, itself added when not in ``known``), rounded to 4 significant digits, without those in ``known``,
    sorted. ``hi`` must be > 0 and > ``lo`` >= 0."""
    if not hi > lo >= 0:
        raise ValueError(f"thirds_between needs hi > lo >= 0, got lo={lo!r}, hi={hi!r}")
    seen = set(known)
    if lo == 0:
        lo = hi / 9
    news = [lo * (hi / lo) ** (1 / 3), lo * (hi / lo) ** (2 / 3)] + ([lo] if lo not in seen else [])
    return sorted({float(f"{x:.4g}") for x in news} - seen)
