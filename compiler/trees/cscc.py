"""CSCC, the cost-sensitive cascade of classifiers of Xu, Kusner, Weinberger, Chen and
Chapelle, "Classifier cascades and trees for minimizing feature evaluation cost", JMLR 2014
(section 4, with the non-linear extension of section 5).

The "boosting trick" (section 5): T limited-depth CART trees h_1..h_T are trained first by
stage-wise regression with the squared loss (gradient boosting, no cost penalty) and map an
input to phi(x) = [h_1(x), ..., h_T(x)]. A cascade of K stages is then a set of weight vectors
over these trees, stage k scoring s_k(x) = phi(x)' beta^k + b^k. An input leaves the cascade
at stage k < K - 1 iff s_k(x) < theta^k (early reject, the only exit) with the label of
s_k(x); the last stage answers for every remaining input.

Training minimises the paper's objective (19) after the boosting trick, with soft traversal
probabilities sigma_k(x) = 1 / (1 + exp(-a (s_k(x) - theta^k))) of going on past stage k
(the paper: a = 1; here ``exit_sharpness`` a = 16 by default, see the class):

    1/n sum_i sum_k w_{y_i} p_i^{exit k} (s_k(x_i) - y_i)^2            (exit-weighted loss)
  + rho sum_k |beta^k|_1                                                 (l1 on the stage weights)
  + lam sum_l p^l [ sum_t e_t sqrt(sum_{j<=l} (beta^j_t)^2)              (tree evaluation cost, 21)
                  + sum_a c_a sqrt(sum_{j<=l} sum_t (F_at beta^j_t)^2) ] (feature cost, 20)

with y in {-1, +1}, w the class weights (balanced by default), p_i^{exit k} the probability
that input i leaves through the terminal element after stage k, p^l its mean over the training
inputs, F_at = 1 iff tree t splits on feature a, c_a the feature costs divided by their sum
(so ``lam`` does not depend on the cost unit) and e_t the per-tree evaluation cost (same scale).

Optimisation as in section 3.4: block coordinate descent over the stages (one stage's
beta, b, theta at a time, the others fixed); the square roots and the l1 norm are handled with
Lemma 1 (sqrt(g) = min_z (g/z + z)/2): alternate between the auxiliary variables (closed form)
and the stage's parameters (L-BFGS on the then differentiable objective, where the paper uses
conjugate gradients); weights below CLAMP (1e-2; the paper's work-around uses 1e-4) are clamped
to zero and stay zero. The stages are initialised left to right, each as if it were the last (stage k is fitted
before stage k-1's exit threshold and weights are re-optimised against it: the other order let
stage k-1 send every input out while stage k was still unfitted, after which stage k saw no input,
its weights were clamped to zero for good and every input left at stage 0); a validation set
stops the outer iterations early (the paper's section 5.3): the iterate with the lowest
validation objective is kept. Added to the paper (docs/miser_cascade.md, component table): each pool
run keeps its prefix of lowest validation loss; the last stage is the first pool run's boosted model,
held fixed (``final_stage``), and the earlier stages' loss is taken against its answer
(``early_target``); the hard exit thresholds are lowered on the validation rows until the exits lose
(almost) nothing against the last stage (``_calibrate_exits``); without a given lambda one is chosen
on validation among a small grid (``lam_grid``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted

from compiler.blas_threads import one_blas_thread
from compiler.boosting.binning import MAX_BINS_LIMIT
from compiler.costs import FeatureCosts, cost_vector
from compiler.estimators import binary_only, check_eval_set, check_split_classes, check_X, encode_classes, fit_binary
from compiler.options import CASCADE_DEFAULTS
from compiler.params import check_flag, check_number, check_numbers
from compiler.trees.cascade import ExitingEnsemble, balanced_weights
from compiler.trees.cost_tree import CostTree, ensemble_to_ir, ir_leaves, ir_staged_scores, ir_tree_features
from compiler.trees.miser import make_booster, penalty_scale

CLAMP = 1e-2  # weights (and group norms) below this are set to zero (the paper: 1e-4)
F32_INF = np.float32(np.inf)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class CsccProblem:
    """The data of objective (19) after the boosting trick (float64)."""

    Phi: np.ndarray  # (n, T) tree outputs
    y: np.ndarray  # (n,) in {-1, +1}
    w: np.ndarray  # (n,) class weights
    F: np.ndarray  # (d, T) bool, tree t splits on feature a
    c: np.ndarray  # (d,) feature costs / their sum
    e: np.ndarray  # (T,) tree evaluation costs / summed feature cost
    lam: float
    rho: float

    @property
    def n_trees(self) -> int:
        return int(self.Phi.shape[1])


def _group_norms(B: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the stage weights B (K, T): cumulative per-tree norms sqrt(sum_{j<=l} beta_tj^2) (K, T)
    and per-feature norms sqrt(sum_{j<=l} sum_t F_at beta_tj^2) (K, d)."""
    cum = np.cumsum(B * B, axis=0)
    return np.sqrt(cum), np.sqrt(cum @ F.T.astype(np.float64))


