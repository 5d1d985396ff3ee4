"""Energy per prediction with a confidence interval, from idle and load current samples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

# two-sided 95% quantiles of Student's t, by degrees of freedom
_T975: tuple[tuple[int, float], ...] = (
    (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365), (8, 2.306),
    (9, 2.262), (10, 2.228), (12, 2.179), (15, 2.131), (20, 2.086), (25, 2.060), (30, 2.042),
    (40, 2.021), (60, 2.000), (120, 1.980), (1000, 1.962),
)


def t975(df: float) -> float:
    """Student-t 97.5% quantile; for a df between table rows the smaller df is used (wider, conservative)."""
    if df < 1:
        return math.inf
    best = _T975[0][1]
    for row_df, value in _T975:
        if row_df <= df:
            best = value
    return best if df < 1000 else 1.960


@dataclass(frozen=True)
class PhaseStats:
    n: int
    mean: float
    std: float  # sample standard deviation (ddof=1)

    @property
    def sem(self) -> float:
        return self.std / math.sqrt(self.n) if self.n > 0 else math.inf

    @classmethod
    def of(cls, values: Sequence[float]) -> PhaseStats:
        n = len(values)
        if n == 0:
            return cls(0, math.nan, math.nan)
        # about the first value: a flat phase (a frozen meter, a load change under one count) has mean exactly its
        # value and std 0, so two flat phases of one value differ by 0, not by fsum's last bit (1e-19 J "significant")
        first = values[0]
        mean = first + math.fsum(v - first for v in values) / n
        var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else math.nan
        return cls(n, mean, math.sqrt(var) if n > 1 else math.nan)


def welch_df(a: PhaseStats, b: PhaseStats) -> float:
    va, vb = a.sem**2, b.sem**2
    den = (va**2 / (a.n - 1) if a.n > 1 else 0.0) + (vb**2 / (b.n - 1) if b.n > 1 else 0.0)
    if den == 0:
        return float(a.n + b.n - 2)
    return (va + vb) ** 2 / den


@dataclass(frozen=True)
class EnergyEstimate:
    """Energy per prediction: (mean load - mean idle) x scale x seconds / predictions.

    ``scale`` is the supply voltage when the samples are currents (A), 1 when they are powers (W).
    The 95% interval comes from the standard error of the difference of the two means (Welch), so it
    narrows with the sample count and widens with the spread.
    """

    joules_per_prediction: float
    ci95_low: float
    ci95_high: float
    total_joules_per_prediction: float  # including the idle draw
    delta: float  # mean load - mean idle, in sample units
    delta_sem: float
    df: float
    predictions: int
    seconds: float
    significant: bool  # the interval excludes zero

    def as_dict(self) -> dict[str, float | int | bool]:
        return asdict(self)


def energy_per_prediction(load: PhaseStats, idle: PhaseStats, scale: float, seconds: float,
                          predictions: int) -> EnergyEstimate:
    if predictions <= 0 or seconds <= 0:
        raise ValueError("the workload must report a positive number of predictions and seconds")
    if load.n < 2 or idle.n < 2:
        raise ValueError("need at least two samples in each phase")
    k = scale * seconds / predictions
    delta = load.mean - idle.mean
    sem = math.sqrt(load.sem**2 + idle.sem**2)
    df = welch_df(load, idle)
    half = t975(df) * sem * k
    energy = delta * k
    return EnergyEstimate(energy, energy - half, energy + half, load.mean * k, delta, sem, df, predictions,
                          seconds, energy - half > 0 or energy + half < 0)


@dataclass(frozen=True)
class RatioEstimate:
    """``numerator / denominator`` energy per prediction with a 95% interval (delta method on logs).

    Both figures subtract the same idle mean, so their errors are correlated; the covariance term
    accounts for it.
    """

    value: float
    ci95_low: float
    ci95_high: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def energy_ratio(
    numerator: EnergyEstimate, denominator: EnergyEstimate, idle: PhaseStats
) -> RatioEstimate | None:
    if numerator.delta <= 0 or denominator.delta <= 0:
        return None
    value = numerator.joules_per_prediction / denominator.joules_per_prediction
    var_log = ((numerator.delta_sem / numerator.delta) ** 2 + (denominator.delta_sem / denominator.delta) ** 2
               - 2 * idle.sem**2 / (numerator.delta * denominator.delta))
    var_log = max(var_log, 0.0)
    t = t975(min(numerator.df, denominator.df))
    spread = math.exp(t * math.sqrt(var_log))
    return RatioEstimate(value, value / spread, value * spread)
