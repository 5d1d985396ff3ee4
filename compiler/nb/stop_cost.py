"""What one nb-stop stop check costs, in feature reads: the pay rule's price (compiler.nb.train.learn_stop_points
keeps a stop point only when the reads its stopped validation rows skip outweigh it for every running row), per
numeric type and walk. Light (no scikit-learn): export-c reads it to note tables exported as the other type."""

from __future__ import annotations

from typing import Any

from compiler.header import NUMERICS, check_numeric

# The eager table walk pays about 14 x86 instructions per stop point against 10 (a zero) to 18 per feature read,
# so 1.5 reads per check, with a margin for validation-to-test drift: at 1, KEEL spambase (k = 10) kept a stop
# point after 3 features that made it cost as much as static NB (179.0 vs 179.7 instructions per prediction); at
# 1.5 one stop point after 4 features reads 6.4 features at 147.5.
DEFAULT_STOP_COST = 1.5
# Per numeric type and walk (two classes, K classes), from benchmarks/nb_stop_cost.py's fits of instructions =
# fixed + read x features read + check x stop checks over nb-static budgets and nb-stop stop costs (round 39).
# float32 checks cost 1.2-1.6 reads on x86 and the Cortex-M4F for two classes and 0.4-2.1 for three to 26 (a
# read's price follows the bins: 31 quantile edges make it dear), so 1.5 stays; K-class q15 checks cost 0.3-2.4
# reads on the Cortex-M3, the same 1.5. The two-class q15 walk is the exception: its reads run in the step
# stream's loop (about 9 Cortex-M3 instructions, 11 on the M0) and a check leaves it for several reads' worth on
# the Cortex-M3, M0 and x86 (the fit of the day: docs/nb_stop.md, "The stop check's price per numeric type"). The
# price stays 6, a margin for validation-to-test drift as float32's: at 4.5 breast cancer kept 5 stop points (3 at
# 6) and cost 271.9 Cortex-M3 instructions per prediction on its 200 embedded rows against 227.9 (round 40).
STOP_COSTS: dict[tuple[str, bool], float] = {
    ("float32", False): DEFAULT_STOP_COST, ("float32", True): DEFAULT_STOP_COST,
    ("q15", False): 6.0, ("q15", True): DEFAULT_STOP_COST}


def default_stop_cost(numeric: str, n_classes: int) -> float:
    """The pay rule's check cost in feature reads for tables of ``numeric`` type with ``n_classes`` classes."""
    return STOP_COSTS[check_numeric(numeric), n_classes > 2]


def export_note(training: dict[str, Any], n_classes: int, n_stops: int, numeric: str) -> str | None:
    """The note export-c prints when an nb-stop model's stop points were kept by the default pay rule for a numeric
    type whose check price differs from ``numeric``'s (files from before round 39 were kept for float32), else
    None: no stop points, a --stop-cost the user gave, or the same price."""
    if not n_stops or "stop_cost" in training:
        return None
    kept = str(training.get("stop_numeric", "float32"))
    if kept not in NUMERICS:
        return None
    paid, price = default_stop_cost(kept, n_classes), default_stop_cost(numeric, n_classes)
    if paid == price:
        return None
    dearer = "more" if price > paid else "fewer"
    return (f"note: the stop points were kept for {kept} tables (a {numeric} stop check costs {dearer} feature "
            f"reads): train with --numeric {numeric} (or --target) to keep them for the {numeric} walk "
            "(docs/nb_stop.md)")
