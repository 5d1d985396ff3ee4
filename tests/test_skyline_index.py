"""Size index walk, runtime lookup (numpy), the estimator end to end, and the IR checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from compiler.skyline.classifier import SkylineClassifier, budget_report, budget_sweep, make_base, parse_sizes
from compiler.skyline.index import build_size_index, skyline_at
from pyruntime.errors import ModelFormatError
from pyruntime.skyline.index import NO_MODEL, SkylineIndex, poly_cost


def random_curves(m: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    coef = np.column_stack([rng.uniform(0, 50, m), rng.uniform(0, 5, m), rng.uniform(0, 0.2, m)])
    coef[rng.random(m) < 0.3, 2] = 0.0
    acc = np.round(rng.uniform(0.5, 1.0, m), 2)  # ties in accuracy on purpose
    tie = np.arange(m, dtype=np.int64)
    return coef, acc, tie


def index_from_size_index(coef: np.ndarray, acc: np.ndarray, breaks: list[float], skylines: list[list[int]],
                          d: int = 0) -> SkylineIndex:
    m = coef.shape[0]
    return SkylineIndex(
        n_features=d, model_coef=coef, model_acc=acc, feat_ptr=np.zeros(m + 1, np.uint32),
        feat_idx=np.zeros(0, np.uint32), breaks=np.array(breaks),
        sky_ptr=np.cumsum([0] + [len(s) for s in skylines]),
        sky_model=np.array([k for s in skylines for k in s], dtype=np.uint32))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("hi", [60.0, np.inf])
def test_walk_matches_brute_force_skyline_at_every_size(seed: int, hi: float) -> None:
    coef, acc, tie = random_curves(40, seed)
    sized = build_size_index(coef, acc, tie, 0.0, hi)
    assert sized.breaks[0] == 0.0 and all(np.diff(sized.breaks) > 0)
    assert sized.n_interesting <= sized.n_crossings
    assert len(sized.skylines) >= 2  # the curves do cross: the skyline changes with the size
    rng = np.random.default_rng(seed)
    top = 60.0 if np.isfinite(hi) else 2 * max(sized.breaks[-1], 60.0)
    for n in rng.uniform(0, top, 300):
        r = int(np.searchsorted(sized.breaks, n, side="right")) - 1
        assert sized.skylines[r] == skyline_at(coef, acc, tie, n), n


@pytest.mark.parametrize("seed", range(4))
def test_lookup_is_the_best_model_that_fits(seed: int) -> None:
    coef, acc, tie = random_curves(30, 10 + seed)
    sized = build_size_index(coef, acc, tie, 0.0, 80.0)
    index = index_from_size_index(coef, acc, sized.breaks, sized.skylines)
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([rng.uniform(0, 80, 150), np.array(sized.breaks)])  # breakpoints too
    for n in sizes:
        cost = poly_cost(coef, n)
        for b in np.concatenate([rng.uniform(0, cost.max() * 1.1, 10), [cost.min(), cost.min() - 1e-9]]):
            got = index.lookup(b, n)
            fits = cost <= b
            if not fits.any():
                assert got.model == NO_MODEL and not got.fits
                continue
            assert got.fits and got.cost <= b
            assert acc[got.model] == acc[fits].max()  # the most accurate model that fits
            assert got.cost == cost[got.model]


def test_lookup_many_agrees_with_scalar_lookup() -> None:
    coef, acc, tie = random_curves(25, 3)
    sized = build_size_index(coef, acc, tie, 0.0, 50.0)
    index = index_from_size_index(coef, acc, sized.breaks, sized.skylines)
    rng = np.random.default_rng(0)
    b = rng.uniform(-5, 300, 500)
    n = rng.uniform(-10, 70, 500)  # outside the indexed range too
    model, cost = index.lookup_many(b, n)
    for i in range(500):
        one = index.lookup(b[i], n[i])
        assert (one.model, one.cost) == (model[i], cost[i])
        assert model[i] == NO_MODEL or cost[i] <= b[i]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 10), st.floats(0, 1)), min_size=1, max_size=12),
       st.lists(st.floats(0, 50, allow_nan=False), min_size=1, max_size=5, unique=True),
       st.floats(-10, 500), st.floats(-20, 80))
def test_never_exceeds_budget_on_arbitrary_tables(curves, breaks, budget, size) -> None:
    """Even unsorted skylines (a corrupted but in-range index) never return a model over budget."""
    coef = np.array(curves, dtype=np.float64)
    m = coef.shape[0]
    breaks = sorted(breaks)
    rng = np.random.default_rng(len(curves))
    skylines = [list(rng.permutation(m)[: rng.integers(0, m + 1)]) for _ in breaks]
    index = index_from_size_index(coef, np.linspace(0.5, 1, m), breaks, skylines)
    got = index.lookup(budget, size)
    assert got.model == NO_MODEL or got.cost <= budget


def test_index_checks_reject_inconsistent_tables() -> None:
    coef, acc, tie = random_curves(4, 0)
    good = dict(n_features=3, model_coef=coef, model_acc=acc, feat_ptr=[0, 1, 2, 2, 3], feat_idx=[0, 2, 1],
                breaks=[0.0, 5.0], sky_ptr=[0, 2, 3], sky_model=[0, 1, 3], method="polydom")
    index = SkylineIndex(**good)
    assert SkylineIndex.from_dict(index.to_dict()).lookup(1e9, 3.0) == index.lookup(1e9, 3.0)
    assert index.nbytes() > 0
    bad = [
        {"sky_model": [0, 1, 4]},  # model index out of range
        {"breaks": [5.0, 0.0]},  # unsorted
        {"breaks": [0.0, np.inf]},
        {"feat_idx": [0, 3, 1]},  # feature out of range
        {"feat_ptr": [0, 2, 1, 2, 3]},
        {"sky_ptr": [0, 2, 4]},
        {"model_coef": -coef},
        {"model_acc": acc[:3]},
    ]
    for change in bad:
        with pytest.raises(ModelFormatError):
            SkylineIndex(**{**good, **change})
    with pytest.raises(ModelFormatError, match="miss"):
        SkylineIndex.from_dict({"n_features": 3})


# -- the estimator --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    X, y = make_classification(500, 7, n_informative=4, n_redundant=1, random_state=1)
    rng = np.random.default_rng(2)
    coef = np.column_stack([rng.integers(1, 5, 7), rng.integers(0, 3, 7) / 4, rng.integers(0, 2, 7) / 64])
    return X, y, coef.astype(np.float64)


@pytest.mark.parametrize("method", ["polydom", "greedy-acc", "greedy-cost"])
def test_classifier_respects_budgets(data, method: str) -> None:
    X, y, coef = data
    clf = SkylineClassifier(method=method, costs=coef, sizes=[0, 40]).fit(X, y)
    assert clf.expanded_nodes_ <= clf.brute_force_nodes_ == 2**7
    assert clf.index_.n_ranges >= 1
    rng = np.random.default_rng(0)
    budgets = rng.uniform(-1, 60, len(X))
    sizes = rng.uniform(0, 40, len(X))
    pred = clf.predict_budgeted(X, budgets, sizes)
    labels, model, cost, fits = pred
    assert np.all(cost[fits] <= budgets[fits])
    assert np.all(fits == (budgets >= 0))  # the empty set (cost 0) fits every budget >= 0
    assert set(np.unique(labels[fits])) <= set(clf.classes_)
    # the chosen accuracy never drops as the budget grows, at a fixed size
    accs = [clf.skyline_accuracy(b, 10.0) for b in np.linspace(0, 100, 50)]
    assert np.all(np.diff(accs) >= 0)
    # an unlimited budget picks the most accurate indexed model
    assert clf.skyline_accuracy(np.inf, 10.0) == clf.index_.model_acc.max()
    assert clf.get_params()["method"] == method


def test_nothing_fits_without_the_empty_model(data) -> None:
    X, y, coef = data
    clf = SkylineClassifier(costs=coef, sizes=[0, 40], allow_empty=False).fit(X, y)
    cheapest = float(coef[:, 0].min())
    pred = clf.predict_budgeted(X[:10], budget=cheapest - 0.5, size=0.0)
    assert not pred.fits.any() and np.all(pred.model == NO_MODEL) and np.all(pred.cost == 0)
    pred = clf.predict_budgeted(X[:10], budget=cheapest, size=0.0)
    assert pred.fits.all() and np.all(pred.cost == cheapest)


def test_polydom_index_equals_brute_force_index(data) -> None:
    """With epsilon covering the oracle's non-monotonicity PolyDom's answers equal brute force's."""
    X, y, coef = data
    brute = SkylineClassifier(method="brute", costs=coef, sizes=[0, 40]).fit(X, y)
    poly = SkylineClassifier(method="polydom", costs=coef, sizes=[0, 40], epsilon=1.0).fit(X, y)
    rng = np.random.default_rng(5)
    for b, n in zip(rng.uniform(0, 80, 200), rng.uniform(0, 40, 200), strict=True):
        assert brute.skyline_accuracy(b, n) == poly.skyline_accuracy(b, n)
    plain = SkylineClassifier(method="polydom", costs=coef, sizes=[0, 40]).fit(X, y)
    assert plain.expanded_nodes_ < brute.expanded_nodes_
    assert plain.search_.pruned_sandwich > 0


