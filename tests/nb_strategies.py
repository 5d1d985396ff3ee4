"""Random NB tables for property tests (hypothesis strategies)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel


@st.composite
def nb_models(draw: st.DrawFn, max_features: int = 12, with_costs: bool | None = None) -> NBModel:
    n_features = draw(st.integers(1, max_features))
    k = draw(st.integers(1, n_features))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_features)[:k]
    zero_bin = rng.integers(0, 2, k).astype(np.uint8)
    # mostly the few edges of mean-std bins; sometimes quantile-sized lists (the runtime's binary search over the
    # fixed-stride edges, duplicates and padding included)
    n_edges = rng.integers(0, 5, k) if rng.random() < 0.7 else rng.integers(0, 40, k)
    edges = [np.sort(rng.choice(np.float32([-2, -1, -0.5, 0, 0.25, 0.5, 1, 3]), size=n, replace=True)
                     if rng.random() < 0.5 else rng.normal(size=n).astype(np.float32)).astype(np.float32)
             for n in n_edges]
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 3000.0]))
    sizes = n_edges + 1 + zero_bin
    d = (rng.normal(size=int(sizes.sum())) * scale).astype(np.float32)
    n_stops = draw(st.integers(0, max(0, k - 1)))
    stop_at = np.sort(rng.choice(np.arange(1, k), size=n_stops, replace=False)) if n_stops else []
    hi = [np.inf if rng.random() < 0.2 else rng.normal() * scale for _ in range(n_stops)]
    lo = [-np.inf if rng.random() < 0.2 else rng.normal() * scale - scale for _ in range(n_stops)]
    costs = None
    if with_costs or (with_costs is None and draw(st.booleans())):
        costs = rng.choice([0.5, 1.0, 3.0, 10.0, 0.1], size=n_features).astype(np.float32)
    return NBModel(
        n_features=n_features, order=order, zero_bin=zero_bin,
        edge_start=np.concatenate([[0], np.cumsum(n_edges)]),
        edges=np.concatenate(edges) if edges else np.zeros(0, np.float32),
        table_start=np.concatenate([[0], np.cumsum(sizes)]), d=d,
        d0=float(rng.normal() * scale), threshold=float(rng.normal() * scale),
        stop_at=stop_at, stop_hi=hi, stop_lo=lo, costs=costs,
    )


@st.composite
def inputs_for(draw: st.DrawFn, model: NBModel, rows: int = 40) -> np.ndarray:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, model.n_features)) * rng.choice([0.5, 2.0, 100.0])
    # exact zeros, -0.0 and values sitting exactly on bin edges
    X[rng.random(X.shape) < 0.2] = 0.0
    X[rng.random(X.shape) < 0.05] = -0.0
    if model.edges.size:
        mask = rng.random(X.shape) < 0.15
        X[mask] = rng.choice(model.edges, size=int(mask.sum()))
    return X.astype(np.float32)


@st.composite
def nbk_models(draw: st.DrawFn, max_features: int = 12) -> NBMultiModel:
    """K-class NB tables (3 to 64 classes) in the same layouts as nb_models, with margin stop points (some never
    or always taken) and priors that may dwarf the entries (q15 sums that saturate)."""
    n_classes = draw(st.sampled_from([3, 4, 10, 26, 64]))
    base = draw(nb_models(max_features=max_features))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 3000.0]))
    rows = int(base.d.shape[0])
    d = (rng.normal(size=(rows, n_classes)) * scale).astype(np.float32)
    d[rng.random(d.shape) < 0.05] = -0.0
    if rows and rng.random() < 0.3:
        d[rng.integers(0, rows)] = d[0]  # slots adding the same row
    prior = scale * draw(st.sampled_from([1.0, 1e6]))
    margins = [np.inf if rng.random() < 0.15 else 0.0 if rng.random() < 0.1 else abs(rng.normal()) * scale
               for _ in range(base.n_stops)]
    return NBMultiModel(
        n_features=base.n_features, n_classes=n_classes, order=base.order, zero_bin=base.zero_bin,
        edge_start=base.edge_start, edges=base.edges, table_start=base.table_start, d=d,
        d0=(rng.normal(size=n_classes) * prior).astype(np.float32), stop_at=base.stop_at, stop_margin=margins,
        costs=base.costs)
