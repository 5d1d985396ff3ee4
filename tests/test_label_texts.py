"""Label texts the tools cannot carry are refused with one line (round 33's trial): a control character other
than tab (a NUL ended the C header's label early; a line break split predict's one line per row). The unseen
label message quotes each label and says how many it left out."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from compiler.header import render_header
from compiler.tasks import label_list
from pyruntime import format as fmt
from pyruntime.errors import DataError


def quoted_csv(path: Path, X: np.ndarray, labels: list[str]) -> Path:
    """A CSV whose fields are quoted where they must be (a label with a line break spans lines)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([*(f"f{j}" for j in range(X.shape[1])), "label"])
        w.writerows([*(repr(float(v)) for v in row), lab] for row, lab in zip(X, labels, strict=True))
    return path


def two_class_csv(path: Path, labels: tuple[str, str]) -> Path:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    return quoted_csv(path, rng.normal(size=(120, 3)) + y[:, None], [labels[v] for v in y])


@pytest.mark.parametrize("bad", ["nul\x00x", "two\nlines", "cr\rx", "bell\x07", "c1\x85mid"])
def test_a_label_with_a_control_character_is_refused_at_train(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "d.csv", ("ok", bad)), "-o", out)
    last = err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("error: label ") and "control character" in last, err
    assert repr(bad) in last and not out.exists()


def test_tabs_and_other_printable_texts_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    labels = ("tab\there", 'say "hi" ??/')
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "d.csv", labels), "-o", out)
    assert code == 0, err
    assert sorted(fmt.load(out).classes) == sorted(labels)


def test_one_vs_rest_checks_only_the_texts_it_keeps(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 150)
    names = ["a", "b", "bad\nname"]
    data = quoted_csv(tmp_path / "d.csv", rng.normal(size=(150, 3)) + y[:, None], [names[v] for v in y])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "-o", out, "--positive", "a")
    assert code == 0, err
    assert fmt.load(out).classes == ["rest", "a"]


def test_export_refuses_a_model_made_in_python_with_a_nul_label(tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "d.csv", ("x", "y")), "-o", out)
    assert code == 0, err
    m = fmt.load(out)
    m.meta["classes"] = ["x", "y\x00z"]
    with pytest.raises(DataError, match="holds the control character"):
        render_header(m, "float32")


def test_label_list_quotes_and_counts() -> None:
    assert label_list(["a, b", "c"]) == "'a, b', 'c'"
    labels = [f"k{i}" for i in range(12)]
    assert label_list(labels) == "'k0', 'k1', 'k2', 'k3', 'k4', 'k5', ... (12 in all)"
    assert label_list(labels[:6]) == "'k0', 'k1', 'k2', 'k3', 'k4', 'k5'"
