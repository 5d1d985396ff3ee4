"""Greedy Miser's feature penalties with feature groups (compiler.costs): a group's cost is charged
once, like a feature's. A feature that is not yet used costs its own part plus the groups it uses
that no used feature has paid for; a used feature is free. Without groups this is the plain
per-feature penalty (``own`` = the costs, no groups).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.costs import FeatureCosts


@dataclass(frozen=True)
class GroupedCosts:
    """Own cost per feature (d,), group membership (d, G) and cost per group (G,)."""

    own: np.ndarray
    member: np.ndarray
    group: np.ndarray

    @classmethod
    def from_costs(cls, costs: FeatureCosts, size: float = 0.0) -> GroupedCosts:
        """The groups of a costs file (FeatureCosts.own_coef / group_coef / feature_groups) at an item size."""
        d = costs.n_features
        if not costs.has_groups:
            return cls(costs.at(size), np.zeros((d, 0), dtype=bool), np.zeros(0))
        assert costs.own_coef is not None and costs.group_coef is not None
        member = np.zeros((d, len(costs.group_names)), dtype=bool)
        for j, gs in enumerate(costs.feature_groups):
            member[j, list(gs)] = True
        poly = lambda c: c[:, 0] + c[:, 1] * size + c[:, 2] * size * size  # noqa: E731
        return cls(poly(costs.own_coef), member, poly(costs.group_coef))

    def scaled(self, factor: float) -> GroupedCosts:
        return GroupedCosts(self.own * factor, self.member, self.group * factor)

    def penalty(self, used: np.ndarray) -> np.ndarray:
        """Per feature: the cost of starting to read it after the features in ``used`` (0 when used)."""
        used = np.asarray(used, dtype=bool)
        unpaid = np.where(self.member[used].any(axis=0), 0.0, self.group)
        return np.where(used, 0.0, self.own + self.member.astype(np.float64) @ unpaid)

    def cost_of_rows(self, read: np.ndarray) -> np.ndarray:
        """Per row of a bool (n, d) read mask: own costs of the features read plus each group once."""
        read = np.asarray(read, dtype=bool)
        groups = (read.astype(np.int64) @ self.member.astype(np.int64)) > 0
        return read @ self.own + groups @ self.group
