"""Kind ``cascade`` end to end and the cascade runtime: C and numpy reference agree exactly on
random cascades and inputs (float32 and q15), lazy reads, CLI training (CSCC and early exit) against
the estimators, eval extras, generated headers compiled and run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_work import cheap_and_clean, run, write_costs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import tasks
from compiler.demo import build_row_runner, run_rows
from compiler.header import render_header
from compiler.trees.cascade import EarlyExitEnsemble, balanced_weights, learn_shared_threshold, margin
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.miser import GreedyMiserClassifier, decide
from pyruntime import format as fmt
from pyruntime.evaluators import c_evaluator, reference_evaluator
from pyruntime.trees.cascade import CCascade, TreeCascade
from pyruntime.trees.ensemble import TreeEnsemble

GRID = np.array([-1.0, -0.5, 0.0, 0.5, 1.0], np.float32)


# ------------------------------------------------------- random cascades ----
def random_tree(rng: np.random.Generator, n_features: int, depth: int, nodes: list[tuple]) -> int:
    """Append a random tree in pre-order (children after their parent); return its root index."""
    i = len(nodes)
    if depth == 0 or rng.random() < 0.3:
        v = rng.integers(-16, 17) / 8 if rng.random() < 0.5 else rng.normal()
        nodes.append([-1, 0.0, -1, -1, v])
        return i
    thr = rng.choice(GRID) if rng.random() < 0.7 else rng.normal()
    nodes.append([int(rng.integers(0, n_features)), thr, -1, -1, 0.0])
    nodes[i][2] = random_tree(rng, n_features, depth - 1, nodes)
    nodes[i][3] = random_tree(rng, n_features, depth - 1, nodes)
    return i


def random_cascade(seed: int) -> tuple[TreeCascade, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 7))
    K = int(rng.choice([1, 1, 2, 3]))
    T = int(rng.integers(1, 8))
    nodes: list[list] = []
    roots = [random_tree(rng, d, int(rng.integers(0, 4)), nodes) for _ in range(T)]
    a = np.array(nodes, dtype=object)
    costs = None
    if rng.random() < 0.7:
        costs = rng.integers(0, 200, d).astype(np.float32)
        if rng.random() < 0.3:
            costs = costs + np.float32(0.3)
    trees = TreeEnsemble(n_features=d, n_outputs=K, feature=a[:, 0].astype(np.int32),
                         threshold=a[:, 1].astype(np.float32), left=a[:, 2].astype(np.int32),
                         right=a[:, 3].astype(np.int32), value=a[:, 4].astype(np.float32),
                         roots=np.array(roots, np.int32), tree_output=rng.integers(0, K, T).astype(np.int32),
                         base_score=(rng.integers(-4, 5, K) / 8).astype(np.float32),
                         decision_threshold=float(rng.choice([0.0, 0.25])), costs=costs)
    S = int(rng.integers(1, 5))
    ends = np.sort(rng.integers(0, T + 1, S))
    ends[-1] = T
    if K == 1:
        upper = rng.integers(-4, 12, S) / 8
        lower = upper - rng.integers(0, 16, S) / 8
    else:
        upper, lower = rng.integers(0, 12, S) / 8, np.zeros(S)
    upper = np.where(rng.random(S) < 0.15, np.inf, upper)
    lower = np.where(rng.random(S) < 0.15, -np.inf, lower)
    m = TreeCascade(trees=trees, stage_end=ends, exit_upper=upper, exit_lower=lower,
                    exit_rule="score" if K == 1 else "margin")
    rows = int(rng.integers(1, 25))
    X = np.where(rng.random((rows, d)) < 0.6, rng.choice(GRID, (rows, d)), rng.normal(size=(rows, d)) * 2)
    return m, X.astype(np.float32)


FIELDS = ("label", "score", "n_read", "cost", "stage")


def same_fields(a: Any, b: Any) -> None:
    """Two prediction results agree in every field."""
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


def c_equals_reference(model: Any, X: np.ndarray) -> None:
    """The C runtime answers every field as the reference, in both numeric types."""
    for numeric in ("float32", "q15"):
        same_fields(c_evaluator(model, numeric).predict(X), reference_evaluator(model, numeric).predict(X))


def c_equals_reference_and_estimator(model: Any, X: np.ndarray, detailed: dict[str, Any]) -> Any:
    """The C runtime answers every field as the reference in both numeric types, and the estimator's labels and
    exit stages (float32); returns the float32 C predictions."""
    c_equals_reference(model, X)
    p = c_evaluator(model).predict(X)
    np.testing.assert_array_equal(p.label, detailed["label"])
    np.testing.assert_array_equal(p.stage, detailed["exit_stage"])
    return p


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))

def test_c_and_reference_agree_on_random_cascades(seed: int) -> None:
    m, X = random_cascade(seed)
    for tables in (m, m.q15()):
        c = CCascade(tables).predict(X)
        r = tables.predict_reference(X)
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(c, f), getattr(r, f), err_msg=f"{f} ({type(tables).__name__})")
        assert np.all(c.stage < m.n_stages)
    # the tables survive the file format unchanged
    again = fmt.loads(fmt.dumps(fmt.ModelFile("cascade", m, {}))).tables
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(again.predict_reference(X), f), getattr(m.predict_reference(X), f))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_lazy_reads_each_feature_at_most_once_and_only_on_paths(seed: int) -> None:
    m, X = random_cascade(seed)
    ev = CCascade(m)
    batch = ev.predict(X)
    for i, row in enumerate(X[:5]):
        calls: list[int] = []

        def read(j: int, row: np.ndarray = row, calls: list[int] = calls) -> float:
            calls.append(j)
            return float(row[j])

        p = ev.predict_lazy(read)
        assert len(calls) == len(set(calls)) == int(p.n_read[0])
        assert p.stage[0] == batch.stage[i] and p.label[0] == batch.label[i] and p.cost[0] == batch.cost[i]
        # only features that the trees of the stages evaluated branch on
        end = int(m.stage_end[p.stage[0]])
        used = set(m.trees.feature[m.trees.feature >= 0].tolist()) if end else set()
        assert set(calls) <= used


def test_stages_share_the_memo_and_exit_at_known_stages() -> None:
    """Hand cascade: stage 0 and stage 2 split on x0; a row reaching stage 2 reads x0 once."""
    trees = TreeEnsemble.from_trees(3, [
        {"feature": [0, -1, -1], "threshold": [0.0, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1],
         "value": [0, -1.0, 1.0]},
        {"feature": [1, -1, -1], "threshold": [0.0, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1],
         "value": [0, -0.25, 0.25]},
        {"feature": [0, 2, -1, -1, -1], "threshold": [5.0, 0.0, 0, 0, 0], "left": [1, 3, -1, -1, -1],
         "right": [2, 4, -1, -1, -1], "value": [0, 0, 4.0, -2.0, 2.0]},
    ], base_score=0.0, costs=[1.0, 10.0, 100.0])
    m = TreeCascade(trees=trees, stage_end=[1, 2, 3], exit_upper=[1.5, 1.0, np.inf],
                    exit_lower=[-1.5, -1.0, -np.inf])
    X = np.array([[1, 1, 1], [1, -1, 1], [-1, -1, -1], [-1, 1, 1]], np.float32)
    for ev in (CCascade(m).predict, m.predict_reference):
        p = ev(X)
        np.testing.assert_array_equal(p.stage, [1, 2, 1, 2])
        np.testing.assert_array_equal(p.score, [1.25, 2.75, -1.25, 1.25])
        np.testing.assert_array_equal(p.n_read, [2, 3, 2, 3])
        np.testing.assert_array_equal(p.cost, [11, 111, 11, 111])
        np.testing.assert_array_equal(m.trees_at(p.stage), [2, 3, 2, 3])


# ------------------------------------------------------------- via the CLI ----
def cheap_noisy_expensive_informative(n: int = 900, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    return cheap_and_clean(n, seed, 4, cheap=(0.8, 1.0))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cascade")
    X, y = cheap_noisy_expensive_informative()
    np.savez(d / "data.npz", X=X, y=y)
    write_costs(d / "costs.csv", [1] * 4 + [100] * 4)
    code, _, err = run("train", "cascade", d / "data.npz", "--costs", d / "costs.csv", "-o", d / "c.msgpack",
                       "--stages", 3, "--trees", 12, "--lambda", 0.3)
    assert code == 0, err
    return d


def test_cli_cascade_matches_the_estimator(work: Path) -> None:
    model = fmt.load(work / "c.msgpack")
    task = tasks.prepare(str(work / "data.npz"))
    X = task.data.X.astype(np.float32)
    costs = np.array([1.0] * 4 + [100.0] * 4)
    est = CsccCascadeClassifier(n_stages=3, n_trees=12, lam=0.3, pool_lambdas=(0.0, 3.0, 30.0), costs=costs,
                                random_state=0)
    est.fit(X[task.train], task.y[task.train], eval_set=(X[task.validation], task.y[task.validation]))
    np.testing.assert_array_equal(model.tables.stage_end, est.stage_end_)
    d = est.predict_detailed(X)
    p = c_equals_reference_and_estimator(model, X, d)
    np.testing.assert_array_equal(p.score, d["score"])
    np.testing.assert_array_equal(p.n_read, d["features_read"])
    np.testing.assert_allclose(p.cost, d["cost"], rtol=1e-6)
    np.testing.assert_array_equal(model.tables.trees_at(p.stage), d["trees_evaluated"])
    assert np.all(model.tables.exit_upper == np.inf)  # CSCC exits on the early-reject side only


def test_eval_json_reports_cost_trees_and_exits(work: Path) -> None:
    code, out, _ = run("eval", work / "c.msgpack", work / "data.npz", "--json")
    assert code == 0
    rep = json.loads(out)
    model = fmt.load(work / "c.msgpack")
    task = tasks.prepare(str(work / "data.npz"))
    p = c_evaluator(model).predict(task.data.X[task.test])
    assert rep["kind"] == "cascade" and rep["n"] == task.test.size
    assert rep["exit_histogram"] == np.bincount(p.stage, minlength=3).tolist()
    assert sum(rep["exit_histogram"]) == rep["n"]
    assert rep["mean_trees"] == pytest.approx(np.mean(model.tables.stage_end[p.stage]))
    assert rep["mean_cost"] == pytest.approx(float(np.mean(p.cost)))
    assert rep["accuracy"] > 0.85


def early_exit_and_estimator(work: Path, name: str, every: int, *extra: Any, **est: Any
                             ) -> tuple[Any, EarlyExitEnsemble, np.ndarray]:
    """``train cascade --early-exit-every N --trees 20 --lambda 0 EXTRA`` on the fixture and the estimator trained
    the same way (EarlyExitEnsemble(**est), the boosting order of --early-exit-every unless ``tree_order`` is given):
    the model file, the estimator, the fixture's rows."""
    est.setdefault("tree_order", "boosting")
    code, _, err = run("train", "cascade", work / "data.npz", "--costs", work / "costs.csv", "-o",
                       work / name, "--early-exit-every", every, "--trees", 20, "--lambda", 0, *extra)
    assert code == 0, err
    task = tasks.prepare(str(work / "data.npz"))
    X = task.data.X.astype(np.float32)
    base = GreedyMiserClassifier(lam=0.0, n_trees=20, max_depth=3, loss="logistic",
                                 costs=np.array([1.0] * 4 + [100.0] * 4), random_state=0)
    base.fit(X[task.train], task.y[task.train], eval_set=(X[task.validation], task.y[task.validation]))
    ee = EarlyExitEnsemble(base, every=every, **est).fit(X[task.validation], task.y[task.validation])
    return fmt.load(work / name), ee, X


