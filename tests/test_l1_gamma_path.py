"""l1-gate's gamma path: gamma_max (the smallest cost-weighted L1 strength at which f1 keeps no feature, from the
KKT condition at w = 0) checked against the solver on both sides, --sweep's default grid as its shares, and the
sweep's shortcut (f1 fitted once per gamma, re-gated per P) giving exactly the models a fresh fit gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from test_multiclass import NAMES, run, write_csv

from compiler.gated.common import fit_f0
from compiler.gated.l1_gate import GAMMA_SHARES, L1GateClassifier, gamma_grid, gamma_max, lasso_logistic_support
from compiler.gated.linear_k import group_lasso_support
from compiler.standardize import Standardizer
from compiler.tasks import prepare, split
from pyruntime import format as fmt


def support_size(X: np.ndarray, y: np.ndarray, penalty: np.ndarray) -> int:
    Xs = Standardizer(X).transform(X)
    _, yidx = np.unique(y, return_inverse=True)
    K = int(yidx.max()) + 1
    if K > 2:
        return int(group_lasso_support(Xs, yidx, K, penalty).size)
    return int(lasso_logistic_support(Xs, 2.0 * yidx - 1.0, penalty).size)


def data(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = {"iris": load_iris, "bc": load_breast_cancer, "digits": load_digits}[name](return_X_y=True)
    return X[:400].astype(np.float64), y[:400]


@pytest.mark.parametrize("name", ["iris", "bc", "digits"])
def test_gamma_max_is_where_the_support_empties(name: str) -> None:
    X, y = data(name)
    rng = np.random.default_rng(3)
    costs = rng.uniform(0.5, 4.0, X.shape[1])
    top = gamma_max(X, y, costs)
    assert top > 0
    assert support_size(X, y, 1.001 * top * costs) == 0
    assert support_size(X, y, 0.99 * top * costs) >= 1


def test_gamma_max_skips_free_features() -> None:
    X, y = data("iris")
    costs = np.array([0.0, 1.0, 2.0, 0.0])
    # free features are never dropped: the bound is over the priced ones (at the prior, an estimate once free
    # features move the optimum; the docstring says so)
    assert gamma_max(X, y, costs) == gamma_max(X[:, 1:3], y, costs[1:3])
    assert gamma_max(X, y, np.zeros(4)) == 0.0


def test_gamma_max_scales_inversely_with_the_costs() -> None:
    X, y = data("digits")
    ones = np.ones(X.shape[1])
    assert gamma_max(X, y, 10.0 * ones) == pytest.approx(gamma_max(X, y, ones) / 10.0, rel=1e-12)


def test_the_default_grid_is_the_shares_of_gamma_max() -> None:
    X, y = data("digits")
    costs = np.ones(X.shape[1])
    top = gamma_max(X, y, costs)
    grid = gamma_grid(X, y, costs)
    assert grid == sorted(grid) and grid[0] == 0.0 and len(grid) == len(GAMMA_SHARES)
    for g, share in zip(grid, sorted(GAMMA_SHARES)):
        assert g == pytest.approx(share * top, rel=1e-3)
        assert float(f"{g:.4g}") == g  # printed as it is stored: --gamma with the printed value refits it
    assert max(grid) < top


@pytest.mark.parametrize(("name", "gate"), [("bc", "linear"), ("digits", "linear"), ("digits", "margin")])
def test_with_p_full_is_a_fresh_fit(name: str, gate: str) -> None:
    X, y = data(name)
    f0 = fit_f0("rf", X, y, np.unique(y), 0)
    first = L1GateClassifier(hpc=f0, p_full=0.3, gamma=0.05, gate=gate).fit(X, y)
    for p in (0.0, 0.1, 0.6):
        fresh = L1GateClassifier(hpc=f0, p_full=p, gamma=0.05, gate=gate).fit(X, y)
        moved = first.with_p_full(X, y, p)
        assert moved.p_full == p and first.p_full == 0.3  # a copy: the first model is left as it was
        assert moved.margin_threshold_ == fresh.margin_threshold_
        for part in ("feature", "weight", "bias", "threshold"):
            np.testing.assert_array_equal(getattr(moved.gate_, part), getattr(fresh.gate_, part))
        np.testing.assert_array_equal(moved.predict(X), fresh.predict(X))


def test_with_p_full_refuses_bad_input() -> None:
    X, y = data("iris")
    with pytest.raises(ValueError, match="needs a fitted model"):
        L1GateClassifier(p_full=0.2).with_p_full(X, y, 0.1)
    m = L1GateClassifier(hpc="gbrt", p_full=0.2).fit(X, y)
    with pytest.raises(ValueError, match=r"p_full must be in \[0, 1\]"):
        m.with_p_full(X, y, 1.5)


def same(a: object, b: object) -> bool:
    """Equal part dictionaries (arrays compared element by element, exactly)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return a == b