def test_base_factories_and_score(data) -> None:
    X, y, coef = data
    clf = SkylineClassifier(base=LogisticRegression(C=0.5), method="greedy-acc", costs=coef[:, 0]).fit(X, y)
    assert clf.score(X, y) > 0.6
    assert clf.score(X, y, budget=-1.0) == 0.0
    assert type(make_base("trees")).__name__ == "DecisionTreeClassifier"
    assert type(make_base("sklearn.svm.LinearSVC")).__name__ == "LinearSVC"
    with pytest.raises(ValueError):
        make_base("svm")
    with pytest.raises(ValueError):
        SkylineClassifier(method="nope").fit(X, y)
    with pytest.raises(ValueError):
        SkylineClassifier(costs=np.ones((3, 3))).fit(X, y)
    assert parse_sizes("3,1,7") == (1.0, 7.0)
    assert parse_sizes(None) == (0.0, np.inf)


def test_budget_report_and_sweep(data) -> None:
    X, y, coef = data
    clf = SkylineClassifier(costs=coef, sizes=[0, 40]).fit(X[:350], y[:350])
    rep = budget_report(clf, X[350:], y[350:], budget=8.0, size=5.0)
    assert rep["max_cost"] <= 8.0 and rep["mean_cost"] <= rep["max_cost"]
    assert sum(v["count"] for v in rep["models_chosen"].values()) == 150
    assert rep["nothing_fits"] == 0.0
    curve = budget_sweep(clf, X[350:], y[350:], [-1.0, 0.0, 1e9], size=5.0)
    assert curve[0] == 0.0  # nothing fits a negative budget
    assert curve[2] == clf.score(X[350:], y[350:], size=5.0)