def meta_order(path: Path) -> str:
    return fmt.load(path).meta["training"]["tree_order_used"]


def ee_validation(work: Path) -> tuple[np.ndarray, np.ndarray]:
    task = tasks.prepare(str(work / "data.npz"))
    return task.data.X[task.validation].astype(np.float32), task.y[task.validation]


def test_early_exit_baseline(work: Path) -> None:
    model, ee, X = early_exit_and_estimator(work, "ee.msgpack", 5, "--tree-order", "cost", tree_order="cost")
    assert model.meta["training"]["tree_order"] == model.meta["training"]["tree_order_used"] == "cost"
    assert not np.array_equal(ee.tree_order_, np.arange(ee.tree_order_.size))  # the fixture's order moves
    np.testing.assert_array_equal(model.tables.stage_end, ee.stage_end_)
    d = c_equals_reference_and_estimator(model, X, ee.predict_detailed(X))
    np.testing.assert_array_equal(d.score, ee.predict_detailed(X)["score"])  # the same trees in the same order
    np.testing.assert_allclose(d.cost, ee.predict_detailed(X)["cost"], rtol=1e-6)
    plain = EarlyExitEnsemble(ee.model, every=5, tree_order="boosting").fit(*ee_validation(work))
    assert not np.array_equal(c_evaluator(model).predict(X).score, plain.predict_detailed(X)["score"])
    assert np.all(np.diff(model.tables.stage_end[:-1]) == 5)
    p = c_evaluator(model).predict(X)
    d = ee.predict_detailed(X)
    np.testing.assert_array_equal(p.label, d["label"])
    np.testing.assert_array_equal(p.stage, d["exit_stage"])
    code, _, err = run("train", "cascade", work / "data.npz", "-o", work / "bad.msgpack", "--early-exit-every", 5,
                       "--stages", 2)
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: ")


