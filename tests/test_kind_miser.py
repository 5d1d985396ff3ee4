"""Kind ``miser`` end to end: CLI training (plain and --sweep), the runtime's lazy reads and costs,
lambda = 0 against plain gradient boosting, C vs numpy reference, format checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from boost_reference import boost
from cli_work import cheap_and_clean, run, write_costs

from compiler import tasks
from pyruntime import format as fmt
from pyruntime.errors import ModelFormatError
from pyruntime.evaluators import c_evaluator, reference_evaluator
from pyruntime.trees.cascade import TreeCascade

N_CHEAP = 4


def cheap_noisy_expensive_informative(n: int = 900, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Four cheap noisy views of the label, four expensive clean ones."""
    return cheap_and_clean(n, seed, N_CHEAP, cheap=(0.5, 1.5))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("miser")
    X, y = cheap_noisy_expensive_informative()
    np.savez(d / "data.npz", X=X, y=y)
    write_costs(d / "costs.csv", [1] * N_CHEAP + [100] * 4)
    return d


def train(work: Path, name: str, *opts: object) -> fmt.ModelFile:
    code, _, err = run("train", "miser", work / "data.npz", "--costs", work / "costs.csv", "-o", work / name, *opts)
    assert code == 0, err
    return fmt.load(work / name)


