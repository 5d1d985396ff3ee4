"""NB table entries from a per-class Gaussian (``likelihood="gaussian"``, compiler.nb.likelihood): the
expected class-bin counts against the normal CDF computed here, the zero-inflated form, the limit
(fine bins: the same answers as scikit-learn's GaussianNB), 'counts' unchanged, the C runtime agreeing
with the reference on such tables, and bad input refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from sklearn.naive_bayes import GaussianNB
from test_multiclass import write_csv

from compiler.nb.discretize import Bins, fit_bins
from compiler.nb.likelihood import SD_FLOOR, gaussian_counts, table_counts
from compiler.nb.multi_train import fit_multi_tables
from compiler.nb.orderings import class_bin_counts
from compiler.nb.train import NaiveBayesBudget, fit_tables
from pyruntime import format as fmt
from pyruntime.evaluators import c_evaluator, reference_evaluator


def phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def blobs(n: int, seed: int, k: int = 3, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    centres = rng.normal(scale=1.5, size=(k, d))
    scales = rng.uniform(0.5, 2.0, size=(k, d))
    return (centres[y] + scales[y] * rng.normal(size=(n, d))).astype(np.float32), y


def test_interval_bins_hold_each_class_gaussian_mass() -> None:
    x = np.array([[-1.0], [0.5], [2.0], [3.0], [10.0], [11.0], [13.0]], dtype=np.float32)
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    bins = Bins(zero_bin=np.zeros(1, np.uint8), edges=[np.array([0.0, 1.0, 12.0], np.float32)])
    got = gaussian_counts(x, y, 2, bins, 4)
    for c, vals in ((0, [-1.0, 0.5, 2.0, 3.0]), (1, [10.0, 11.0, 13.0])):
        mu, sd = float(np.mean(vals)), float(np.std(vals))
        # each edge moved to the middle of the gap to the next training value: 0 -> 0.25, 1 -> 1.5, 12 -> 12.5
        cdf = [0.0, *(phi((e - mu) / sd) for e in (0.25, 1.5, 12.5)), 1.0]
        want = [len(vals) * (cdf[b + 1] - cdf[b]) for b in range(4)]
        np.testing.assert_allclose(got[0, :, c], want, rtol=1e-12, atol=1e-15)
        assert got[0, :, c].sum() == pytest.approx(len(vals))


def test_a_zero_bin_keeps_the_exact_zeros_and_the_gaussian_takes_the_rest() -> None:
    x = np.array([[0.0], [0.0], [4.0], [6.0], [0.0], [1.0], [2.0]], dtype=np.float32)
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    bins = Bins(zero_bin=np.ones(1, np.uint8), edges=[np.array([3.0, 5.0], np.float32)])
    got = gaussian_counts(x, y, 2, bins, 4)
    assert got[0, 0].tolist() == [2.0, 1.0]  # the zeros of each class, counted
    # class 0's non-zero values 4 and 6: mean 5, sd 1; the non-zero values 1, 2, 4, 6 move the edges 3 and 5 to
    # 3.5 and 5.5: bins (-inf, 3.5], (3.5, 5.5], (5.5, inf)
    np.testing.assert_allclose(got[0, 1:, 0], [2 * phi(-1.5), 2 * (phi(0.5) - phi(-1.5)), 2 * (1 - phi(0.5))],
                               rtol=1e-12)
    assert got[0, 1:, 1].sum() == pytest.approx(2.0)


def test_a_constant_class_goes_to_the_bin_of_its_value_and_a_narrow_one_is_floored() -> None:
    x = np.array([[2.0, 1.0], [2.0, 1.0], [2.0, 1.0], [2.0, 7.0]], dtype=np.float32)
    y = np.array([0, 0, 0, 1])
    bins = Bins(zero_bin=np.zeros(2, np.uint8), edges=[np.array([1.0, 3.0], np.float32)] * 2)
    got = gaussian_counts(x, y, 2, bins, 3)
    assert got[0, :, 0].tolist() == [0.0, 3.0, 0.0]  # feature 0 is constant: no spread to floor at
    assert got[0, :, 1].tolist() == [0.0, 1.0, 0.0]
    # feature 1: class 0 has sd 0, floored at SD_FLOOR of the feature's sd; its mean sits on the edge 1.0, which
    # the gap to the next value (7) moves to 4: all of its mass stays in the bin of its value
    assert got[1, :, 0] == pytest.approx([3.0, 0.0, 0.0])
    assert SD_FLOOR * np.std([1.0, 1.0, 1.0, 7.0]) > 0


def test_a_binary_feature_keeps_its_share_of_zeros() -> None:
    # quantile bins put the edge of a 0/1 feature at 0 itself (when the zeros hold a quantile); integrated up to
    # the middle of the gap (0.5), the Gaussian of a class with 90% ones gives the zeros Phi(-4/3) of its rows,
    # near the 10% they are (integrated up to the edge: Phi(-3), 0.1%)
    x = np.array([[0.0]] * 2 + [[1.0]] * 18, dtype=np.float32)
    y = np.zeros(20, dtype=np.int64)
    bins = Bins(zero_bin=np.zeros(1, np.uint8), edges=[np.array([0.0], np.float32)])
    got = gaussian_counts(x, y, 1, bins, 2)
    assert got[0, :, 0] == pytest.approx([20 * phi(-4.0 / 3.0), 20 * (1 - phi(-4.0 / 3.0))], rel=1e-12)
    assert got[0, 0, 0] / 20 == pytest.approx(0.1, abs=0.01)


def test_counts_are_the_default_and_unchanged() -> None:
    X, y = blobs(300, 1)
    bins = fit_bins(X, "quantile:8")
    B = bins.transform(X)
    counts = class_bin_counts(B, y, 8, 3)
    np.testing.assert_array_equal(table_counts(B, y, 3, bins, counts), counts)
    tables, _ = fit_multi_tables(B, y, 3, bins)
    nc = counts.sum(axis=1)
    for j in range(X.shape[1]):
        want = np.log((counts[j] + 1.0) / (nc[j][None, :] + 8.0)).astype(np.float32)
        np.testing.assert_array_equal(tables.ll[j], want)
    y01 = (y == 1).astype(np.int8)
    bt, _ = fit_tables(B, y01, bins)
    c2 = class_bin_counts(B, y01, 8)
    n2 = c2.sum(axis=1)
    for j in range(X.shape[1]):
        ll = np.log((c2[j] + 1.0) / (n2[j][None, :] + 8.0))
        np.testing.assert_array_equal(bt.d[j], (ll[:, 1] - ll[:, 0]).astype(np.float32))


def test_gaussian_tables_spread_a_prior_of_alpha_rows_over_the_bins() -> None:
    X, y = blobs(400, 6)
    bins = fit_bins(X, "quantile:32")
    B = bins.transform(X)
    tables, _ = fit_multi_tables(B, y, 3, bins, alpha=2.0, likelihood="gaussian", X=X)
    m = gaussian_counts(X, y, 3, bins, 32)
    n = np.bincount(y, minlength=3).astype(np.float64)
    for j in range(X.shape[1]):
        nb = bins.n_bins(j)
        want = np.log((m[j, :nb] + 2.0 / nb) / (n[None, :] + 2.0)).astype(np.float32)
        np.testing.assert_array_equal(tables.ll[j], want)


def test_fine_bins_answer_as_gaussian_nb() -> None:
    X, y = blobs(6000, 2)
    tr, te = slice(0, 4000), slice(4000, None)
    ours = NaiveBayesBudget(budget=4, bins="quantile:64", likelihood="gaussian", early_stopping=False).fit(
        X[tr], y[tr], eval_set=(X[te], y[te]))
    theirs = GaussianNB().fit(X[tr], y[tr])
    agree = np.mean(ours.predict(X[te]) == theirs.predict(X[te]))
    assert agree >= 0.985
    counts = NaiveBayesBudget(budget=4, bins="quantile:64", early_stopping=False).fit(
        X[tr], y[tr], eval_set=(X[te], y[te]))
    assert agree > np.mean(counts.predict(X[te]) == theirs.predict(X[te]))


def test_gaussian_needs_the_raw_rows_and_a_known_name() -> None:
    X, y = blobs(100, 3)
    bins = fit_bins(X)
    B = bins.transform(X)
    counts = class_bin_counts(B, y, 4, 3)
    with pytest.raises(ValueError, match="needs the raw training rows X"):
        table_counts(B, y, 3, bins, counts, "gaussian")
    with pytest.raises(ValueError, match="likelihood must be one of counts, gaussian, got 'kde'"):
        NaiveBayesBudget(likelihood="kde").fit(X, y)


@pytest.mark.parametrize("kind", ["nb-stop", "nb-static"])
def test_cli_gaussian_tables_run_in_c_as_the_reference(kind: str, tmp_path: Path) -> None:
    X, y = blobs(900, 4, k=5, d=6)
    data = write_csv(tmp_path / "b.csv", X, [f"c{v}" for v in y])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", kind, data, "-o", out, "--bins", "quantile:16", "--likelihood", "gaussian")
    assert code == 0, err
    m = fmt.load(out)
    assert m.meta["training"]["likelihood"] == "gaussian"
    for numeric in ("float32", "q15"):
        c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
        np.testing.assert_array_equal(c.label, ref.label)
        np.testing.assert_array_equal(c.n_read, ref.n_read)
    code, text, err = run("eval", out, data, "--json")
    assert code == 0, err
    assert json.loads(text)["accuracy"] > 0.5


def test_cli_refuses_an_unknown_likelihood(tmp_path: Path) -> None:
    X, y = blobs(200, 5)
    data = write_csv(tmp_path / "b.csv", X, [str(v) for v in y])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "-o", out, "--likelihood", "kde")
    assert code == 2
    assert "'kde' is not one of 'counts', 'gaussian'" in err
    assert not out.exists()


def test_skyline_nb_base_takes_the_tables_options(tmp_path: Path) -> None:
    X, y = blobs(500, 8, k=3, d=4)
    data = write_csv(tmp_path / "s.csv", X, [f"c{v}" for v in y])
    out = tmp_path / "s.msgpack"
    code, _, err = run("train", "skyline", data, "-o", out, "--method", "polydom", "--bins", "quantile:16",
                       "--likelihood", "gaussian")
    assert code == 0, err
    m = fmt.load(out)
    assert m.meta["training"]["likelihood"] == "gaussian"
    best = m.tables.models[-1]  # the most accurate indexed model: 16-bin tables from the Gaussian
    assert best.n_used >= 1 and int(best.edge_start[1] - best.edge_start[0]) == 15
    for numeric in ("float32", "q15"):
        c, ref = c_evaluator(m, numeric).predict(X), reference_evaluator(m, numeric).predict(X)
        np.testing.assert_array_equal(c.label, ref.label)
    code, _, err = run("train", "skyline", data, "-o", out, "--base", "linear", "--likelihood", "gaussian")
    assert code == 2 and "--bins and --likelihood apply to --base nb only" in err