def test_early_exit_with_one_shared_threshold(work: Path) -> None:
    """--exit-thresholds shared: one threshold for every stage but the last, the estimator's, and the C runtime
    equal to it; refused for CSCC."""
    model, ee, X = early_exit_and_estimator(work, "shared.msgpack", 2, "--exit-thresholds", "shared",
                                            "--tree-order", "auto", thresholds="shared", tree_order="auto")
    assert model.meta["training"]["tree_order"] == "auto"  # the cheaper order on validation
    assert model.meta["training"]["tree_order_used"] == ee.tree_order_used_
    up, lo = model.tables.exit_upper[:-1], model.tables.exit_lower[:-1]
    np.testing.assert_array_equal(up, ee.upper_[:-1])
    assert np.all(up == up[0]) and np.all(lo == -up[0]) and np.isfinite(up[0])
    p = c_evaluator(model).predict(X)
    d = ee.predict_detailed(X)
    np.testing.assert_array_equal(p.label, d["label"])
    np.testing.assert_array_equal(p.stage, d["exit_stage"])
    code, _, err = run("train", "cascade", work / "data.npz", "-o", work / "bad.msgpack", "--stages", 2,
                       "--exit-thresholds", "shared")
    assert code == 2 and "--exit-thresholds applies to --early-exit-every only" in err.strip().splitlines()[-1]


def test_tree_order_refused_where_it_does_not_apply(work: Path) -> None:
    """--tree-order orders an exit cascade's iterations: with CSCC's options it is refused in one line, an unknown
    order is refused by the option itself; nothing is written either way."""
    for extra, says in ((("--stages", 2, "--tree-order", "cost"), "--tree-order orders the iterations of an exit "
                         "cascade"), (("--early-exit-every", 2, "--tree-order", "random"), "'random' is not one of")):
        out = work / "order_bad.msgpack"
        code, _, err = run("train", "cascade", work / "data.npz", "-o", out, *extra)
        assert code == 2 and says in err.strip().splitlines()[-1] and not out.exists()


