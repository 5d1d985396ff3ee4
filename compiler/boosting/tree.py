"""One fitted regression tree (node arrays relative to the tree) and a fit's by-products."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class CostTree:
    """One fitted tree; node arrays are relative to the tree (child -1 = none).

    ``bin`` (when the tree was grown on bin codes) is each split's code: a row goes left iff its
    code is <= bin, which on float32 inputs is the same as ``x <= threshold``."""

    feature: np.ndarray  # int32, -1 for a leaf
    threshold: np.ndarray  # float32
    left: np.ndarray  # int32
    right: np.ndarray  # int32
    value: np.ndarray  # float64 leaf value (0 for internal nodes)
    bin: np.ndarray | None = None  # int32 split code (-1 at leaves)

    @property
    def n_nodes(self) -> int:
        return int(self.feature.size)

    def features_used(self) -> np.ndarray:
        f = self.feature[self.feature >= 0]
        return np.unique(f)

    def path_reads(self) -> np.ndarray:
        """Bool (n_nodes, n_features_seen): for each node, the features split on along the path from the root to
        it (the node's own split excluded); columns up to the largest feature index used."""
        d = int(self.feature.max()) + 1 if self.feature.size and self.feature.max() >= 0 else 0
        out = np.zeros((self.n_nodes, d), dtype=bool)
        for i in range(self.n_nodes):  # parents come before their children
            f = int(self.feature[i])
            for c in (int(self.left[i]), int(self.right[i])):
                if c >= 0:
                    out[c] = out[i]
                    out[c, f] = True
        return out

    def apply(self, X32: np.ndarray) -> np.ndarray:
        """Leaf node index of every row of a float32 matrix."""
        node = np.zeros(X32.shape[0], dtype=np.int64)
        rows = np.arange(X32.shape[0])
        while True:
            f = self.feature[node]
            inner = f >= 0
            if not inner.any():
                return node
            r = rows[inner]
            n = node[inner]
            go_left = X32[r, f[inner]] <= self.threshold[n]
            node[inner] = np.where(go_left, self.left[n], self.right[n])


@dataclass
class TreeFit:
    tree: CostTree
    leaf_of_sample: np.ndarray  # node index of each training sample's leaf
    new_features: np.ndarray  # features this tree used that were not in ``used``
