"""K-class tasks end to end (issue 19): labels as given kept in the model file and printed by `predict`,
the header's label table, `eval`'s K-class figures (balanced accuracy, macro-F1, confusion matrix,
per-class features and cost), and one clear error (exit 2, one line, nothing written) per bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from host_build import PRINT_ROWS, run_with_header
from sklearn.datasets import load_iris
from sklearn.metrics import balanced_accuracy_score, confusion_matrix, f1_score

from compiler.header import render_header
from compiler.tasks import class_weighted_accuracy, macro_f1
from pyruntime import format as fmt
from pyruntime.data import MAX_CLASSES, encode_labels, label_order
from pyruntime.evaluators import c_evaluator, reference_evaluator

NAMES = ["setosa", "versi color", 'vir"ginica']  # a space and a quote: the header escapes them


def write_csv(path: Path, X: np.ndarray, labels: list[str]) -> Path:
    header = ",".join([f"f{j}" for j in range(X.shape[1])] + ["label"])
    rows = [",".join([*(f"{v:g}" for v in x), lab]) for x, lab in zip(X, labels)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("multi")
    iris = load_iris()
    write_csv(d / "iris.csv", iris.data, [NAMES[int(t)] for t in iris.target])
    code, _, err = run("train", "miser", d / "iris.csv", "-o", d / "m.msgpack", "--trees", "8", "--depth", "2",
                       "--lambda", "0")
    assert code == 0, err
    return d


TREE_KINDS = {  # kind -> train options: every tree kind trains K classes (K trees per iteration)
    "miser": ["--trees", "8", "--depth", "2", "--lambda", "0.5"],
    "cascade": ["--early-exit-every", "2", "--trees", "8", "--depth", "2"],
}
GATED = {  # adapt-gbrt: gate g, K-class f1 (shared trees by default) and f0 (on the device, or off it: DEFER)
    "adapt-gbrt": ["--trees", "6", "--hpc", "gbrt"],
    "adapt-gbrt-remote": ["--trees", "6", "--hpc", "gbrt", "--hpc-remote"],
    "adapt-gbrt-separate": ["--trees", "6", "--hpc", "gbrt", "--class-trees", "separate"],
}


@pytest.mark.parametrize("kind", sorted(TREE_KINDS))
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_tree_kinds_c_header_and_reference_agree(work: Path, tmp_path: Path, kind: str, numeric: str) -> None:
    """Each tree kind on 3 classes: the C runtime equals the reference, and the compiled header (tables,
    K outputs and the label table) prints what `predict` prints."""
    out = work / f"{kind}.msgpack"
    if not out.exists():
        code, _, err = run("train", kind, work / "iris.csv", "-o", out, *TREE_KINDS[kind])
        assert code == 0, err
    m = fmt.load(out)
    assert m.tables.n_classes == 3 and m.tables.trees.n_outputs == 3
    X = load_iris().data
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    for name in ("label", "n_read", "stage"):
        np.testing.assert_array_equal(getattr(c, name), getattr(ref, name))
    assert np.mean(c.label == load_iris().target) > 0.85
    if kind == "cascade":  # the margin exits answer rows before the last stage
        assert np.mean(m.tables.trees_at(c.stage)) < m.tables.stage_end[-1]
    code, text, _ = run("predict", out, work / "iris.csv", "--numeric", numeric, "--rows", "30")
    lines = run_with_header(render_header(m, numeric, "model", X[:30]), PRINT_ROWS, tmp_path)
    assert code == 0 and lines == [" ".join(t.split(" ")[:-1]) for t in text.splitlines()]


@pytest.mark.parametrize("name", sorted(GATED))
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_gated_k_class_c_header_and_reference_agree(work: Path, tmp_path: Path, name: str, numeric: str) -> None:
    out = work / f"{name}.msgpack"
    if not out.exists():
        code, _, err = run("train", "adapt-gbrt", work / "iris.csv", "-o", out, *GATED[name])
        assert code == 0, err
    m = fmt.load(out)
    assert m.kind == "gated" and m.tables.n_classes == 3
    assert m.meta["training"]["class_trees"] == ("separate" if name.endswith("separate") else "shared")
    X = load_iris().data
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    for field in ("label", "n_read", "stage"):
        np.testing.assert_array_equal(getattr(c, field), getattr(ref, field))
    answered = c.label >= 0
    assert np.mean(c.label[answered] == load_iris().target[answered]) > 0.85
    if not name.endswith("remote"):
        assert np.all(answered)  # f0 on the device answers every row the gate sends it
    code, text, _ = run("predict", out, work / "iris.csv", "--numeric", numeric, "--rows", "40")
    lines = run_with_header(render_header(m, numeric, "model", X[:40]), PRINT_ROWS, tmp_path)
    assert code == 0 and lines == [" ".join(t.split(" ")[:-1]) for t in text.splitlines()]


def test_cascade_cscc_options_are_refused_with_k_classes(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", "cascade", work / "iris.csv", "--stages", 3, "-o", out),
                   "--stages is CSCC's, whose stages reject early for two classes; the target has 3", out)


def test_default_cascade_trains_k_classes_without_a_flag(tmp_path: Path) -> None:
    """No flag: the frontier of the miser sweep and its exiting cascades (top-2 margin, one threshold for every
    stage); the kept model is the cheapest candidate within 0.01 of lambda 0 on validation, and C equals the
    reference on it."""
    from sklearn.datasets import make_classification  # noqa: PLC0415

    X, y = make_classification(n_samples=1100, n_features=8, n_informative=5, n_classes=3, random_state=0)
    np.savez(tmp_path / "k3.npz", X=X, y=y)  # 220 validation rows: the frontier judged on them
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "cascade", tmp_path / "k3.npz", "--trees", 10, "-o", out)
    assert code == 0, err
    m = fmt.load(out)
    tr = m.meta["training"]
    assert tr["method"] == "frontier" and m.tables.trees.n_outputs == 3 and len(m.meta["classes"]) == 3
    front = tr["frontier"]
    assert front[0]["model"] == "miser lambda=0" and not any(f["model"] == "cscc" for f in front)
    ok = [f for f in front if f["validation_accuracy"] >= front[0]["validation_accuracy"] - 0.01 - 1e-12]
    assert min(f["validation_cost"] for f in ok) == pytest.approx(tr["validation_mean_cost"], rel=1e-6)
    if "exits" in tr["frontier_choice"]:
        assert m.tables.exit_rule == "margin" and len(set(m.tables.exit_upper[:-1].tolist())) == 1
    for numeric in ("float32", "q15"):
        c, ref = c_evaluator(m, numeric).predict(X[:200]), reference_evaluator(m, numeric).predict(X[:200])
        for field in ("label", "n_read", "stage"):
            np.testing.assert_array_equal(getattr(c, field), getattr(ref, field))


def test_default_cascade_cross_validates_a_small_validation_part(work: Path, tmp_path: Path) -> None:
    """Iris (30 validation rows, under 200): the default judges the sweep's lambdas and the exit tests every 1 and 5
    iterations by 5-fold cross-validation (the held-out rule of --exit-lambdas), one exit threshold for every
    stage; C equals the reference."""
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "cascade", work / "iris.csv", "--trees", 10, "-o", out)
    assert code == 0, err
    assert "(< 200): the frontier's lambdas and exit tests judged by 5-fold cross-validation" in err
    m = fmt.load(out)
    tr = m.meta["training"]
    assert tr["method"] == "early-exit" and tr["exit_thresholds"] == "shared" and tr["exit_folds"] == 5
    lams = {p["lambda"] for p in tr["exit_lambda_curve"]}
    assert lams == {0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0}
    assert {p["every"] for p in tr["exit_lambda_curve"]} == {1, 5} and tr["early_exit_every_chosen"] in (1, 5)
    if m.tables.n_stages > 1:
        assert len(set(m.tables.exit_upper[:-1].tolist())) == 1
    X = load_iris().data
    for numeric in ("float32", "q15"):
        c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
        for field in ("label", "n_read", "stage"):
            np.testing.assert_array_equal(getattr(c, field), getattr(ref, field))


def test_labels_are_kept_in_class_index_order() -> None:
    y, classes = encode_labels(np.array(["b", "a", "c", "a"]), None)
    assert classes == ["a", "b", "c"] and y.tolist() == [1, 0, 2, 0]
    assert label_order(["10", "2", "-1"]) == ["-1", "2", "10"]  # integers in numeric order
    y, classes = encode_labels(np.array(["b", "a", "c"]), "c")  # --positive: one-vs-rest, as before
    assert classes == ["rest", "c"] and y.tolist() == [0, 0, 1]


def test_model_file_holds_the_k_labels(work: Path) -> None:
    m = fmt.load(work / "m.msgpack")
    assert m.format_version == fmt.FORMAT_VERSION == 3
    assert m.classes == sorted(NAMES) and m.tables.trees.n_outputs == m.tables.n_classes == 3
    assert m.meta["validation_class_counts"] == [10, 10, 10]
    code, out, _ = run("inspect", work / "m.msgpack", "--json")
    info = json.loads(out)
    assert code == 0 and info["n_classes"] == 3 and info["classes"] == sorted(NAMES)
    assert info["positive_class_index"] is None


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_predict_prints_label_texts_of_the_c_runtime(work: Path, numeric: str) -> None:
    code, out, err = run("predict", work / "m.msgpack", work / "iris.csv", "--numeric", numeric)
    assert code == 0, err
    m = fmt.load(work / "m.msgpack")
    X = load_iris().data
    c = c_evaluator(m, numeric).predict(X)
    ref = reference_evaluator(m, numeric).predict(X)
    np.testing.assert_array_equal(c.label, ref.label)
    np.testing.assert_array_equal(c.n_read, ref.n_read)
    assert [line.rsplit(" ", 2)[0] for line in out.splitlines()] == [m.classes[i] for i in c.label]
    assert np.mean(c.label == np.searchsorted(m.classes, [NAMES[t] for t in load_iris().target])) > 0.9


def test_eval_reports_k_class_figures(work: Path, tmp_path: Path) -> None:
    code, out, err = run("eval", work / "m.msgpack", work / "iris.csv", "--json", "--plot", tmp_path / "c.png")
    assert code == 0, err
    rep = json.loads(out)
    m = fmt.load(work / "m.msgpack")
    data = np.array([line.rsplit(",", 1)[1] for line in (work / "iris.csv").read_text().splitlines()[1:]])
    from compiler.tasks import rows_for_eval  # noqa: PLC0415

    ds, y, idx, part = rows_for_eval(m, str(work / "iris.csv"))
    assert part == "test" and rep["n"] == idx.size == 30
    assert [m.classes[i] for i in y[idx]] == data[idx].tolist()
    pred = c_evaluator(m).predict(ds.X[idx]).label
    assert rep["accuracy"] == float(np.mean(pred == y[idx]))
    assert rep["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y[idx], pred), abs=1e-12)
    assert rep["macro_f1"] == pytest.approx(f1_score(y[idx], pred, average="macro"), abs=1e-12)
    conf = rep["confusion"]
    assert conf["labels"] == m.classes and conf["none"] == [0, 0, 0]
    assert conf["matrix"] == confusion_matrix(y[idx], pred, labels=[0, 1, 2]).tolist()
    assert set(rep["per_class"]) == set(m.classes) and sum(c["n"] for c in rep["per_class"].values()) == 30
    assert rep["plot"] == str(tmp_path / "c.png") and (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    code, text, _ = run("eval", work / "m.msgpack", work / "iris.csv")
    assert code == 0 and "confusion matrix (rows: true class, columns: predicted):" in text
    assert "balanced_accuracy" in text and "per true class:" in text


def test_k_class_metrics_on_known_answers() -> None:
    y = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, -1])  # -1: deferred (counted as wrong, in the "none" column)
    assert macro_f1(y, pred, 3) == pytest.approx(np.mean([2 / 3, 0.8, 2 / 3]))
    # rows of some of the classes (a file holding a subset, or a test part a rare class missed): the absent classes
    # are not averaged in, as in scikit-learn; a class only predicted still is
    assert macro_f1(np.array([0, 0, 2]), np.array([0, 0, 2]), 5) == 1.0 == f1_score([0, 0, 2], [0, 0, 2],
                                                                                       average="macro")
    assert macro_f1(np.array([0, 0, 2]), np.array([0, 3, 2]), 5) == pytest.approx(
        f1_score([0, 0, 2], [0, 3, 2], average="macro"))
    assert macro_f1(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 3) == 0.0
    # equal weight per class from the counts: class recalls 1/2, 1, 1/2
    assert class_weighted_accuracy(y, pred, [2, 2, 2]) == pytest.approx(2 / 3)
    assert class_weighted_accuracy(y, pred, [1, 2, 2]) == pytest.approx((2 * 1 + 2 * 1 + 1) / (2 * 2 + 2 + 2))


def test_header_label_table_compiles_and_names_each_class(work: Path, tmp_path: Path) -> None:
    m = fmt.load(work / "m.msgpack")
    X = load_iris().data[::10]
    body = ('    printf("%u %s|%s|%s|%s\\n", (unsigned)FM_N_CLASSES, FM_LABEL_TEXT(0), FM_LABEL_TEXT(2), '
            "FM_LABEL_TEXT(-1), FM_LABEL_TEXT(3));\n" + PRINT_ROWS)
    lines = run_with_header(render_header(m, "float32", "model", X), body, tmp_path)
    lines = [line.rsplit(" ", 1)[0] if i else line for i, line in enumerate(lines)]
    classes = sorted(NAMES)
    assert lines[0] == f"3 {classes[0]}|{classes[2]}|-1|-1"
    assert lines[1:] == [classes[i] for i in c_evaluator(m).predict(X).label]


# ------------------------------------------------------------------ bad input ----
def assert_refused(res: tuple[int, str, str], message: str, out: Path | None = None) -> None:
    code, _, err = res
    lines = err.strip().splitlines()  # a trainer may have said what it trains before the error
    assert code == 2 and lines[-1].startswith("error: ") and sum(ln.startswith("error") for ln in lines) == 1, err
    assert message in lines[-1], err
    if out is not None:
        assert not out.exists() and not out.with_name(out.name + ".tmp").exists()


def test_a_bad_class_trees_value_is_refused(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "adapt-gbrt", work / "iris.csv", "-o", out, "--class-trees", "both")
    assert code == 2 and "'both' is not one of 'separate', 'shared'" in err and not out.exists()
    code, _, err = run("train", "adapt-lin", work / "iris.csv", "-o", out, "--class-trees", "shared")
    assert code == 2 and "--class-trees does not apply to kind adapt-lin" in err and not out.exists()


def test_one_class_only_is_refused(tmp_path: Path) -> None:
    data = write_csv(tmp_path / "one.csv", np.random.default_rng(0).normal(size=(40, 3)), ["a"] * 40)
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", "miser", data, "-o", out), "only one class ('a') in the data", out)


def test_more_classes_than_the_tables_hold_is_refused(tmp_path: Path) -> None:
    n = MAX_CLASSES + 1
    X = np.random.default_rng(0).normal(size=(10 * n, 2))
    data = write_csv(tmp_path / "many.csv", X, [f"c{i % n}" for i in range(10 * n)])
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", "miser", data, "-o", out), f"the target has {n} classes, more than the 64", out)


def test_export_refuses_more_classes_than_the_runtime_holds(work: Path, tmp_path: Path) -> None:
    m = fmt.load(work / "m.msgpack")
    m.meta["classes"] = [f"c{i}" for i in range(MAX_CLASSES + 1)]
    with pytest.raises(ValueError, match="65 classes are more than the header's label table holds"):
        render_header(m, "float32")


def test_a_test_label_never_seen_in_training_is_refused(work: Path, tmp_path: Path) -> None:
    lines = (work / "iris.csv").read_text().splitlines()
    (tmp_path / "new.csv").write_text("\n".join([lines[0], *lines[1:5], lines[5].rsplit(",", 1)[0] + ",mystery"])
                                      + "\n")
    assert_refused(run("eval", work / "m.msgpack", tmp_path / "new.csv"),
                   "has labels the model never saw in training ('mystery'")


def test_a_costs_file_for_another_feature_count_is_refused(work: Path, tmp_path: Path) -> None:
    (tmp_path / "costs.csv").write_text("feature,cost\nf0,1\nf1,2\nf2,1\n")
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", work / "iris.csv", "-o", out, "--costs", tmp_path / "costs.csv")
    assert_refused((code, "", err), "f3", out)


def test_a_binary_only_kind_asks_for_positive(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind trains K classes now (cstc was the last, skyline's --base linear the last form); the CLI's
    refusal stays for a kind that would not."""
    from compiler.kinds import kind_spec  # noqa: PLC0415

    out = tmp_path / "m.msgpack"
    monkeypatch.setattr(kind_spec("cstc"), "multiclass", False)
    assert_refused(run("train", "cstc", work / "iris.csv", "-o", out),
                   "cstc trains two classes only so far and the target has 3: pass --positive LABEL", out)