def test_early_exit_exits_by_folds(work: Path) -> None:
    """--exit-folds: the ensemble fitted on train and validation pooled with as many iterations as the folds' fits
    early-stopped on their held-out rows keep on average (at most --trees), its exits learned on the folds'
    out-of-fold partial scores (the estimator's fit_folds), the C runtime equal to the reference; --exit-lambdas
    (and --exit-every-grid) keep the cheapest lambda (and N) whose held-out accuracy is within one standard error
    of lambda 0's whole ensembles' out-of-fold accuracy."""
    from compiler.options import stratified_folds
    from compiler.trees.kind_cascade import one_se

    code, _, err = run("train", "cascade", work / "data.npz", "--costs", work / "costs.csv", "-o", work / "f.msgpack",
                       "--early-exit-every", 2, "--trees", 12, "--lambda", 0.3, "--exit-folds", 3)
    assert code == 0, err
    model = fmt.load(work / "f.msgpack")
    task = tasks.prepare(str(work / "data.npz"))
    X = task.data.X.astype(np.float32)
    pool = np.concatenate([task.train, task.validation])

    Xp, yp = X[pool], task.y[pool]
    folds = stratified_folds(yp, 3, 0)

    def miser(n_trees: int) -> GreedyMiserClassifier:
        return GreedyMiserClassifier(lam=0.3, n_trees=n_trees, max_depth=3, loss="logistic",
                                     costs=np.array([1.0] * 4 + [100.0] * 4), random_state=0)

    stopped = [miser(12).fit(Xp[tr], yp[tr], eval_set=(Xp[te], yp[te])).n_iter_ for tr, te in folds]
    length = max(1, round(float(np.mean(stopped))))

    def fold_model(Xf: np.ndarray, yf: np.ndarray) -> GreedyMiserClassifier:
        return miser(length).set_params(validation_fraction=0.0).fit(Xf, yf)

    ee = EarlyExitEnsemble(fold_model(Xp, yp), every=2).fit_folds(Xp, yp, folds, fold_model)
    assert meta_order(work / "f.msgpack") == ee.tree_order_used_ == "boosting"  # --early-exit-every's default
    # the default cascade of a small validation part takes this path with the default cascade's "auto" order
    code, _, err = run("train", "cascade", work / "data.npz", "--costs", work / "costs.csv", "-o",
                       work / "small.msgpack", "--trees", 12)
    assert code == 0 and "cross-validation" in err, err
    assert fmt.load(work / "small.msgpack").meta["training"]["tree_order"] == "auto"
    assert model.tables.stage_end[-1] == length <= 12 and np.all(np.diff(model.tables.stage_end)[:-1] == 2)
    np.testing.assert_array_equal(model.tables.stage_end, ee.stage_end_)
    meta = model.meta["training"]
    assert (meta["cv_accuracy"], meta["cv_cost"]) == (ee.cv_["cv_accuracy"], ee.cv_["cv_cost"])
    assert sum(meta["cv_exit_histogram"]) == pool.size and meta["trees_chosen"] == length
    p = c_equals_reference_and_estimator(model, X, ee.predict_detailed(X))
    np.testing.assert_array_equal(p.score, ee.predict_detailed(X)["score"])
    code, _, err = run("train", "cascade", work / "data.npz", "--costs", work / "costs.csv", "-o", work / "g.msgpack",
                       "--early-exit-every", 2, "--trees", 12, "--exit-folds", 3, "--exit-lambdas", "0.3,3",
                       "--exit-every-grid", "1,4")
    assert code == 0, err
    model = fmt.load(work / "g.msgpack")
    meta = model.meta["training"]
    curve = meta["exit_lambda_curve"]
    assert [(c["lambda"], c["every"]) for c in curve] == [(lam, n) for lam in (0.0, 0.3, 3.0) for n in (1, 4)]
    ref = curve[0]["cv_full_accuracy"]
    assert meta["exit_lambda_tolerance"] == one_se(ref, pool.size)
    ok = [c for c in curve if c["cv_accuracy"] >= ref - meta["exit_lambda_tolerance"] - 1e-12]
    kept = min(ok, key=lambda c: (c["cv_cost"], -c["cv_accuracy"]))
    assert (meta["lambda_chosen"], meta["early_exit_every_chosen"]) == (kept["lambda"], kept["every"])
    assert np.all(np.diff(model.tables.stage_end) == kept["every"]) and meta["cv_cost"] == kept["cv_cost"]
    assert "cascade lambda=" in err
    # --exit-budget: among the points within the tolerance whose held-out cost is within the share of the eager
    # cost (every feature, every tree), the most accurate, ties the smallest lambda then the cheapest
    code, _, err = run("train", "cascade", work / "data.npz", "--costs", work / "costs.csv", "-o", work / "b.msgpack",
                       "--early-exit-every", 2, "--trees", 12, "--exit-folds", 3, "--exit-lambdas", "0.3,3",
                       "--exit-every-grid", "1,4", "--exit-budget", 0.9)
    assert code == 0, err
    budgeted = fmt.load(work / "b.msgpack").meta["training"]
    assert budgeted["exit_lambda_curve"] == curve  # the same held-out curve, another rule
    assert budgeted["exit_budget_cost"] == pytest.approx(0.9 * (4 * 1.0 + 4 * 100.0))  # tree cost 0 here
    under = [c for c in ok if c["cv_cost"] <= budgeted["exit_budget_cost"]]
    assert under
    best = min(under, key=lambda c: (-c["cv_accuracy"], c["lambda"], c["cv_cost"]))
    assert (budgeted["lambda_chosen"], budgeted["early_exit_every_chosen"]) == (best["lambda"], best["every"])
    for bad in (["--exit-folds", 3, "--stages", 2], ["--early-exit-every", 2, "--exit-lambdas", "1"],
                ["--early-exit-every", 2, "--exit-folds", 3, "--exit-budget", 0.5],
                ["--early-exit-every", 2, "--exit-budget", 0.5, "--exit-lambdas", "1"],
                ["--early-exit-every", 2, "--exit-folds", 3, "--exit-lambdas", "1", "--exit-budget", 0],
                ["--early-exit-every", 2, "--exit-folds", 3, "--exit-lambdas", "1", "--lambda", 1],
                ["--early-exit-every", 2, "--exit-every-grid", "1,2"],
                ["--early-exit-every", 2, "--exit-folds", 3, "--exit-every-grid", "0,2"],
                ["--early-exit-every", 2, "--exit-folds", 1000]):
        code, _, err = run("train", "cascade", work / "data.npz", "-o", work / "bad.msgpack", *bad)
        assert code == 2 and err.strip().splitlines()[-1].startswith("error: "), (bad, err)
        assert not (work / "bad.msgpack").exists()


