"""ADAPT-LIN and the shared gated pieces: known answers, float32 export, validation, determinism."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from compiler.gated.adapt_lin import AdaptLinClassifier, group_soft_threshold
from compiler.gated.common import F0Error, SparseLinear, SweepPoint, choose_point, make_f0, q_step, score_f32
from compiler.synthetic import make_easy_hard


def test_group_prox_hand_computed() -> None:
    V = np.array([[3.0, 4.0], [0.3, 0.4], [-6.0, 8.0], [0.0, 0.0]])
    out = group_soft_threshold(V, np.array([1.0, 1.0, 5.0, 1.0]))
    # row 0: norm 5 -> scale 1 - 1/5 = 0.8; row 1: norm 0.5 <= 1 -> 0; row 2: norm 10 -> 0.5; row 3 stays 0
    np.testing.assert_allclose(out, [[2.4, 3.2], [0.0, 0.0], [-3.0, 4.0], [0.0, 0.0]])
    assert out[1, 0] == 0.0 and out[1, 1] == 0.0
    # one column: the lasso soft threshold
    np.testing.assert_allclose(group_soft_threshold(np.array([[2.0], [-0.5], [-3.0]]), np.ones(3)),
                               [[1.0], [0.0], [-2.0]])


def test_group_prox_edges_are_exact_zeros_or_identity() -> None:
    # threshold 0 leaves every row (a zero row too, no 0/0), a norm equal to its threshold is exactly 0
    V = np.array([[0.0, 0.0], [3.0, -4.0], [1e-100, 0.0], [6.0, 8.0]])
    out = group_soft_threshold(V, np.array([0.0, 0.0, 0.0, 10.0]))
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out[:3], V[:3])
    assert out[3, 0] == 0.0 and out[3, 1] == 0.0


def test_q_step_boundary_and_inactive() -> None:
    rng = np.random.default_rng(0)
    A = rng.normal(1.0, 1.0, 500)
    B = rng.normal(0.0, 1.0, 500)
    q0 = 1.0 / (1.0 + np.exp(B - A))
    # inactive constraint: beta = 0, q is the unconstrained solution
    q, beta = q_step(A, B, 1.0)
    assert beta == 0.0
    np.testing.assert_allclose(q, q0)
    # active: mean q meets p_full from below, at the boundary
    for p in (0.1, 0.3, 0.5):
        assert q0.mean() > p
        q, beta = q_step(A, B, p)
        assert beta > 0.0
        assert q.mean() <= p
        assert p - q.mean() < 1e-9
        np.testing.assert_allclose(q, 1.0 / (1.0 + np.exp(B - A + beta)))
    q, beta = q_step(A, B, 0.0)
    assert np.all(q == 0.0) and beta == np.inf
    with pytest.raises(ValueError, match="p_full"):
        q_step(A, B, 1.5)


def test_score_f32_is_sequential_float32() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(0, 100, (50, 6))
    feat = np.array([5, 0, 3], dtype=np.int32)
    w = np.array([0.1, -1e-3, 7.25], dtype=np.float32)
    b = np.float32(0.3)
    got = score_f32(X, feat, w, b)
    for i in range(X.shape[0]):
        acc = np.float32(b)
        for f, wk in zip(feat, w):
            acc = np.float32(acc + np.float32(wk * np.float32(X[i, f])))
        assert got[i] == acc


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return make_easy_hard(n_samples=600, n_features=8, n_cheap=2, random_state=seed)


def test_fit_predict_export_agree() -> None:
    X, y = _data()
    m = AdaptLinClassifier(p_full=0.4, gamma=0.01, n_iter=8, inner_iter=150).fit(X, y)
    d = m.to_gated_dict()
    assert d["gate"]["feature"].dtype == np.int32 and d["gate"]["weight"].dtype == np.float32
    # recompute the whole prediction from the exported plain types only
    gs = score_f32(X, d["gate"]["feature"], d["gate"]["weight"], d["gate"]["bias"])
    easy = gs > d["gate"]["decision_threshold"]
    fs = score_f32(X, d["f1"]["feature"], d["f1"]["weight"], d["f1"]["bias"])
    f1_label = np.array(d["classes"])[(fs > d["f1"]["decision_threshold"]).astype(int)]
    expected = np.where(easy, f1_label, m.f0_.estimator.predict(X))
    np.testing.assert_array_equal(m.predict(X), expected)
    np.testing.assert_array_equal(m.route(X), ~easy)
    assert 0.0 < m.hpc_fraction(X) < 1.0
    # costs: distinct features, f0 reads all 8 by default
    used = m.used_features_
    cost = np.where(~easy, 8.0, float(len(used)))
    assert m.mean_cost(X) == pytest.approx(cost.mean())
    proba = m.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert m.score(X, y) > 0.7
    assert set(m.get_params()) >= {"hpc", "p_full", "gamma", "costs", "n_iter", "random_state"}


def test_feature_costs_steer_the_penalty() -> None:
    X, y = _data()
    cheap = AdaptLinClassifier(p_full=0.4, gamma=0.02, n_iter=6, inner_iter=150).fit(X, y)
    costs = np.ones(8)
    costs[1] = 50.0
    dear = AdaptLinClassifier(p_full=0.4, gamma=0.02, costs=costs, n_iter=6, inner_iter=150).fit(X, y)
    assert 1 in cheap.used_features_
    assert 1 not in dear.used_features_


def test_deterministic() -> None:
    X, y = _data(3)
    a = AdaptLinClassifier(p_full=0.3, gamma=0.01, n_iter=5, inner_iter=100).fit(X, y).to_gated_dict()
    b = AdaptLinClassifier(p_full=0.3, gamma=0.01, n_iter=5, inner_iter=100).fit(X, y).to_gated_dict()
    for part in ("gate", "f1"):
        for key in ("feature", "weight", "bias", "decision_threshold"):
            np.testing.assert_array_equal(a[part][key], b[part][key])


@pytest.mark.parametrize(
    ("X", "y", "msg"),
    [
        (np.zeros(10), np.zeros(10), "2D"),  # scikit-learn's validation messages
        (np.zeros((10, 2)), np.zeros(9), "inconsistent numbers of samples"),
        (np.array([[0.0, np.nan]] * 4), np.array([0, 1, 0, 1]), "NaN"),
        (np.zeros((6, 2)), np.zeros(6), "single class"),
        (np.zeros((0, 2)), np.zeros(0), "0 sample"),
    ],
)
def test_input_validation(X: np.ndarray, y: np.ndarray, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        AdaptLinClassifier(n_iter=1, inner_iter=5).fit(X, y)


def test_predict_validation_and_params() -> None:
    X, y = _data()
    m = AdaptLinClassifier(p_full=0.3, n_iter=2, inner_iter=20).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :3])
    with pytest.raises(ValueError, match="p_full"):
        AdaptLinClassifier(p_full=2.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        AdaptLinClassifier(gamma=-1.0).fit(X, y)


def test_make_f0_kinds_and_errors(tmp_path) -> None:
    assert type(make_f0("rf")).__name__ == "RandomForestClassifier"
    assert type(make_f0("gbrt")).__name__ == "GradientBoostingClassifier"
    assert make_f0("svm-rbf").steps[-1][1].estimator.kernel == "rbf"
    with pytest.raises(F0Error, match="not found"):
        make_f0(str(tmp_path / "missing.pkl"))
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(pickle.dumps({"not": "an estimator"}))
    with pytest.raises(F0Error, match="not a classifier estimator"):
        make_f0(str(bad))
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"garbage")
    with pytest.raises(F0Error, match="cannot load"):
        make_f0(str(junk))
    # a user's fitted estimator is used as is
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    good = tmp_path / "lr.pkl"
    good.write_bytes(pickle.dumps(LogisticRegression().fit(X, y)))
    m = AdaptLinClassifier(hpc=str(good), p_full=0.5, n_iter=2, inner_iter=20).fit(X, y)
    assert m.to_gated_dict()["f0"]["kind"] == "pickle"


def test_sparse_linear_from_dense_drops_zeros() -> None:
    s = SparseLinear.from_dense(np.array([0.0, 1.5, 0.0, -2.0]), 0.25)
    np.testing.assert_array_equal(s.feature, [1, 3])
    assert s.weight.dtype == np.float32 and s.bias == np.float32(0.25)


def test_choose_point_rules() -> None:
    pts = [SweepPoint(0.1, 0.1, 0.90, 1.0, 0.1), SweepPoint(0.3, 0.1, 0.945, 2.0, 0.3),
           SweepPoint(0.5, 0.1, 0.95, 3.0, 0.5), SweepPoint(0.7, 0.1, 0.96, 5.0, 0.7)]
    assert choose_point(pts, 0.955, None, 0.01) is pts[1]
    assert choose_point(pts, 0.955, 3.5, 0.01) is pts[2]
    assert choose_point(pts, 0.955, 0.5, 0.01) is None


def test_gate_share_follows_p_full() -> None:
    """The gate's threshold sends the mean(q) (= P_full when the constraint binds) lowest-scoring training
    rows to f0; the paper's sigma(g) > 1/2 rule sends none of them at P_full 0.1 on the same fit."""
    from sklearn.ensemble import RandomForestClassifier

    from compiler.gated.common import fit_f0

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 4))
    y = np.where(X[:, 0] < 0, X[:, 1] > 0, (X[:, 2] > 0) ^ (X[:, 3] > 0)).astype(int)
    costs = np.array([1.0, 1.0, 20.0, 20.0])
    f0 = fit_f0(RandomForestClassifier(n_estimators=30, random_state=0), X, y, np.array([0, 1]), 0)
    kw = dict(hpc=f0, gamma=0.01, costs=costs, n_iter=5, inner_iter=100)
    shares = []
    for p in (0.1, 0.3):
        m = AdaptLinClassifier(p_full=p, **kw).fit(X, y)
        assert m.q_.mean() == pytest.approx(p, abs=1e-6)
        assert m.hpc_fraction(X) == pytest.approx(np.floor(m.q_.mean() * 400 + 1e-9) / 400, abs=1 / 400)
        shares.append(m.hpc_fraction(X))
    assert shares[0] < shares[1]
    paper = AdaptLinClassifier(p_full=0.1, gate_rule="sigmoid", **kw).fit(X, y)
    assert paper.hpc_fraction(X) < 0.05
