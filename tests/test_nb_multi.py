"""K-class naive Bayes (nb-static / nb-stop with K > 2 classes): the C runtime (fm_nbk, float32 and q15)
equals the numpy reference bit for bit, the margin stop rule, the model file, and a binary model trained
now is bit-identical to one trained before K-class support (tests/data/v2, written by main)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from dict_round_trip import assert_same_tables
from host_build import PRINT_ROWS, run_with_header
from sklearn.datasets import load_digits

from compiler.codegen import render_code_header
from compiler.header import render_header
from compiler.nb.multi_train import overtake_bounds
from compiler.nb.train import NaiveBayesBudget
from pyruntime import format as fmt
from pyruntime.errors import ModelFormatError
from pyruntime.evaluators import c_evaluator, reference_evaluator
from pyruntime.nb.multi import NBMultiModel

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def digits() -> tuple[NaiveBayesBudget, np.ndarray, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, va, te = idx[:1000], idx[1000:1400], idx[1400:]
    est = NaiveBayesBudget(budget=40, early_stopping=True).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    return est, X[te], y[te]


def random_model(rng: np.random.Generator, n_classes: int, costs: bool) -> NBMultiModel:
    n_features, k = 12, 9
    order = rng.permutation(n_features)[:k]
    zero_bin = rng.integers(0, 2, k)
    n_edges = rng.integers(0, 4, k)
    edges = [np.sort(rng.normal(size=e)).astype(np.float32) for e in n_edges]
    rows = [int(e) + 1 + int(z) for e, z in zip(n_edges, zero_bin)]
    return NBMultiModel(
        n_features=n_features, n_classes=n_classes, order=order, zero_bin=zero_bin,
        edge_start=np.concatenate([[0], np.cumsum(n_edges)]), edges=np.concatenate(edges),
        table_start=np.concatenate([[0], np.cumsum(rows)]),
        d=rng.normal(scale=2.0, size=(sum(rows), n_classes)), d0=rng.normal(size=n_classes),
        stop_at=[2, 5, 7], stop_margin=[3.0, 1.5, 0.5],
        costs=rng.choice(np.float32([0.5, 1.0, 2.25]), n_features) if costs else None)


def assert_same(a: object, b: object) -> None:
    for name in ("label", "n_read", "stage"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert np.asarray(a.score).tobytes() == np.asarray(b.score).tobytes()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(a.cost, b.cost)  # type: ignore[attr-defined]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_c_equals_reference_on_digits(digits: tuple, numeric: str) -> None:
    est, X, y = digits
    m = fmt.ModelFile("nb-stop", est.model_, {"classes": [str(c) for c in range(10)]})
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    assert_same(c, ref)
    assert np.mean(c.label == y) > 0.85 and 0 < np.mean(c.stage > 0) < 1  # stop points stop some rows
    lazy = c_evaluator(m, numeric).predict_lazy(lambda j: float(X[3, j]))
    assert lazy.label[0] == c.label[3] and lazy.n_read[0] == c.n_read[3]


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize(("n_classes", "seed", "costs"), [(3, 1, True), (10, 2, False), (26, 3, True), (64, 4, True)])
def test_c_equals_reference_on_random_tables(numeric: str, n_classes: int, seed: int, costs: bool) -> None:
    rng = np.random.default_rng(seed)
    m = fmt.ModelFile("nb-stop", random_model(rng, n_classes, costs), {"classes": [f"c{i}" for i in range(n_classes)]})
    X = rng.normal(size=(400, 12)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = 0.0  # exact zeros take the zero slot
    X[rng.random(X.shape) < 0.05] = -0.0
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    assert_same(c, ref)
    assert np.unique(c.stage).size >= 2  # some rows stop early, others read on


def test_a_non_finite_feature_is_an_error() -> None:
    m = fmt.ModelFile("nb-stop", random_model(np.random.default_rng(5), 4, False), {"classes": list("abcd")})
    X = np.zeros((1, 12), np.float32)
    X[0, m.tables.order[0]] = np.nan
    with pytest.raises(Exception, match="NaN or infinite"):
        c_evaluator(m).predict_raw(X)


def test_stop_margin_rule_and_overtake_bound(digits: tuple) -> None:
    est, X, _ = digits
    m: NBMultiModel = est.model_
    assert m.n_stops >= 1
    P = m.partial_scores(X)
    bounds = overtake_bounds(m)
    assert all(float(s) <= float(bounds[a]) for a, s in zip(m.stop_at, m.stop_margin))
    full = np.argmax(P[:, -1], axis=1)
    for a in m.stop_at:  # past the bound no class overtakes the leader: the full model agrees
        top = np.sort(P[:, a], axis=1)
        safe = top[:, -1] - top[:, -2] > bounds[a]
        assert np.all(np.argmax(P[safe, a], axis=1) == full[safe])
    ref = m.predict_reference(X)
    early = ref.stage > 0
    top = np.sort(P[np.flatnonzero(early), ref.n_read[early]], axis=1)
    assert np.all(top[:, -1] - top[:, -2] > m.stop_margin[ref.stage[early] - 1])


def test_estimator_k_class_api(digits: tuple) -> None:
    est, X, y = digits
    assert est.classes_.tolist() == list(range(10))
    proba = est.predict_proba(X)
    assert proba.shape == (X.shape[0], 10) and np.allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(proba, axis=1)], est.predict(X))
    np.testing.assert_array_equal(est.predict(X), est.model_.predict_reference(X).label)


def test_k_class_file_round_trip_and_bad_tables(digits: tuple) -> None:
    est = digits[0]
    m = fmt.ModelFile("nb-stop", est.model_, {"classes": [str(c) for c in range(10)]})
    back = fmt.loads(fmt.dumps(m))
    assert isinstance(back.tables, NBMultiModel) and back.tables.d.tobytes() == est.model_.d.tobytes()
    with pytest.raises(ModelFormatError, match="9 class labels for tables of 10 classes"):
        fmt.loads(fmt.dumps(fmt.ModelFile("nb-stop", est.model_, {"classes": [str(c) for c in range(9)]})))
    twice = [str(c) for c in range(9)] + ["3"]  # round 68: accepted, two classes printing one label text
    with pytest.raises(ModelFormatError, match="class label '3' is listed twice in meta 'classes'"):
        fmt.loads(fmt.dumps(fmt.ModelFile("nb-stop", est.model_, {"classes": twice})))
    bad = est.model_.to_dict()
    bad["d"] = bad["d"][:, :9]
    with pytest.raises(ModelFormatError, match="d must have one column per class"):
        NBMultiModel.from_dict(bad)


def test_binary_model_is_bit_identical_to_before(tmp_path: Path) -> None:
    """nb-stop on breast_cancer with the options of tests/data/v2 (main before K classes) writes the same
    tables bytes. --folds 1: its 114 validation rows now fall under the small-set rule (round 38), which judges
    the stop cuts out of fold; with the validation part alone the procedure is the one v2 was written by."""
    want = json.loads((DATA / "v2" / "expected.json").read_text())["models"]["nb_stop"]["args"]
    code, _, err = run("train", *want[:1], "sklearn:breast_cancer", "-o", tmp_path / "m.msgpack", *want[1:],
                       "--folds", "1")
    assert code == 0, err
    old, new = fmt.load(DATA / "v2" / "nb_stop.msgpack"), fmt.load(tmp_path / "m.msgpack")
    assert_same_tables(old.tables, new.tables)


@pytest.mark.parametrize("form", ["tables", "code"])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_header_prints_what_predict_prints(digits: tuple, numeric: str, form: str, tmp_path: Path) -> None:
    """The 10-class model's C header, tables or code (export-c --form code), prints the labels and features read
    the C runtime answers."""
    est, X, _ = digits
    labels = [f"digit {c}" for c in range(10)]
    m = fmt.ModelFile("nb-stop", est.model_, {"classes": labels})
    rows = X[:40]
    render = render_code_header if form == "code" else render_header
    got = run_with_header(render(m, numeric, "model", rows), PRINT_ROWS, tmp_path)
    pred = c_evaluator(m, numeric).predict(rows)
    assert got == [f"{labels[a]} {b}" for a, b in zip(pred.label, pred.n_read)]
    assert 0 < np.mean(pred.stage > 0) < 1  # stop points taken and not taken


def test_packed_q15_accuracy_within_a_point_of_float32(digits: tuple) -> None:
    """The packed K-class q15 format (centred int16 lanes, two classes a word, every class's partial sums in
    int16) answers within 1 point of float32 on digits: the CLI's nb-stop (test part) and the fixture's."""
    from compiler import tasks
    from compiler.nb.kind import train_nb
    from pyruntime.nb.multi import lane_bound, unpack_lanes

    task = tasks.prepare("sklearn:digits", None, None, 0)
    cli: NBMultiModel = train_nb("nb-stop", task, {}, None).tables
    est, X, y = digits
    for m, rows, truth in ((cli, task.data.X[task.test], task.y[task.test]), (est.model_, X, y)):
        q = m.q15()
        assert lane_bound(q.d, q.d0, m.table_start) <= 32767
        np.testing.assert_array_equal(unpack_lanes(q.words, m.n_classes), q.d)
        acc_f = float(np.mean(m.predict_reference(rows).label == truth))
        acc_q = float(np.mean(q.predict_reference(rows).label == truth))
        assert abs(acc_q - acc_f) <= 0.01, (acc_f, acc_q)


def test_q15_header_guards_the_packed_format(digits: tuple) -> None:
    """A K-class q15 header needs an fm_nb.h with the packed format (one #error line otherwise); float32
    headers do not test it."""
    m = fmt.ModelFile("nb-stop", digits[0].model_, {"classes": [str(c) for c in range(10)]})
    q15, f32 = render_header(m, "q15", "model"), render_header(m, "float32", "model")
    assert "#ifndef FM_NBK_Q15_PACKED\n#error \"model: K-class q15 tables in the packed format" in q15
    assert "static const uint32_t model_d[" in q15 and "FM_NBK_Q15_PACKED" not in f32
