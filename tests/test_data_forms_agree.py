"""One data set written in two forms trains and evaluates alike (round 66's probe): float labels read from a CSV
("1.0") and from an NPZ (1.0 -> "1") or given to compiler.convert (numpy floats); a libsvm test file whose
largest index is below the model's feature count; a CSV header with a column without a name (pandas' row
index) refused instead of read as a feature."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from compiler.convert import convert
from compiler.nb.train import NaiveBayesBudget
from pyruntime.data import load_dataset


def float_labels(tmp: Path) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """The same rows and float labels 0.0/1.0/2.0 as a CSV (labels written 1.0) and as an NPZ (a float y)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 150).astype(float)
    X = rng.normal(size=(150, 3))
    X[:, 0] += 4 * y
    np.savez(tmp / "fl.npz", X=X, y=y, feature_names=np.array(["a", "b", "c"]))
    with (tmp / "fl.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "c", "label"])
        w.writerows([*(repr(float(v)) for v in row), repr(float(lab))] for row, lab in zip(X, y, strict=True))
    return tmp / "fl.csv", tmp / "fl.npz", X, y


def accuracy(model: Path, data: Path) -> float:
    code, out, err = run("eval", model, data, "--json")
    assert code == 0, err
    return float(json.loads(out)["accuracy"])


def test_float_labels_of_a_csv_and_an_npz_evaluate_each_others_models(tmp_path: Path) -> None:
    """eval refused the model's own data in the other form: "labels the model never saw ('0', '1', '2'; the
    model knows '0.0', '1.0', '2.0')", and the reverse. A data label that is the number of exactly one of the
    model's labels is that label; the same rows score the same in either form."""
    csv_path, npz_path, _, _ = float_labels(tmp_path)
    for data in (csv_path, npz_path):
        assert run("train", "nb-static", data, "-o", tmp_path / f"{data.suffix[1:]}.msgpack")[0] == 0
    for model in ("csv", "npz"):
        m = tmp_path / f"{model}.msgpack"
        assert accuracy(m, csv_path) == accuracy(m, npz_path) > 0.8


def test_a_converted_estimator_of_float_labels_keeps_the_npz_texts(tmp_path: Path) -> None:
    """compiler.convert wrote str(1.0) = "1.0" where an NPZ of the same y reads "1": one y, two label texts."""
    _, npz_path, X, y = float_labels(tmp_path)
    est = NaiveBayesBudget(budget=3).fit(X, y)
    model = tmp_path / "conv.msgpack"
    convert(est, X, feature_names=["a", "b", "c"]).save(model)
    code, out, _ = run("inspect", model, "--json")
    assert code == 0 and json.loads(out)["classes"] == ["0", "1", "2"]
    assert accuracy(model, npz_path) > 0.8


def test_numbers_that_match_two_labels_or_none_stay_unseen(tmp_path: Path) -> None:
    """"01" and "1" are two classes of a CSV: "1.0" matches both and is refused, as is "3", which matches none."""
    rng = np.random.default_rng(1)
    with (tmp_path / "t.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "label"])
        w.writerows([repr(float(v) + 3 * (i % 2)), ("01", "1")[i % 2]] for i, v in enumerate(rng.normal(size=60)))
    assert run("train", "nb-static", tmp_path / "t.csv", "-o", tmp_path / "m.msgpack")[0] == 0
    for label in ("1.0", "3"):
        (tmp_path / "e.csv").write_text(f"a,label\n0.5,{label}\n3.5,1\n")
        code, _, err = run("eval", tmp_path / "m.msgpack", tmp_path / "e.csv")
        assert code == 2 and f"labels the model never saw in training ('{label}'" in err, err


def test_a_libsvm_test_file_of_a_lower_largest_index_is_padded_with_zeros(tmp_path: Path) -> None:
    """libsvm lists the non-zero entries only: test rows that never reach the last features are zeros there, not
    rows of missing columns ("t.libsvm has 3 features, the model expects 29")."""
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(200):
        label = int(rng.integers(1, 4))
        entries = {j: round(float(rng.normal(label if j < 4 else 0)), 3) for j in range(1, 30) if rng.random() < 0.3}
        entries[29] = 1.0  # every training row reaches feature 29
        lines.append(f"{label} " + " ".join(f"{j}:{v}" for j, v in sorted(entries.items())))
    (tmp_path / "s.libsvm").write_text("\n".join(lines) + "\n")
    assert run("train", "nb-static", tmp_path / "s.libsvm", "-o", tmp_path / "m.msgpack")[0] == 0
    (tmp_path / "t.libsvm").write_text("1 1:0.5 3:1.0\n2 2:1.0\n")
    wide = " ".join(f"{j}:0" for j in range(4, 30))
    (tmp_path / "w.libsvm").write_text(f"1 1:0.5 2:0 3:1.0 {wide}\n2 1:0 2:1.0 3:0 {wide}\n")
    narrow = run("predict", tmp_path / "m.msgpack", tmp_path / "t.libsvm")
    assert narrow[0] == 0, narrow[2]
    assert narrow[1] == run("predict", tmp_path / "m.msgpack", tmp_path / "w.libsvm")[1]
    assert load_dataset(str(tmp_path / "t.libsvm")).X.shape == (2, 3)  # the file alone keeps its own width


@pytest.mark.parametrize(("header", "said"), [
    (",a,b,label", "column 1 of the header has no name (the row numbers pandas' to_csv writes first"),
    ("a,,b,label", "column 2 of the header has no name (between named columns)"),
    ("a,b,label,", "column 4 of the header has no name (a trailing separator leaves one)"),
])
def test_a_column_without_a_name_is_refused(tmp_path: Path, header: str, said: str) -> None:
    """pandas' df.to_csv(path) writes the row index first under an empty name: it was trained on as a feature
    (on rows sorted by class, the only one the model used)."""
    rows = "\n".join(f"{i},{i % 3}.5,{i % 2},{'xy'[i % 2]}" for i in range(20))
    if header.endswith(","):
        rows = "\n".join(f"{i},{i % 3}.5,{'xy'[i % 2]}," for i in range(20))
    (tmp_path / "d.csv").write_text(header + "\n" + rows + "\n")
    code, _, err = run("train", "nb-static", tmp_path / "d.csv", "-o", tmp_path / "m.msgpack")
    assert code == 2 and said in err and not (tmp_path / "m.msgpack").exists(), err