class CsccObjective:
    """Objective (19) and its gradient, with Lemma 1's auxiliary variables held fixed.

    Parameters of stage k: beta^k (T), b^k, theta^k (theta of the last stage unused).
    ``eta_tree`` (K, T), ``eta_feat`` (K, d), ``gamma`` (K, T) are the auxiliary variables
    of the tree-cost, feature-cost and l1 square roots; their terms are (g / z + z) / 2.
    """

    def __init__(self, prob: CsccProblem, K: int, sharpness: float = 1.0) -> None:
        self.p = prob
        self.K = K
        self.a = float(sharpness)
        self.Fd = prob.F.astype(np.float64)

    def set_aux(self, B: np.ndarray) -> None:
        """Lemma 1's closed-form step: z = sqrt(g), clamped below at CLAMP."""
        nt, nf = _group_norms(B, self.p.F)
        self.eta_tree = np.maximum(nt, CLAMP)
        self.eta_feat = np.maximum(nf, CLAMP)
        self.gamma = np.maximum(np.abs(B), CLAMP)

    def stage_costs(self, B: np.ndarray) -> np.ndarray:
        """C_l (K,): majorised path cost of exit l."""
        cum = np.cumsum(B * B, axis=0)
        tree = ((cum / self.eta_tree + self.eta_tree) / 2) @ self.p.e
        g_feat = cum @ self.Fd.T
        feat = ((g_feat / self.eta_feat + self.eta_feat) / 2) @ self.p.c
        # a group whose weights are all zero costs nothing (its majoriser would add eta / 2)
        tree = tree - ((cum == 0) * self.eta_tree / 2) @ self.p.e
        feat = feat - ((g_feat == 0) * self.eta_feat / 2) @ self.p.c
        return tree + feat

    def forward(self, B: np.ndarray, b: np.ndarray, theta: np.ndarray, Phi: np.ndarray | None = None,
                y: np.ndarray | None = None, w: np.ndarray | None = None) -> dict[str, np.ndarray]:
        Phi = self.p.Phi if Phi is None else Phi
        y = self.p.y if y is None else y
        w = self.p.w if w is None else w
        n, K = Phi.shape[0], self.K
        S = Phi @ B.T + b[None, :]  # (n, K) stage scores
        sig = np.ones((n, K))
        sig[:, :-1] = _sigmoid(self.a * (S[:, :-1] - theta[None, :-1]))
        reach = np.ones((n, K))
        for k in range(1, K):
            reach[:, k] = reach[:, k - 1] * sig[:, k - 1]
        P = reach.copy()
        P[:, :-1] *= 1.0 - sig[:, :-1]
        ell = (S - (y[:, None] if y.ndim == 1 else y[:, :K])) ** 2  # labels, or a target per stage
        C = self.stage_costs(B)
        V = w[:, None] * ell + self.p.lam * C[None, :]
        return {"S": S, "sig": sig, "reach": reach, "P": P, "ell": ell, "C": C, "V": V}

    def value(self, B: np.ndarray, b: np.ndarray, theta: np.ndarray, **data: np.ndarray) -> float:
        f = self.forward(B, b, theta, **data)
        l1 = self.p.rho * float(np.sum((B * B / self.gamma + self.gamma) / 2 * (B != 0)))
        return float(np.mean(np.sum(f["P"] * f["V"], axis=1))) + l1

    def true_value(self, B: np.ndarray, b: np.ndarray, theta: np.ndarray, **data: np.ndarray) -> float:
        """The objective with the exact square roots (no majoriser)."""
        saved = (self.eta_tree, self.eta_feat, self.gamma) if hasattr(self, "gamma") else None
        self.set_aux(B)
        try:
            return self.value(B, b, theta, **data)
        finally:
            if saved is not None:
                self.eta_tree, self.eta_feat, self.gamma = saved

    def grad_stage(self, B: np.ndarray, b: np.ndarray, theta: np.ndarray,
                   k: int) -> tuple[float, np.ndarray, float, float]:
        """Value and gradient with respect to stage k's beta, b, theta."""
        f = self.forward(B, b, theta)
        n, K = f["S"].shape
        V, sig, reach, P = f["V"], f["sig"], f["reach"], f["P"]
        # E_j = expected value from stage j on, given the input reached stage j
        E = np.empty((n, K))
        E[:, -1] = V[:, -1]
        for j in range(K - 2, -1, -1):
            E[:, j] = (1.0 - sig[:, j]) * V[:, j] + sig[:, j] * E[:, j + 1]
        yk = self.p.y if self.p.y.ndim == 1 else self.p.y[:, k]
        dS = P[:, k] * self.p.w * 2.0 * (f["S"][:, k] - yk) / n
        dtheta = 0.0
        if k < K - 1:
            dg = self.a * reach[:, k] * sig[:, k] * (1.0 - sig[:, k]) * (E[:, k + 1] - V[:, k]) / n
            dS = dS + dg
            dtheta = -float(dg.sum())
        g_beta = self.p.Phi.T @ dS
        g_b = float(dS.sum())
        # cost terms: d/d beta_tk of lam * sum_{l>=k} p^l C_l, with the majoriser (g/z + z)/2
        pl = P.mean(axis=0)
        wl = self.p.lam * pl[k:]  # (K-k,)
        tree_w = (wl[:, None] / self.eta_tree[k:]).sum(axis=0) * self.p.e  # (T,)
        feat_w = (wl[:, None] / self.eta_feat[k:]).sum(axis=0) * self.p.c  # (d,)
        bk = B[k]
        g_beta = g_beta + bk * (tree_w + feat_w @ self.Fd) + self.p.rho * bk / self.gamma[k]
        val = float(np.mean(np.sum(P * V, axis=1)))
        val += self.p.rho * float(np.sum((B * B / self.gamma + self.gamma) / 2 * (B != 0)))
        return val, g_beta, g_b, dtheta