def test_index_round_trips_through_the_model_format(data) -> None:
    from pyruntime import format as fmt

    X, y, coef = data
    clf = SkylineClassifier(costs=coef, sizes=[0, 40]).fit(X, y)
    fmt.register_kind("skyline-index-test", SkylineIndex)  # its own kind: "skyline" files hold SkylineModel
    blob = fmt.dumps(fmt.ModelFile("skyline-index-test", clf.index_, {"classes": ["0", "1"]}))
    back = fmt.loads(blob).tables
    assert isinstance(back, SkylineIndex)
    for name in ("model_coef", "model_acc", "feat_ptr", "feat_idx", "breaks", "sky_ptr", "sky_model"):
        assert np.array_equal(getattr(back, name), getattr(clf.index_, name))
    assert back.lookup(7.5, 12.0) == clf.index_.lookup(7.5, 12.0)


def test_plot_budget_sweep_writes_a_png(tmp_path) -> None:
    from compiler.skyline.classifier import plot_budget_sweep

    out = tmp_path / "sweep.png"
    plot_budget_sweep([0, 1, 2], {"polydom": [0.5, 0.7, 0.9], "greedy-acc": [0.5, 0.6, 0.9]}, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("seed", range(8))
def test_walk_handles_concurrent_crossings_and_identical_curves(seed: int) -> None:
    """Curves through common points (several swaps at one size, tangents) and duplicated polynomials."""
    rng = np.random.default_rng(1000 + seed)
    m = int(rng.integers(5, 40))
    x0 = rng.integers(1, 6, m).astype(float)  # curves meet at (x0, 10) in groups
    slope = rng.integers(0, 4, m).astype(float)
    quad = rng.integers(0, 2, m) / 8
    coef = np.column_stack([np.maximum(10.0 - slope * x0 - quad * x0 * x0, 0), slope, quad])
    coef = np.vstack([coef, coef[:3]])
    acc = np.round(rng.uniform(0.5, 1.0, coef.shape[0]), 1)
    tie = np.arange(coef.shape[0], dtype=np.int64)
    hi = 10.0 if seed % 2 else np.inf
    sized = build_size_index(coef, acc, tie, 0.0, hi)
    for n in rng.uniform(0, min(hi, 12.0), 300):
        r = int(np.searchsorted(sized.breaks, n, side="right")) - 1
        assert sized.skylines[r] == skyline_at(coef, acc, tie, n), n
