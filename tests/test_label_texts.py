"""Label texts the tools cannot carry are refused with one line (round 33's trial): a control character other
than tab (a NUL ended the C header's label early; a line break split predict's one line per row). The unseen
label message quotes each label and says how many it left out."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from compiler.cli import first_line
from compiler.header import render_header
from compiler.report_text import confusion_lines
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


def three_class_csv(path: Path, names: list[str], rows: int = 300, seed: int = 2) -> Path:
    rng = np.random.default_rng(seed)
    y = np.arange(rows) % len(names)
    return quoted_csv(path, rng.normal(size=(rows, 3)) + 2.0 * y[:, None], [names[v] for v in y])


def test_one_vs_rest_names_its_other_side_apart_from_a_class_called_rest(tmp_path: Path) -> None:
    """`--positive rest` on classes a, b, rest named both sides "rest": predict printed one text for both answers,
    the header's label table read {"rest", "rest"} and eval's per-class table folded two classes into one row."""
    data = three_class_csv(tmp_path / "d.csv", ["a", "b", "rest"])
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "-o", out, "--positive", "rest")
    assert code == 0, err
    assert fmt.load(out).classes == ["rest_", "rest"]
    code, text, err = run("eval", out, data, "--json")
    assert code == 0, err
    rep = json.loads(text)
    assert set(rep["per_class"]) == {"rest_", "rest"} and sum(c["n"] for c in rep["per_class"].values()) == rep["n"]
    code, _, err = run("train", "nb-static", data, "-o", tmp_path / "a.msgpack", "--positive", "a")
    assert code == 0 and fmt.load(tmp_path / "a.msgpack").classes == ["rest_", "a"], err  # rest is on that side


def test_the_confusion_matrix_heads_its_no_class_column_apart_from_a_class_called_none() -> None:
    lines = confusion_lines(["-1", "none", "x"], [[1, 0, 0], [0, 2, 0], [0, 0, 3]], [0, 1, 0])
    assert lines[0].split() == ["-1", "none", "x", "none_"]
    assert confusion_lines(["a", "b"], [[1, 0], [0, 1]], [1, 0])[0].split() == ["a", "b", "none"]


def test_eval_plot_draws_labels_with_dollar_signs_as_text(tmp_path: Path) -> None:
    """Labels such as "$5-$10" went to matplotlib as mathtext: some drew wrongly, "A $^$" failed with an empty
    error line ("error: ") and the report was lost."""
    data = three_class_csv(tmp_path / "d.csv", ["A $^$", "under $5", "$5-$10^"])
    out = tmp_path / "m.msgpack"
    assert run("train", "nb-static", data, "-o", out)[0] == 0
    code, text, err = run("eval", out, data, "--plot", tmp_path / "c.png")
    assert code == 0, err
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG" and "confusion matrix" in text


def test_an_error_line_is_never_empty() -> None:
    assert first_line(ValueError("\nParse error\n  at $^$")) == "Parse error"
    assert first_line(ValueError("")) == "ValueError" and first_line(OSError("  \n ")) == "OSError"


def test_a_label_column_found_by_its_name_is_named_when_it_is_not_the_last(tmp_path: Path) -> None:
    """x, y, z, activity: the column called y was taken as the labels, silently (a grid of y cells trained on y) or
    with ">64 classes: pass --positive" (a float y): the train line and that error now name the column taken and
    --target-column."""
    rng = np.random.default_rng(3)
    act = np.arange(240) % 4
    grid = tmp_path / "grid.csv"
    grid.write_text("x,y,reading,zone\n" + "".join(f"{rng.integers(0, 6)},{rng.integers(0, 6)},{rng.normal() + a},{a}\n"
                                                  for a in act))
    code, _, err = run("train", "nb-static", grid, "-o", tmp_path / "g.msgpack")
    assert code == 0 and "labels from column 'y' (named like a label column; --target-column NAME" in err, err
    code, _, err = run("train", "nb-static", grid, "-o", tmp_path / "z.msgpack", "--target-column", "zone")
    assert code == 0 and "labels from column" not in err, err
    xyz = tmp_path / "xyz.csv"
    xyz.write_text("x,y,z,activity\n" + "".join(f"{rng.normal()},{rng.normal()},{rng.normal()},{a}\n" for a in act))
    out = tmp_path / "x.msgpack"
    code, _, err = run("train", "nb-static", xyz, "-o", out)
    last = err.strip().splitlines()[-1]
    assert code == 2 and "column 'y'" in last and "--target-column NAME" in last and not out.exists(), err


def test_labels_alike_but_for_their_unicode_form_are_refused(tmp_path: Path) -> None:
    """"café" composed (NFC) and decomposed (NFD) made two classes that every report printed alike."""
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "d.csv", (nfc, nfd)), "-o", out)
    last = err.strip().splitlines()[-1]
    assert code == 2 and "differ only in how their characters are encoded" in last and not out.exists(), err
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "e.csv", (nfc, "tea")), "-o", out)
    assert code == 0 and nfc in fmt.load(out).classes, err


@pytest.mark.parametrize("kind, seed", [("nb-static", "-1"), ("nb-static", "4294967296"), ("miser", "4294967296")])
def test_a_split_seed_out_of_numpys_range_is_a_usage_error_naming_the_option(tmp_path: Path, kind: str,
                                                                               seed: str) -> None:
    """numpy seeds take 0 .. 2^32 - 1: past it some paths said numpy's "Seed must be between 0 and 2**32 - 1"
    after loading the data, others trained (round 64); now one usage error for every kind."""
    data = two_class_csv(tmp_path / "d.csv", ("a", "b"))
    code, _, err = run("train", kind, data, "-o", tmp_path / "m.msgpack", "--seed", seed)
    assert code == 2 and "--seed" in err and err.count("\n") == 1 and not (tmp_path / "m.msgpack").exists(), err
    code, _, err = run("train", kind, data, "-o", tmp_path / "m.msgpack", "--seed", str(2**32 - 1))
    assert code == 0, err


def test_predict_refuses_to_write_over_its_data_through_a_hard_link(tmp_path: Path) -> None:
    data = two_class_csv(tmp_path / "d.csv", ("a", "b"))
    assert run("train", "nb-static", data, "-o", tmp_path / "m.msgpack")[0] == 0
    link = tmp_path / "link.csv"
    link.hardlink_to(data)
    before = data.read_bytes()
    code, _, err = run("predict", tmp_path / "m.msgpack", data, "-o", link)
    assert code == 2 and "would destroy the input" in err and data.read_bytes() == before, err


@pytest.mark.parametrize("labels, shown", [(("a,b", "c"), '"a,b", "c"'), (('say "hi"', "y"), '"say \\"hi\\"", "y"'),
                                           (("walk", "run"), "run, walk"),
                                           (("x\u200b", "x"), '"x", "x\\u200b"')])  # zero-width space (round 65)
def test_inspect_quotes_class_texts_a_comma_would_split(tmp_path: Path, labels: tuple[str, str],
                                                         shown: str) -> None:
    """inspect's text line joins the classes with ", ": a label holding a comma, a quote or edge spaces would read
    as other classes, so then every text is quoted; --json keeps the texts as they are."""
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", two_class_csv(tmp_path / "d.csv", labels), "-o", out)
    assert code == 0, err
    code, text, err = run("inspect", out)
    assert code == 0 and f"classes: {shown}\n" in text, (text, err)
    code, text, err = run("inspect", out, "--json")
    assert code == 0 and sorted(json.loads(text)["classes"]) == sorted(labels), err