def optimise_stage(obj: CsccObjective, B: np.ndarray, b: np.ndarray, theta: np.ndarray, k: int,
                   active: np.ndarray, n_aux: int = 12, max_iter: int = 25, tol: float = 1e-5,
                   fine_tune: bool = False) -> None:
    """Block step of section 3.4 for stage k (in place): alternate Lemma 1's auxiliary variables
    and L-BFGS over the stage's active weights, bias and threshold; clamp small weights to zero."""
    K = obj.K
    last = np.inf
    for _ in range(n_aux):
        obj.set_aux(B)
        idx = np.flatnonzero(active[k])
        with_theta = k < K - 1 and not fine_tune

        def fun(x: np.ndarray, idx: np.ndarray = idx, with_theta: bool = with_theta) -> tuple[float, np.ndarray]:
            B[k, :] = 0.0
            B[k, idx] = x[: idx.size]
            b[k] = x[idx.size]
            if with_theta:
                theta[k] = x[idx.size + 1]
            val, gb, gbias, gth = obj.grad_stage(B, b, theta, k)
            g = np.concatenate([gb[idx], [gbias], [gth] if with_theta else []])
            return val, g

        x0 = np.concatenate([B[k, idx], [b[k]], [theta[k]] if with_theta else []])
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
        fun(res.x)
        if fine_tune:
            return
        small = active[k] & (np.abs(B[k]) < CLAMP)
        B[k, small] = 0.0
        active[k] &= ~small
        if last - res.fun < tol * max(1.0, abs(res.fun)) and not small.any():
            break
        last = float(res.fun)


def pool_trees(X: np.ndarray, y_idx: np.ndarray, n_trees: int, max_depth: int, step: float, max_bins: int,
               costs: np.ndarray, pool_lambdas: tuple[float, ...] = (0.0,), X_val: np.ndarray | None = None,
               y_val: np.ndarray | None = None) -> tuple[list[CostTree], np.ndarray, list[int]]:
    """Section 5's boosting trick: T squared-loss regression trees of stage-wise regression per
    entry of ``pool_lambdas`` (0: plain gradient boosting, the paper's; > 0: Greedy Miser trees
    with that cost penalty, which only split on cheap features). With validation rows, each run
    keeps the prefix with the lowest validation loss (as miser does): the stage weights are fitted on
    the training rows, where later trees only fit noise, and over-weighted them (KEEL pima)."""
    trees: list[CostTree] = []
    sizes: list[int] = []
    base = None
    for lam in pool_lambdas:
        booster = make_booster(X, y_idx, np.ones(len(y_idx)), 2, "squared", costs, step, max_depth, max_bins,
                               X_val=X_val)
        pen = float(lam) * penalty_scale(costs)
        losses = []
        for _ in range(int(n_trees)):
            booster.iterate(pen)
            if X_val is not None and y_val is not None:
                losses.append(float(np.mean((booster.F_val[:, 0].astype(np.float64) - (2.0 * y_val - 1.0)) ** 2)))
        keep = int(np.argmin(losses)) + 1 if losses else int(n_trees)
        trees += booster.trees[:keep]
        sizes.append(keep)
        base = booster.base_score if base is None else base
    assert base is not None
    return trees, base, sizes


