"""``method="auto"``: the feature-set search picked by the problem's size, within a time budget.

One model on all features is trained first (its accuracy is kept) and timed on a second scoring (the
costliest set for the linear-time bases; with cross-validated scores, every fold's fit: until round 58 one fit
on the training part was timed, so a cross-validated search could take its folds' times the budget).
PolyDom runs exact when the lattice fits the budget (2^d sets at that time per set) and otherwise
with a cap on the sets it trains; if the cap stops it before the lattice is settled, Greedy
forward selection (greedy-acc) continues within the rest of the budget, and the skyline is built
from every set trained by either. Each decision is printed as one line on stderr.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from compiler.skyline.search import (
    MAX_LATTICE_FEATURES,
    PATIENCE,
    AccuracyOracle,
    SearchResult,
    greedy_search,
    polydom_search,
)

EXACT_SECONDS = 30.0  # PolyDom's share of the budget
TOTAL_SECONDS = 60.0  # PolyDom + Greedy, at the measured time per set
TOTAL_SECONDS_GREEDY = 150.0  # Greedy alone (more than MAX_LATTICE_FEATURES features)


def _say(text: str) -> None:
    print(f"skyline auto: {text}", file=sys.stderr, flush=True)


def auto_search(oracle: AccuracyOracle, d: int, feature_coef: Any, ref_size: float, *, epsilon: float = 0.0,
                approx: float = 0.0, max_sets: int | None = None, exact_seconds: float = EXACT_SECONDS,
                total_seconds: float = TOTAL_SECONDS, jobs: int | None = None,
                scheduler: str | None = None, patience: int | None = PATIENCE) -> tuple[SearchResult, str]:
    """The search result and the method that produced it (``polydom``, or ``polydom+greedy-acc`` /
    ``greedy-acc`` when the lattice is too large for the budget)."""
    full = (1 << d) - 1
    oracle(full)  # kept; the first fit also pays one-time start-up costs, so the second scoring is timed
    per_set = max(oracle.seconds_per_set(full), 1e-4)  # every fold's fit when the sets are cross-validated
    user_cap = math.inf if max_sets is None else int(max_sets)
    exact_cap = int(min(exact_seconds / per_set, user_cap))
    if d > MAX_LATTICE_FEATURES and total_seconds == TOTAL_SECONDS:
        total_seconds = TOTAL_SECONDS_GREEDY
    total_cap = int(min(total_seconds / per_set, user_cap))
    prior: dict[int, float] = {}
    if d <= MAX_LATTICE_FEATURES and exact_cap >= 2:
        whole = exact_cap >= (1 << d)
        _say(f"{d} features, {per_set * 1e3:.1f} ms per model: polydom "
             + ("(exact: the whole lattice fits the budget)" if whole else f"on at most {exact_cap} sets"))
        res = polydom_search(oracle, d, epsilon, exact_cap, approx=approx, jobs=jobs, scheduler=scheduler)
        if res.complete:
            return res, "polydom"
        prior = dict(res.accuracy)
        _say(f"polydom stopped after {res.n_evaluated} sets; greedy-acc on the rest of the budget")
        method = "polydom+greedy-acc"
    else:
        why = f"polydom takes at most {MAX_LATTICE_FEATURES}" if d > MAX_LATTICE_FEATURES else "too slow per set"
        _say(f"{d} features ({why}), {per_set * 1e3:.1f} ms per model: greedy-acc on at most {total_cap} sets")
        method = "greedy-acc"
    room = max(total_cap - len(prior), d + 1)
    res = greedy_search(oracle, feature_coef, ref_size, "greedy-acc", max_sets=room, patience=patience, jobs=jobs,
                        scheduler=scheduler)
    for m, a in prior.items():
        res.accuracy.setdefault(m, a)
    res.accuracy.setdefault(full, oracle(full))
    res.complete = False
    return res, method
