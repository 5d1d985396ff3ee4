"""Cost-Sensitive Tree of Classifiers (CSTC): Xu, Kusner, Weinberger, Chen and Chapelle,
"Classifier Cascades and Trees for Minimizing Feature Evaluation Cost", JMLR 15 (2014), section 3
(and section 5 for the boosting trick).

A full binary tree of ``depth`` levels of linear classifiers over phi(x). Node k scores
``s_k = phi(x) . beta_k + b_k``; an internal node sends x to its upper child when
``s_k > theta_k``, else to its lower child; a leaf predicts ``s_k > 0`` (labels are regressed as
-1/+1 with the squared loss, as in the paper).

Training (section 3.2-3.6):

- soft traversal: p(upper | x, k) = sigmoid(routing_scale * (s_k - theta_k)), p(root) = 1;
- objective (12): sum_k (1/n) sum_i p_ik (s_ik - y_i)^2 + rho |beta_k|_1
  + lambda sum_leaves l p_l sum_groups g c_g sqrt(sum_{j on path l} sum_{t in g} beta_jt^2),
  with p_l the mean probability of exiting at leaf l. For raw features a group is one feature;
  with phi = "trees" (the boosting trick, section 5) a feature's group holds every tree that splits on
  it and every tree is also its own group of cost ``tree_eval_cost`` (equations 20-22);
- block coordinate descent over nodes in level order (Algorithm 1); the square roots and the l1
  norm are made differentiable with the auxiliary variables of Lemma 1 (eta, gamma), alternating
  with the node's parameters: closed form (16) for leaves, a quasi-Newton (L-BFGS) minimization for
  internal nodes (the paper uses conjugate gradient). Weights below ``zero_tol`` are clamped to 0;
- initialization top-down, every node fitted as if it were a leaf (3.4.2), its threshold at the
  weighted median of its scores (50% of its inputs to each side, as in 3.6.2);
- then the hard tree: thresholds theta as learned, leaves fine-tuned on the training inputs that
  reach them with their feature support frozen and no cost term (3.5), bottom-up pruning of
  splits that do not raise validation accuracy (3.6.1).

Costs are divided by their sum over all features, so ``lam`` does not depend on the unit of
the costs; the scale is that of the mean squared loss per unit of the reached share of inputs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from compiler.blas_threads import one_blas_thread
from compiler.boosting.booster import make_booster
from compiler.boosting.tree import CostTree
from compiler.costs import cost_vector
from compiler.cstc import ridge
from compiler.cstc.groups import GroupMap
from compiler.estimators import binary_only, check_eval_set, check_X, encode_classes, fit_classes
from compiler.params import check_flag, check_number

CLAMP_FLOOR = 1e-4  # Lemma 1's practical work-around: auxiliary variables are kept above this
# what one start fits (fit keeps the best start's)
_START_STATE = ("beta_", "bias_", "theta_", "upper_", "lower_", "leaf_threshold_", "objective_path_")
_START_STATE_K = (*_START_STATE, "leaf_coef_", "leaf_bias_")  # K >= 3: the leaves' K class scorers


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class _Tree:
    """A full binary tree in heap order: node k has upper child 2k+1 and lower child 2k+2."""

    depth: int

    @property
    def n_nodes(self) -> int:
        return 2**self.depth - 1

    def is_leaf(self, k: int) -> bool:
        return 2 * k + 1 >= self.n_nodes

    def children(self, k: int) -> tuple[int, int]:
        return 2 * k + 1, 2 * k + 2

    def path(self, k: int) -> list[int]:
        out = [k]
        while k > 0:
            k = (k - 1) // 2
            out.append(k)
        return out[::-1]

    def subtree(self, k: int) -> list[int]:
        out, stack = [], [k]
        while stack:
            j = stack.pop()
            out.append(j)
            if not self.is_leaf(j):
                stack.extend(self.children(j))
        return sorted(out)

    def leaves(self) -> list[int]:
        return [k for k in range(self.n_nodes) if self.is_leaf(k)]


@dataclass
class PhiTrees:
    """The boosting trick's map phi (section 5): squared-loss regression trees on +-1 targets, learning
    rate 0.1 folded into the leaves, grown by the histogram booster (compiler.boosting); column t of
    phi(x) is tree t's leaf value."""

    trees: list[CostTree]

    @classmethod
    def fit(cls, X: np.ndarray, ys: np.ndarray, n_trees: int, depth: int, seed: int | None) -> PhiTrees:
        X32 = np.asarray(X, dtype=np.float32)
        b = make_booster(X32, (ys > 0).astype(np.int64), np.ones(len(ys)), 2, "squared", np.ones(X32.shape[1]),
                         0.1, depth, min_samples_leaf=1, min_child_weight=0.0, seed=seed)
        for _ in range(n_trees):
            b.iterate(0.0)
        return cls(b.trees)

    def transform(self, X: np.ndarray) -> np.ndarray:
        X32 = np.asarray(X, dtype=np.float32)
        return np.column_stack([t.value[t.apply(X32)] for t in self.trees]).astype(np.float64)


