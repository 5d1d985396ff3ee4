"""Per-feature acquisition costs.

A costs file is a CSV with a header: ``feature,cost`` (a constant cost per
feature) or ``feature,c0,c1,c2`` (cost c0 + c1*n + c2*n^2 for an item of size
n). ``feature`` is a feature name or a 0-based column index, or ``*`` for every
feature the file does not name. Every feature needs a cost: a file that leaves
some out without a ``*`` row is an error (listing them), as is a feature named
twice.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class CostsError(ValueError):
    """A costs file that cannot be used."""


@dataclass(frozen=True)
class FeatureCosts:
    """Polynomial cost per feature: coef[j] = (c0, c1, c2)."""

    coef: np.ndarray  # shape (n_features, 3), float64

    @classmethod
    def uniform(cls, n_features: int, cost: float = 1.0) -> FeatureCosts:
        coef = np.zeros((n_features, 3))
        coef[:, 0] = cost
        return cls(coef)

    @property
    def n_features(self) -> int:
        return int(self.coef.shape[0])

    @property
    def is_constant(self) -> bool:
        return bool(np.all(self.coef[:, 1:] == 0))

    def at(self, size: float = 0.0) -> np.ndarray:
        """Cost of every feature for an item of the given size."""
        c = self.coef
        return c[:, 0] + c[:, 1] * size + c[:, 2] * size * size


def load_costs(path: str | Path, feature_names: list[str]) -> FeatureCosts:
    """Read a costs CSV for a data set with the given feature names."""
    n = len(feature_names)
    coef = FeatureCosts.uniform(n).coef.copy()
    index = {name: j for j, name in enumerate(feature_names)}
    p = Path(path)
    if not p.is_file():
        raise CostsError(f"costs file not found: {p}")
    with p.open(newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise CostsError(f"costs file {p} is empty")
    header = [h.strip().lower() for h in rows[0]]
    if header[:2] == ["feature", "cost"] and len(header) == 2:
        cols = 1
    elif header == ["feature", "c0", "c1", "c2"]:
        cols = 3
    else:
        raise CostsError(
            f"costs file {p}: header must be 'feature,cost' or 'feature,c0,c1,c2', got {','.join(rows[0])}"
        )
    given: dict[int, int] = {}
    default: list[float] | None = None
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != cols + 1:
            raise CostsError(f"costs file {p} line {lineno}: expected {cols + 1} fields, got {len(row)}")
        name = row[0].strip()
        if name == "*" and "*" not in index:
            if default is not None:
                raise CostsError(f"costs file {p} line {lineno}: a second '*' row")
            default = _cost_values(p, lineno, row)
            continue
        if name in index:
            j = index[name]
        else:
            try:
                j = int(name)
            except ValueError:
                raise CostsError(f"costs file {p} line {lineno}: unknown feature {name!r}") from None
            if not 0 <= j < n:
                raise CostsError(f"costs file {p} line {lineno}: feature index {j} out of range 0..{n - 1}")
        if j in given:
            raise CostsError(f"costs file {p} line {lineno}: feature {feature_names[j]!r} already has a cost "
                             f"(line {given[j]})")
        given[j] = lineno
        coef[j, :cols] = _cost_values(p, lineno, row)
        if cols == 1:
            coef[j, 1:] = 0.0
    missing = [j for j in range(n) if j not in given]
    if missing and default is None:
        names = ", ".join(feature_names[j] for j in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise CostsError(f"costs file {p} gives no cost for {len(missing)} of the {n} features ({names}): "
                         "add a row for each, or a row '*' with the cost of every feature not named")
    for j in missing:
        coef[j, :] = 0.0
        coef[j, :cols] = default
    return FeatureCosts(coef)


def _cost_values(p: Path, lineno: int, row: list[str]) -> list[float]:
    try:
        vals = [float(v) for v in row[1:]]
    except ValueError:
        raise CostsError(f"costs file {p} line {lineno}: cost is not a number") from None
    if not all(np.isfinite(vals)) or any(v < 0 for v in vals):
        raise CostsError(f"costs file {p} line {lineno}: costs must be finite and >= 0")
    return vals


def cost_vector(costs: FeatureCosts | np.ndarray | list | None, n_features: int, size: float = 0.0) -> np.ndarray:
    """Per-feature cost vector (float64, length n_features) for items of the given size, from None
    (every feature costs 1), FeatureCosts or an array; ValueError on a wrong length or a negative or
    non-finite cost."""
    if costs is None:
        return np.ones(n_features)
    c = costs.at(size) if isinstance(costs, FeatureCosts) else np.asarray(costs, dtype=np.float64).ravel()
    if c.shape != (n_features,):
        raise ValueError(f"costs must have one entry per feature ({n_features}), got {c.shape[0]}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("costs must be finite and >= 0")
    return c.astype(np.float64)
