"""The margin gate of K-class gated models (FM_PART_MARGIN, fm_gated.h): f1 is scored first and the input
is easy iff f1's largest class score minus its second largest > the gate's threshold. Known answers on a
hand-built three-class model (float32 and q15, the numpy reference and the C runtime), exact C-vs-numpy
agreement on random inputs, the refusals of the model checks (Python and C), the estimators' routing and
the CLI's --gate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
from test_multiclass import NAMES, assert_refused, run, write_csv

from compiler.gated.adapt_gbrt import AdaptGbrtClassifier, margin_threshold
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.kind import f0_tables, gated_tables
from compiler.gated.l1_gate import L1GateClassifier
from compiler.gated.linear_k import margin_f32
from compiler.trees.cost_tree import ir_scores, ir_tree_features
from pyruntime import format as fmt
from pyruntime.errors import ModelFormatError
from pyruntime.gated.model import (
    FM_LABEL_DEFER,
    CGated,
    GatedModel,
    MarginGate,
    MarginGateQ15,
    gated_struct,
)
from pyruntime.linear import LinearScorer
from pyruntime.multilinear import MultiLinear
from pyruntime.trees.ensemble import TreeEnsemble

D = 4  # features: class c's score is 1.0 * x[c] (c = 0, 1, 2); f0 is one stump on feature 3


def scorer(j: int) -> LinearScorer:
    return LinearScorer(n_features=D, feature=np.array([j], np.int32), weight=np.ones(1, np.float32), bias=0.0)


def stump_f0() -> TreeEnsemble:
    """Three classes from feature 3: class 1 if x3 <= 0.5, else class 2 (two stumps: class 1's, class 2's)."""
    return TreeEnsemble(n_features=D, n_outputs=3, feature=np.array([3, -1, -1, 3, -1, -1], np.int32),
                        threshold=np.array([0.5, 0, 0, 0.5, 0, 0], np.float32),
                        left=np.array([1, -1, -1, 4, -1, -1], np.int32),
                        right=np.array([2, -1, -1, 5, -1, -1], np.int32),
                        value=np.array([0, 1, 0, 0, 0, 1], np.float32), roots=np.array([0, 3], np.int32),
                        tree_output=np.array([1, 2], np.int32), base_score=np.zeros(3, np.float32))


def hand_model(threshold: float = 1.0, remote: bool = False) -> GatedModel:
    return GatedModel(n_features=D, gate=MarginGate(n_features=D, threshold=threshold),
                      f1=MultiLinear((scorer(0), scorer(1), scorer(2))), f0=None if remote else stump_f0(),
                      gate_above="f1", input_absmax=8.0)


# rows: margin 2 (easy, class 0); margin exactly 1 (hard: the rule is strictly greater); a tie at the top
# (margin 0, hard); margin 1.5 (easy, class 2)
ROWS = np.array([[3, 1, 0, 0], [2, 1, 0, 1], [1, 1, 0, 0], [0, 0.5, 2, 1]], np.float32)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_known_answers_in_the_reference_and_in_c(numeric: str) -> None:
    m = hand_model()
    t = m if numeric == "float32" else m.q15()
    for p in (t.predict_reference(ROWS), CGated(t).predict(ROWS)):
        np.testing.assert_array_equal(p.stage, [0, 1, 1, 0])
        np.testing.assert_array_equal(p.label, [0, 2, 1, 2])  # hard rows: f0's stump on x3
        np.testing.assert_array_equal(p.n_read, [3, 4, 4, 3])  # the gate is f1: no feature of its own


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_a_deferred_input_carries_the_margin(numeric: str) -> None:
    m = hand_model(remote=True)
    t = m if numeric == "float32" else m.q15()
    for p in (t.predict_reference(ROWS), CGated(t).predict(ROWS)):
        np.testing.assert_array_equal(p.label, [0, FM_LABEL_DEFER, FM_LABEL_DEFER, 2])
        score = p.score.astype(np.float64) / (2.0 ** t.f1.scorers[0].w_shift if numeric == "q15" else 1.0)
        np.testing.assert_allclose(score[1:3], [1.0, 0.0], atol=1e-3)


def test_q15_threshold_is_in_f1_accumulator_units() -> None:
    q = hand_model(threshold=0.75).q15()
    assert isinstance(q.gate, MarginGateQ15)
    assert q.gate.threshold_q == int(np.floor(0.75 * 2.0 ** q.f1.scorers[0].w_shift))


@pytest.mark.parametrize("numeric", ["float32", "q15"])
@pytest.mark.parametrize("remote", [False, True])
def test_c_equals_the_reference_on_random_inputs(numeric: str, remote: bool) -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(scale=2.0, size=(500, D)).astype(np.float32)
    X[:50, 1] = X[:50, 0]  # ties at the top
    m = hand_model(threshold=0.3, remote=remote)
    t = m if numeric == "float32" else m.q15()
    c, ref = CGated(t).predict(X), t.predict_reference(X)
    for field in ("label", "score", "n_read", "cost", "stage"):
        np.testing.assert_array_equal(getattr(c, field), getattr(ref, field))
    assert 0.1 < np.mean(c.stage) < 0.9


def test_the_model_file_round_trip_and_the_checks() -> None:
    m = hand_model(threshold=0.25)
    back = GatedModel.from_dict(m.to_dict())
    assert isinstance(back.gate, MarginGate) and back.gate.threshold == 0.25
    d = m.to_dict()
    with pytest.raises(ModelFormatError, match="only the gate may be a margin gate"):
        GatedModel.from_dict({**d, "f1": d["gate"]})
    with pytest.raises(ModelFormatError, match="gate_above must be 'f1'"):
        GatedModel.from_dict({**d, "gate_above": "f0"})
    with pytest.raises(ModelFormatError, match="needs f1 of K linear scorers"):
        GatedModel.from_dict({**d, "f1": {"type": "linear", **scorer(0).to_dict()}, "f0": {"type": "remote"}})
    with pytest.raises(ModelFormatError, match="finite"):
        GatedModel.from_dict({**d, "gate": {**d["gate"], "threshold": float("nan")}})


def test_c_check_refuses_what_the_reference_refuses() -> None:
    from pyruntime._frugalml_c import ffi, lib  # noqa: PLC0415

    keep: list[object] = []
    for check, t in ((lib.fm_gated_check, hand_model()), (lib.fm_gated_q15_check, hand_model().q15())):
        s = gated_struct(ffi, t, keep)
        assert check(s) == 0
        s.gate_above = 0  # FM_GATE_ABOVE_F0
        assert check(s) != 0
        s.gate_above = 1
        s.f0 = s.gate  # a margin as f0
        assert check(s) != 0
    s = gated_struct(ffi, hand_model(), keep)
    s.gate.linear.decision_threshold = float("nan")
    assert lib.fm_gated_check(s) != 0


@pytest.fixture(scope="module")
def wine() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_wine(return_X_y=True)
    return X, y


@pytest.mark.parametrize("cls", [AdaptLinClassifier, L1GateClassifier])
def test_estimators_route_on_f1s_margin_at_the_share(cls: type, wine: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = wine
    kw = {"n_iter": 4, "inner_iter": 80} if cls is AdaptLinClassifier else {}
    m = cls(hpc=RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0), p_full=0.3, gamma=0.01,
            **kw).fit(X, y)
    assert m.gate_kind_ == "margin" and m.margin_threshold_ is not None and m.gate_.feature.size == 0
    margin = margin_f32(m.f1_k_, X)
    np.testing.assert_array_equal(m.route(X), ~(margin > np.float32(m.margin_threshold_)))
    share = float(m.q_.mean()) if cls is AdaptLinClassifier else 0.3
    assert np.mean(m.route(X)) == pytest.approx(share, abs=2.0 / X.shape[0])
    f0 = f0_tables(m.f0_.estimator, np.ones(X.shape[1]), "rf", False)
    t = gated_tables(m, f0, np.ones(X.shape[1]), float(np.abs(X).max()), "rf")
    assert isinstance(t.gate, MarginGate)
    c = CGated(t).predict(X.astype(np.float32))
    np.testing.assert_array_equal(c.stage == 1, m.route(X))
    np.testing.assert_array_equal(m.classes_[c.label], m.predict(X))
    # the rows f1 answers are its most confident: none of them has a smaller margin than a row sent to f0
    assert margin[c.stage == 0].min() > margin[c.stage == 1].max()


@pytest.mark.parametrize("cls", [AdaptLinClassifier, L1GateClassifier])
def test_gate_parameter_rules(cls: type, wine: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = wine
    kw = {"n_iter": 2, "inner_iter": 40} if cls is AdaptLinClassifier else {}
    hpc = DecisionTreeClassifier(max_depth=3, random_state=0)
    lin = cls(hpc=hpc, gate="linear", **kw).fit(X, y)
    assert lin.gate_kind_ == "linear" and lin.margin_threshold_ is None
    with pytest.raises(ValueError, match="needs K > 2 classes"):
        cls(hpc=hpc, gate="margin", **kw).fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="gate must be one of"):
        cls(hpc=hpc, gate="confidence", **kw).fit(X, y)
    binary = cls(hpc=hpc, **kw).fit(X[y < 2], y[y < 2])  # auto: the linear gate for two classes
    assert binary.gate_kind_ == "linear" and binary.margin_threshold_ is None


@pytest.fixture(scope="module")
def iris_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("margin")
    iris = load_iris()
    return write_csv(d / "iris.csv", iris.data, [NAMES[int(t)] for t in iris.target])


@pytest.mark.parametrize(("gate", "expected"), [(None, "margin"), ("linear", "linear"), ("margin", "margin")])
def test_cli_gate_option(iris_csv: Path, tmp_path: Path, gate: str | None, expected: str) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "l1-gate", iris_csv, "-o", out, "--hpc", "gbrt",
                       *(["--gate", gate] if gate else []))
    assert code == 0, err
    m = fmt.load(out)
    assert m.meta["training"]["gate"] == expected
    assert isinstance(m.tables.gate, MarginGate) == (expected == "margin")


def test_cli_refuses_margin_for_two_classes_and_gate_for_adapt_gbrt(iris_csv: Path, tmp_path: Path) -> None:
    rows = iris_csv.read_text().splitlines()
    two = tmp_path / "two.csv"
    two.write_text("\n".join([rows[0], *(r for r in rows[1:] if not r.endswith(NAMES[2]))]) + "\n")
    out = tmp_path / "m.msgpack"
    assert_refused(run("train", "adapt-lin", two, "-o", out, "--gate", "margin"), "--gate margin needs K > 2", out)
    assert_refused(run("train", "adapt-gbrt", iris_csv, "-o", out, "--gate", "linear"),
                   "--gate linear does not apply to adapt-gbrt (choose from auto, trees, margin)", out)
    assert_refused(run("train", "adapt-lin", iris_csv, "-o", out, "--gate", "trees"),
                   "--gate trees does not apply to adapt-lin (choose from auto, linear, margin)", out)
    assert_refused(run("train", "adapt-gbrt", two, "-o", out, "--gate", "margin"), "--gate margin needs K > 2", out)


# ------------------------------------------------------ ADAPT-GBRT: trees f1 behind its own margin ----
def test_adapt_gbrt_routes_on_f1s_margin_at_the_share(wine: tuple[np.ndarray, np.ndarray]) -> None:
    """K > 2 classes: no gate trees; the threshold sends the share mean(q) of the training rows with the smallest
    out-of-fold margins to f0, the estimator routes on the final f1's float32 margin, and the compiled tables
    (the C runtime) route and answer as the estimator does."""
    X, y = wine
    # a small f0 (a few features): f1's paths read others, which a hard row reads before f0's
    m = AdaptGbrtClassifier(hpc=RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0), p_full=0.3,
                            gamma=0.1, n_trees=10, random_state=0).fit(X, y)
    assert m.gate_kind_ == "margin" and m.gate_ir_ is None and m.margin_threshold_ is not None
    ir = m.to_tree_ensemble()
    assert ir["gate"] is None and ir["margin_threshold"] == float(m.margin_threshold_)
    s = np.sort(ir_scores(ir["f1"], X), axis=1)
    margin = s[:, -1] - s[:, -2]
    np.testing.assert_array_equal(m.route(X), ~(margin > m.margin_threshold_))
    assert 0 < np.mean(m.route(X)) < 1
    f0 = f0_tables(m.f0_, np.ones(X.shape[1]), "rf", False)
    t = gated_tables(m, f0, np.ones(X.shape[1]), float(np.abs(X).max()), "rf")
    assert isinstance(t.gate, MarginGate) and t.gate_above == "f1"
    c = CGated(t).predict(X.astype(np.float32))
    np.testing.assert_array_equal(c.stage == 1, m.route(X))
    np.testing.assert_array_equal(m.classes_[c.label], m.predict(X))
    assert margin[c.stage == 0].min() > margin[c.stage == 1].max()
    # the gate reads nothing: an easy row reads f1's paths only, a hard one f1's paths too, then its paths through
    # f0, as the runtime reads them (features_read until round 68: all of f0's features)
    easy = c.stage == 0
    read = m.features_read(X)
    np.testing.assert_array_equal(c.n_read, read.sum(axis=1))
    f1_paths = np.zeros(X.shape, dtype=bool)
    for r in ir_tree_features(ir["f1"], X.astype(np.float32)):
        f1_paths |= r
    f0_paths = np.zeros(X.shape, dtype=bool)
    for r in ir_tree_features(ir["f0"], X.astype(np.float32)):
        f0_paths |= r
    np.testing.assert_array_equal(read[easy], f1_paths[easy])
    np.testing.assert_array_equal(read[~easy], f1_paths[~easy] | f0_paths[~easy])


def test_adapt_gbrt_margin_threshold_takes_the_share_of_margins() -> None:
    margins = np.array([0.5, 0.1, 0.3, 0.9, 0.7], np.float32)
    assert margin_threshold(margins, 0.0) < 0  # every row easy (margins are >= 0)
    for share, hard in ((0.2, 1), (0.4, 2), (0.6, 3), (1.0, 5)):
        thr = margin_threshold(margins, share)
        assert int(np.sum(~(margins > thr))) == hard, (share, thr)
    # float64 margins between two float32s: the k-th smallest stays hard, the next stays easy
    m64 = np.array([0.1, float(np.float32(0.3)) + 1e-12, 0.3 + 2e-7, 0.9])  # float32 rounds the 2nd down
    thr = margin_threshold(m64, 0.5)
    assert float(thr) >= m64[1] and float(thr) < m64[2], thr


def test_adapt_gbrt_gate_parameter_rules(wine: tuple[np.ndarray, np.ndarray]) -> None:
    X, y = wine
    kw = {"hpc": DecisionTreeClassifier(max_depth=3, random_state=0), "n_trees": 3}
    trees = AdaptGbrtClassifier(gate="trees", **kw).fit(X, y)
    assert trees.gate_kind_ == "trees" and trees.gate_ir_ is not None and trees.margin_threshold_ is None
    with pytest.raises(ValueError, match="needs K > 2 classes"):
        AdaptGbrtClassifier(gate="margin", **kw).fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="gate must be"):
        AdaptGbrtClassifier(gate="linear", **kw).fit(X, y)
    binary = AdaptGbrtClassifier(**kw).fit(X[y < 2], y[y < 2])  # auto: the paper's gate trees for two classes
    assert binary.gate_kind_ == "trees" and binary.gate_ir_ is not None


def test_a_margin_gate_over_one_output_trees_is_refused() -> None:
    """Python refuses f1 of one output; C too, where fm_trees_check alone would take it (every tree of this f1 writes
    output 0, so only the margin gate's own rule refuses n_outputs 1)."""
    from pyruntime._frugalml_c import ffi, lib  # noqa: PLC0415

    def stumps(n_outputs: int) -> TreeEnsemble:
        return TreeEnsemble(n_features=D, n_outputs=n_outputs, feature=np.array([0, -1, -1, 1, -1, -1], np.int32),
                            threshold=np.array([0.5, 0, 0, 0.5, 0, 0], np.float32),
                            left=np.array([1, -1, -1, 4, -1, -1], np.int32),
                            right=np.array([2, -1, -1, 5, -1, -1], np.int32),
                            value=np.array([0, 1, -1, 0, 0.5, 2], np.float32), roots=np.array([0, 3], np.int32),
                            tree_output=np.array([0, 0], np.int32), base_score=np.zeros(n_outputs, np.float32))

    with pytest.raises(ModelFormatError, match="trees of K > 1 outputs"):
        GatedModel(n_features=D, gate=MarginGate(n_features=D, threshold=0.5), f1=stumps(1), f0=None,
                   gate_above="f1")
    keep: list[object] = []
    ok = GatedModel(n_features=D, gate=MarginGate(n_features=D, threshold=0.5), f1=stumps(3), f0=None,
                    gate_above="f1")
    leaf = TreeEnsemble(n_features=D, n_outputs=1, feature=np.array([-1], np.int32), threshold=np.zeros(1, np.float32),
                        left=np.array([-1], np.int32), right=np.array([-1], np.int32), value=np.zeros(1, np.float32),
                        roots=np.array([0], np.int32), tree_output=np.array([0], np.int32),
                        base_score=np.zeros(1, np.float32))
    trees_alone = GatedModel(n_features=D, gate=leaf, f1=stumps(1), f0=None, gate_above="f1")  # a tree gate
    for check, t, alone in ((lib.fm_gated_check, ok, trees_alone), (lib.fm_gated_q15_check, ok.q15(),
                                                                     trees_alone.q15())):
        assert check(gated_struct(ffi, alone, keep)) == 0  # one-output stumps are a valid f1 behind a tree gate
        s = gated_struct(ffi, t, keep)
        assert check(s) == 0
        s.f1.trees.n_outputs = 1
        assert check(s) != 0


@pytest.mark.parametrize(("gate", "expected"), [(None, "margin"), ("trees", "trees"), ("margin", "margin")])
def test_cli_adapt_gbrt_gate_option(iris_csv: Path, tmp_path: Path, gate: str | None, expected: str) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "adapt-gbrt", iris_csv, "-o", out, "--hpc", "gbrt", "--trees", "5",
                       *(["--gate", gate] if gate else []))
    assert code == 0, err
    m = fmt.load(out)
    assert m.meta["training"]["gate"] == expected
    assert isinstance(m.tables.gate, MarginGate) == (expected == "margin")
    X = load_iris().data.astype(np.float32)
    np.testing.assert_array_equal(CGated(m.tables).predict(X).label, m.tables.predict_reference(X).label)