class CSTCClassifier(ClassifierMixin, BaseEstimator):
    """Cost-Sensitive Tree of Classifiers for binary labels (see the module docstring).

    Parameters: ``depth`` levels of classifier nodes (2**depth - 1 nodes before pruning);
    ``lam`` the accuracy/cost trade-off; ``rho`` the l1 weight; ``phi`` "raw" or "trees" (the
    boosting trick: ``phi_trees`` squared-loss regression trees of depth ``phi_depth``, PhiTrees);
    ``costs`` per raw feature (None: 1 each); ``tree_eval_cost`` the cost e_t of evaluating one
    tree of phi; ``routing_scale`` the slope of the traversal sigmoids; ``max_iter`` sweeps of block
    coordinate descent; ``inner_iter`` Lemma-1 alternations per node; ``fine_tune`` and ``prune``
    switch sections 3.5 and 3.6.1 on or off; ``zero_tol`` the clamp of small weights.
    """

    def __init__(self, depth: int = 3, lam: float = 1.5, rho: float = 1e-3, phi: str = "raw",
                 phi_trees: int = 30, phi_depth: int = 2, costs: Any = None, tree_eval_cost: float = 0.0,
                 routing_scale: float = 4.0, max_iter: int = 10, inner_iter: int = 8, fine_tune: bool = True,
                 prune: bool = True, zero_tol: float = 0.05, tol: float = 1e-4, internal_loss: float = 0.1,
                 random_state: int | None = None, n_starts: int = 4) -> None:
        self.depth = depth
        self.lam = lam
        self.rho = rho
        self.phi = phi
        self.phi_trees = phi_trees
        self.phi_depth = phi_depth
        self.costs = costs
        self.tree_eval_cost = tree_eval_cost
        self.routing_scale = routing_scale
        self.max_iter = max_iter
        self.inner_iter = inner_iter
        self.fine_tune = fine_tune
        self.prune = prune
        self.zero_tol = zero_tol
        self.tol = tol
        self.internal_loss = internal_loss
        self.random_state = random_state
        self.n_starts = n_starts

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        return binary_only(tags) if self.phi == "trees" else tags  # the boosting trick's phi is binary only

    # ------------------------------------------------------------------ phi ----
    def _check_params(self, n_features: int) -> None:
        check_number("depth", self.depth, low=1, high=10, integer=True)
        for name in ("lam", "rho", "tree_eval_cost"):
            check_number(name, getattr(self, name), low=0)
        check_number("routing_scale", self.routing_scale, low=0, low_open=True)
        if self.phi not in ("raw", "trees"):
            raise ValueError("phi must be 'raw' or 'trees'")
        check_number("phi_trees", self.phi_trees, low=1, integer=True)
        check_number("phi_depth", self.phi_depth, low=1, integer=True)
        check_number("max_iter", self.max_iter, low=0, integer=True)
        check_number("inner_iter", self.inner_iter, low=1, integer=True)
        check_number("n_starts", self.n_starts, low=1, integer=True)
        for name in ("tol", "zero_tol", "internal_loss"):
            check_number(name, getattr(self, name), low=0)
        check_flag("fine_tune", self.fine_tune)
        check_flag("prune", self.prune)
        check_number("random_state", self.random_state, low=0, integer=True, none_ok=True)  # numpy's seed range

    def _fit_phi(self, X: np.ndarray, ys: np.ndarray, c: np.ndarray) -> None:
        """The map phi and the cost groups (group_cost_, group_ of every column)."""
        d = X.shape[1]
        total = float(c.sum()) or 1.0
        if self.phi == "raw":
            self.booster_ = None
            self.tree_features_ = None
            self.group_members_ = [np.array([j]) for j in range(d)]
            self.group_cost_ = c / total
            return
        self.booster_ = PhiTrees.fit(X, ys, int(self.phi_trees), int(self.phi_depth), self.random_state)
        T = len(self.booster_.trees)
        used = [t.features_used() for t in self.booster_.trees]
        self.tree_features_ = used
        members, gcost = [], []
        for a in range(d):
            m = np.array([t for t in range(T) if a in used[t]], dtype=np.int64)
            if m.size:
                members.append(m)
                gcost.append(c[a] / total)
        for t in range(T):
            members.append(np.array([t]))
            gcost.append(float(self.tree_eval_cost) / total)
        self.group_members_ = members
        self.group_cost_ = np.array(gcost)

    def _phi(self, X: np.ndarray) -> np.ndarray:
        if self.booster_ is None:
            return np.asarray(X, dtype=np.float64)
        return self.booster_.transform(X)

    def _standardize(self, P: np.ndarray) -> np.ndarray:
        return (P - self.mu_) / self.sd_

    # ---------------------------------------------------------- soft tree ----
    def _probs(self, S: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        """p(node | x) of every node under the soft traversal (n x n_nodes)."""
        tree = self.tree_
        P = np.zeros_like(S)
        P[:, 0] = 1.0
        for k in range(tree.n_nodes):
            if not tree.is_leaf(k):
                q = _sigmoid(self.routing_scale * (S[:, k] - self.theta_[k]))
                up, lo = tree.children(k)
                P[:, up] = P[:, k] * q
                P[:, lo] = P[:, k] * (1.0 - q)
        return P

    def _group_sq(self, beta: np.ndarray) -> np.ndarray:
        """Sum of squares of every group's weights in one node (n_groups; :meth:`GroupMap.squares`)."""
        return self._group_matrix(beta.size).squares(beta)

    def _group_matrix(self, d: int) -> GroupMap:
        """The groups x columns map of group_members_ over ``d`` columns, kept while group_members_ is the same
        list (a new fit's groups are read afresh)."""
        G = getattr(self, "_group_map_", None)
        if G is None or G.members is not self.group_members_ or G.d != d:
            G = self._group_map_ = GroupMap(self.group_members_, d)
        return G

    def objective(self, Z: np.ndarray, ys: np.ndarray) -> float:
        """The relaxed objective (12)/(22) of the current soft tree."""
        tree = self.tree_
        S = Z @ self.beta_.T + self.bias_
        P = self._probs(S)
        n = Z.shape[0]
        wl = np.array([1.0 if tree.is_leaf(k) else float(self.internal_loss) for k in range(tree.n_nodes)])
        loss = float(np.sum(wl * P * (S - ys[:, None]) ** 2) / n)
        l1 = float(self.rho * np.abs(self.beta_).sum())
        sq = np.array([self._group_sq(b) for b in self.beta_])  # n_nodes x n_groups
        cost = 0.0
        for leaf in tree.leaves():
            pl = float(P[:, leaf].mean())
            cost += pl * float(self.group_cost_ @ np.sqrt(sq[tree.path(leaf)].sum(axis=0)))
        return loss + l1 + self.lam * cost

    def _node_context(self, k: int, Z: np.ndarray, ys: np.ndarray) -> dict[str, Any]:
        """Everything the optimization of node k holds fixed."""
        tree = self.tree_
        S = Z @ self.beta_.T + self.bias_
        P = self._probs(S)
        a = P[:, k]
        sq = np.array([self._group_sq(b) for b in self.beta_])
        ctx: dict[str, Any] = {"a": a, "leaves": [], "U": None, "D": None}
        if tree.is_leaf(k):
            others = [j for j in tree.path(k) if j != k]
            ctx["leaves"].append((a, 0, sq[others].sum(axis=0)))
            return ctx
        up, lo = tree.children(k)
        for side, child, key in ((1, up, "U"), (-1, lo, "D")):
            rel, sub = self._relative_probs(S, child)
            wl = np.array([1.0 if tree.is_leaf(j) else float(self.internal_loss) for j in sub])
            ctx[key] = np.sum(wl * rel[:, sub] * (S[:, sub] - ys[:, None]) ** 2, axis=1)
            for leaf in sub:
                if tree.is_leaf(leaf):
                    others = [j for j in tree.path(leaf) if j != k]
                    ctx["leaves"].append((a * rel[:, leaf], side, sq[others].sum(axis=0)))
        return ctx

    def _relative_probs(self, S: np.ndarray, child: int) -> tuple[np.ndarray, list[int]]:
        """Soft-traversal probabilities relative to `child` (its own = 1) over its subtree, held fixed while
        its parent moves; and the subtree's nodes."""
        tree = self.tree_
        rel = np.zeros_like(S)
        rel[:, child] = 1.0
        sub = tree.subtree(child)
        for j in sub:
            if not tree.is_leaf(j):
                q = _sigmoid(self.routing_scale * (S[:, j] - self.theta_[j]))
                cu, cl = tree.children(j)
                rel[:, cu] = rel[:, j] * q
                rel[:, cl] = rel[:, j] * (1.0 - q)
        return rel, sub

    def _optimize_node(self, k: int, Z: np.ndarray, ys: np.ndarray, G: GroupMap,
                       init: bool = False) -> np.ndarray | None:
        """Block coordinate step on node k (Lemma 1 alternation)."""
        n, d = Z.shape
        ctx = self._node_context(k, Z, ys)
        a = ctx["a"]
        leaf = ctx["U"] is None
        beta = self.beta_[k].copy()
        b, theta = float(self.bias_[k]), float(self.theta_[k])
        active = np.ones(d, bool)
        gc = self.group_cost_
        lam, rho, rs = float(self.lam), float(self.rho), float(self.routing_scale)
        for it in range(int(self.inner_iter)):
            # auxiliary variables of Lemma 1 (zeros restart at 1 on the first pass so features can enter)
            ref = np.where((beta == 0) & (it == 0), 1.0, beta)
            gamma = np.maximum(np.abs(ref), CLAMP_FLOOR)
            etas = [np.maximum(np.sqrt(G.sums(ref**2) + C), CLAMP_FLOOR) for (_, _, C) in ctx["leaves"]]
            if leaf:
                A, _, _ = ctx["leaves"][0]
                pl = float(A.mean())
                Gam = rho / gamma + lam * pl * G.spread(gc / etas[0])
                beta, b = self._weighted_ridge(Z, ys, a, Gam, active)
            else:
                beta, b, theta = self._lbfgs_internal(Z, ys, ctx, G, gamma, etas, beta, b, theta, active, lam, rho, rs)
            small = np.abs(beta) < self.zero_tol
            if it > 0:
                active &= ~small
                beta[~active] = 0.0
        self.beta_[k], self.bias_[k] = beta, b
        self.theta_[k] = 0.0 if leaf else theta
        if init:
            return a
        return None

    @staticmethod
    def _weighted_ridge(Z: np.ndarray, ys: np.ndarray, w: np.ndarray, Gam: np.ndarray,
                        active: np.ndarray) -> tuple[np.ndarray, float]:
        """argmin (1/n) sum w (Z beta + b - y)^2 + 1/2 sum Gam beta^2 over the active columns (16). A column that
        is 0 on every row of weight > 0 has beta 0 exactly and no coupling to the others: it is left out of the
        solve, which is cubic in the columns (a wide sparse set has thousands of them); with fewer weighing rows
        than columns left, the solve is the dual one, cubic in the rows (compiler.cstc.ridge)."""
        idx = np.flatnonzero(active)
        idx = idx[np.any(Z[np.ix_(w != 0, idx)] != 0, axis=0)]
        coef, b = ridge.solve(Z, ys, w, Gam, idx)
        beta = np.zeros(Z.shape[1])
        beta[idx] = coef
        return beta, b

    def _lbfgs_internal(self, Z: np.ndarray, ys: np.ndarray, ctx: dict[str, Any], G: GroupMap,
                        gamma: np.ndarray, etas: list[np.ndarray], beta0: np.ndarray, b0: float, th0: float,
                        active: np.ndarray, lam: float, rho: float, rs: float,
                        wi: float | None = None) -> tuple[np.ndarray, float, float]:
        n = Z.shape[0]
        a, U, D = ctx["a"], ctx["U"], ctx["D"]
        idx = np.flatnonzero(active)
        Za = Z[:, idx]
        gc = self.group_cost_
        # per leaf: A (n), side, the quadratic coefficient W (d) and the constant K0 of the surrogate
        leaves = []
        for (A, side, C), eta in zip(ctx["leaves"], etas, strict=True):
            W = G.spread(gc / eta)[idx]
            K0 = 0.5 * float(np.sum(gc * (C / eta + eta)))
            leaves.append((A, side, W, K0))
        gam = gamma[idx]
        wi = float(self.internal_loss) if wi is None else wi  # K classes: 0 (routers have no loss of their own)

        def f(v: np.ndarray) -> tuple[float, np.ndarray]:
            beta, b, th = v[:-2], v[-2], v[-1]
            s = Za @ beta + b
            q = _sigmoid(rs * (s - th))
            r = s - ys
            val = float(wi * np.sum(a * r * r) / n + np.sum(a * (q * U + (1 - q) * D)) / n)
            g_s = 2.0 * wi * a * r / n
            g_q = a * (U - D) / n
            val += 0.5 * rho * float(np.sum(beta**2 / gam))
            g_beta = rho * beta / gam
            for A, side, W, K0 in leaves:
                K = 0.5 * float(np.sum(W * beta**2)) + K0
                Pl = float(np.sum(A * (q if side > 0 else 1 - q)) / n)
                val += lam * Pl * K
                g_q = g_q + lam * K * side * A / n
                g_beta = g_beta + lam * Pl * W * beta
            dq = g_q * q * (1 - q) * rs
            gs = g_s + dq
            grad = np.concatenate([Za.T @ gs + g_beta, [gs.sum(), -dq.sum()]])
            return val, grad

        v0 = np.concatenate([beta0[idx], [b0, th0]])
        res = minimize(f, v0, jac=True, method="L-BFGS-B", options={"maxiter": 60})
        beta = np.zeros(Z.shape[1])
        beta[idx] = res.x[:-2]
        return beta, float(res.x[-2]), float(res.x[-1])

    # -------------------------------------------------------------- fit ----
    # either form: a breast_cancer --sweep of the binary tree took 372 s with two threads, 35 s with one
    @one_blas_thread
    def fit(self, X: Any, y: Any, eval_set: tuple[Any, Any] | None = None) -> CSTCClassifier:
        X, yidx = fit_classes(self, X, y)
        eval_set = None if eval_set is None else check_eval_set(eval_set)
        self.n_classes_ = int(self.classes_.size)
        if self.n_classes_ > 2:
            return self._fit_k(X, yidx, eval_set)
        return self._fit_binary(X, yidx, eval_set)

    def _fit_binary(self, X: np.ndarray, yidx: np.ndarray, eval_set: tuple[Any, Any] | None) -> CSTCClassifier:
        y01 = yidx  # two classes: the paper's binary tree, exactly as before K classes
        self._check_params(X.shape[1])
        ys = 2.0 * y01 - 1.0
        Z = self._fit_inputs(X, ys)
        G = self._group_matrix(Z.shape[1])
        Zva = yva = None
        if eval_set is not None:
            Zva = self._eval_inputs(eval_set)
            yva = encode_classes(self, eval_set[1], "validation data")  # 0/1: 1 = classes_[1]

        def start(rng: np.random.Generator | None) -> tuple[float, np.ndarray]:
            self._fit_start(Z, ys, G, Zva, yva, rng)
            Zs, ysel = (Z, ys > 0) if Zva is None else (Zva, yva)
            node, score = self._route(Zs)
            return float(np.mean((score > 0) == ysel)), node

        return self._best_start(start, _START_STATE, eval_set)

    def _fit_inputs(self, X: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """The training rows' standardized phi(x) (feature costs, phi, mu_ and sd_ fitted on the way)."""
        c = cost_vector(self.costs, X.shape[1])
        self.feature_costs_ = c
        self._fit_phi(X, ys, c)
        Phi = self._phi(X)
        self.mu_ = Phi.mean(axis=0)
        sd = Phi.std(axis=0)
        self.sd_ = np.where(sd > 1e-12, sd, 1.0)
        return self._standardize(Phi)

    def _eval_inputs(self, eval_set: tuple[Any, Any]) -> np.ndarray:
        """The validation rows' standardized phi(x) (their X checked as predict's: as many features as in fit)."""
        return self._standardize(self._phi(check_X(self, eval_set[0], "classes_")))

    def _best_start(self, start: Callable[[np.random.Generator | None], tuple[float, np.ndarray]],
                    state: tuple[str, ...], eval_set: tuple[Any, Any] | None) -> CSTCClassifier:
        """Run ``n_starts`` starts (the first without symmetry breaking); ``start`` fits one and returns its
        accuracy and every scored row's leaf. Keeps the ``state`` attributes of the most accurate start (to
        0.1 point), then the cheapest."""
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        best: tuple[tuple[float, float], dict[str, Any]] | None = None
        self.start_scores_: list[tuple[float, float]] = []
        for n in range(int(self.n_starts)):
            acc, node = start(None if n == 0 else rng)
            cost = float(np.mean(self._path_costs()[node]))
            self.start_scores_.append((acc, cost))
            key = (round(acc, 3), -cost)  # the most accurate on validation (to 0.1 point), then the cheapest
            if best is None or key > best[0]:
                best = (key, {name: copy.deepcopy(getattr(self, name)) for name in state})
        assert best is not None
        for name, value in best[1].items():
            setattr(self, name, value)
        self.start_chosen_ = [(round(a, 3), -c) for a, c in self.start_scores_].index(best[0])
        self.n_iter_ = len(self.objective_path_) - 1  # sweeps of block coordinate descent done
        if eval_set is not None:
            Xva = np.asarray(eval_set[0], dtype=np.float64)
            self.validation_accuracy_ = float(np.mean(self.predict(Xva) == np.asarray(eval_set[1])))
        return self

    def _fit_start(self, Z: np.ndarray, ys: np.ndarray, G: GroupMap, Zva: np.ndarray | None,
                   yva: np.ndarray | None, rng: np.random.Generator | None) -> None:
        """One start: initialization (the paper's, or symmetry-breaking with ``rng``), block coordinate
        descent, the hard tree (fine-tuning, pruning on the validation rows)."""
        N = self._new_tree(Z.shape[1])
        self._init_nodes(Z, rng, lambda k, leaf: self._optimize_node(k, Z, ys, G, init=True))
        self._descend(lambda: self.objective(Z, ys), lambda k: self._optimize_node(k, Z, ys, G))
        if self.fine_tune:
            self._fine_tune(Z, ys, [k for k in range(N) if self.upper_[k] < 0])
        if self.prune and Zva is not None and yva is not None:
            self._prune(Z, ys, Zva, yva)

    def _new_tree(self, d: int) -> int:
        """A fresh full tree of ``depth`` levels with zero routers over d columns; returns its node count."""
        self.tree_ = _Tree(int(self.depth))
        N = self.tree_.n_nodes
        self.beta_ = np.zeros((N, d))
        self.bias_ = np.zeros(N)
        self.theta_ = np.zeros(N)
        return N

    def _init_nodes(self, Z: np.ndarray, rng: np.random.Generator | None,
                    init_node: Callable[[int, bool], np.ndarray | None]) -> None:
        """3.4.2: top-down initialization, each node k as if it were a leaf (``init_node(k, is_leaf)`` fits it
        on the tree cut below k and returns the weights of the inputs reaching it); a symmetry-breaking start
        (rng) routes each internal node instead on one random column (cheaper groups likelier). An internal
        node splits at the weighted median of the inputs reaching it."""
        for k in range(self.tree_.n_nodes):
            saved = self.tree_
            leaf = saved.is_leaf(k)
            self.tree_ = _CutTree(saved, k)
            if rng is not None and not leaf:
                a = self._probs(Z @ self.beta_.T + self.bias_)[:, k]
                self._random_routing(k, Z, rng)
            else:
                a = init_node(k, leaf)
            self.tree_ = saved
            if not leaf and a is not None:
                self.theta_[k] = _weighted_median(Z @ self.beta_[k] + self.bias_[k], a)

    def _descend(self, objective: Any, optimize: Any) -> None:
        """3.4: block coordinate descent in level order (Algorithm 1) until the objective settles, then the
        hard tree's structure (children of every internal node, leaf thresholds 0)."""
        N = self.tree_.n_nodes
        self.objective_path_ = [objective()]
        for _ in range(int(self.max_iter)):
            for k in range(N):
                optimize(k)
            self.objective_path_.append(objective())
            prev, cur = self.objective_path_[-2], self.objective_path_[-1]
            if abs(prev - cur) <= self.tol * max(abs(prev), 1e-12):
                break
        self.upper_ = np.array([self.tree_.children(k)[0] if not self.tree_.is_leaf(k) else -1 for k in range(N)])
        self.lower_ = np.array([self.tree_.children(k)[1] if not self.tree_.is_leaf(k) else -1 for k in range(N)])
        self.leaf_threshold_ = np.zeros(N)

    def _random_routing(self, k: int, Z: np.ndarray, rng: np.random.Generator) -> None:
        """Node k routes on one column not already routed on above it (those send every input of k one way),
        drawn with probability proportional to 1 / cost^2 of its groups (routing should be cheap)."""
        d = Z.shape[1]
        cost = self._group_matrix(d).spread(self.group_cost_)  # a column's cost: its groups'
        p = 1.0 / np.maximum(cost, 1e-12) ** 2
        for j in self.tree_.path(k)[:-1]:
            p[self.beta_[j] != 0] = 0.0
        if not p.any():
            p = np.ones(d)
        j = int(rng.choice(d, p=p / p.sum()))
        self.beta_[k] = 0.0
        self.beta_[k, j] = 1.0 if rng.random() < 0.5 else -1.0
        self.bias_[k] = 0.0

    def _path_costs(self) -> np.ndarray:
        """Per node: the cost of the distinct raw features read on the hard path to it (at the leaves)."""
        out = np.zeros(self.tree_.n_nodes)
        for k in self._reachable():
            if self.upper_[k] < 0:
                feats = np.unique(np.concatenate([self.node_features(j) for j in self._hard_path(k)]))
                out[k] = float(self.feature_costs_[feats.astype(np.int64)].sum())
        return out

    # ------------------------------------------------------- hard tree ----
    def _route(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leaf reached and leaf score of every row under the hard tree."""
        n = Z.shape[0]
        node = np.zeros(n, np.int64)
        score = np.zeros(n)
        for k in range(self.tree_.n_nodes):
            r = np.flatnonzero(node == k)
            if r.size == 0:
                continue
            s = Z[r] @ self.beta_[k] + self.bias_[k]
            if self.upper_[k] < 0:
                score[r] = s - self.leaf_threshold_[k]
            else:
                node[r] = np.where(s > self.theta_[k], self.upper_[k], self.lower_[k])
        return node, score

    def _fine_tune(self, Z: np.ndarray, ys: np.ndarray, leaves: list[int]) -> None:
        """3.5: re-fit leaves on their (hard) inputs, support frozen, no cost term."""
        node, _ = self._route(Z)
        for k in leaves:
            w = (node == k).astype(np.float64)
            active = self.beta_[k] != 0
            if w.sum() < 2 * (active.sum() + 1):
                continue
            beta = self.beta_[k].copy()
            for _ in range(int(self.inner_iter)):
                gamma = np.maximum(np.abs(np.where(beta == 0, 1.0, beta)), CLAMP_FLOOR)
                beta, b = self._weighted_ridge(Z, ys, w, self.rho / gamma, active)
            self.beta_[k], self.bias_[k] = beta, b

    def _prune(self, Z: np.ndarray, ys: np.ndarray, Zva: np.ndarray, yva: np.ndarray) -> None:
        """3.6.1: bottom-up, turn a node whose children are leaves into a leaf when validation
        accuracy does not drop."""

        def to_leaf(k: int, up: int, lo: int) -> bool:
            before = float(np.mean((self._route(Zva)[1] > 0) == yva))
            saved = (self.beta_[k].copy(), self.bias_[k])
            self.upper_[k] = self.lower_[k] = -1
            if self.fine_tune:
                self._fine_tune(Z, ys, [k])
            after = float(np.mean((self._route(Zva)[1] > 0) == yva))
            if after >= before:
                return True
            self.upper_[k], self.lower_[k] = up, lo
            self.beta_[k], self.bias_[k] = saved
            return False

        self._prune_nodes(to_leaf)

    def _prune_nodes(self, to_leaf: Callable[[int, int, int], bool]) -> None:
        """3.6.1's sweep: bottom-up until nothing changes, every node k whose two children (up, lo) are
        leaves goes to ``to_leaf(k, up, lo)``, which makes it a leaf or restores it (returns whether it kept
        the leaf)."""
        changed = True
        while changed:
            changed = False
            for k in range(self.tree_.n_nodes - 1, -1, -1):
                up, lo = self.upper_[k], self.lower_[k]
                if up < 0 or self.upper_[up] >= 0 or self.upper_[lo] >= 0:
                    continue
                if to_leaf(k, up, lo):
                    changed = True

    def _reachable(self) -> list[int]:
        out, queue = [], [0]
        while queue:
            k = queue.pop(0)
            out.append(k)
            if self.upper_[k] >= 0:
                queue += [int(self.upper_[k]), int(self.lower_[k])]
        return out

    # ------------------------------------------------------- K classes ----
    # K >= 3 (docs/cstc.md): internal nodes stay binary routers (beta_, bias_, theta_; no loss of their own),
    # each leaf l holds K class scorers leaf_coef_[l] (K x d) and leaf_bias_[l] (K) regressing the one-vs-rest
    # targets Y (+1 for the row's class, -1 else) with the loss (1/2) sum_c (s_c - Y_c)^2 (the binary squared
    # loss for K = 2 antisymmetric scorers); a feature group's cost on leaf l's path is
    # c_g sqrt(sum_{routers j on the path} |beta_j[g]|^2 + sum_c |W_lc[g]|^2): paid once for all K scorers.

    def _fit_k(self, X: np.ndarray, yidx: np.ndarray, eval_set: tuple[Any, Any] | None) -> CSTCClassifier:
        self._check_params(X.shape[1])
        if self.phi != "raw":
            raise ValueError("phi = 'trees' is binary only; K-class CSTC trees take phi = 'raw'")
        K = self.n_classes_
        Y = 2.0 * np.eye(K)[yidx] - 1.0
        Z = self._fit_inputs(X, Y[:, 0])
        G = self._group_matrix(Z.shape[1])
        Zva = yva = None
        if eval_set is not None:
            Zva = self._eval_inputs(eval_set)
            yva = encode_classes(self, eval_set[1], "validation data")

        def start(rng: np.random.Generator | None) -> tuple[float, np.ndarray]:
            self._fit_start_k(Z, Y, G, Zva, yva, rng)
            Zs, ysel = (Z, yidx) if Zva is None else (Zva, yva)
            node, lab = self._route_k(Zs)
            return float(np.mean(lab == ysel)), node

        return self._best_start(start, _START_STATE_K, eval_set)

    def _leaf_sq_k(self, k: int) -> np.ndarray:
        """Per group: sum over leaf k's K scorers of the squared weights."""
        return self._group_sq((self.leaf_coef_[k] ** 2).sum(axis=0) ** 0.5)

    def _sq_k(self) -> np.ndarray:
        """n_nodes x n_groups: a router's group sums of squares, a leaf's over its K scorers."""
        return np.array([self._leaf_sq_k(k) if self.tree_.is_leaf(k) else self._group_sq(self.beta_[k])
                         for k in range(self.tree_.n_nodes)])

    def _leaf_loss_k(self, Z: np.ndarray, Y: np.ndarray, k: int) -> np.ndarray:
        S = Z @ self.leaf_coef_[k].T + self.leaf_bias_[k]
        return 0.5 * np.sum((S - Y) ** 2, axis=1)

    def _objective_k(self, Z: np.ndarray, Y: np.ndarray) -> float:
        tree = self.tree_
        P = self._probs(Z @ self.beta_.T + self.bias_)
        n = Z.shape[0]
        sq = self._sq_k()
        loss = cost = 0.0
        l1 = float(self.rho) * (sum(float(np.abs(self.beta_[k]).sum()) for k in range(tree.n_nodes)
                                    if not tree.is_leaf(k)) + float(np.abs(self.leaf_coef_).sum()))
        for leaf in tree.leaves():
            loss += float(np.sum(P[:, leaf] * self._leaf_loss_k(Z, Y, leaf)) / n)
            cost += float(P[:, leaf].mean()) * float(self.group_cost_ @ np.sqrt(sq[tree.path(leaf)].sum(axis=0)))
        return loss + l1 + float(self.lam) * cost

    def _optimize_node_k(self, k: int, Z: np.ndarray, Y: np.ndarray, G: GroupMap) -> np.ndarray:
        """Block coordinate step on node k (Lemma 1 alternation); returns p(k | x)."""
        tree = self.tree_
        n, d = Z.shape
        S = Z @ self.beta_.T + self.bias_
        P = self._probs(S)
        a = P[:, k]
        sq = self._sq_k()
        gc = self.group_cost_
        lam, rho, rs = float(self.lam), float(self.rho), float(self.routing_scale)
        if tree.is_leaf(k):
            C = sq[[j for j in tree.path(k) if j != k]].sum(axis=0)
            pl = float(a.mean())
            W, b = self.leaf_coef_[k].copy(), self.leaf_bias_[k].copy()
            active = np.ones(d, bool)
            for it in range(int(self.inner_iter)):
                ref = np.where((W == 0) & (it == 0), 1.0, W)
                gamma = np.maximum(np.abs(ref), CLAMP_FLOOR)
                eta = np.maximum(np.sqrt(G.sums((ref**2).sum(axis=0)) + C), CLAMP_FLOOR)
                shared = lam * pl * G.spread(gc / eta)
                W, b = _ridge_k(Z, Y, a, 2.0 * (rho / gamma + shared), active)
                small = np.max(np.abs(W), axis=0) < self.zero_tol
                if it > 0:
                    active &= ~small
                    W[:, ~active] = 0.0
            self.leaf_coef_[k], self.leaf_bias_[k] = W, b
            return a
        # an internal node: its router against the subtrees' losses (relative probabilities held fixed)
        ctx: dict[str, Any] = {"a": a, "leaves": []}
        up, lo = tree.children(k)
        for side, child, key in ((1, up, "U"), (-1, lo, "D")):
            rel, sub = self._relative_probs(S, child)
            ctx[key] = np.zeros(n)
            for leaf in sub:
                if tree.is_leaf(leaf):
                    ctx[key] += rel[:, leaf] * self._leaf_loss_k(Z, Y, leaf)
                    others = [j for j in tree.path(leaf) if j != k]
                    ctx["leaves"].append((a * rel[:, leaf], side, sq[others].sum(axis=0)))
        beta = self.beta_[k].copy()
        b0, theta = float(self.bias_[k]), float(self.theta_[k])
        active = np.ones(d, bool)
        for it in range(int(self.inner_iter)):
            ref = np.where((beta == 0) & (it == 0), 1.0, beta)
            gamma = np.maximum(np.abs(ref), CLAMP_FLOOR)
            etas = [np.maximum(np.sqrt(G.sums(ref**2) + C), CLAMP_FLOOR) for (_, _, C) in ctx["leaves"]]
            beta, b0, theta = self._lbfgs_internal(Z, Y[:, 0], ctx, G, gamma, etas, beta, b0, theta, active, lam,
                                                   rho, rs, wi=0.0)
            small = np.abs(beta) < self.zero_tol
            if it > 0:
                active &= ~small
                beta[~active] = 0.0
        self.beta_[k], self.bias_[k], self.theta_[k] = beta, b0, theta
        return a

    def _fit_start_k(self, Z: np.ndarray, Y: np.ndarray, G: GroupMap, Zva: np.ndarray | None,
                     yva: np.ndarray | None, rng: np.random.Generator | None) -> None:
        """One start of the K-class tree (as _fit_start)."""
        N, d, K = self._new_tree(Z.shape[1]), Z.shape[1], Y.shape[1]
        self.leaf_coef_ = np.zeros((N, K, d))
        self.leaf_bias_ = np.zeros((N, K))
        self._init_nodes(Z, rng, lambda k, leaf: self._init_node_k(k, leaf, Z, Y, G))
        self._descend(lambda: self._objective_k(Z, Y), lambda k: self._optimize_node_k(k, Z, Y, G))
        if self.fine_tune:
            self._fine_tune_k(Z, Y, [k for k in range(N) if self.upper_[k] < 0])
        if self.prune and Zva is not None and yva is not None:
            self._prune_k(Z, Y, Zva, yva)

    def _init_node_k(self, k: int, leaf: bool, Z: np.ndarray, Y: np.ndarray, G: GroupMap) -> np.ndarray:
        """Node k fitted as a K-class leaf; an internal node then routes on its most spread class score."""
        a = self._optimize_node_k(k, Z, Y, G)
        if not leaf:
            Sk = Z @ self.leaf_coef_[k].T + self.leaf_bias_[k]
            w = a / max(float(a.sum()), 1e-12)
            var = (w[:, None] * (Sk - w @ Sk) ** 2).sum(axis=0)
            c = int(np.argmax(var))
            self.beta_[k], self.bias_[k] = self.leaf_coef_[k, c], self.leaf_bias_[k, c]
            self.leaf_coef_[k], self.leaf_bias_[k] = 0.0, 0.0
        return a

    def _route_k(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leaf reached and class index (largest leaf score, the first on ties) of every row."""
        n = Z.shape[0]
        node = np.zeros(n, np.int64)
        label = np.zeros(n, np.int64)
        for k in range(self.tree_.n_nodes):
            r = np.flatnonzero(node == k)
            if r.size == 0:
                continue
            if self.upper_[k] < 0:
                label[r] = np.argmax(Z[r] @ self.leaf_coef_[k].T + self.leaf_bias_[k], axis=1)
            else:
                s = Z[r] @ self.beta_[k] + self.bias_[k]
                node[r] = np.where(s > self.theta_[k], self.upper_[k], self.lower_[k])
        return node, label

    def _fine_tune_k(self, Z: np.ndarray, Y: np.ndarray, leaves: list[int],
                     support: dict[int, np.ndarray] | None = None) -> None:
        """3.5 for K classes: leaves re-fitted on their hard inputs, support (shared by the K scorers) frozen."""
        node, _ = self._route_k(Z)
        for k in leaves:
            w = (node == k).astype(np.float64)
            active = support[k] if support else np.any(self.leaf_coef_[k] != 0, axis=0)
            if w.sum() < 2 * (active.sum() + 1):
                continue
            W = self.leaf_coef_[k].copy()
            for _ in range(int(self.inner_iter)):
                gamma = np.maximum(np.abs(np.where(W == 0, 1.0, W)), CLAMP_FLOOR)
                W, b = _ridge_k(Z, Y, w, 2.0 * self.rho / gamma, active)
            self.leaf_coef_[k], self.leaf_bias_[k] = W, b

    def _prune_k(self, Z: np.ndarray, Y: np.ndarray, Zva: np.ndarray, yva: np.ndarray) -> None:
        """3.6.1 for K classes: a node whose children are leaves becomes a K-class leaf on its router's
        features (alone, or with one child's) when validation accuracy does not drop."""

        def to_leaf(k: int, up: int, lo: int) -> bool:
            before = float(np.mean(self._route_k(Zva)[1] == yva))
            saved = (self.leaf_coef_[k].copy(), self.leaf_bias_[k].copy())
            own = self.beta_[k] != 0
            options = [own, own | np.any(self.leaf_coef_[up] != 0, axis=0),
                       own | np.any(self.leaf_coef_[lo] != 0, axis=0)]
            self.upper_[k] = self.lower_[k] = -1
            best: tuple[float, int, np.ndarray, np.ndarray] | None = None
            for sup in options:
                self.leaf_coef_[k] = np.where(sup, 1.0, 0.0)[None, :] * np.ones_like(self.leaf_coef_[k])
                self._fine_tune_k(Z, Y, [k], {k: sup})
                acc = float(np.mean(self._route_k(Zva)[1] == yva))
                if best is None or (acc, -int(sup.sum())) > (best[0], -best[1]):
                    best = (acc, int(sup.sum()), self.leaf_coef_[k].copy(), self.leaf_bias_[k].copy())
            assert best is not None
            if best[0] >= before:
                self.leaf_coef_[k], self.leaf_bias_[k] = best[2], best[3]
                return True
            self.upper_[k], self.lower_[k] = up, lo
            self.leaf_coef_[k], self.leaf_bias_[k] = saved
            return False

        self._prune_nodes(to_leaf)

    # ---------------------------------------------------------- predict ----
    @property
    def _multi(self) -> bool:
        return getattr(self, "n_classes_", 2) > 2

    def decision_function(self, X: Any) -> np.ndarray:
        """Binary: the leaf's margin; K classes: the K scores of the leaf reached (n x K)."""
        Z = self._standardize(self._phi(check_X(self, X, "beta_")))
        if self._multi:
            node = self._route_k(Z)[0]
            out = np.zeros((Z.shape[0], self.n_classes_))
            for k in np.unique(node):
                r = node == k
                out[r] = Z[r] @ self.leaf_coef_[k].T + self.leaf_bias_[k]
            return out
        return self._route(Z)[1]

    def predict(self, X: Any) -> np.ndarray:
        if self._multi:
            Z = self._standardize(self._phi(check_X(self, X, "beta_")))
            return self.classes_[self._route_k(Z)[1]]
        margin = self.decision_function(X)  # checks that the model is fitted first
        return self.classes_[(margin > 0).astype(np.int64)]

    def predict_proba(self, X: Any) -> np.ndarray:
        if self._multi:  # a softmax of the K leaf scores (its argmax is predict's)
            S = self.decision_function(X)
            E = np.exp(S - S.max(axis=1, keepdims=True))
            return E / E.sum(axis=1, keepdims=True)
        p = np.clip((self.decision_function(X) + 1.0) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def apply(self, X: Any) -> np.ndarray:
        """Leaf node (heap index) reached by every row."""
        Z = self._standardize(self._phi(check_X(self, X, "beta_")))
        return self._route_k(Z)[0] if self._multi else self._route(Z)[0]

    def node_features(self, k: int) -> np.ndarray:
        """Raw features node k reads (phi = trees: the features of its trees; a K-class leaf: its K scorers')."""
        if self._multi and self.upper_[k] < 0:
            return np.flatnonzero(np.any(self.leaf_coef_[k] != 0, axis=0))
        cols = np.flatnonzero(self.beta_[k] != 0)
        if self.booster_ is None:
            return cols
        used = [self.tree_features_[t] for t in cols]
        return np.unique(np.concatenate(used)) if used else np.zeros(0, np.int64)

    def test_time_cost(self, X: Any) -> np.ndarray:
        """Cost of every row on its hard path: distinct features read (+ trees evaluated * e)."""
        leaves = self.apply(X)
        out = np.zeros(leaves.shape[0])
        for leaf in np.unique(leaves):
            path = self._hard_path(int(leaf))
            feats = np.unique(np.concatenate([self.node_features(k) for k in path]))
            c = float(self.feature_costs_[feats].sum())
            if self.booster_ is not None:
                trees = np.unique(np.concatenate([np.flatnonzero(self.beta_[k] != 0) for k in path]))
                c += float(self.tree_eval_cost) * trees.size
            out[leaves == leaf] = c
        return out

    def _hard_path(self, leaf: int) -> list[int]:
        parent = {int(c): k for k in range(self.tree_.n_nodes) for c in (self.upper_[k], self.lower_[k]) if c >= 0}
        path = [leaf]
        while path[-1] in parent:
            path.append(parent[path[-1]])
        return path[::-1]

    @property
    def features_used_(self) -> np.ndarray:
        check_is_fitted(self, "beta_")
        used = [self.node_features(k) for k in self._reachable()]
        return np.unique(np.concatenate(used)).astype(np.int64) if used else np.zeros(0, np.int64)

    def to_ir(self) -> dict[str, Any]:
        """The hard tree in raw-feature units for pyruntime.cstc.model.CSTCModel (phi = raw only):
        reachable nodes in breadth-first order, weights w = beta / sd, bias b - sum beta mu / sd."""
        check_is_fitted(self, "beta_")
        if self.booster_ is not None:
            raise ValueError("phi = 'trees' models cannot be compiled to the runtime tables yet; use phi = 'raw'")
        order = self._reachable()
        new = {k: i for i, k in enumerate(order)}
        start, feat, weight, bias, thr, up, lo = [0], [], [], [], [], [], []

        def add(beta: np.ndarray, b: float) -> None:
            cols = np.flatnonzero(beta != 0)
            w = beta[cols] / self.sd_[cols]
            feat.extend(cols.tolist())
            weight.extend(w.tolist())
            start.append(len(feat))
            bias.append(float(b - np.sum(w * self.mu_[cols])))

        multi = self._multi
        for k in order:
            leaf = self.upper_[k] < 0
            if multi and leaf:  # a K-class leaf's own scorer is empty (its class scorers follow the nodes)
                add(np.zeros_like(self.beta_[k]), 0.0)
            else:
                add(self.beta_[k], float(self.bias_[k]))
            thr.append(float(self.leaf_threshold_[k] if leaf else self.theta_[k]))
            up.append(-1 if leaf else new[int(self.upper_[k])])
            lo.append(-1 if leaf else new[int(self.lower_[k])])
        extra: dict[str, Any] = {}
        if multi:
            first = np.zeros(len(order), np.uint32)
            for i, k in enumerate(order):
                if self.upper_[k] < 0:
                    first[i] = len(bias)
                    for c in range(self.n_classes_):
                        add(self.leaf_coef_[k, c], float(self.leaf_bias_[k, c]))
            extra = {"n_classes": int(self.n_classes_), "class_first": first}
        return {**extra, "n_features": int(self.n_features_in_), "term_start": np.array(start, np.uint32),
                "feature": np.array(feat, np.int32), "weight": np.array(weight, np.float32),
                "bias": np.array(bias, np.float32), "threshold": np.array(thr, np.float32),
                "upper": np.array(up, np.int32), "lower": np.array(lo, np.int32),
                "costs": np.asarray(self.feature_costs_, np.float32)}


class _CutTree(_Tree):
    """The tree with every descendant of node `cut` cut off (initialization: node `cut` is a leaf)."""

    def __init__(self, full: _Tree, cut: int) -> None:
        super().__init__(full.depth)
        self.cut = cut

    def is_leaf(self, k: int) -> bool:
        return k == self.cut or super().is_leaf(k)


def _weighted_median(s: np.ndarray, w: np.ndarray) -> float:
    if w.sum() <= 0:
        return float(np.median(s))
    o = np.argsort(s)
    cw = np.cumsum(w[o])
    return float(s[o][np.searchsorted(cw, 0.5 * cw[-1])])


def _ridge_k(Z: np.ndarray, Y: np.ndarray, w: np.ndarray, Gam: np.ndarray,
             active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K weighted ridge fits on the shared active columns: class c's argmin (1/n) sum w (Z beta + b - Y_c)^2
    + 1/2 sum Gam[c] beta^2 (Gam K x d); (W K x d, b K) (:func:`compiler.cstc.ridge.solve_k`)."""
    idx = np.flatnonzero(active)
    W = np.zeros((Y.shape[1], Z.shape[1]))
    W[:, idx], b = ridge.solve_k(Z, Y, w, Gam, idx)
    return W, b