@pytest.fixture(scope="module")
def digits_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    X, y = load_digits(return_X_y=True)
    X, y = X[:1100], y[:1100]  # 220 validation rows: the sweep is judged on the validation part
    return write_csv(tmp_path_factory.mktemp("l1path") / "digits.csv", X, [NAMES[int(t) % len(NAMES)] + str(t)
                                                                          for t in y])


def test_cli_sweep_uses_the_shares_and_keeps_a_fresh_fits_model(digits_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep.msgpack"
    code, _, err = run("train", "l1-gate", digits_csv, "-o", out, "--sweep", "--pfull-grid", "0.1,0.3",
                       "--hpc", "gbrt")
    assert code == 0, err
    rec = fmt.load(out).meta["training"]
    assert not rec["sweep_folds"]  # judged on the validation part
    Xtr, ytr, _, _ = split(prepare(str(digits_csv)))
    grid = gamma_grid(Xtr, ytr, np.ones(Xtr.shape[1]))
    assert sorted({q["gamma"] for q in rec["sweep_curve"]}) == grid
    assert sorted({q["pfull"] for q in rec["sweep_curve"]}) == [0.1, 0.3]
    # the kept point refitted alone (--pfull/--gamma) gives the same tables: the per-gamma shortcut changes nothing
    one = tmp_path / "one.msgpack"
    code, _, err = run("train", "l1-gate", digits_csv, "-o", one, "--hpc", "gbrt",
                       "--pfull", f"{rec['pfull_chosen']:g}", "--gamma", repr(rec["gamma_chosen"]))
    assert code == 0, err
    a, b = fmt.load(out).tables, fmt.load(one).tables
    assert same(a.gate.to_dict(), b.gate.to_dict()) and same(a.f1.to_dict(), b.f1.to_dict())


def test_cli_gamma_grid_given_is_used_as_is(digits_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "given.msgpack"
    code, _, err = run("train", "l1-gate", digits_csv, "-o", out, "--sweep", "--pfull-grid", "0.2",
                       "--gamma-grid", "0.02,0.2", "--hpc", "gbrt")
    assert code == 0, err
    assert sorted({q["gamma"] for q in fmt.load(out).meta["training"]["sweep_curve"]}) == [0.02, 0.2]


@pytest.mark.parametrize("cls", ["l1", "adapt-lin"])
def test_a_prefit_f0_for_other_rows_is_refused(cls: str) -> None:
    # both linear trainers start from compiler.gated.common.prepare_gated: a PrefitF0 (the sweep's shared f0)
    # whose out-of-fold probabilities are for another number of rows is one clear error, not a shape error
    from compiler.gated.adapt_lin import AdaptLinClassifier  # noqa: PLC0415

    X, y = data("iris")
    f0 = fit_f0("rf", X[::2], y[::2], np.unique(y))
    est = L1GateClassifier(hpc=f0) if cls == "l1" else AdaptLinClassifier(hpc=f0)
    with pytest.raises(ValueError, match="prefit hpc has probabilities for 75 rows, X has 150"):
        est.fit(X, y)
    # the same PrefitF0 on its own rows fits
    assert est.fit(X[::2], y[::2]).classes_.tolist() == [0, 1, 2]
