"""K-class linear gated kinds (issue 19): adapt-lin and l1-gate with a K-class f1 (K linear scorers,
FM_PART_LINEAR_K) and f1's margin as the gate (the default; tests/test_gated_margin.py) or a binary linear
gate (--gate linear). The C runtime equals the numpy reference in float32 and q15, the
compiled header prints what `predict` prints, binary models are bit-identical to the previous
release's, and the bad-input refusals hold for these kinds too."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from host_build import PRINT_ROWS, run_with_header
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier
from test_multiclass import NAMES, assert_refused, run, write_csv

from compiler.codegen import render_code_header
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from compiler.header import render_header
from pyruntime import format as fmt
from pyruntime.evaluators import c_evaluator, reference_evaluator
from pyruntime.gated.model import gated_struct
from pyruntime.multilinear import MultiLinear

KINDS = {"adapt-lin": ["--pfull", "0.3"], "l1-gate": ["--pfull", "0.3"],
         "l1-gate-remote": ["--pfull", "0.3", "--hpc-remote"],
         "adapt-lin-linear": ["--pfull", "0.3", "--gate", "linear"],
         "l1-gate-linear-remote": ["--pfull", "0.3", "--gate", "linear", "--hpc-remote"]}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("linear_k")
    iris = load_iris()
    write_csv(d / "iris.csv", iris.data, [NAMES[int(t)] for t in iris.target])
    return d


def model(work: Path, name: str) -> fmt.ModelFile:
    out = work / f"{name}.msgpack"
    if not out.exists():
        code, _, err = run("train", name.removesuffix("-remote").removesuffix("-linear"), work / "iris.csv", "-o", out,
                           "--hpc", "gbrt",
                           *KINDS[name])
        assert code == 0, err
    return fmt.load(out)


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_c_header_and_reference_agree(work: Path, tmp_path: Path, name: str, numeric: str) -> None:
    m = model(work, name)
    assert isinstance(m.tables.f1, MultiLinear) and m.tables.n_classes == 3
    X, y = load_iris().data, load_iris().target
    c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
    for field in ("label", "score", "n_read", "cost", "stage"):
        np.testing.assert_array_equal(getattr(c, field), getattr(ref, field))
    easy = c.stage == 0
    assert np.unique(c.label[easy]).size == 3 and np.mean(c.label[easy] == y[easy]) > 0.85
    assert np.all((c.label == -1) == (~easy if name.endswith("remote") else False))
    code, text, _ = run("predict", work / f"{name}.msgpack", work / "iris.csv", "--numeric", numeric, "--rows", "40")
    lines = run_with_header(render_header(m, numeric, "model", X[:40]), PRINT_ROWS, tmp_path)
    assert code == 0 and lines == [" ".join(t.split(" ")[:-1]) for t in text.splitlines()]


def test_the_code_form_says_use_tables(work: Path) -> None:
    with pytest.raises(ValueError, match="use --form tables"):
        render_code_header(model(work, "l1-gate"), "float32", "model")


def test_c_check_refuses_a_k_linear_gate_and_mixed_q15_shifts(work: Path) -> None:
    from pyruntime._frugalml_c import ffi, lib  # noqa: PLC0415

    keep: list[object] = []
    m = model(work, "l1-gate").tables
    s = gated_struct(ffi, m, keep)
    assert lib.fm_gated_check(s) == 0
    s.gate = s.f1  # a K-class gate is not a binary decision
    assert lib.fm_gated_check(s) != 0
    q = gated_struct(ffi, m.q15(), keep)
    assert lib.fm_gated_q15_check(q) == 0
    q.f1.classes[1].w_shift = q.f1.classes[0].w_shift + 1  # class scores in different units
    assert lib.fm_gated_q15_check(q) != 0
    q.f1.classes[1].w_shift, q.f1.n_classes = q.f1.classes[0].w_shift, 1
    assert lib.fm_gated_q15_check(q) != 0


def _digest(m: AdaptLinClassifier | L1GateClassifier, X: np.ndarray) -> str:
    h = hashlib.sha256()
    for s in (m.gate_, m.f1_):
        for a in (s.feature, s.weight, np.float32(s.bias), np.float32(s.threshold)):
            h.update(np.asarray(a).tobytes())
    h.update(np.asarray(m.predict(X)).tobytes())
    return h.hexdigest()[:16]


# digests of the binary tables and predictions made by main 3c9296e (before K classes)
@pytest.mark.parametrize(("cls", "expected"), [(AdaptLinClassifier, "d474a79e3bd7fbeb"),
                                               (L1GateClassifier, "501fd829a8e4606d")])
def test_binary_models_are_bit_identical_to_before(cls: type, expected: str) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 5))
    y = (X[:, 0] + 0.5 * X[:, 2] + 0.3 * rng.normal(size=120) > 0).astype(int)
    kw = {"n_iter": 4, "inner_iter": 60} if cls is AdaptLinClassifier else {}
    m = cls(hpc=DecisionTreeClassifier(max_depth=3, random_state=0), costs=[1, 2, 3, 4, 5], **kw).fit(X, y)
    assert not m.f1_k_ and _digest(m, X) == expected


@pytest.mark.parametrize("kind", ["adapt-lin", "l1-gate"])
def test_one_class_only_is_refused(tmp_path: Path, kind: str) -> None:
    data = write_csv(tmp_path / "one.csv", np.random.default_rng(0).normal(size=(40, 3)), ["a"] * 40)
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", kind, data, "-o", out), "only one class ('a') in the data", out)


def test_a_costs_file_for_another_feature_count_is_refused(work: Path, tmp_path: Path) -> None:
    (tmp_path / "costs.csv").write_text("feature,cost\nf0,1\nf1,2\nf2,1\n")
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "l1-gate", work / "iris.csv", "-o", out, "--costs", tmp_path / "costs.csv")
    assert_refused((code, "", err), "f3", out)


def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # noqa: PLC0415

    X, y = load_digits(return_X_y=True)
    return X[:500].astype(np.float64), y[:500]


def test_adapt_lin_refits_f1_behind_the_margin_gate() -> None:
    """refit_f1 (default with the margin gate): the alternation is unchanged, f1 is the weighted multinomial
    logistic regression on the alternation's features, rows weighted 1 - q; the linear gate keeps the shrunk
    f1."""
    from compiler.gated.linear_k import multinomial_on, scorers_k  # noqa: PLC0415
    from compiler.standardize import Standardizer  # noqa: PLC0415

    X, y = _digits()
    hpc = DecisionTreeClassifier(max_depth=6, random_state=0)
    kw = {"p_full": 0.2, "gamma": 0.08, "n_iter": 4, "inner_iter": 80}
    refit = AdaptLinClassifier(hpc=hpc, **kw).fit(X, y)
    shrunk = AdaptLinClassifier(hpc=hpc, refit_f1=False, **kw).fit(X, y)
    np.testing.assert_array_equal(refit.q_, shrunk.q_)
    np.testing.assert_array_equal(refit.coef_std_, shrunk.coef_std_)
    support = np.flatnonzero(np.any(shrunk.coef_std_[:, 1:] != 0.0, axis=1))
    assert 0 < support.size < X.shape[1]
    std = Standardizer(X)
    W, b = multinomial_on(std.transform(X), y, 10, support, 1.0, 1.0 - refit.q_)
    for got, want in zip(refit.f1_k_, scorers_k(std, W, b), strict=True):
        np.testing.assert_array_equal(got.feature, want.feature)
        np.testing.assert_array_equal(got.weight, want.weight)
        assert got.bias == want.bias
    assert {int(j) for s in refit.f1_k_ for j in s.feature} == set(support.tolist())  # same features read
    # the shrunk f1 is the alternation's own weights; the linear gate keeps it unless refit_f1=True
    assert any(not np.array_equal(a.weight, c.weight) for a, c in zip(refit.f1_k_, shrunk.f1_k_))
    lin = AdaptLinClassifier(hpc=hpc, gate="linear", **kw).fit(X, y)
    lin_shrunk = AdaptLinClassifier(hpc=hpc, gate="linear", refit_f1=False, **kw).fit(X, y)
    for a, c in zip(lin.f1_k_, lin_shrunk.f1_k_, strict=True):
        np.testing.assert_array_equal(a.weight, c.weight)
    with pytest.raises(ValueError, match="refit_f1 must be True, False or None"):
        AdaptLinClassifier(hpc=hpc, refit_f1="yes", **kw).fit(X, y)
