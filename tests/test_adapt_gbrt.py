"""Tests for ADAPT-GBRT (compiler/gated/adapt_gbrt.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.model_selection import train_test_split

from compiler.gated.adapt_gbrt import AdaptGbrtClassifier, adapt_sweep, sklearn_to_tree_ensemble, solve_q
from compiler.trees.cost_tree import ir_decide, ir_scores


def easy_and_hard_regions(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x0 < 0: the label is sign(x1) (cheap). x0 >= 0: an XOR of the expensive x2, x3."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 6))
    easy = X[:, 0] < 0
    y = np.where(easy, X[:, 1] > 0, (X[:, 2] > 0) ^ (X[:, 3] > 0)).astype(int)
    costs = np.array([1.0, 1.0, 20.0, 20.0, 20.0, 20.0])
    return X, y, costs


def test_solve_q_closed_form_and_budget() -> None:
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=500), rng.normal(size=500)
    q, beta = solve_q(A, B, p_full=1.0)
    assert beta == 0.0
    np.testing.assert_allclose(q, 1 / (1 + np.exp(B - A)))
    q, beta = solve_q(A, B, p_full=0.2)
    assert beta > 0 and q.mean() == pytest.approx(0.2, abs=1e-9)
    np.testing.assert_allclose(q, 1 / (1 + np.exp(B - A + beta)))
    # q_i minimises (1-q)A + qB + q log q + (1-q) log(1-q) + beta q for every i
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    for i in range(5):
        neg_entropy = grid * np.log(grid) + (1 - grid) * np.log(1 - grid)
        obj = (1 - grid) * A[i] + grid * B[i] + neg_entropy + beta * grid
        assert q[i] == pytest.approx(grid[np.argmin(obj)], abs=1e-3)


def test_gate_routes_hard_region_to_f0_and_saves_cost() -> None:
    X, y, costs = easy_and_hard_regions()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    rf = RandomForestClassifier(n_estimators=60, random_state=0)
    m = AdaptGbrtClassifier(hpc=rf, p_full=0.55, gamma=0.3, n_trees=40, step=0.3, costs=costs,
                            gate_rule="quantile", trees_per_step=1)
    m.fit(Xtr, ytr)
    r = m.route(Xte)
    hard = Xte[:, 0] >= 0
    # the gate sends mostly the hard region to f0 and keeps mostly the easy one
    assert r[hard].mean() > 0.8 and r[~hard].mean() < 0.2
    assert m.train_route_fraction_ <= 0.55 + 1e-9
    f0_acc = np.mean(m.predict_f0(Xte) == yte)
    assert m.score(Xte, yte) >= f0_acc - 0.03
    assert m.mean_cost(Xte) < 0.7 * m.hpc_cost()
    # f1 and the gate never need the expensive XOR features for the easy inputs
    read = m.features_read(Xte)
    assert not read[~r][:, 2:].any()


def test_large_gamma_uses_no_features_and_p_full_zero_routes_nothing() -> None:
    X, y, costs = easy_and_hard_regions(n=800, seed=1)
    rf = RandomForestClassifier(n_estimators=30, random_state=0)
    m = AdaptGbrtClassifier(hpc=rf, p_full=0.3, gamma=1e6, n_trees=10, trees_per_step=5, costs=costs).fit(X, y)
    ir = m.to_tree_ensemble()
    assert np.all(ir["gate"]["feature"] < 0) and np.all(ir["f1"]["feature"] < 0)
    assert np.all(m.cost(X)[~m.route(X)] == 0.0)
    m0 = AdaptGbrtClassifier(hpc=rf, p_full=0.0, gamma=0.1, n_trees=10, trees_per_step=5, costs=costs).fit(X, y)
    assert not m0.route(X).any()
    assert m0.mean_cost(X) < m0.hpc_cost()


def test_multiclass_ir_and_prediction_agree() -> None:
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    rf = RandomForestClassifier(n_estimators=30, random_state=0)
    m = AdaptGbrtClassifier(hpc=rf, p_full=0.3, gamma=0.1, n_trees=8, trees_per_step=5, step=0.3,
                            gate="trees").fit(Xtr, ytr)
    ir = m.to_tree_ensemble()
    assert ir["f1"]["n_outputs"] == 10 and ir["gate"]["n_outputs"] == 1
    route = ir_scores(ir["gate"], Xte)[:, 0] > np.float32(ir["gate"]["decision_threshold"])
    np.testing.assert_array_equal(route, m.route(Xte))
    low = m.classes_[ir_decide(ir["f1"], ir_scores(ir["f1"], Xte))]
    f0 = m.classes_[ir_decide(ir["f0"], ir_scores(ir["f0"], Xte))]
    np.testing.assert_array_equal(np.where(route, f0, low), m.predict(Xte))


@pytest.mark.parametrize("kind", ["rf", "gbrt"])
def test_sklearn_models_convert_to_the_ir_exactly(kind: str) -> None:
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    est = (RandomForestClassifier(n_estimators=25, random_state=0) if kind == "rf"
           else GradientBoostingClassifier(n_estimators=25, random_state=0)).fit(Xtr, ytr)
    ir = sklearn_to_tree_ensemble(est, np.ones(X.shape[1]))
    s = ir_scores(ir, Xte)[:, 0]
    np.testing.assert_array_equal(ir_decide(ir, s[:, None]), est.predict(Xte))
    ref = est.predict_proba(Xte)[:, 1] if kind == "rf" else est.decision_function(Xte)
    np.testing.assert_allclose(s, ref, atol=1e-5)


def test_deterministic_and_sweep_respects_tolerance() -> None:
    X, y, costs = easy_and_hard_regions(n=1000, seed=2)
    rf = RandomForestClassifier(n_estimators=30, random_state=0)
    kw = dict(n_trees=12, trees_per_step=4, step=0.3, costs=costs)
    a = AdaptGbrtClassifier(hpc=rf, **kw).fit(X, y).to_tree_ensemble()
    b = AdaptGbrtClassifier(hpc=rf, **kw).fit(X, y).to_tree_ensemble()
    for part in ("gate", "f1"):
        for k in a[part]:
            np.testing.assert_array_equal(a[part][k], b[part][k])
    res = adapt_sweep(X, y, [0.3, 0.6], [0.1, 1.0], hpc=rf, tolerance=0.02, **kw)
    assert len(res.points) == 4
    ok = [p for p in res.points if p.validation_accuracy >= res.hpc_accuracy - 0.02]
    if ok:
        assert res.chosen.validation_cost == min(p.validation_cost for p in ok)
    budget = adapt_sweep(X, y, [0.3, 0.6], [0.1, 1.0], hpc=rf, budget=30.0, **kw)
    assert budget.chosen.validation_cost <= 30.0 or all(p.validation_cost > 30.0 for p in budget.points)


@pytest.mark.parametrize("f1_cv", [0, 3])
def test_sigmoid_gate_share_follows_p_full(f1_cv: int) -> None:
    """The paper's gate (f0 iff sigma(g) > 1/2) sends about P_full of the training rows to f0: q is
    re-solved after every tree and g takes full Newton steps towards it, so the alternation sharpens q
    and g follows it (with q updated every 10 trees and g shrunk like f1, the share was 0 or ~1). With f1's
    training loss (f1_cv 0, the paper's) the share is within 0.1 of P_full; with the cross-fitted loss (the
    default) q sharpens more slowly in 30 trees: the share still grows with P_full and never passes it by more
    than 0.1."""
    X, y, costs = easy_and_hard_regions(n=800)
    rf = RandomForestClassifier(n_estimators=30, random_state=0)
    kw = dict(gamma=0.1, n_trees=30, costs=costs, f1_cv=f1_cv)
    first = AdaptGbrtClassifier(hpc=rf, p_full=0.1, **kw).fit(X, y)
    shares = [first.train_route_fraction_]
    for p in (0.2, 0.3, 0.4):
        m = AdaptGbrtClassifier(hpc=first.f0_, p_full=p, **kw).fit(X, y, f0_proba=first.f0_proba_)
        assert m.q_.mean() == pytest.approx(p, abs=1e-6)
        shares.append(m.train_route_fraction_)
    assert np.all(np.diff(shares) > 0), shares
    if f1_cv == 0:
        np.testing.assert_allclose(shares, [0.1, 0.2, 0.3, 0.4], atol=0.1)
    else:
        assert np.all(np.asarray(shares) <= np.array([0.1, 0.2, 0.3, 0.4]) + 0.1), shares


def test_defaults_give_a_non_constant_f1_on_two_feature_blobs() -> None:
    """scikit-learn's check_classifiers_train data (2-D blobs, standardised): with the old default
    gamma = 1 the first-use penalty (1/2 per feature) exceeded any split gain (<= 1/4) and f1 was constant."""
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_blobs(n_samples=300, random_state=0)
    X = StandardScaler().fit_transform(X)
    X, y = X[y != 2], y[y != 2]
    m = AdaptGbrtClassifier(hpc=DecisionTreeClassifier(max_depth=3, random_state=0), n_trees=10).fit(X, y)
    f1 = ir_scores(m.f1_ir_, X.astype(np.float32))[:, 0]
    assert np.unique(f1).size > 1
    assert np.mean(m.predict(X) == y) > 0.83  # the estimator check's bar


def _digits_parts() -> tuple[np.ndarray, np.ndarray, RandomForestClassifier, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    first = AdaptGbrtClassifier(hpc=RandomForestClassifier(n_estimators=30, random_state=0), n_trees=2).fit(Xtr, ytr)
    return Xtr, ytr, first.f0_, first.f0_proba_


def test_k_class_shared_f1_lets_the_gate_follow_p_full() -> None:
    """K classes: with shared f1 trees (the default) the sigmoid gate sends a share of the training rows
    that grows with P_full and stays near it. With separate trees and f1's training loss in the q step (f1_cv 0,
    the paper's) f1 fits its rows, its in-sample loss undercuts f0's out-of-fold loss everywhere and the gate
    sends (almost) nothing at any P_full; the cross-fitted loss (the default) gives them a share that grows with
    P_full too. The separate, in-sample case is the unregularised one (l2 0, as measured then): f1's leaf penalty
    l2 1 (the default since round 47) loosens its fit enough that the gate sent 0.12 at P_full 0.5."""
    Xtr, ytr, f0, p0 = _digits_parts()
    kw = dict(hpc=f0, gamma=1.0, n_trees=30)
    shares = {}
    for form, f1_cv in (("shared", 3), ("shared", 0), ("separate", 3), ("separate", 0)):
        l2 = 0.0 if (form, f1_cv) == ("separate", 0) else 1.0
        shares[form, f1_cv] = [AdaptGbrtClassifier(p_full=p, class_trees=form, f1_cv=f1_cv, gate="trees", l2=l2,
                                                   **kw)
                               .fit(Xtr, ytr, f0_proba=p0).train_route_fraction_ for p in (0.1, 0.3, 0.5)]
    for form in ("shared", "separate"):
        assert np.all(np.diff(shares[form, 3]) > 0) and shares[form, 3][1] > 0.05, shares
    assert np.all(np.diff(shares["shared", 0]) > 0) and 0.05 < shares["shared", 0][1] <= 0.3 + 0.05, shares
    assert max(shares["separate", 0]) < 0.05, shares


def test_k_class_margin_gate_sends_new_rows_at_the_share() -> None:
    """K classes, the default gate (f1's own margin): its threshold, taken from the out-of-fold margins at the share
    mean(q), sends about that share of rows f1 never saw to f0, growing with P_full. A threshold from f1's
    in-sample margins sent 0.19 and 0.41 of them at P_full 0.1 and 0.3 (f1 is surer of its own rows)."""
    Xtr, ytr, f0, p0 = _digits_parts()
    X, y = load_digits(return_X_y=True)
    _, Xte, _, _ = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    shares = []
    for p in (0.1, 0.3, 0.5):
        m = AdaptGbrtClassifier(hpc=f0, gamma=1.0, n_trees=30, p_full=p).fit(Xtr, ytr, f0_proba=p0)
        assert m.gate_kind_ == "margin" and m.gate_ir_ is None
        share = float(np.mean(m.route(Xte)))
        assert abs(share - float(m.q_.mean())) <= 0.05, (p, share, float(m.q_.mean()))
        shares.append(share)
    assert shares[0] < shares[1] < shares[2], shares


def test_cross_fitted_f1_loss_scores_each_row_without_its_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    """f1_cv folds: the q step's f1 loss of a row comes from the fold booster grown without the row's fold (its
    weight 0 there), each fold booster has as many trees as f1, and the deployed f1 is the one on every row (the
    same IR whatever f1_cv when the q steps agree: P_full 0 makes q 0 everywhere)."""
    X, y, costs = easy_and_hard_regions(n=300)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    proba = rf.predict_proba(X)
    fits = [AdaptGbrtClassifier(hpc=rf, p_full=0.0, n_trees=5, costs=costs, f1_cv=k).fit(X, y, f0_proba=proba)
            for k in (0, 3)]  # q = 0 everywhere: f1's weights do not depend on A
    assert all(np.all(f.q_ == 0) for f in fits)
    for key in ("feature", "threshold", "value", "roots"):
        np.testing.assert_array_equal(np.asarray(fits[0].f1_ir_[key]), np.asarray(fits[1].f1_ir_[key]))
    seen: list[tuple[np.ndarray, list[Any]]] = []
    orig = AdaptGbrtClassifier._fold_boosters

    def spy(self: Any, *args: Any) -> Any:
        seen.append(orig(self, *args))
        return seen[-1]

    monkeypatch.setattr(AdaptGbrtClassifier, "_fold_boosters", spy)
    AdaptGbrtClassifier(hpc=rf, n_trees=4, costs=costs, f1_cv=3).fit(X, y, f0_proba=proba)
    fold, aux = seen[0]
    assert len(aux) == 3 and set(np.unique(fold).tolist()) == {0, 1, 2}
    for j, b in enumerate(aux):
        assert len(b.trees) == 4 * b.n_outputs
        assert np.all(b.weight[fold == j] == 0) and np.all(b.weight[fold != j] > 0)
    with pytest.raises(ValueError, match="f1_cv"):
        AdaptGbrtClassifier(hpc=rf, f1_cv=-1).fit(X, y)


def test_k_class_shared_f1_has_k_trees_of_equal_splits_per_iteration() -> None:
    Xtr, ytr, f0, p0 = _digits_parts()
    m = AdaptGbrtClassifier(hpc=f0, gamma=1.0, n_trees=5).fit(Xtr, ytr, f0_proba=p0)
    ir = m.to_tree_ensemble()["f1"]
    roots, out = np.asarray(ir["roots"]), np.asarray(ir["tree_output"])
    assert ir["n_outputs"] == 10 and len(roots) == 50
    np.testing.assert_array_equal(out, np.tile(np.arange(10), 5))
    ends = np.append(roots[1:], len(ir["feature"]))
    for it in range(5):
        first = slice(roots[10 * it], ends[10 * it])
        for k in range(1, 10):
            t = 10 * it + k
            other = slice(roots[t], ends[t])
            np.testing.assert_array_equal(ir["feature"][first], ir["feature"][other])
            np.testing.assert_array_equal(ir["threshold"][first], ir["threshold"][other])


def test_two_classes_are_the_same_model_in_either_form() -> None:
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=20, random_state=0)
    a, b = (AdaptGbrtClassifier(hpc=rf, n_trees=6, class_trees=form).fit(X, y).to_tree_ensemble()
            for form in ("shared", "separate"))
    for part in ("gate", "f1"):
        for k in a[part]:
            np.testing.assert_array_equal(a[part][k], b[part][k])


def test_bad_class_trees_is_refused() -> None:
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="class_trees must be one of"):
        AdaptGbrtClassifier(class_trees="both", n_trees=2).fit(X, y)


def test_the_newton_steps_are_capped_where_q_saturates() -> None:
    """Wine at gamma 0.3, P 0.1 grew a gate leaf of 10,865 (the q step drives many rows' soft labels to exactly 0
    or 1, where the logistic hessian vanishes); digits with 100 trees at gamma 1, P 0.6 overflowed float32 and the
    CLI refused the model. f1's trees did the same where the weights 1 - q leave rows f1 misfits confidently (their
    class's probability, and so their hessian, near 0): digits at gamma 0.1, P 0.7, a point of the default sweep,
    grew an f1 leaf of float32 infinity (round 41). Every leaf of the gate and of f1 now moves a score by at most
    MAX_DELTA_STEP (times f1's shrinkage), and all three fit."""
    from compiler.gated.adapt_gbrt import MAX_DELTA_STEP  # noqa: PLC0415
    from compiler.tasks import prepare, split  # noqa: PLC0415

    step = 0.1
    for data, kw in (("sklearn:wine", {"p_full": 0.1, "gamma": 0.3}),
                     ("sklearn:digits", {"p_full": 0.6, "gamma": 1.0, "n_trees": 100}),
                     ("sklearn:digits", {"p_full": 0.7, "gamma": 0.1, "n_trees": 100})):
        Xtr, ytr, Xva, _ = split(prepare(data))
        m = AdaptGbrtClassifier(hpc="rf", max_depth=3, step=step, class_trees="shared", gate="trees", random_state=0,
                                **kw)
        m.fit(Xtr, ytr)
        for ir, most in ((m.gate_ir_, MAX_DELTA_STEP), (m.f1_ir_, MAX_DELTA_STEP * step)):  # the gate's step is 1
            values = np.asarray(ir["value"])
            assert np.all(np.isfinite(values))
            assert np.abs(values[np.asarray(ir["feature"]) < 0]).max() <= np.float32(most), (data, kw)
        assert np.isfinite(m.predict_proba(Xva)).all()


def test_a_class_of_fewer_rows_than_the_folds_scores_f0_in_sample_without_warnings() -> None:
    """f0's out-of-fold probabilities need every class in every fold: with a class of 2 rows and hpc_cv=3,
    scikit-learn warned twice on stderr (the least populated class; a training fold without a class) and
    `frugalml train adapt-gbrt` passed both on; f0 is now scored in sample there, as fit_f0_k does for the
    other gated kinds (the fuzzing of round 46)."""
    import warnings  # noqa: PLC0415

    rng = np.random.default_rng(3)
    y = np.r_[np.zeros(60, int), np.ones(60, int), np.full(2, 2)]
    X = rng.normal(size=(y.size, 4)) + y[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = AdaptGbrtClassifier(n_trees=5, p_full=0.3, random_state=0).fit(X, y)
    assert m.f0_proba_.shape == (y.size, 3)
    f0 = m.f0_
    assert np.allclose(m.f0_proba_, f0.predict_proba(X.astype(np.float32)))  # in sample: f0's own answer


@pytest.mark.parametrize("l2", [0.0, 1.0, 25.0])
def test_f1_leaves_are_newton_steps_shrunk_by_l2(l2: float) -> None:
    """f1's leaf values are step * -G / (H + l2) over the leaf's rows, G and H the sums of the weighted logistic
    gradients (p - y) and hessians p (1 - p) at the base score, the weights 1 - q of the q step before the tree
    (one tree: the last q; max_delta_step 10 does not bind here). Computed by hand from the fitted q and the
    tree's own leaves; l2 0 is the unregularised step of rounds before 47."""
    from compiler.gated.adapt_gbrt import MAX_DELTA_STEP  # noqa: PLC0415
    from compiler.trees.cost_tree import ir_leaves  # noqa: PLC0415

    X, y = load_breast_cancer(return_X_y=True)
    step = 0.1
    m = AdaptGbrtClassifier(hpc=RandomForestClassifier(n_estimators=10, random_state=0), n_trees=1, step=step,
                            gamma=0.0, p_full=0.3, f1_cv=0, l2=l2).fit(X, y)
    ir = m.f1_ir_
    p = 1.0 / (1.0 + np.exp(-float(np.asarray(ir["base_score"], dtype=np.float32)[0])))
    w = np.maximum(1.0 - m.q_, 1e-12)
    leaf = ir_leaves(ir, X)[:, 0]
    assert np.unique(leaf).size >= 4
    for node in np.unique(leaf):
        rows = leaf == node
        G, H = np.sum(w[rows] * (p - y[rows])), np.sum(w[rows] * p * (1 - p))
        want = step * np.clip(-G / (H + l2), -MAX_DELTA_STEP, MAX_DELTA_STEP)
        assert float(ir["value"][node]) == pytest.approx(want, rel=1e-5, abs=1e-7), (node, l2)


def test_l2_defaults_to_one_and_is_validated() -> None:
    from compiler.gated.adapt_gbrt import F1_L2  # noqa: PLC0415

    assert AdaptGbrtClassifier().get_params()["l2"] == F1_L2 == 1.0
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="l2 must be a finite number >= 0, got -1.0"):
        AdaptGbrtClassifier(l2=-1.0, n_trees=2).fit(X, y)
