"""CSTC's cost groups as the groups x columns membership matrix G (1 where a column belongs to a group), kept in
the form its size asks for. The trainer needs two products of it: a group's sum of a per-column vector (G @ v:
the sums of squared weights under each square root of the cost term) and a column's sum of a per-group vector
(G^T @ u: the cost weights Lemma 1's auxiliary variables put on each column).

Raw features (``phi="raw"``) make one group per column: G is a permutation, and a wide set's dense G alone
(5,000 columns: 200 MB, 25 million multiply-adds a product) cost more than the rest of training. There the
products are an index and a scatter, exactly what the dense product gives (one nonzero term a sum, the rest
exact zeros). Groups of several columns (the boosting trick's feature groups) keep the dense matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class GroupMap:
    """G for ``members`` (one array of column indices per group) over ``d`` columns."""

    def __init__(self, members: Sequence[np.ndarray], d: int) -> None:
        self.members, self.n_groups, self.d = members, len(members), d
        # the one column of each one-column group, -1 for the others (the groups of several columns: ``multi``)
        self.single = np.array([m[0] if m.size == 1 else -1 for m in members], dtype=np.int64)
        self.multi = np.flatnonzero(self.single < 0)
        cols = self.single
        if cols.size and not self.multi.size and np.unique(cols).size == cols.size:
            self.cols: np.ndarray | None = cols
            self.dense: np.ndarray | None = None
        else:
            self.cols = None
            self.dense = np.zeros((len(members), d))
            for g, m in enumerate(members):
                self.dense[g, m] = 1.0

    def sums(self, v: np.ndarray) -> np.ndarray:
        """G @ v: each group's sum of ``v`` (one value per column)."""
        if self.cols is not None:
            return v[self.cols]
        assert self.dense is not None
        return self.dense @ v

    def spread(self, u: np.ndarray) -> np.ndarray:
        """G^T @ u: each column's sum of ``u`` (one value per group) over the groups it belongs to."""
        if self.cols is not None:
            out = np.zeros(self.d)
            out[self.cols] = u
            return out
        assert self.dense is not None
        return self.dense.T @ u

    def squares(self, beta: np.ndarray) -> np.ndarray:
        """Each group's sum of ``beta``'s squares, as the cost term's objective sums them: one-column groups in one
        step, the others member by member (np.sum's order, not the matrix product's of :meth:`sums`)."""
        sq = np.where(self.single >= 0, beta[np.maximum(self.single, 0)] ** 2, 0.0)
        for g in self.multi:
            sq[g] = float(np.sum(beta[self.members[g]] ** 2))
        return sq

    def to_dense(self) -> np.ndarray:
        """G itself (tests and small sets)."""
        if self.dense is not None:
            return self.dense
        out = np.zeros((self.n_groups, self.d))
        assert self.cols is not None
        out[np.arange(self.n_groups), self.cols] = 1.0
        return out