class CsccCascadeClassifier(ExitingEnsemble):
    """CSCC (xu2014 sections 4-5): K stages of weights over pre-trained trees, early-reject exits.

    Parameters
    ----------
    n_stages: K, the number of classifier nodes (the last one answers for every remaining input).
    n_trees: T, the trees of the boosting trick (stage-wise regression, squared loss).
    lam: the accuracy/cost trade-off lambda (costs divided by the relaxed cost of the pool); None: one
        model per ``lam_grid`` value, the one of lowest validation cost kept (``lambda_chosen_``,
        ``lambda_curve_``). Every candidate's exits are calibrated against the same last stage (below),
        so the choice is among models of the same validation accuracy budget (as miser --sweep keeps the
        cheapest within a tolerance of lambda = 0).
    lam_grid: the candidates when ``lam`` is None (default 0.1, 1, 10).
    rho: the l1 regularisation of the stage weights.
    costs: per-feature costs (FeatureCosts, array or None = 1 each).
    tree_eval_cost: e_t, the evaluation cost of one tree (same unit as the costs).
    class_weight: "balanced" (w_y = n / (2 n_y)) or None.
    n_rounds: sweeps of block coordinate descent over all stages after the initialisation.
    pool_lambdas: one boosting run of ``n_trees`` trees per value (0: plain gradient boosting, the
        paper's; > 0: Greedy Miser trees that split on cheap features).
    exit_sharpness: a, the soft traversal probability is sigma(a (s_k - theta_k)); the paper's is
        a = 1. Stage scores fit labels +-1, so with a = 1 the sigmoid spans at most about
        sigma(+-1.5): every input is "half exited" at every stage, the soft objective cannot tell a
        cascade from one stage and training ends with every input leaving at stage 0 (or none).
        a = 16 makes the soft exits close to the hard ones the runtime takes.
    calibrate_exits: lower each exit threshold on the validation rows until the exits lose (almost)
        nothing against the last stage (see ``_calibrate_exits``); the paper uses the validation set only
        to stop the iterations early. If the calibrated exits do not make the cascade cheaper than the
        last stage alone on validation, the model is the last stage alone (one block, no exits).
    final_stage: "boosted" (default): the last stage is the first pool run's boosted model (weight 1 on
        its trees: Greedy Miser lambda = 0 when the first pool lambda is 0), held fixed while the earlier
        stages and thresholds are optimised on objective (19); "learned": the paper's, the last stage's
        weights optimised like the others (on KEEL it answered worse than the boosted sum it started from:
        its weights over 300 trees fitted on the rows the trees were grown on overfit).
    early_target: "last" (default, with final_stage "boosted"): the squared loss of the stages before the
        last is taken against the last stage's answer on the training rows (+-1), not the label; "labels":
        the paper's. An early exit is only kept where it answers as the last stage does (calibration), so
        the early stages are fitted to that: on KEEL (seeds 0-2) the cascades then passed more exits at
        the same accuracy (pima mean cost 0.64-0.72 of lambda = 0's against 0.81-0.99; the done-when met
        on 14 of 18 set/seed pairs of the sets with 113-440 validation rows against 11).
    exit_tolerance, exit_z, exit_credit, exit_noise, exit_backoff: the calibration rule (see
        ``_calibrate_exits``): validation rows the exits may lose against the last stage, as a share of
        the validation rows (0.005); weight of the noise margin z sqrt(D) (1); whether rows an exit answers
        rightly where the last stage is wrong offset losses (False); D counts "disagreements" (default) or
        only "losses"; share of the allowed exit rows kept, the safest (lowest scores) first (0.6).
    exit_min_validation: no exit is kept when calibrating on fewer validation rows than this (100); the
        model is then the last stage alone (``_calibrate_exits``).
    validation_fraction: share of the rows held out for early stopping when fit gets no eval_set.
    """

    def __init__(
        self,
        n_stages: int = CASCADE_DEFAULTS["stages"],
        n_trees: int = CASCADE_DEFAULTS["trees"],
        lam: float | None = None,
        lam_grid: tuple[float, ...] = (0.1, 1.0, 10.0),
        rho: float = CASCADE_DEFAULTS["rho"],
        max_depth: int = CASCADE_DEFAULTS["depth"],
        step: float = CASCADE_DEFAULTS["step"],
        costs: FeatureCosts | np.ndarray | None = None,
        tree_eval_cost: float = 0.0,
        class_weight: str | None = "balanced",
        n_rounds: int = 3,
        pool_lambdas: tuple[float, ...] = (0.0,),
        exit_sharpness: float = 16.0,
        calibrate_exits: bool = True,
        final_stage: str = "boosted",
        exit_tolerance: float = 0.005,
        exit_z: float = 1.0,
        exit_credit: bool = False,
        exit_backoff: float = 0.6,
        exit_noise: str = "disagreements",
        early_target: str = "last",
        exit_min_validation: int = 100,
        validation_fraction: float = 0.25,
        max_bins: int = 64,
        random_state: int | None = 0,
    ) -> None:
        self.n_stages = n_stages
        self.n_trees = n_trees
        self.lam = lam
        self.lam_grid = lam_grid
        self.rho = rho
        self.max_depth = max_depth
        self.step = step
        self.costs = costs
        self.tree_eval_cost = tree_eval_cost
        self.class_weight = class_weight
        self.n_rounds = n_rounds
        self.pool_lambdas = pool_lambdas
        self.exit_sharpness = exit_sharpness
        self.calibrate_exits = calibrate_exits
        self.final_stage = final_stage
        self.exit_tolerance = exit_tolerance
        self.exit_z = exit_z
        self.exit_credit = exit_credit
        self.exit_backoff = exit_backoff
        self.exit_noise = exit_noise
        self.early_target = early_target
        self.exit_min_validation = exit_min_validation
        self.validation_fraction = validation_fraction
        self.max_bins = max_bins
        self.random_state = random_state

    def _check_params(self) -> None:
        check_number("n_stages", self.n_stages, low=1, integer=True)
        check_number("n_trees", self.n_trees, low=1, integer=True)
        check_number("max_depth", self.max_depth, low=1, integer=True)
        check_number("max_bins", self.max_bins, low=2, high=MAX_BINS_LIMIT, integer=True)
        if self.lam is None:
            check_numbers("lam_grid", self.lam_grid)
            for lam in self.lam_grid:
                check_number("every lam_grid value", lam, low=0)
        else:
            check_number("lam", self.lam, low=0)
        check_numbers("pool_lambdas", self.pool_lambdas)
        for lam in self.pool_lambdas:
            check_number("every pool_lambdas value", lam, low=0)
        check_number("rho", self.rho, low=0)
        check_number("step", self.step, low=0, high=1, low_open=True)
        if self.class_weight not in (None, "balanced"):
            raise ValueError("class_weight must be None or 'balanced'")
        check_number("n_rounds", self.n_rounds, low=0, integer=True)
        check_number("tree_eval_cost", self.tree_eval_cost, low=0)
        check_number("exit_sharpness", self.exit_sharpness, low=0, low_open=True)
        if self.exit_noise not in ("disagreements", "losses"):
            raise ValueError("exit_noise must be 'disagreements' or 'losses'")
        check_number("exit_backoff", self.exit_backoff, low=0, high=1, low_open=True)
        if self.early_target not in ("labels", "last"):
            raise ValueError("early_target must be 'labels' or 'last'")
        if self.final_stage not in ("boosted", "learned"):
            raise ValueError("final_stage must be 'boosted' or 'learned'")
        check_number("exit_tolerance", self.exit_tolerance, low=0)
        check_number("exit_z", self.exit_z, low=0)
        check_number("exit_min_validation", self.exit_min_validation, low=0, integer=True)
        check_number("validation_fraction", self.validation_fraction, low=0, high=1, low_open=True, high_open=True)
        check_flag("calibrate_exits", self.calibrate_exits)
        check_flag("exit_credit", self.exit_credit)

    def __sklearn_tags__(self) -> Any:
        return binary_only(super().__sklearn_tags__())

    @one_blas_thread  # L-BFGS-B's small dense steps ran 7x slower with a multi-threaded BLAS
    def fit(self, X: np.ndarray, y: np.ndarray,
            eval_set: tuple[np.ndarray, np.ndarray] | None = None) -> CsccCascadeClassifier:
        self._check_params()
        X32, y_idx = fit_binary(self, X, y, dtype=np.float32)  # CSCC is a binary cascade (early reject)
        d = X32.shape[1]
        if eval_set is not None:
            Xtr, ytr = X32, y_idx
            Xva, yva = check_eval_set(eval_set)
            Xva = check_X(self, Xva, "classes_", dtype=np.float32)
            yva = encode_classes(self, yva, "validation data")
        else:
            check_split_classes(y_idx, "eval_set=(X_val, y_val) avoids that split", float(self.validation_fraction))
            tr, va = train_test_split(np.arange(len(y_idx)), test_size=float(self.validation_fraction),
                                      random_state=self.random_state, stratify=y_idx)
            Xtr, ytr, Xva, yva = X32[tr], y_idx[tr], X32[va], y_idx[va]
        self.costs_ = cost_vector(self.costs, d)
        trees, base, sizes = pool_trees(Xtr, ytr, int(self.n_trees), int(self.max_depth), float(self.step),
                                        int(self.max_bins), self.costs_,
                                        tuple(float(v) for v in self.pool_lambdas), Xva, yva)
        self.pool_ = trees
        T = len(trees)
        pool_ir = ensemble_to_ir(trees, [0] * T, np.zeros(1), d, self.costs_, 0.0)
        F = np.zeros((d, T), dtype=bool)
        for t, tree in enumerate(trees):
            F[tree.features_used(), t] = True
        self.tree_features_ = F

        def phi(Xs: np.ndarray) -> np.ndarray:
            return pool_ir["value"][ir_leaves(pool_ir, Xs)].astype(np.float64)

        # cost unit: the relaxed cost of the whole pool with unit weights (lam = 1 charges a model
        # reading everything as much as a mean squared loss of 1)
        total = float(self.costs_ @ np.sqrt(F.sum(axis=1))) or 1.0
        Phi_tr, Phi_va = phi(Xtr), phi(Xva)
        full = Phi_va[:, : sizes[0]].sum(axis=1) + float(base[0])  # the first pool entry's boosted model
        self.full_validation_accuracy_ = float(np.mean((full > 0).astype(np.int64) == yva))
        wtr = balanced_weights(ytr, 2) if self.class_weight == "balanced" else np.ones(len(ytr))
        wva = balanced_weights(yva, 2) if self.class_weight == "balanced" else np.ones(len(yva))
        # the last stage: the first pool entry's boosted model (weight 1 on its trees, its base score), held
        # fixed ("boosted"), or a weight vector optimised like the others (the paper's, "learned")
        final_w = np.zeros(T)
        final_w[: sizes[0]] = 1.0
        K = int(self.n_stages)

        def targets(Phi: np.ndarray, y01: np.ndarray) -> np.ndarray:
            y_pm = 2.0 * y01 - 1.0
            if self.early_target == "labels" or self.final_stage != "boosted":
                return y_pm
            Y = np.tile(np.where(Phi @ final_w + float(base[0]) > 0, 1.0, -1.0)[:, None], (1, K))
            Y[:, K - 1] = y_pm
            return Y

        base_prob = CsccProblem(Phi=Phi_tr, y=targets(Phi_tr, ytr), w=wtr, F=F, c=self.costs_ / total,
                                e=np.full(T, float(self.tree_eval_cost) / total), lam=0.0, rho=float(self.rho))
        va_data = {"Phi": Phi_va, "y": targets(Phi_va, yva), "w": wva}
        self.final_weights_ = final_w
        per_tree = ir_tree_features(pool_ir, Xva)
        read = np.zeros(Xva.shape, dtype=bool)
        for t in range(sizes[0]):
            read |= per_tree[t]
        self.final_validation_cost_ = float(np.mean(read @ self.costs_))
        grid = [float(self.lam)] if self.lam is not None else sorted(float(v) for v in self.lam_grid)
        fits = []
        for lam in grid:
            prob = CsccProblem(base_prob.Phi, base_prob.y, base_prob.w, F, base_prob.c, base_prob.e, lam,
                               base_prob.rho)
            self._solve(prob, base, sizes, trees, final_w, va_data, Xva, yva)
            fits.append({"lam": lam, "validation_cost": self.mean_cost(Xva),
                         "validation_accuracy": float(np.mean(self.predict(Xva) == self.classes_[yva])),
                         "state": {k: getattr(self, k) for k in self._SOLVED}})
        # the cheapest on validation (every candidate's exits were calibrated against the same last stage);
        # ties: the smaller lambda
        chosen = min(fits, key=lambda f: (f["validation_cost"], f["lam"]))
        for k, v in chosen["state"].items():
            setattr(self, k, v)
        self.lambda_chosen_ = chosen["lam"]
        self.lambda_curve_ = [{k: f[k] for k in ("lam", "validation_cost", "validation_accuracy")} for f in fits]
        return self

    _SOLVED = ("coef_", "intercept_", "theta_", "validation_objective_", "ir_", "stage_end_", "upper_", "lower_")

    def _solve(self, prob: CsccProblem, base: np.ndarray, sizes: list[int], trees: list[CostTree],
               final_w: np.ndarray, va_data: dict[str, np.ndarray], Xva: np.ndarray, yva: np.ndarray) -> None:
        """Objective (19) for one lambda: initialisation, block coordinate descent, fine-tuning, the
        tables, exit calibration. Sets the attributes named in _SOLVED."""
        A = float(self.exit_sharpness)
        K = int(self.n_stages)
        T = prob.n_trees
        n_pools = max(len(tuple(self.pool_lambdas)), 1)
        B = np.zeros((K, T))
        b = np.full(K, float(base[0]))
        theta = np.full(K, -np.inf)
        active = np.ones((K, T), dtype=bool)
        history: list[float] = []
        best: tuple[float, np.ndarray, np.ndarray, np.ndarray] | None = None

        def keep() -> None:
            nonlocal best
            obj = CsccObjective(prob, K, A)
            v = obj.true_value(B, b, theta, **va_data)
            history.append(v)
            if best is None or v < best[0]:
                best = (v, B.copy(), b.copy(), theta.copy())

        fixed = self.final_stage == "boosted"
        # left-to-right initialisation: stage k optimised as if it were the last node
        for k in range(K):
            obj = CsccObjective(prob, k + 1, A)
            last_fixed = fixed and k == K - 1
            # start from the mean of the pools' boosted models (the score scale of one)
            B[k] = final_w if last_fixed else 1.0 / n_pools
            if k > 0:  # stage k-1 becomes an exit: start its threshold at the lowest quarter of its scores
                s_prev = prob.Phi @ B[k - 1] + b[k - 1]
                theta[k - 1] = float(np.quantile(s_prev, 0.25))
            # stage k first (as the last node), then stage k-1's weights and exit threshold against it
            if not last_fixed:
                optimise_stage(obj, B[: k + 1], b[: k + 1], theta[: k + 1], k, active[: k + 1])
            if k > 0:
                optimise_stage(obj, B[: k + 1], b[: k + 1], theta[: k + 1], k - 1, active[: k + 1])
        keep()
        obj = CsccObjective(prob, K, A)
        free = [k for k in range(K) if not (fixed and k == K - 1)]
        for _ in range(int(self.n_rounds)):
            for k in free:
                optimise_stage(obj, B, b, theta, k, active)
            keep()
        assert best is not None
        _, B, b, theta = best
        # fine-tuning (section 3.5): re-fit the loss of every stage on the trees it kept (zero weights
        # stay zero, thresholds fixed), without the cost and l1 terms that shrank the weights; each stage's
        # loss weighted by the paper's soft exits (a = 1): with the sharp ones every stage re-fit only its
        # own training exits and lost 1-3 points on held-out rows (KEEL pima, wdbc)
        tune = CsccObjective(CsccProblem(prob.Phi, prob.y, prob.w, prob.F, prob.c, prob.e, 0.0, 0.0), K, 1.0)
        for k in free:
            optimise_stage(tune, B, b, theta, k, B != 0, n_aux=1, max_iter=100, fine_tune=True)
        self.validation_objective_ = np.asarray(history)
        self.coef_, self.intercept_, self.theta_ = B, b, theta
        self._build_ir(trees, base)
        if self.calibrate_exits:
            self._calibrate_exits(Xva, yva)
        if fixed and K > 1 and not self.mean_cost(Xva) < self.final_validation_cost_:
            # the exits do not pay for what the early stages read: the boosted model alone
            self.coef_ = np.tile(B[K - 1], (K, 1))
            self.intercept_ = np.full(K, b[K - 1])
            self.theta_ = np.full(K, -np.inf)
            self._build_ir(trees, base)

    def _calibrate_exits(self, Xva: np.ndarray, yva: np.ndarray) -> None:
        """Lower each early-reject threshold (never raise it) on the validation rows so that the exits,
        taken together, lose (almost) nothing against the last stage: from the first exit on, each keeps
        the largest share of its learned exits (lowest scores first) for which, over every validation row
        exited so far,

            L + z sqrt(D) <= tolerance * n_validation,

        L = rows an exit answers wrongly and the last stage rightly (minus the reverse with
        ``exit_credit``); D = rows where they disagree (``exit_noise="disagreements"``; the noise of L:
        with D disagreements the count moves by about sqrt(D) between samples) or only L ("losses").
        ``exit_tolerance`` (0.005: half a point) and ``exit_z`` (1) set the margin, which scales with the
        validation size; with a hundred validation rows an exit keeps only rows where it agrees with the
        last stage, with thousands it may trade a few disagreements. Of the allowed rows only the
        ``exit_backoff`` share (0.6) with the lowest scores is kept when the rule cut the learned exits:
        the disagreements crowd near the threshold, and a threshold placed at the first validation
        disagreement lost 1-2 test rows on sets of 113-154 validation rows. With fewer than
        ``exit_min_validation`` (100) validation rows no exit is kept: an exit region with no validation
        disagreement still disagrees on about one test row on average ((D + 1) / (m + 2) of its m rows),
        more than a point below 100 rows (KEEL heart, 54 validation rows: 10 validated exits, 6 test
        losses, -11 points).

        Why: the stage weights and thresholds are fitted on the rows the pool trees were grown on; with
        sharp exits the training rows are routed perfectly (every early exit right) while on held-out rows
        the exits cost accuracy (KEEL pima: 2-4 points). An earlier rule (keep the largest prefix whose
        exits are no less accurate than the later stages) overfit the validation rows: the largest prefix
        of a random walk that ends at or below zero lies far out (KEEL pima seed 1: -6.5 points on test)."""
        K = len(self.stage_end_)
        n = len(yva)
        if K < 2 or n == 0:
            return
        if n < int(self.exit_min_validation):
            self.lower_[: K - 1] = -F32_INF  # too few rows to check an exit on: no exit
            return
        S = ir_staged_scores(self.ir_, Xva, [int(e) for e in self.stage_end_])[:, :, 0]  # (K, n) float32
        truth = yva == 1
        final_ok = (S[K - 1] > 0) == truth
        budget = float(self.exit_tolerance) * n
        z = float(self.exit_z)
        exited = np.zeros(n, dtype=bool)
        net, dis = 0, 0
        for k in range(K - 1):
            idx = np.flatnonzero(~exited & (S[k] < self.lower_[k]))
            if idx.size == 0:
                continue
            order = idx[np.argsort(S[k, idx], kind="stable")]
            key = S[k, order]
            early_ok = (key > 0) == truth[order]
            lost = final_ok[order] & ~early_ok
            gained = early_ok & ~final_ok[order]
            step = lost.astype(np.int64) - (gained.astype(np.int64) if self.exit_credit else 0)
            cum_net = net + np.cumsum(step)
            noisy = (early_ok != final_ok[order]) if self.exit_noise == "disagreements" else lost
            cum_dis = dis + np.cumsum(noisy)
            cut_ok = np.ones(order.size, dtype=bool)
            cut_ok[:-1] = key[:-1] != key[1:]
            ok = np.flatnonzero((cum_net + z * np.sqrt(cum_dis) <= budget + 1e-9) & cut_ok)
            m = int(ok[-1]) + 1 if ok.size else 0
            if 0 < m < order.size and float(self.exit_backoff) < 1.0:
                # keep the safest share of the allowed exits: disagreements crowd near the threshold
                m = int(np.floor(m * float(self.exit_backoff)))
                while m > 0 and not cut_ok[m - 1]:
                    m -= 1
            if m < order.size:
                self.lower_[k] = key[m] if m > 0 else -F32_INF  # exit iff score < key[m]
            if m > 0:
                exited[order[:m]] = True
                net, dis = int(cum_net[m - 1]), int(cum_dis[m - 1])

    def _build_ir(self, trees: list[CostTree], base: np.ndarray) -> None:
        """Stage k's block holds the trees whose weight changed from stage k-1, with leaves scaled by
        the change, so the running score after stage k is phi(x)' beta^k + b^k (float32 sums)."""
        K = self.coef_.shape[0]
        out: list[CostTree] = []
        ends = []
        prev_w = np.zeros(self.coef_.shape[1])
        prev_b = 0.0
        for k in range(K):
            delta = self.coef_[k] - prev_w
            db = float(self.intercept_[k] - prev_b) if k > 0 else 0.0
            first = True
            for t in np.flatnonzero(delta != 0):
                tr = trees[t]
                leaf = tr.feature < 0
                v = np.where(leaf, np.float32(delta[t]) * tr.value.astype(np.float32), 0.0).astype(np.float32)
                if first and db != 0.0:
                    v = np.where(leaf, v + np.float32(db), 0.0).astype(np.float32)
                    first = False
                out.append(CostTree(tr.feature.copy(), tr.threshold.copy(), tr.left.copy(), tr.right.copy(),
                                    v.astype(np.float64)))
            if first and db != 0.0:  # no tree changed: a one-leaf tree carries the bias change
                out.append(CostTree(np.array([-1], np.int32), np.zeros(1, np.float32), np.array([-1], np.int32),
                                    np.array([-1], np.int32), np.array([float(np.float32(db))])))
            ends.append(len(out))
            prev_w, prev_b = self.coef_[k], float(self.intercept_[k])
        self.loss_ = "squared"  # the stages' scores regress the -1 / +1 targets (section 5's boosting trick)
        self.ir_ = ensemble_to_ir(out, [0] * len(out), np.array([self.intercept_[0]]), self.n_features_in_,
                                  self.costs_, 0.0)
        self.stage_end_ = np.asarray(ends, dtype=np.int64)
        self.upper_ = np.full(K, F32_INF, dtype=np.float32)
        self.lower_ = np.full(K, -F32_INF, dtype=np.float32)
        for k in range(K - 1):
            if np.isfinite(self.theta_[k]):
                self.lower_[k] = np.float32(self.theta_[k])

    @property
    def stage_features_(self) -> list[np.ndarray]:
        """Features read by the time stage k has been evaluated (cumulative), per stage."""
        check_is_fitted(self, "coef_")
        used = np.cumsum(self.coef_ != 0, axis=0) > 0
        return [np.flatnonzero(self.tree_features_[:, u].any(axis=1)) for u in used]