def test_large_lambda_reads_only_cheap_features(work: Path) -> None:
    free = train(work, "free.msgpack", "--lambda", 0, "--trees", 30)
    frugal = train(work, "frugal.msgpack", "--lambda", 10, "--trees", 30)
    X = np.load(work / "data.npz")["X"]
    used_free = set(free.meta["training"]["features_used"])
    used_frugal = set(frugal.meta["training"]["features_used"])
    assert used_free & set(range(N_CHEAP, 8))  # unconstrained: wants the informative features
    assert used_frugal and used_frugal <= set(range(N_CHEAP))
    # the code form's branch-layout hint: per node the percentage of training rows that went left
    percent = free.meta["training"]["code_hints"]["left_percent"]
    assert len(percent) == free.tables.trees.n_nodes and all(0 <= v <= 100 for v in percent)
    p = c_evaluator(frugal).predict(X)
    assert np.all(p.n_read <= N_CHEAP) and np.all(p.cost <= N_CHEAP)
    assert np.all(p.cost == p.n_read)  # cheap features cost 1 each
    assert np.mean(c_evaluator(free).predict(X).cost) > 100
    code, out, _ = run("eval", work / "frugal.msgpack", work / "data.npz", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["kind"] == "miser" and rep["mean_cost"] <= N_CHEAP
    assert rep["exit_histogram"] == [rep["n"]] and rep["mean_trees"] == frugal.tables.trees.n_trees
    assert rep["accuracy"] > 0.6
    code, out, _ = run("inspect", work / "frugal.msgpack", "--json")
    assert code == 0 and json.loads(out)["n_features_used"] == len(used_frugal) == frugal.tables.n_used


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_lambda_zero_runtime_equals_plain_gradient_boosting(work: Path, loss: str) -> None:
    model = train(work, f"zero-{loss}.msgpack", "--lambda", 0, "--trees", 25, "--loss", loss, "--depth", 2)
    task = tasks.prepare(str(work / "data.npz"))
    X32 = task.data.X.astype(np.float32)
    n_iter = model.tables.trees.n_trees
    ref = boost(X32[task.train], task.y[task.train], n_iter, loss=loss, step=0.1, depth=2, X_eval=X32)
    for numeric_pred in (c_evaluator(model).predict(X32), reference_evaluator(model).predict(X32)):
        np.testing.assert_array_equal(numeric_pred.score, ref)
        np.testing.assert_array_equal(numeric_pred.label, (ref > 0).astype(np.int32))
    # and the number of trees is the validation-loss optimum of the whole run: not all 25 when it overfits
    assert 1 <= n_iter <= 25


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_c_and_reference_agree_on_cli_models(work: Path, numeric: str) -> None:
    model = train(work, "mid.msgpack", "--lambda", 0.5, "--trees", 30, "--tree-cost", 0.5)
    X = np.load(work / "data.npz")["X"]
    c, r = c_evaluator(model, numeric).predict(X), reference_evaluator(model, numeric).predict(X)
    for field in ("label", "score", "n_read", "cost", "stage"):
        np.testing.assert_array_equal(getattr(c, field), getattr(r, field), err_msg=field)
    code, out, _ = run("eval", work / "mid.msgpack", work / "data.npz", "--json", "--numeric", numeric)
    rep = json.loads(out)
    assert code == 0 and rep["tree_eval_cost"] == 0.5
    assert rep["mean_test_time_cost"] == pytest.approx(rep["mean_cost"] + 0.5 * rep["mean_trees"])
    # the training record names its figures as eval does (round 64: its mean_cost held the test-time cost)
    tr = model.meta["training"]
    assert tr["validation_mean_test_time_cost"] == pytest.approx(tr["validation_mean_cost"]
                                                                 + 0.5 * tr["validation_mean_trees"])
    assert tr["validation_mean_cost"] < tr["validation_mean_test_time_cost"]


def test_sweep_keeps_cheapest_within_tolerance_and_prints_curve(work: Path) -> None:
    code, _, err = run("train", "miser", work / "data.npz", "--costs", work / "costs.csv", "-o",
                       work / "sweep.msgpack", "--sweep", "--trees", 20, "--lambda-grid", "0.1,1,10,100",
                       "--tolerance", "0.02", "--folds", 1, "--refine", 0)
    assert code == 0, err
    assert "<- kept" in err and "val cost" in err
    model = fmt.load(work / "sweep.msgpack")
    curve = model.meta["training"]["sweep_curve"]
    assert [p["lambda"] for p in curve] == [0.0, 0.1, 1.0, 10.0, 100.0]
    ref = curve[0]
    kept = next(p for p in curve if p["lambda"] == model.meta["training"]["lambda_chosen"])
    ok = [p for p in curve if p["validation_accuracy"] >= ref["validation_accuracy"] - 0.02]
    assert kept in ok and kept["validation_cost"] == min(p["validation_cost"] for p in ok)
    assert kept["validation_cost"] < ref["validation_cost"]
    # the file's own validation figures are those of the kept model
    assert model.meta["training"]["validation_accuracy"] == pytest.approx(kept["validation_accuracy"])


def test_sweep_folds_judges_lambda_by_cross_validation_and_refits_on_both_parts(work: Path) -> None:
    model = train(work, "cv.msgpack", "--sweep", "--folds", 3, "--trees", 20, "--lambda-grid", "0.1,1,10,100",
                  "--tolerance", "0.02", "--refine", 0)
    tr = model.meta["training"]
    curve = tr["sweep_curve"]
    assert [p["lambda"] for p in curve] == [0.0, 0.1, 1.0, 10.0, 100.0]
    assert all("cv_accuracy" in p and "validation_accuracy" not in p for p in curve)
    task = tasks.prepare(str(work / "data.npz"), seed=0)
    n = task.train.size + task.validation.size
    for p in curve:  # accuracy over every pooled row: a whole number of rows
        assert p["cv_accuracy"] * n == pytest.approx(round(p["cv_accuracy"] * n))
    ok = [p for p in curve if p["cv_accuracy"] >= curve[0]["cv_accuracy"] - 0.02]
    kept = next(p for p in curve if p["lambda"] == tr["lambda_chosen"])
    assert kept in ok and kept["cv_cost"] == min(p["cv_cost"] for p in ok)
    assert kept["cv_cost"] < curve[0]["cv_cost"]
    # refitted on train + validation with the folds' mean number of iterations (one tree each: two classes)
    assert tr["trees_chosen"] == max(1, round(kept["iterations"]))
    assert tr["sweep_tolerance"] == 0.02


def test_small_validation_part_sweeps_by_five_folds_without_the_option(work: Path) -> None:
    """900 rows: a 180-row validation part (< 200) is judged by 5-fold CV on both parts pooled, then refitted."""
    model = train(work, "auto.msgpack", "--sweep", "--trees", 20, "--lambda-grid", "1,100", "--tolerance", "0.02")
    tr = model.meta["training"]
    assert tr["sweep_folds"] == 5
    assert all("cv_accuracy" in p for p in tr["sweep_curve"])
    kept = next(p for p in tr["sweep_curve"] if p.get("kept"))
    assert tr["lambda_chosen"] == kept["lambda"] and tr["trees_chosen"] == max(1, round(kept["iterations"]))
    same = train(work, "five.msgpack", "--sweep", "--trees", 20, "--lambda-grid", "1,100", "--tolerance", "0.02",
                 "--folds", 5)
    assert same.meta["training"]["sweep_curve"] == tr["sweep_curve"]
    one = train(work, "one.msgpack", "--sweep", "--trees", 20, "--lambda-grid", "1,100", "--tolerance", "0.02",
                "--folds", 1)
    assert one.meta["training"]["sweep_folds"] == 0
    assert all("validation_accuracy" in p for p in one.meta["training"]["sweep_curve"])


def test_auto_folds_rule() -> None:
    from compiler.options import CV_BELOW, CV_FOLDS, auto_folds  # noqa: PLC0415

    y = np.repeat([0, 1, 2], 10)
    assert auto_folds(CV_BELOW - 1, y, None) == CV_FOLDS  # small validation part: cross-validation
    assert auto_folds(CV_BELOW, y, None) == 0  # large enough: the validation part
    assert auto_folds(10, np.r_[y, 3, 3, 3, 3], None) == 0  # a class with fewer rows than folds: validation
    assert auto_folds(10, y, 1) == 0 and auto_folds(1000, y, 3) == 3  # --folds as given


def test_sweep_trees_keeps_the_cheapest_lambda_and_share_of_its_trees(work: Path) -> None:
    model = train(work, "st.msgpack", "--sweep", "--sweep-trees", "--trees", 40, "--tree-cost", 2,
                  "--lambda-grid", "1,100", "--tolerance", "0.02", "--folds", 1)
    tr = model.meta["training"]
    curve = tr["sweep_curve"]
    assert curve[0]["lambda"] == 0.0 and curve[0]["fraction"] == 1.0  # the reference: lambda 0, every iteration
    for lam in (0.0, 1.0, 100.0):  # per lambda: distinct iteration counts, fewest last, its whole model first
        its = [p["iterations"] for p in curve if p["lambda"] == lam]
        assert its == sorted(set(its), reverse=True)
        assert its[-1] == max(1, round(0.1 * its[0]))
    assert len([p for p in curve if p["lambda"] == 0.0]) >= 3
    ok = [p for p in curve if p["validation_accuracy"] >= curve[0]["validation_accuracy"] - 0.02]
    kept = [p for p in curve if p.get("kept")]
    assert len(kept) == 1 and kept[0] in ok
    assert kept[0]["validation_cost"] == min(p["validation_cost"] for p in ok)
    # the file is the kept point: its trees, lambda, and validation accuracy and cost (features + 2 per tree)
    assert tr["lambda_chosen"] == kept[0]["lambda"] and tr["trees_chosen"] == kept[0]["trees"]
    assert tr["validation_accuracy"] == pytest.approx(kept[0]["validation_accuracy"])
    assert tr["validation_mean_test_time_cost"] == pytest.approx(kept[0]["validation_cost"])
    assert tr["validation_mean_cost"] == pytest.approx(kept[0]["validation_cost"] - 2 * tr["validation_mean_trees"])


def test_sweep_trees_with_folds_refits_the_kept_share(work: Path) -> None:
    model = train(work, "stcv.msgpack", "--sweep", "--sweep-trees", "--folds", 3, "--trees", 40, "--tree-cost", 2,
                  "--lambda-grid", "1", "--tolerance", "0.02")
    tr = model.meta["training"]
    kept = next(p for p in tr["sweep_curve"] if p.get("kept"))
    whole = next(p for p in tr["sweep_curve"] if p["lambda"] == kept["lambda"] and p["fraction"] == 1.0)
    assert kept["iterations"] <= whole["iterations"]
    assert tr["trees_chosen"] == max(1, round(kept["iterations"]))  # two classes: one tree per iteration


def test_refine_between_known_answers() -> None:
    from compiler.trees.kind_miser import refine_between  # noqa: PLC0415

    def curve(*pts: tuple[float, float]) -> list[dict[str, float]]:
        return [{"lambda": lam, "fraction": 1.0, "validation_cost": c} for lam, c in pts]

    # kept 0.1 (cost 50); 1 costs as much, 10 is cheaper: between 1 and 10, at 10^(1/3) and 10^(2/3)
    c = curve((0, 90), (0.1, 50), (1, 50), (10, 20))
    assert refine_between(c, 1, "validation") == pytest.approx([2.154, 4.642])
    # kept lambda 0, the smallest positive lambda is cheaper: from a ninth of it
    assert refine_between(curve((0, 90), (0.9, 20)), 0, "validation") == pytest.approx([0.1, 0.208, 0.4327])
    assert refine_between(curve((0, 90), (1, 80), (10, 70)), 2, "validation") == []  # none cheaper above
    assert refine_between(curve((0, 90), (1, 90), (10, 95)), 0, "validation") == []
    # truncated points (fraction < 1) never set the bound
    c = curve((0, 90), (1, 90))
    c.append({"lambda": 1.0, "fraction": 0.5, "validation_cost": 10})
    assert refine_between(c, 0, "validation") == []


def test_sweep_refine_adds_lambdas_next_to_the_kept_one(work: Path) -> None:
    model = train(work, "refine.msgpack", "--sweep", "--refine", 2, "--trees", 20, "--lambda-grid", "1,100",
                  "--tolerance", "0.02", "--folds", 1)
    tr = model.meta["training"]
    lams = [p["lambda"] for p in tr["sweep_curve"]]
    assert lams == sorted(lams) and lams[0] == 0.0 and {1.0, 100.0} <= set(lams)
    extra = sorted(set(lams) - {0.0, 1.0, 100.0})
    assert 2 <= len(extra) <= 4  # two a round, a round stops when the kept lambda is the largest
    curve = tr["sweep_curve"]
    ok = [p for p in curve if p["validation_accuracy"] >= curve[0]["validation_accuracy"] - 0.02]
    kept = next(p for p in curve if p.get("kept"))
    assert kept["validation_cost"] == min(p["validation_cost"] for p in ok)
    assert tr["lambda_chosen"] == kept["lambda"]


def test_sweep_refines_the_grid_once_by_default(work: Path) -> None:
    from compiler.trees.kind_miser import refine_between  # noqa: PLC0415

    grid = ("--sweep", "--trees", 20, "--lambda-grid", "0.1,1,10,100", "--tolerance", "0.02", "--folds", 1)
    plain = train(work, "grid.msgpack", *grid, "--refine", 0).meta["training"]
    default = train(work, "default.msgpack", *grid).meta["training"]
    once = train(work, "once.msgpack", *grid, "--refine", 1).meta["training"]
    kept = next(i for i, p in enumerate(plain["sweep_curve"]) if p.get("kept"))
    news = refine_between(plain["sweep_curve"], kept, "validation")
    assert news  # the grid's kept lambda has a cheaper neighbour on this data: there is something to refine
    lams = [p["lambda"] for p in default["sweep_curve"]]
    assert lams == sorted([0.0, 0.1, 1.0, 10.0, 100.0, *news])  # the grid and one round's two (or three) lambdas
    assert default["sweep_curve"] == once["sweep_curve"] and default["lambda_chosen"] == once["lambda_chosen"]


def test_truncated_model_is_the_model_fitted_with_fewer_iterations() -> None:
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    X, y = cheap_noisy_expensive_informative(600, seed=5)
    costs = np.array([1.0] * N_CHEAP + [100.0] * 4)
    Xv, yv = cheap_noisy_expensive_informative(200, seed=6)
    m = GreedyMiserClassifier(lam=0.5, n_trees=30, n_iter_no_change=None, costs=costs, tree_eval_cost=3.0,
                              random_state=0).fit(X, y, eval_set=(Xv, yv))
    iters = [m.n_iter_, max(1, m.n_iter_ // 2), 1]
    points = m.staged_points(Xv, yv, iters)
    for t, (acc, cost) in zip(iters, points, strict=True):
        short = m.truncated(t)
        again = GreedyMiserClassifier(lam=0.5, n_trees=t, validation_fraction=0.0, costs=costs,
                                      tree_eval_cost=3.0, random_state=0).fit(X, y)
        np.testing.assert_array_equal(short.decision_function(Xv), again.decision_function(Xv))
        assert short.n_trees_ == again.n_trees_ == t
        np.testing.assert_array_equal(short.features_used_, again.features_used_)
        np.testing.assert_array_equal(m.features_used_at(t), again.features_used_)
        assert acc == np.mean(short.predict(Xv) == yv)
        assert cost == pytest.approx(np.mean(short.test_time_cost(Xv)))
        assert cost == pytest.approx(np.mean(short.features_read(Xv) @ costs) + 3.0 * t)
    for bad in (m.truncated, m.features_used_at):
        with pytest.raises(ValueError, match="n_iter"):
            bad(m.n_iter_ + 1)


def test_one_se_tolerance_known_answers() -> None:
    from types import SimpleNamespace  # noqa: PLC0415

    from compiler.trees.kind_miser import sweep_tolerance  # noqa: PLC0415

    task = SimpleNamespace(train=np.arange(48), validation=np.arange(16))
    perfect = [{"cv_accuracy": 1.0, "validation_accuracy": 0.75}]
    # 64 pooled rows, all right: p = 65/66, sqrt(p (1 - p) / 64) = 0.015151...
    assert sweep_tolerance(task, {"folds": 5, "one_se": True}, perfect, 0.01) == pytest.approx(
        np.sqrt(65 / 66 * 1 / 66 / 64))
    # validation only: 16 rows, 12 right: p = 13/18
    assert sweep_tolerance(task, {"one_se": True}, perfect, 0.01) == pytest.approx(np.sqrt(13 / 18 * 5 / 18 / 16))
    assert sweep_tolerance(task, {"one_se": True}, perfect, 0.5) == 0.5  # never below --tolerance
    assert sweep_tolerance(task, {"folds": 5}, perfect, 0.01) == 0.01  # without --one-se: --tolerance


@pytest.mark.parametrize("args", [
    ("--stages", "3"),
    ("--tolerance", "0.1"),
    ("--sweep", "--lambda", "1"),
    ("--lambda-grid", "1,x", "--sweep"),
    ("--lambda", "-1"),
    ("--folds", "3"),
    ("--one-se",),
    ("--sweep-trees",),
    ("--refine", "2"),
    ("--charge", "lazy"),
    ("--sweep", "--folds", "0"),
    ("--sweep", "--folds", "1000"),
])
def test_bad_options_are_one_line_errors(work: Path, args: tuple[str, ...]) -> None:
    out = work / "bad.msgpack"
    code, _, err = run("train", "miser", work / "data.npz", "-o", out, "--trees", "2", *args)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("error: ")
    assert sum(line.startswith("error") for line in lines) == 1 and "Traceback" not in err
    assert not out.exists()


def test_row_charge_trains_reads_cheap_features_and_refuses_groups(work: Path) -> None:
    frugal = train(work, "row.msgpack", "--lambda", 10, "--trees", 30, "--charge", "row")
    assert frugal.meta["training"]["charge"] == "row"
    X = np.load(work / "data.npz")["X"]
    p = c_evaluator(frugal).predict(X)
    ref = reference_evaluator(frugal).predict(X)
    np.testing.assert_array_equal(p.label, ref.label)
    np.testing.assert_array_equal(p.n_read, ref.n_read)
    assert np.mean(p.cost) < np.mean(c_evaluator(train(work, "row0.msgpack", "--lambda", 0, "--trees", 30,
                                                             "--charge", "row")).predict(X).cost)
    groups = work / "groups.csv"
    groups.write_text("feature,cost,group\ng,10,\n" + "".join(f"{j},1,{'g' if j < 2 else ''}\n" for j in range(8)))
    out = work / "row_groups.msgpack"
    code, _, err = run("train", "miser", work / "data.npz", "--costs", groups, "--charge", "row", "-o", out)
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: ") and "groups" in err
    assert not out.exists()


def test_format_round_trip_and_inconsistent_tables(work: Path) -> None:
    model = train(work, "rt.msgpack", "--lambda", 1, "--trees", 5)
    blob = fmt.dumps(model)
    again = fmt.loads(blob)
    assert isinstance(again.tables, TreeCascade) and again.kind == "miser"
    np.testing.assert_array_equal(again.tables.trees.threshold, model.tables.trees.threshold)
    d = model.tables.to_dict()
    for key, bad in (("stage_end", np.array([1], np.uint32)), ("exit_rule", "margin"),
                     ("exit_upper", np.array([np.nan], np.float32)), ("stage_end", np.zeros(0, np.uint32))):
        broken = fmt.ModelFile("miser", model.tables, model.meta)
        raw = {**d, key: bad}
        with pytest.raises(ModelFormatError):
            TreeCascade.from_dict(raw)
        # through the file reader too: one clear error, never a crash
        object.__setattr__(broken, "tables", _Raw(raw))
        with pytest.raises(ModelFormatError):
            fmt.loads(fmt.dumps(broken))


class _Raw:
    """Tables that serialize a given dict as is (to write inconsistent files)."""

    def __init__(self, d: dict) -> None:
        self.d = d
        self.n_features = 8

    def to_dict(self) -> dict:
        return self.d
