"""The index over item sizes: walk the intersection points of adjacent cost curves.

Given candidate feature sets (cost polynomials P_i, accuracies a_i), the
skyline at size n is: sort by (P_i(n), -a_i, number of features, mask) and
keep each set more accurate than every set before it. Between two
consecutive intersection points of cost curves the sort order, hence the
skyline, cannot change, and only a swap of two *adjacent* curves can change
it (kinetic sorted list, like a sweep line). The walk keeps the candidates
sorted by cost, a priority queue of the next crossing of each adjacent pair,
and at each crossing swaps the pair. A crossing is *interesting* (the
skyline changes; the cases of the paper's Theorem 3.13) only when, with i
the curve that was cheaper and j the one that becomes cheaper:

* a_j > a_i: i is now dominated by j; interesting iff i was on the skyline;
* a_j = a_i: j replaces i; interesting iff i was on the skyline;
* a_j < a_i: j may enter; interesting iff a_j beats every set now before it.

A new skyline is stored only at interesting points.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.skyline.search import tie_keys
from pyruntime.skyline.index import poly_cost

__all__ = ["SizeIndex", "build_size_index", "skyline_at", "tie_keys"]


@dataclass
class SizeIndex:
    """Breakpoints and, per size range, the cost-sorted skyline (indices into the candidate list)."""

    breaks: list[float]
    skylines: list[list[int]]
    n_crossings: int = 0  # adjacent swaps processed
    n_interesting: int = 0  # swaps that changed the skyline


def skyline_at(coef: np.ndarray, acc: np.ndarray, tie: np.ndarray, size: float) -> list[int]:
    """Brute-force skyline at one size: candidate indices, cost-sorted."""
    cost = poly_cost(coef, size)
    order = np.lexsort((tie, -acc, cost))
    out: list[int] = []
    best = -np.inf
    for i in order:
        if acc[i] > best:
            out.append(int(i))
            best = acc[i]
    return out


def _next_crossing(d: np.ndarray, after: float) -> float:
    """First n > after where the quadratic d (positive just after ``after``) changes sign to negative."""
    c0, c1, c2 = float(d[0]), float(d[1]), float(d[2])
    roots: list[float] = []
    if c2 == 0.0:
        if c1 != 0.0:
            roots.append(-c0 / c1)
    else:
        disc = c1 * c1 - 4.0 * c2 * c0
        if disc > 0.0:
            sq = math.sqrt(disc)
            q = -0.5 * (c1 + math.copysign(sq, c1))
            roots.append(q / c2)
            if q != 0.0:
                roots.append(c0 / q)
    tol = 1e-12 * max(1.0, abs(after))
    # only a root where d goes from + to - (negative derivative) reorders the pair; this also keeps a
    # pair that just swapped at `after` from swapping back on a rounding-level root
    later = [r for r in roots if r > after + tol and 2.0 * c2 * r + c1 < 0.0]
    return min(later) if later else math.inf


SETTLE_ULPS = 256  # how far a break may move to where its two skylines answer exactly (a rounded root is a few off)


def answers_at(coef: np.ndarray, acc: np.ndarray, tie: np.ndarray, sky: list[int], x: float) -> bool:
    """Whether the lookup over ``sky`` answers every budget at size x with the most accurate set that fits: the
    list is sorted by the costs ``poly_cost`` computes at x, and each set of the true skyline there is matched by
    one of ``sky`` that costs no more and is no less accurate."""
    if not sky:
        return len(skyline_at(coef, acc, tie, x)) == 0
    cost = poly_cost(coef[sky], x)
    if np.any(np.diff(cost) < 0):
        return False
    best = np.maximum.accumulate(acc[sky])
    for k in skyline_at(coef, acc, tie, x):
        at = int(np.searchsorted(cost, poly_cost(coef[k], x), side="right"))
        if at == 0 or best[at - 1] < acc[k]:
            return False
    return True


def settle_break(coef: np.ndarray, acc: np.ndarray, tie: np.ndarray, old: list[int], new: list[int], x: float,
                 floor: float) -> float:
    """The stored start of the range whose skyline is ``new`` (``old`` before it). A crossing is a rounded root, up
    to tens of ulps off, and between it and the sizes where the costs ``poly_cost`` computes really reorder, the
    lookup's binary search over the stored list stopped early on a less accurate set that fits (round 68's probe:
    8 of 25,038 wine queries). Returns the double b within SETTLE_ULPS of x, above ``floor``, such that ``old``
    answers every budget exactly at the sizes of the window below b and ``new`` at b and above; x when there is
    none (or both already do around x)."""
    below = math.nextafter(x, -math.inf)
    if answers_at(coef, acc, tie, new, x) and (below <= floor or answers_at(coef, acc, tie, old, below)):
        return x
    sizes = [x]
    lo = hi = x
    for _ in range(SETTLE_ULPS):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        sizes = ([lo] if lo > floor else []) + sizes + [hi]
    ok_new = [answers_at(coef, acc, tie, new, s) for s in sizes]
    ok_old = [answers_at(coef, acc, tie, old, s) for s in sizes]
    for i in range(1, len(sizes)):
        if all(ok_old[:i]) and all(ok_new[i:]):
            return sizes[i]
    return x


def _resort_ties(order: list[int], val: np.ndarray, key: Any) -> list[int]:
    """``order`` (sorted by ``val``) with each run of values equal up to 1e-9 relative re-sorted by ``key``."""
    out: list[int] = []
    run: list[int] = []
    for k in order:
        if run and abs(val[k] - val[run[-1]]) > 1e-9 * (1.0 + abs(val[run[-1]])):
            out += sorted(run, key=key)
            run = []
        run.append(k)
    return out + sorted(run, key=key)


def build_size_index(coef: np.ndarray, acc: np.ndarray, tie: np.ndarray, lo: float, hi: float) -> SizeIndex:
    """Walk intersection points in [lo, hi] (hi may be inf) and store the skyline at each interesting one."""
    coef = np.asarray(coef, np.float64).reshape(-1, 3)
    m = coef.shape[0]
    acc = np.asarray(acc, np.float64)
    tie = np.asarray(tie, np.int64)
    if m == 0:
        return SizeIndex([float(lo)], [[]])
    # order just to the right of lo: by value, then slope, then curvature, then accuracy and tie key
    val = poly_cost(coef, lo)
    slope = coef[:, 1] + 2.0 * coef[:, 2] * lo
    order = list(np.lexsort((tie, -acc, coef[:, 2], slope, val)))
    # costs equal at lo up to rounding (sums of per-feature decimals: 1.1 against 1.0999999999999999) are ties, ordered
    # by slope as exact ties are: sorted by value alone, such a pair crossed a rounding-level distance after lo, a
    # root _next_crossing drops as within its tolerance, and the order stayed wrong for the whole walk (round 68)
    order = _resort_ties(order, val, lambda k: (slope[k], coef[k, 2], -acc[k], tie[k]))
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m)

    def current_skyline() -> list[int]:
        a = acc[order]
        prev = np.maximum.accumulate(np.concatenate(([-np.inf], a[:-1])))
        return [order[k] for k in np.flatnonzero(a > prev)]

    sky = current_skyline()
    on_sky = set(sky)
    out = SizeIndex([float(lo)], [sky])
    heap: list[tuple[float, int, int]] = []

    def push(p: int, after: float) -> None:
        if 0 <= p < m - 1:
            i, j = order[p], order[p + 1]
            x = _next_crossing(coef[j] - coef[i], after)
            if x < hi:
                heapq.heappush(heap, (x, int(i), int(j)))

    for p in range(m - 1):
        push(p, lo)
    while heap:
        x, i, j = heapq.heappop(heap)
        if pos[j] != pos[i] + 1:
            continue  # stale: the pair is no longer adjacent in this order
        tol = 1e-9 * max(1.0, abs(x))
        events = [(i, j)]
        while heap and heap[0][0] <= x + tol:
            _, i2, j2 = heapq.heappop(heap)
            if pos[j2] == pos[i2] + 1:
                events.append((i2, j2))
        out.n_crossings += len(events)
        # group the swapped positions into contiguous blocks and re-sort each by the order right after x
        touched = sorted({int(pos[a]) for a, _ in events} | {int(pos[b]) for _, b in events})
        # a block is a maximal run of curves with the same cost at x around a swapped pair: it also takes
        # in duplicates and curves through the same point that have no event of their own; two crossings
        # at the same x but at different costs stay separate blocks
        xval = poly_cost(coef[order], x)
        eq_tol = 1e-9 * (1.0 + np.abs(xval))
        spans: list[list[int]] = []
        for p in touched:
            b0 = b1 = p
            while b0 > 0 and abs(xval[b0 - 1] - xval[b0]) <= eq_tol[b0]:
                b0 -= 1
            while b1 < m - 1 and abs(xval[b1 + 1] - xval[b1]) <= eq_tol[b1]:
                b1 += 1
            spans.append([b0, b1])
        spans += [sorted((int(pos[a]), int(pos[b]))) for a, b in events]  # a swapped pair shares a block
        blocks: list[list[int]] = []
        for b0, b1 in sorted(spans):
            if blocks and b0 <= blocks[-1][-1]:
                blocks[-1] = list(range(blocks[-1][0], max(blocks[-1][-1], b1) + 1))
            else:
                blocks.append(list(range(b0, b1 + 1)))
        interesting = False
        for block in blocks:
            p0, p1 = block[0], block[-1]
            members = order[p0 : p1 + 1]
            if len(members) == 2:
                a_i, a_j = acc[members[0]], acc[members[1]]
                if a_j >= a_i:
                    interesting |= members[0] in on_sky
                else:
                    interesting = True  # j may enter: decided by recomputing below
                new = [members[1], members[0]]
            else:
                # all members cost the same at x: order by slope, then curvature, then the scan's tie keys
                new = sorted(members, key=lambda k: (coef[k, 1] + 2.0 * coef[k, 2] * x, coef[k, 2], -acc[k],
                                                     tie[k]))
                interesting = True
            order[p0 : p1 + 1] = new
            for off, k in enumerate(new):
                pos[k] = p0 + off
        for block in blocks:
            for p in range(block[0] - 1, block[-1] + 1):
                push(p, x)
        if interesting:
            sky = current_skyline()
            if sky != out.skylines[-1]:
                out.n_interesting += 1
                if x > out.breaks[-1]:
                    out.breaks.append(settle_break(coef, acc, tie, out.skylines[-1], sky, float(x), out.breaks[-1]))
                    out.skylines.append(sky)
                else:
                    out.skylines[-1] = sky
                on_sky = set(sky)
    return out
