"""Data generators with a fixed seed (nothing is downloaded).

``make_synthetic2`` recreates the Synthetic-2 example of Nan & Saligrama (NIPS 2017) from its
description: four equally sized clusters, two features of unit cost; a gated model as accurate as
the full model that reads one feature for half of the inputs (average cost 0.5 * 1 + 0.5 * 2 = 1.5),
whereas the L1 baseline does so for a quarter only (0.25 * 1 + 0.75 * 2 = 1.75). The paper's exact
cluster positions are not reproduced here; this layout has the same figures and shows the same
mechanism (f1 fitted jointly with the gate vs. f1 fitted on all the data first):

    cluster   A      B      C      D
    x0       -6     -1     1.5     6       (feature 0 tells the clusters apart)
    x1        0      0      0      0       (feature 1 is noise)
    class     0      1      0      1

Classes alternate along x0, so no linear model on x0 is right on all four clusters. A logistic
regression fitted on all rows (the L1 baseline's f1; L1 keeps x0 only) is right on the two outer
clusters A and D and wrong on B and C; its gate can isolate one outer cluster at most (a linear gate
on one feature is a half-line), hence 1.75. ADAPT-LIN fits the gate and f1 together: the gate sends
A, B (x0 < 0.25) to f0 and f1 separates C from D (or the mirror image), hence 1.5. f0 (a forest)
is exact on all four clusters.
"""

from __future__ import annotations

import numpy as np

SYNTHETIC2_CENTRES = np.array([[-6.0, 0.0], [-1.0, 0.0], [1.5, 0.0], [6.0, 0.0]])
SYNTHETIC2_CLASSES = np.array([0, 1, 0, 1])


def make_synthetic2(n_per_cluster: int = 100, std: float = 0.25,
                    random_state: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic-2: (X float64 (4 n, 2), y int64 in {0, 1}); clusters in order A, B, C, D."""
    if n_per_cluster < 1:
        raise ValueError("n_per_cluster must be >= 1")
    if not std > 0:
        raise ValueError("std must be > 0")
    rng = np.random.default_rng(random_state)
    X = np.concatenate([c + std * rng.standard_normal((n_per_cluster, 2)) for c in SYNTHETIC2_CENTRES])
    y = np.repeat(SYNTHETIC2_CLASSES, n_per_cluster).astype(np.int64)
    return X, y


def make_easy_hard(n_samples: int = 1000, n_features: int = 10, n_cheap: int = 2, easy_fraction: float = 0.6,
                   noise: float = 0.05, random_state: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """A binary task with an easy region and a hard one.

    For a share ``easy_fraction`` of rows (feature 0 > its threshold), the label is linear in the
    first ``n_cheap`` features; for the others it is a nonlinear (xor-like) function of the
    remaining features, which a linear model cannot learn but a forest can. ``noise`` is the share
    of flipped labels. Returns (X float64 (n_samples, n_features), y int64 in {0, 1}).
    """
    if n_features < n_cheap + 2 or n_cheap < 1:
        raise ValueError("need n_cheap >= 1 and n_features >= n_cheap + 2")
    if not 0.0 < easy_fraction < 1.0:
        raise ValueError("easy_fraction must be in (0, 1)")
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    cut = np.quantile(X[:, 0], 1.0 - easy_fraction)
    easy = X[:, 0] > cut
    w = np.linspace(1.0, 0.5, n_cheap - 1) if n_cheap > 1 else np.zeros(0)
    lin = (X[:, 1:n_cheap] @ w if n_cheap > 1 else X[:, 0] - np.median(X[easy, 0])) > 0
    xor = (X[:, n_cheap] > 0) ^ (X[:, n_cheap + 1] > 0)
    y = np.where(easy, lin, xor)
    flip = rng.random(n_samples) < noise
    return X, (y ^ flip).astype(np.int64)


CSTC_FEATURES = ("z++", "z+-", "z-+", "z--", "sign_x", "sign_z")
CSTC_COSTS = np.array([10.0, 10.0, 10.0, 10.0, 1.0, 1.0])
# P(y = 1) per quadrant (sign x, sign z): like the paper's label means, higher where z < 0 and
# different between the two quadrants of each half, so that similar labels need similar features
CSTC_PRIORS = {(1, 1): 0.2, (-1, 1): 0.4, (1, -1): 0.6, (-1, -1): 0.8}


CSTC_BALANCED_PRIORS = {q: 0.5 for q in CSTC_PRIORS}  # the balanced form: the quadrant alone says nothing


def make_cstc_quadrants(n_samples: int = 2000, random_state: int | None = 0,
                        priors: dict[tuple[int, int], float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic task of Xu et al. (JMLR 2014), section 6.1, as a binary task.

    Points (x, z) uniform on [-1, 1]^2. Features, in this order (costs ``CSTC_COSTS``):
    ``z++, z+-, z-+, z--`` (cost 10 each): the label (as -1/+1) when the point lies in that
    quadrant (signs of x, z), a random -1/+1 otherwise; ``sign(x), sign(z)`` (cost 1 each): the
    quadrant. The paper's labels are Gaussian with quadrant-specific means; here the label is 0/1
    with a quadrant-specific prior (``priors``, default ``CSTC_PRIORS``; ``CSTC_BALANCED_PRIORS``: 1/2
    everywhere, where nothing but the quadrant's own feature tells the label and a tree started
    symmetrically has no reason to split on the quadrant). A perfect classifier reads the two cheap
    features and the one expensive feature of the quadrant: cost 12 per input.
    Returns (X float64 (n, 6), y int64 in {0, 1}).
    """
    if n_samples < 1:
        raise ValueError("n_samples must be >= 1")
    rng = np.random.default_rng(random_state)
    xz = rng.uniform(-1.0, 1.0, size=(n_samples, 2))
    sx = np.where(xz[:, 0] >= 0, 1.0, -1.0)
    sz = np.where(xz[:, 1] >= 0, 1.0, -1.0)
    table = CSTC_PRIORS if priors is None else priors
    prior = np.array([table[(int(a), int(b))] for a, b in zip(sx, sz, strict=True)])
    y = (rng.random(n_samples) < prior).astype(np.int64)
    X = np.where(rng.random((n_samples, 4)) < 0.5, -1.0, 1.0)
    for q, (qx, qz) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        inside = (sx == qx) & (sz == qz)
        X[inside, q] = 2.0 * y[inside] - 1.0
    return np.column_stack([X, sx, sz]), y
