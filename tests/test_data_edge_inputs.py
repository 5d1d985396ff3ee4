"""Inputs a robustness probe found mishandled (round 53): ARFF values in quotes and sparse ARFF rows, complex or
missing labels in an NPZ, two columns named like the label, a label too long for a C string literal, a column
whose spread is too small for a linear model's float32 weight (named by its place in the data, also when a
skyline model was fitted on a subset), and CSTC on thousands of all-zero columns. Each
bad input ends in one `error:` line with nothing written; each good one reads as its plain form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from compiler.cstc.train import CSTCClassifier
from compiler.standardize import Standardizer
from pyruntime.data import MAX_LABEL_BYTES, load_dataset
from pyruntime.errors import DataError


def one_error(result: tuple[int, str, str], *needles: str) -> str:
    """The last stderr line of an exit-2 result (a progress line may come first), holding every needle."""
    code, out, err = result
    last = err.strip().splitlines()[-1]
    assert code == 2 and out == "" and last.startswith("error: "), (code, out, err)
    for n in needles:
        assert n in last, (n, last)
    return last


def two_class(n: int = 80, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return np.round(rng.normal(size=(n, d)) + 1.5 * y[:, None], 4), y


def test_arff_values_in_quotes_keep_their_commas_and_spaces(tmp_path: Path) -> None:
    X, y = two_class()
    names = ["a b", "c,d"]
    head = "@relation t\n@attribute 'f 0' numeric\n@attribute f1 numeric\n@attribute f2 numeric\n"
    head += "@attribute class {'a b', \"c,d\"}\n@data\n"
    rows = [",".join([*map(str, r), f"'{names[c]}'" if c == 0 else f'"{names[c]}"']) for r, c in zip(X, y, strict=True)]
    (tmp_path / "q.arff").write_text(head + "\n".join(rows) + "\n")
    ds = load_dataset(str(tmp_path / "q.arff"))
    assert ds.feature_names == ["f 0", "f1", "f2"]
    np.testing.assert_array_equal(ds.X, X)
    assert ds.y.tolist() == [names[c] for c in y]
    (tmp_path / "open.arff").write_text(head + "1,2,3,'a b\n")
    with pytest.raises(DataError, match="line 7: a quoted value has no closing '"):
        load_dataset(str(tmp_path / "open.arff"))


def test_sparse_arff_rows_read_as_the_dense_file(tmp_path: Path) -> None:
    X, y = two_class(d=4)
    X[X < 1.0] = 0.0  # mostly zeros, as a sparse file holds them
    head = "@relation t\n" + "".join(f"@attribute x{j} numeric\n" for j in range(4))
    head += "@attribute kind {ham,spam}\n@data\n"
    labels = ["ham", "spam"]
    dense = [",".join([*map(str, r), labels[c]]) for r, c in zip(X, y, strict=True)]
    # a nominal left out of a sparse row is its first value: the 'ham' rows leave the label out
    sparse = ["{" + ", ".join([*(f"{j} {v}" for j, v in enumerate(r) if v != 0),
                               *([f"4 {labels[c]}"] if c else [])]) + "}" for r, c in zip(X, y, strict=True)]
    (tmp_path / "dense.arff").write_text(head + "\n".join(dense) + "\n")
    (tmp_path / "sparse.arff").write_text(head + "\n".join(sparse) + "\n")
    a, b = load_dataset(str(tmp_path / "dense.arff")), load_dataset(str(tmp_path / "sparse.arff"))
    np.testing.assert_array_equal(a.X, b.X)
    assert a.y.tolist() == b.y.tolist()
    quoted = head.replace("{ham,spam}", "{ham,'sp, am'}") + "{0 1.5, 4 'sp, am'}\n{ }\n"
    (tmp_path / "quoted.arff").write_text(quoted)
    ds = load_dataset(str(tmp_path / "quoted.arff"))
    np.testing.assert_array_equal(ds.X, [[1.5, 0, 0, 0], [0, 0, 0, 0]])
    assert ds.y.tolist() == ["sp, am", "ham"]
    (tmp_path / "past.arff").write_text(head + "{0 1.5, 7 2}\n")
    with pytest.raises(DataError, match="sparse index 7 is past the 5 attributes"):
        load_dataset(str(tmp_path / "past.arff"))
    (tmp_path / "bare.arff").write_text(head + "{0 1.5, 3}\n")
    with pytest.raises(DataError, match="sparse entry '3' is not 'INDEX VALUE'"):
        load_dataset(str(tmp_path / "bare.arff"))


def test_npz_complex_features_and_missing_labels_are_refused(tmp_path: Path) -> None:
    X, y = two_class()
    np.savez(tmp_path / "cx.npz", X=X + 1j, y=y)
    one_error(run("train", "nb-static", tmp_path / "cx.npz", "-o", tmp_path / "m"), "X holds complex numbers")
    yf = y.astype(float)
    yf[5] = np.nan
    np.savez(tmp_path / "nan.npz", X=X, y=yf)
    one_error(run("train", "nb-static", tmp_path / "nan.npz", "-o", tmp_path / "m"),
              "nan.npz row 6: the label is missing (NaN)")
    assert not (tmp_path / "m").exists()


def test_two_columns_named_like_the_label_need_the_option(tmp_path: Path) -> None:
    X, y = two_class()
    text = "label,b,c,y\n" + "".join(f"{r[0]},{r[1]},{r[2]},{c}\n" for r, c in zip(X, y, strict=True))
    (tmp_path / "d.csv").write_text(text)
    one_error(run("train", "nb-static", tmp_path / "d.csv", "-o", tmp_path / "m"),
              "columns 'label' and 'y' are each named like the label column", "--target-column NAME")
    assert not (tmp_path / "m").exists()
    code, _, err = run("train", "nb-static", tmp_path / "d.csv", "--target-column", "y", "-o", tmp_path / "m")
    assert code == 0, err
    code, out, err = run("eval", tmp_path / "m", tmp_path / "d.csv", "--json")  # 'label' is a feature of the model
    assert code == 0, err


def test_a_label_longer_than_a_header_can_carry_is_refused(tmp_path: Path) -> None:
    X, y = two_class()
    for size, ok in ((MAX_LABEL_BYTES, True), (MAX_LABEL_BYTES + 1, False)):
        long = "é" * (size // 2) + "L" * (size % 2)  # bytes, not characters, count
        assert len(long.encode()) == size
        text = "a,b,c,target\n" + "".join(f"{r[0]},{r[1]},{r[2]},{long if c else 'short'}\n"
                                          for r, c in zip(X, y, strict=True))
        (tmp_path / "d.csv").write_text(text, encoding="utf-8")
        out = tmp_path / f"m{size}"
        result = run("train", "nb-static", tmp_path / "d.csv", "-o", out)
        if ok:
            assert result[0] == 0, result[2]
        else:
            one_error(result, f"is {size} bytes long, more than the {MAX_LABEL_BYTES}")
            assert not out.exists()


def test_a_column_too_narrow_for_a_float32_weight_is_named(tmp_path: Path) -> None:
    X, y = two_class(d=4)
    X[:, 2] *= 1e-40  # float32 still holds each value (subnormal), not w / spread
    with pytest.raises(ValueError, match=r"feature 2 \(counting from 0\) spreads only [0-9.]+e-40"):
        Standardizer(X).to_raw(np.ones(4), 0.0)
    with pytest.raises(ValueError, match="feature 2"):
        Standardizer(X).rows_to_raw(np.ones((3, 4)), np.zeros(3))
    w, b = Standardizer(X[:, [0, 1, 3]]).to_raw(np.ones(3), 0.0)  # the others convert as before
    assert np.all(np.isfinite(w)) and np.isfinite(b)
    text = "a,b,c,d,target\n" + "".join(",".join([*map(repr, r.tolist()), str(c)]) + "\n"
                                        for r, c in zip(X, y, strict=True))
    (tmp_path / "d.csv").write_text(text)
    for kind in ("adapt-lin", "l1-gate"):
        one_error(run("train", kind, tmp_path / "d.csv", "-o", tmp_path / "m"), "feature 2", "beyond float32")
    for method in ("polydom", "greedy-acc", "greedy-cost"):  # the greedy ones fit sets of one feature first
        one_error(run("train", "skyline", tmp_path / "d.csv", "--base", "linear", "--method", method,
                      "-o", tmp_path / "m"), "error: feature 2 (counting from 0)")
    assert not (tmp_path / "m").exists()


def test_cstc_ridge_leaves_out_columns_zero_on_its_rows_with_the_same_answer() -> None:
    rng = np.random.default_rng(3)
    n, d = 40, 30
    Z = rng.normal(size=(n, d))
    Z[:, 5:25] = 0.0  # all-zero columns
    Z[:10, 25] = 1.0  # nonzero only on rows of weight 0
    Z[10:, 25] = 0.0
    w = np.where(np.arange(n) < 10, 0.0, rng.uniform(0.5, 1.5, n))
    ys = rng.normal(size=n)
    gam = rng.uniform(0.1, 1.0, d)
    active = np.ones(d, bool)
    beta, b = CSTCClassifier._weighted_ridge(Z, ys, w, gam, active)
    A = np.column_stack([Z, np.ones(n)])  # the full system, solved directly
    H = (2.0 / n) * (A.T * w) @ A + np.diag(np.append(gam, 1e-9)) + 1e-10 * np.eye(d + 1)
    full = np.linalg.solve(H, (2.0 / n) * (A.T * w) @ ys)
    np.testing.assert_allclose(np.append(beta, b), full, rtol=1e-9, atol=1e-12)
    assert np.all(beta[5:26] == 0.0)


def test_cstc_group_sums_of_squares_match_their_definition() -> None:
    est = CSTCClassifier()
    est.group_members_ = [np.array([2]), np.array([0, 3]), np.array([1]), np.array([4, 1, 2])]
    beta = np.array([0.5, -2.0, 3.0, 0.25, -1.5])
    want = np.array([float(np.sum(beta[m] ** 2)) for m in est.group_members_])
    np.testing.assert_array_equal(est._group_sq(beta), want)
    est.group_members_ = [np.array([4]), np.array([0])]  # a new fit's groups are read afresh
    np.testing.assert_array_equal(est._group_sq(beta), [2.25, 0.25])