def test_held_out_choice_spends_the_budget_on_accuracy() -> None:
    """Without a budget the cheapest point within the tolerance; with one, the most accurate point within both
    (ties: the smallest lambda, then the cheapest); nothing within the budget: the cheapest within the tolerance."""
    from compiler.trees.kind_cascade import held_out_choice

    def point(lam: float, every: int, acc: float, cost: float) -> dict[str, Any]:
        return {"lambda": lam, "every": every, "cv_accuracy": acc, "cv_cost": cost, "cv_full_accuracy": 0.96}

    curve = [point(0, 1, 0.95, 300.0), point(0, 4, 0.96, 900.0), point(0.1, 1, 0.95, 200.0),
             point(1, 1, 0.95, 120.0), point(1, 4, 0.94, 100.0), point(3, 1, 0.90, 50.0)]
    pick = lambda budget: (lambda p: (p["lambda"], p["every"]))(held_out_choice(curve, 0.02, budget))  # noqa: E731
    assert pick(None) == (1, 4)  # the cheapest within 0.02 of 0.96; lambda 3 is too inaccurate
    assert pick(1000.0) == (0, 4)  # everything fits: the most accurate
    assert pick(400.0) == (0, 1)  # 0.95 three times: the smallest lambda
    assert pick(250.0) == (0.1, 1)
    assert pick(60.0) == (1, 4)  # only lambda 3 fits, outside the tolerance: the rule without a budget
    assert held_out_choice([point(0, 1, 0.5, 10.0), point(1, 1, 0.6, 5.0)], 0.01, None)["lambda"] == 1


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("kind", ["cascade", "miser"])
def test_generated_header_compiles_clean_and_agrees(work: Path, tmp_path: Path, kind: str, numeric: str) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    if kind == "cascade":
        model = fmt.load(work / "c.msgpack")
    else:
        code, _, err = run("train", "miser", work / "data.npz", "--costs", work / "costs.csv", "-o",
                           tmp_path / "m.msgpack", "--trees", 15, "--lambda", 0.3, "--loss", "multiclass-log")
        assert code == 0, err
        model = fmt.load(tmp_path / "m.msgpack")
    X = np.load(work / "data.npz")["X"][:80]
    header = tmp_path / "model.h"
    header.write_text(render_header(model, numeric, "model", X))
    text = header.read_text()
    assert all(line.startswith("static const ") for line in text.splitlines() if line.startswith("static "))
    exe = build_row_runner(header, tmp_path)
    labels, n_read, ns = run_rows(exe, seconds=0.01)
    pred = c_evaluator(model, numeric).predict(X)
    np.testing.assert_array_equal(labels, pred.label)
    np.testing.assert_array_equal(n_read, pred.n_read)
    assert ns > 0
    code, out, _ = run("inspect", tmp_path / "nothing.msgpack")
    assert code == 2