@pytest.mark.parametrize(("kind", "opts"), [
    ("l1-gate", []), ("adapt-lin", ["--pfull", "0.2"]), ("adapt-gbrt", ["--trees", "6", "--hpc", "gbrt"]),
    ("nb-stop", []), ("cascade", ["--early-exit-every", "2", "--trees", "8", "--depth", "2"]),
])
def test_validation_weighted_accuracy_weighs_every_class_alike(tmp_path: Path, kind: str, opts: list[str]) -> None:
    # K classes, unequal counts: the model file's validation_weighted_accuracy is the balanced accuracy of the
    # compiled model on the validation rows (the gated kinds used to weigh class 1 against all the others)
    rng = np.random.default_rng(7)
    y = rng.choice(3, size=600, p=[0.6, 0.3, 0.1])
    X = rng.normal(size=(600, 5)) + 1.2 * np.eye(3, 5)[y]
    data = write_csv(tmp_path / "u.csv", X, [f"k{v}" for v in y])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", kind, data, "-o", out, *opts)
    assert code == 0, err
    m = fmt.load(out)
    from compiler.tasks import prepare  # noqa: PLC0415

    task = prepare(str(data))
    val = task.validation
    pred = c_evaluator(m).predict(task.data.X[val]).label
    got = m.meta["training"]["validation_weighted_accuracy"]
    assert got == pytest.approx(balanced_accuracy_score(task.y[val], pred), abs=1e-12)
    assert got != pytest.approx(float(np.mean(pred == task.y[val])), abs=1e-9)  # the classes are unequal


@pytest.mark.parametrize(("kind", "opts", "option"), [
    ("cstc", ["--sweep", "--folds", "45", "--lambda-grid", "1"], "--folds"),
    ("miser", ["--sweep", "--folds", "45", "--lambda-grid", "1", "--trees", "4"], "--folds"),
    ("cascade", ["--early-exit-every", "2", "--trees", "4", "--exit-folds", "45"], "--exit-folds"),
])
def test_too_many_folds_names_the_class_by_its_label(work: Path, tmp_path: Path, kind: str, opts: list[str],
                                                     option: str) -> None:
    # iris: 40 rows of each class in the train and validation parts; the error names the label text
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", kind, work / "iris.csv", "-o", out, *opts),
                   f"{option} 45: class 'setosa' has 40 rows in the train and validation parts, fewer than the "
                   f"folds: lower {option}", out)
