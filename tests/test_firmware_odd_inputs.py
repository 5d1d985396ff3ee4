"""The Pi firmware (built natively) on inputs nobody tuned for, found by round 33's trial of every kind on
generated data: label texts that held trigraphs, numbers whose float32 depends on how the text is rounded, and a
budget index whose default budget admits nothing. Each line must equal `frugalml predict`'s."""

from __future__ import annotations

import shutil
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from firmware_tools import PI, expected_lines, frugalml, make
from test_multiclass import write_csv

from compiler.header import render_header
from compiler.kinds import load_kind_modules
from pyruntime import format as fmt
from pyruntime.data import load_dataset

load_kind_modules()


@pytest.fixture(autouse=True)
def _host_cc() -> None:
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no host cc / make")


def pi_lines(model: fmt.ModelFile, tmp_path: Path, rows_csv: Path, X_embed: np.ndarray) -> list[str]:
    """fm_pi built for the host (-std=c99 -Wall -Wextra -Werror -pedantic) on the rows of rows_csv."""
    header = tmp_path / "model.h"
    header.write_text(render_header(model, "float32", "model", X_embed, None))
    p = make(PI, f"MODEL={header}", "CROSS=", f"BUILD={tmp_path / 'b'}", "run", f"ARGS={rows_csv}", check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def rows_file(path: Path, texts: list[list[str]]) -> Path:
    path.write_text("".join(",".join(r) + "\n" for r in texts))
    return path


def test_labels_with_runs_of_question_marks_print_as_predict_prints_them(tmp_path: Path) -> None:
    """'???!' was written "?""??!": a trigraph for '|' (gcc -Werror=trigraphs, or a wrong label)."""
    rng = np.random.default_rng(0)
    labels = ["ok???!", "q???=x", "back???/", "a??b?"]
    y = rng.integers(0, len(labels), 240)
    X = rng.normal(size=(240, 3)) + 2.0 * np.eye(len(labels))[y][:, :3]
    data = write_csv(tmp_path / "q.csv", X, [labels[v] for v in y])
    frugalml("train", "nb-static", data, "-o", tmp_path / "m.msgpack")
    m = fmt.load(tmp_path / "m.msgpack")
    assert sorted(m.classes) == sorted(labels)
    rows = rows_file(tmp_path / "rows.csv", [[repr(float(v)) for v in r] for r in X[:40]])
    got = pi_lines(m, tmp_path, rows, X[:2])
    expected = expected_lines(m, "float32", X[:40].astype(np.float32))
    assert got == expected
    assert {line.rsplit(" ", 1)[0].rsplit(" ", 1)[0] for line in got} & set(labels)  # label texts, not indices


def midpoint_text(t: np.float32, up: bool) -> str:
    """Decimal text a quarter of a double's ulp beyond the midpoint of t and its float32 neighbour (above t when
    up): its nearest double is the midpoint itself (a tie, which float32 breaks to even), while rounding the text
    straight to float32 (strtof) takes the neighbour's side."""
    nb = np.nextafter(t, np.float32(np.inf if up else -np.inf))
    mid = (float(t) + float(nb)) / 2.0  # exact in float64
    with localcontext() as ctx:
        ctx.prec = 60
        q = Decimal(float(np.spacing(mid))) / 4
        return str(Decimal(mid) + (q if up else -q))


def test_pi_reads_numbers_as_predict_does_next_to_tree_thresholds(tmp_path: Path) -> None:
    """fm_pi parsed with strtof (one rounding, straight to float) where predict reads float64, then float32:
    about half the texts within a double's ulp of a float32 midpoint land on different floats, and a tree
    threshold between them split the row the other way. Both now read double, then float."""
    frugalml("train", "miser", "sklearn:breast_cancer", "-o", tmp_path / "m.msgpack", "--trees", "10")
    m = fmt.load(tmp_path / "m.msgpack")
    t = m.tables.trees  # miser: a one-stage tree cascade
    base = load_dataset("sklearn:breast_cancer").X[:1].astype(np.float64)
    texts, read, single = [], [], []
    for i in np.flatnonzero(t.feature >= 0)[:80]:
        f, thr = int(t.feature[i]), np.float32(t.threshold[i])
        s = midpoint_text(thr, up=True)
        row_t = [repr(float(v)) for v in base[0]]
        row_t[f] = s
        texts.append(row_t)
        r = base[0].copy()
        r[f] = float(s)  # what predict reads (float64, then float32 in the evaluator)
        read.append(r)
        r1 = base[0].copy()
        r1[f] = float(np.nextafter(thr, np.float32(np.inf)))  # strtof's single rounding: above the midpoint
        single.append(r1)
    X_read = np.array(read).astype(np.float32)
    expected = expected_lines(m, "float32", X_read)
    # the rows have power: read the strtof way, some of them take another path and another label or read count
    assert expected != expected_lines(m, "float32", np.array(single).astype(np.float32))
    got = pi_lines(m, tmp_path, rows_file(tmp_path / "rows.csv", texts), X_read[:2])
    assert got == expected


def test_a_skyline_whose_default_budget_admits_nothing(tmp_path: Path) -> None:
    """Refused at train (every prediction would be "nothing fits"); written with --allow-trivial, the firmware
    prints predict's line for it (label -1, nothing read, cost 0) where it stopped with FM_E_BUDGET."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    X = rng.normal(size=(300, 4)) + y[:, None]
    data = write_csv(tmp_path / "s.csv", X, [f"c{v}" for v in y])
    out = tmp_path / "s.msgpack"
    args = ("train", "skyline", data, "-o", out, "--base", "nb", "--no-empty-model", "--default-budget", "0.5")
    code, _, err = run(*args)
    assert code == 2 and not out.exists(), err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: skyline: no model fits the default budget 0.5") and "--allow-trivial" in last
    code, _, err = run(*args, "--allow-trivial")
    assert code == 0, err
    m = fmt.load(out)
    expected = expected_lines(m, "float32", X[:10].astype(np.float32))
    assert all(line.split()[0] == "-1" for line in expected)
    rows = rows_file(tmp_path / "rows.csv", [[repr(float(v)) for v in r] for r in X[:10]])
    assert pi_lines(m, tmp_path, rows, X[:2]) == expected


def test_pi_refuses_a_field_too_long_to_keep_instead_of_reading_its_first_127_characters(tmp_path: Path) -> None:
    """fm_pi kept a field's first 127 characters and dropped the rest without a word: "1.000...0e-5" (140
    characters) parsed as 1 and the row was predicted on the wrong value. A field that long is now refused with its
    line; one of 127 characters is still read as predict reads it."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(300, 1))
    data = write_csv(tmp_path / "t.csv", X, ["high" if v > 0.5 else "low" for v in X[:, 0]])
    frugalml("train", "nb-static", data, "-o", tmp_path / "m.msgpack")
    m = fmt.load(tmp_path / "m.msgpack")
    fits = "0." + "0" * 120 + "9e120"  # 127 characters: 0.9
    assert len(fits) == 127 and float(fits) == 0.9
    header = tmp_path / "model.h"
    header.write_text(render_header(m, "float32", "model", X[:2], None))
    rows = rows_file(tmp_path / "ok.csv", [[fits], ["0.1"]])
    p = make(PI, f"MODEL={header}", "CROSS=", f"BUILD={tmp_path / 'b'}", "run", f"ARGS={rows}", check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected_lines(m, "float32", np.array([[0.9], [0.1]], np.float32))
    too_long = "1." + "0" * 134 + "e-5"  # 140 characters: 1e-5, whose first 127 read as 1
    bad = rows_file(tmp_path / "bad.csv", [["0.1"], [too_long]])
    p = make(PI, f"MODEL={header}", "CROSS=", f"BUILD={tmp_path / 'b'}", "run", f"ARGS={bad}", check=False)
    assert p.returncode != 0
    assert "line 2: a field longer than 127 characters" in p.stderr