def test_default_cascade_is_no_costlier_than_the_sweep_frontier(work: Path) -> None:
    """The defaults keep the cheapest of the miser sweep's points (the grid refined once), each of them with exits
    every 1 and every 5 iterations, and CSCC, within 0.01 of lambda = 0 on validation (issue 22): the written
    tables are that candidate, and no admissible candidate is cheaper."""
    X, y = cheap_noisy_expensive_informative(n=1100)  # 220 validation rows: judged on them (>= 200)
    np.savez(work / "big.npz", X=X, y=y)
    code, _, err = run("train", "cascade", work / "big.npz", "--costs", work / "costs.csv", "--depth", 2,
                       "-o", work / "default.msgpack")
    assert code == 0, err
    assert "cross-validation" not in err
    model = fmt.load(work / "default.msgpack")
    tr = model.meta["training"]
    front = tr["frontier"]
    names = [f["model"] for f in front]
    plain = [n for n in names if " exits " not in n]  # the sweep's 9 lambdas, up to 2 refined, CSCC
    assert names[0] == "miser lambda=0" and plain[-1] == "cscc" and 10 <= len(plain) <= 12
    assert all(n.split(",")[0] in names for n in names if " exits " in n)  # each exiting cascade follows its model
    ref = front[0]["validation_accuracy"]
    ok = [f for f in front if f["validation_accuracy"] >= ref - 0.01 - 1e-12]
    chosen = next(f for f in front if f["model"] == tr["frontier_choice"])
    assert chosen in ok and chosen["validation_cost"] == min(f["validation_cost"] for f in ok)
    assert tr["validation_mean_cost"] == pytest.approx(chosen["validation_cost"], rel=1e-6)
    assert tr["validation_accuracy"] == pytest.approx(chosen["validation_accuracy"])
    assert f"cascade: kept {tr['frontier_choice']}" in err
    if " exits " in tr["frontier_choice"]:  # an exit cascade: its iterations in the cheaper order on validation
        assert tr["tree_order"] == "auto" and tr["tree_order_used"] in ("boosting", "cost")
    every = {"cscc": None, "exits every 1": 1, "exits every 5": 5}
    n = next((v for k, v in every.items() if tr["frontier_choice"].endswith(k)), 0)
    assert model.tables.n_stages == (3 if n is None else 1 if n == 0 else -(-tr["trees_chosen"] // n))


def shared_threshold_by_brute_force(stage_scores: list[np.ndarray], full: np.ndarray, y: np.ndarray, w: np.ndarray,
                                    agreement: float) -> float | None:
    """The smallest t of all the statistic's values whose exits (first stage before the last with |score| or the
    top-2 margin above t) keep the rule on the exited rows together; None: no t exits a row and keeps it."""
    binary = stage_scores[0].shape[1] == 1
    best = None
    for t in sorted({float(v) for sc in stage_scores[:-1] for v in (np.abs(sc[:, 0]) if binary else margin(sc))}):
        early, exited = np.zeros(y.size, np.int64), np.zeros(y.size, bool)
        for sc in stage_scores[:-1]:
            stat = np.abs(sc[:, 0]) if binary else margin(sc)
            now = ~exited & (stat > np.float32(t))
            early[now] = (sc[now, 0] > 0) if binary else np.argmax(sc[now], axis=1)
            exited |= now
        if not exited.any():
            continue
        e, f, yy, ww = early[exited], full[exited], y[exited], w[exited]
        if np.sum(ww * (e == yy)) >= np.sum(ww * (f == yy)) - 1e-9 and np.sum(e == f) >= agreement * exited.sum():
            return t if best is None else min(best, t)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_shared_exit_threshold_is_the_smallest_that_keeps_the_rule(seed: int) -> None:
    """learn_shared_threshold against a brute force over every value of the statistic (few enough rows that its
    quantile grid holds them all), two and several classes."""
    rng = np.random.default_rng(seed)
    n, S, K = int(rng.integers(5, 30)), int(rng.integers(2, 6)), int(rng.choice([1, 1, 3, 4]))
    steps = rng.normal(size=(S, n, K)).astype(np.float32)
    stage_scores = list(np.cumsum(steps, axis=0).astype(np.float32))
    n_classes = 2 if K == 1 else K
    full = decide(stage_scores[-1])
    y = np.where(rng.random(n) < 0.8, full, rng.integers(0, n_classes, n))
    w = balanced_weights(y, n_classes)
    agreement = float(rng.choice([0.8, 0.9, 1.0]))
    upper, lower = learn_shared_threshold(stage_scores, full, y, w, agreement)
    t = shared_threshold_by_brute_force(stage_scores, full, y, w, agreement)
    assert np.isinf(upper[-1]) and np.isinf(lower[-1])
    if t is None:
        assert np.all(np.isinf(upper)) and np.all(np.isinf(lower))
        return
    assert np.all(upper[:-1] == np.float32(t))
    assert np.all(lower[:-1] == (np.float32(-t) if K == 1 else -np.inf))


# ----------------------------------------------------------- cheap-first ----
def test_cheap_first_start_charges_its_own_lambda_then_the_kept_one() -> None:
    """GreedyMiserClassifier(first_lam, first_iters): the first iterations are the first_lam model's own trees
    (the booster is deterministic), the later ones are charged lam; first_iters=0 is the plain model. Known answer:
    with a prohibitive first_lam and free cheap features, the first trees split on cheap features only and the
    expensive informative ones come in after them."""
    X, y = cheap_noisy_expensive_informative(n=600)
    costs = np.array([0.0] * 4 + [100.0] * 4)
    params = {"n_trees": 12, "max_depth": 2, "costs": costs, "validation_fraction": 0.0, "n_iter_no_change": None}
    plain = GreedyMiserClassifier(lam=0.0, **params).fit(X, y)
    same = GreedyMiserClassifier(lam=0.0, first_lam=50.0, first_iters=0, **params).fit(X, y)
    np.testing.assert_array_equal(plain.ir_["feature"], same.ir_["feature"])
    hi = GreedyMiserClassifier(lam=1e6, **params).fit(X, y)
    both = GreedyMiserClassifier(lam=0.0, first_lam=1e6, first_iters=5, **params).fit(X, y)
    for a, b in zip(hi.trees_[:5], both.trees_[:5], strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.value, b.value)
    first = np.concatenate([t.feature for t in both.trees_[:5]])
    later = np.concatenate([t.feature for t in both.trees_[5:]])
    assert set(first[first >= 0]) <= {0, 1, 2, 3} and (later >= 4).any()
    with pytest.raises(ValueError, match="first_iters"):
        GreedyMiserClassifier(first_iters=-1).fit(X, y)


def test_cheap_first_adds_starts_to_the_frontier(work: Path) -> None:
    """--cheap-first: the frontier holds the defaults' candidates and, for the three sweep lambdas above the kept
    one, two cheap-first starts each; the choice is the cheapest admissible, so no costlier on validation than the
    defaults'; the written tables run in C as in the reference."""
    X, y = cheap_noisy_expensive_informative(n=1100)
    np.savez(work / "big_cf.npz", X=X, y=y)
    out = {}
    for name, extra in (("plain", []), ("cheap", ["--cheap-first"])):
        code, _, err = run("train", "cascade", work / "big_cf.npz", "--costs", work / "costs.csv", "--depth", 2,
                           *extra, "-o", work / f"{name}.msgpack")
        assert code == 0, err
        out[name] = fmt.load(work / f"{name}.msgpack")
    assert "cheap-first starts" in err
    plain, cheap = (out[k].meta["training"] for k in ("plain", "cheap"))
    names = [f["model"] for f in cheap["frontier"]]
    assert [f["model"] for f in plain["frontier"]] == [n for n in names if ", then " not in n]
    starts = [n for n in names if ", then " in n and " exits " not in n]
    kept = {float(n.rsplit(" ", 1)[1]) for n in starts}
    assert len(kept) == 1
    swept = sorted({float(n.split("=")[1]) for n in names if ", " not in n and n.startswith("miser")})
    above = [v for v in swept if v > next(iter(kept))][:3]
    assert sorted({float(n.split("=")[1].split(" ")[0]) for n in starts}) == above
    assert len(starts) <= 2 * len(above)
    ref = cheap["frontier"][0]["validation_accuracy"]
    ok = [f for f in cheap["frontier"] if f["validation_accuracy"] >= ref - 0.01 - 1e-12]
    chosen = next(f for f in cheap["frontier"] if f["model"] == cheap["frontier_choice"])
    assert chosen["validation_cost"] == min(f["validation_cost"] for f in ok)
    assert cheap["validation_mean_cost"] <= plain["validation_mean_cost"] + 1e-9
    c_equals_reference(out["cheap"], X.astype(np.float32))


@pytest.mark.parametrize("extra, says", [
    (["--early-exit-every", 5], "--early-exit-every trains another cascade"),
    (["--stages", 2], "--stages trains another cascade"),
    (["--lambda", 0.3], "--lambda trains another cascade"),
])
def test_cheap_first_refused_beside_another_cascade(work: Path, extra: list[Any], says: str) -> None:
    code, _, err = run("train", "cascade", work / "data.npz", "--cheap-first", *extra, "-o", work / "no.msgpack")
    assert code == 2 and says in err.strip().splitlines()[-1]
    assert not (work / "no.msgpack").exists()


def test_cheap_first_left_out_on_a_small_validation_part(work: Path) -> None:
    """900 rows: 180 validation rows, under 200: the frontier is cross-validated, has no cheap-first starts, and
    says so; the model is the one trained without the flag."""
    for name, extra in (("cf_small", ["--cheap-first"]), ("small", [])):
        code, _, err = run("train", "cascade", work / "data.npz", *extra, "-o", work / f"{name}.msgpack")
        assert code == 0, err
        assert ("--cheap-first left out" in err) == bool(extra)
    a, b = (fmt.load(work / f"{n}.msgpack") for n in ("cf_small", "small"))
    X = np.load(work / "data.npz")["X"].astype(np.float32)
    same_fields(reference_evaluator(a).predict(X), reference_evaluator(b).predict(X))
    assert a.meta["training"]["cv_accuracy"] == b.meta["training"]["cv_accuracy"]


def test_exiting_cascades_give_probabilities_that_agree_with_predict() -> None:
    """predict_proba and decision_function for the cascade kind's estimators (EarlyExitEnsemble over a two-class and
    a three-class miser model, CSCC): rows sum to 1, the largest probability is predict's class, the scores are
    predict_detailed's at each row's exit."""
    X, y = cheap_noisy_expensive_informative(n=500)
    y3 = np.where(X[:, 5] > 0.8, 2, y)
    costs = np.array([1.0] * 4 + [100.0] * 4)
    ests = []
    for target in (y, y3):
        m = GreedyMiserClassifier(lam=0.3, n_trees=30, max_depth=2, costs=costs).fit(X[:400], target[:400])
        ests.append(EarlyExitEnsemble(m, every=3, thresholds="shared").fit(X[400:], target[400:]))
    ests.append(CsccCascadeClassifier(n_stages=3, n_trees=12, lam=0.3, costs=costs, random_state=0)
                .fit(X[:300], y[:300], eval_set=(X[300:400], y[300:400])))
    for est in ests:
        p = est.predict_proba(X)
        assert p.shape == (len(X), est.classes_.size)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        np.testing.assert_array_equal(est.classes_[np.argmax(p, axis=1)], est.predict(X))
        np.testing.assert_array_equal(est.decision_function(X), est.predict_detailed(X)["score"])
    assert {e.loss_ for e in ests} == {"logistic", "multiclass-log", "squared"}


def test_frontier_estimator_is_what_the_cli_trains(work: Path) -> None:
    """CascadeFrontierClassifier, fitted on the CLI's train part with its validation part as eval_set, gives the
    model `train cascade` writes (the same IR, candidates and choice); it answers as its kept estimator, with
    probabilities that sum to 1 and agree with predict; get_params / clone work; bad parameters and one class are
    refused."""
    from sklearn.base import clone  # noqa: PLC0415

    from compiler.costs import load_costs  # noqa: PLC0415
    from compiler.trees.frontier import CascadeFrontierClassifier  # noqa: PLC0415

    X, y = cheap_noisy_expensive_informative(n=1000, seed=7)
    np.savez(work / "est.npz", X=X, y=y)
    code, _, err = run("train", "cascade", work / "est.npz", "--costs", work / "costs.csv", "--depth", 2,
                       "-o", work / "est.msgpack")
    assert code == 0, err
    model = fmt.load(work / "est.msgpack")
    task = tasks.prepare(str(work / "est.npz"))
    Xf = task.data.X.astype(np.float32)
    est = CascadeFrontierClassifier(costs=load_costs(work / "costs.csv", task.data.feature_names), max_depth=2,
                                    random_state=task.split.seed)
    copy_ = clone(est).get_params()
    assert copy_.keys() == est.get_params().keys() and copy_["max_depth"] == 2 and copy_["costs"] is not None
    est.fit(Xf[task.train], task.y[task.train], eval_set=(Xf[task.validation], task.y[task.validation]))
    tr = model.meta["training"]
    assert est.frontier_ == tr["frontier"] and est.best_name_ == tr["frontier_choice"]
    np.testing.assert_array_equal(reference_evaluator(model).predict(Xf).label,
                                  TreeCascade.from_ir(est.to_tree_ensemble()).predict_reference(Xf).label)
    np.testing.assert_array_equal(est.predict(Xf), est.best_estimator_.predict(Xf))
    p = est.predict_proba(Xf)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(p, axis=1)], est.predict(Xf))
    with pytest.raises(ValueError, match="thresholds"):
        CascadeFrontierClassifier(thresholds="some").fit(Xf, task.y)
    with pytest.raises(ValueError, match="two classes"):
        CascadeFrontierClassifier().fit(Xf[:50], np.zeros(50, np.int64))


