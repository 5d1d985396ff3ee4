"""The weighted ridge solves of CSTC's leaves (the closed form (16) of Xu et al. 2014 with Lemma 1's per-column
penalties): argmin over beta, b of

    (1/n) sum_i w_i (z_i . beta + b - y_i)^2 + 1/2 sum_j Gam_j beta_j^2 + 1/2 eps b^2

with ``eps`` = :data:`INTERCEPT_EPS` (the intercept is all but unpenalised) and :data:`DIAG_EPS` added to every
``Gam_j``. Two forms of the same minimiser:

- the primal normal equations, a (p+1)-square system: cubic in the p columns;
- when fewer rows weigh than there are columns (a wide set, thousands of sparse columns on a few hundred
  rows), the dual: the intercept eliminated (its penalty is a pseudo-row of zeros with target 0 and weight
  ``eps n / 2``, so the weighted means below are exact), then with S = diag(2 w / n) over the m + 1 centred
  rows C and D = diag(Gam), beta = D^-1 C^T S^1/2 (S^1/2 C D^-1 C^T S^1/2 + I)^-1 S^1/2 y_c (the push-through
  identity): an (m+1)-square system, cubic in the rows and linear in the columns.

The two agree to rounding (tests/test_cstc_ridge.py); which one runs depends on the shape only. K targets on the
same columns (the K-class leaves): :func:`solve_k`, whose primal builds the weighted Gram matrix once for all K.
"""

from __future__ import annotations

import numpy as np

INTERCEPT_EPS = 1e-9 + 1e-10  # the intercept's penalty: a guard against a singular system, not a prior
DIAG_EPS = 1e-10  # added to every column's penalty for the same reason


def use_dual(n_rows_weighing: int, n_columns: int) -> bool:
    """The dual is the smaller system when fewer rows weigh than there are columns."""
    return n_rows_weighing < n_columns


def primal(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, float]:
    """The normal equations on the columns ``idx`` (``Gam`` over all columns): (beta over ``idx``, b)."""
    n = Z.shape[0]
    A = np.column_stack([Z[:, idx], np.ones(n)])
    H = (2.0 / n) * (A.T * w) @ A
    H[np.arange(idx.size), np.arange(idx.size)] += Gam[idx]
    H[-1, -1] += 1e-9
    rhs = (2.0 / n) * (A.T * w) @ ys
    sol = np.linalg.solve(H + DIAG_EPS * np.eye(idx.size + 1), rhs)
    return sol[:-1], float(sol[-1])


def dual(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, float]:
    """The same minimiser as :func:`primal` through the rows that weigh (w != 0): (beta over ``idx``, b)."""
    n = Z.shape[0]
    rows = np.flatnonzero(w != 0)
    Zr = Z[np.ix_(rows, idx)]
    yr = ys[rows]
    wr = np.append(w[rows], 0.5 * n * INTERCEPT_EPS)  # the intercept's penalty as a last pseudo-row
    s = float(wr.sum())
    mu_z = (wr[:-1] @ Zr) / s
    mu_y = float(wr[:-1] @ yr) / s
    C = np.vstack([Zr - mu_z, -mu_z])
    yc = np.append(yr - mu_y, -mu_y)
    sw = np.sqrt((2.0 / n) * wr)
    Cs = C * sw[:, None]
    dinv = 1.0 / (Gam[idx] + DIAG_EPS)
    M = (Cs * dinv) @ Cs.T
    M[np.diag_indices_from(M)] += 1.0
    alpha = np.linalg.solve(M, sw * yc)
    beta = dinv * (Cs.T @ alpha)
    return beta, mu_y - float(mu_z @ beta)


def solve(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`dual` when fewer rows weigh than ``idx`` has columns, else :func:`primal`."""
    if use_dual(int(np.count_nonzero(w)), idx.size):
        return dual(Z, ys, w, Gam, idx)
    return primal(Z, ys, w, Gam, idx)


def primal_k(Z: np.ndarray, Y: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`primal` for the K columns of ``Y`` with their own penalties ``Gam`` (K x all columns), the weighted
    Gram matrix built once: (coefficients K x ``idx``, intercepts K)."""
    n, K = Z.shape[0], Y.shape[1]
    A = np.column_stack([Z[:, idx], np.ones(n)])
    H0 = (2.0 / n) * (A.T * w) @ A
    H0[-1, -1] += 1e-9
    R = (2.0 / n) * (A.T * w) @ Y
    eye = DIAG_EPS * np.eye(idx.size + 1)
    coef, bias = np.zeros((K, idx.size)), np.zeros(K)
    for c in range(K):
        H = H0.copy()
        H[np.arange(idx.size), np.arange(idx.size)] += Gam[c, idx]
        sol = np.linalg.solve(H + eye, R[:, c])
        coef[c], bias[c] = sol[:-1], sol[-1]
    return coef, bias


def solve_k(Z: np.ndarray, Y: np.ndarray, w: np.ndarray, Gam: np.ndarray, idx: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """K targets: :func:`dual` for each when fewer rows weigh than ``idx`` has columns, else :func:`primal_k`."""
    if not use_dual(int(np.count_nonzero(w)), idx.size):
        return primal_k(Z, Y, w, Gam, idx)
    coef, bias = np.zeros((Y.shape[1], idx.size)), np.zeros(Y.shape[1])
    for c in range(Y.shape[1]):
        coef[c], bias[c] = dual(Z, Y[:, c], w, Gam[c], idx)
    return coef, bias