def test_small_validation_part_stops_the_fold_ensembles_early(tmp_path: Path) -> None:
    """A small noisy set (60 validation rows: the cross-validated frontier): each lambda's ensembles are as long as
    its folds' fits early-stopped on their held-out rows keep on average, not --trees. A fixed --trees over-fits
    such a set until the constant model wins on held-out accuracy and the trained cascade is refused as trivial
    (KEEL saheart did that before round 54)."""
    from compiler.options import stratified_folds
    from compiler.trees.options import CASCADE_DEFAULTS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6)).astype(np.float32)
    y = (X[:, 0] + 1.5 * rng.normal(size=300) > 0).astype(np.int64)  # a weak signal in heavy label noise
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, _, err = run("train", "cascade", tmp_path / "d.npz", "--trees", 60, "-o", tmp_path / "m.msgpack")
    assert code == 0, err
    assert "5-fold cross-validation" in err
    model = fmt.load(tmp_path / "m.msgpack")
    meta = model.meta["training"]
    task = tasks.prepare(str(tmp_path / "d.npz"))
    pool = np.concatenate([task.train, task.validation])
    Xp, yp = task.data.X[pool].astype(np.float32), task.y[pool]
    stopped = [GreedyMiserClassifier(lam=meta["lambda_chosen"], n_trees=60, max_depth=CASCADE_DEFAULTS["depth"],
                                     step=CASCADE_DEFAULTS["step"], loss="logistic", costs=np.ones(6),
                                     tree_eval_cost=CASCADE_DEFAULTS["tree_cost"], random_state=0,
                                     ).fit(Xp[tr], yp[tr], eval_set=(Xp[te], yp[te])).n_iter_
               for tr, te in stratified_folds(yp, 5, 0)]
    assert meta["trees_chosen"] == model.tables.stage_end[-1] == max(1, round(float(np.mean(stopped)))) < 60
