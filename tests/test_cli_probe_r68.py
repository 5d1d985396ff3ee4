"""Round 68: the CLI cases found by the round's probe and leftovers of round 67, each failing on the code before
it (see docs/errors.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_work import run

os.environ.setdefault("FRUGALML_PROGRESS", "off")


@pytest.fixture(scope="module")
def two_splits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("bench")
    paths = (d / "seed0.msgpack", d / "seed1.msgpack")
    for seed, path in enumerate(paths):
        code, _, err = run("train", "nb-static", "sklearn:wine", "--seed", str(seed), "-o", path)
        assert code == 0, err
    return paths


def test_bench_says_when_the_models_ran_on_different_rows(two_splits: tuple[Path, Path]) -> None:
    """Two models trained on different splits of one data set are each run on their own test part: `bench` used
    to put their accuracies side by side without a word."""
    code, out, err = run("bench", *two_splits, "--data", "sklearn:wine")
    assert code == 0, err
    assert "not trained on the same split" in err and "each runs on its own rows" in err
    assert len(out.splitlines()) == 3
    code, out, err = run("bench", *two_splits, "--data", "sklearn:wine", "--json")
    assert code == 0, err
    models = json.loads(out)["models"]
    assert [m["part"] for m in models] == ["test", "test"]
    assert all(m["rows"] > 0 for m in models)


def test_bench_on_one_split_says_nothing(two_splits: tuple[Path, Path]) -> None:
    code, out, err = run("bench", two_splits[0], two_splits[0], "--data", "sklearn:wine")
    assert code == 0, err
    assert "same split" not in err


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("probe68") / "m.msgpack"
    code, _, err = run("train", "nb-static", "sklearn:iris", "-o", path)
    assert code == 0, err
    return path


def test_an_input_named_like_the_output_plus_tmp_survives(iris_model: Path, tmp_path: Path) -> None:
    """Outputs went through OUTPUT.tmp, renamed over OUTPUT: an input of that name was overwritten and renamed
    away (the model of `export-c m.h.tmp -o m.h`, the costs of `train --costs m.msgpack.tmp -o m.msgpack`)."""
    model = tmp_path / "m.h.tmp"
    model.write_bytes(iris_model.read_bytes())
    code, _, err = run("export-c", model, "-o", tmp_path / "m.h")
    assert code == 0, err
    assert model.read_bytes() == iris_model.read_bytes() and (tmp_path / "m.h").read_text().startswith("/*")
    costs = tmp_path / "m3.msgpack.tmp"
    costs.write_text("feature,cost\n*,1\n")
    code, _, err = run("train", "nb-static", "sklearn:iris", "--costs", costs, "-o", tmp_path / "m3.msgpack")
    assert code == 0, err
    assert costs.read_text() == "feature,cost\n*,1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.h", "m.h.tmp", "m3.msgpack", "m3.msgpack.tmp"]


def test_a_written_file_gets_the_usual_mode(iris_model: Path, tmp_path: Path) -> None:
    """The temporary file is mkstemp's (0600); the output gets what a plain open() gives, or the old file's mode."""
    mask = os.umask(0o022)
    try:
        out = tmp_path / "m.h"
        assert run("export-c", iris_model, "-o", out)[0] == 0
        assert out.stat().st_mode & 0o777 == 0o644
        out.chmod(0o640)
        assert run("export-c", iris_model, "-o", out)[0] == 0
        assert out.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(mask)


def test_plot_without_an_image_suffix_is_refused(iris_model: Path, tmp_path: Path) -> None:
    """matplotlib wrote `--plot model` to model.png, past the check that --plot is not the model file (model.png
    overwritten), and the report named a file that did not exist."""
    model = tmp_path / "model.png"
    model.write_bytes(iris_model.read_bytes())
    for name in ("model", "out.txt"):
        code, out, err = run("eval", model, "sklearn:iris", "--plot", tmp_path / name)
        assert code == 2 and out == ""
        assert "name a .png (or .svg, .pdf) file" in err
    assert model.read_bytes() == iris_model.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.png"]


def test_plot_writes_the_format_its_suffix_names(iris_model: Path, tmp_path: Path) -> None:
    code, out, err = run("eval", iris_model, "sklearn:iris", "--plot", tmp_path / "cm.svg", "--json")
    assert code == 0, err
    assert json.loads(out)["plot"] == str(tmp_path / "cm.svg")
    assert b"<svg" in (tmp_path / "cm.svg").read_bytes()[:400]
    assert [p.name for p in tmp_path.iterdir()] == ["cm.svg"]


ARFF_HEAD = "@relation x\n@attribute a numeric\n@attribute class {p,q}\n@data\n"


@pytest.mark.parametrize(("text", "needle"), [
    (ARFF_HEAD + "1,p\n2,q\n3,z\n4,p\n", "data row 3: class 'z' is not a value of 'class'"),
    (ARFF_HEAD + "1,p\n2,?\n3,q\n4,p\n", "data row 2 has a missing class value"),
    ("@relation x\n@attribute a\n@attribute class {p,q}\n@data\n1,p\n", "attribute 'a' has no type"),
    ("@relation x\n@attribute 'a numeric\n@attribute class {p,q}\n@data\n1,p\n", "has no closing '"),
])
def test_arff_class_values_and_attribute_lines_are_checked(tmp_path: Path, text: str, needle: str) -> None:
    """A class value outside the declared list, or '?', became a class of its own; an attribute without a type
    was an IndexError traceback; an unclosed quote said "substring not found"."""
    data = tmp_path / "d.arff"
    data.write_text(text)
    code, out, err = run("train", "nb-static", data, "-o", tmp_path / "m.msgpack")
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m.msgpack").exists()


def test_arff_attribute_name_and_type_may_be_split_by_a_tab(tmp_path: Path) -> None:
    data = tmp_path / "tab.arff"
    data.write_text("@relation x\n@attribute a\tnumeric\n@attribute class\t{p,q}\n@data\n"
                    + "".join(f"{(i % 2) * 10 + i / 100},{'pq'[i % 2]}\n" for i in range(40)))
    code, _, err = run("train", "nb-static", data, "-o", tmp_path / "m.msgpack")
    assert code == 0, err


def test_libsvm_index_given_twice_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d.libsvm"
    data.write_text("".join(f"{i % 2} 1:{i} 2:{i * 2}\n" for i in range(20)) + "1 1:1.288 1:1.449\n")
    code, out, err = run("train", "nb-static", data, "-o", tmp_path / "m.msgpack")
    assert code == 2 and "line 21: feature index 1 is given twice" in err
    assert not (tmp_path / "m.msgpack").exists()


@pytest.mark.parametrize(("source", "needle"), [
    ("def feature_a(x:\n    return 1\n", "line 1: SyntaxError"),
    ("import nonexistent_module_xyz\n", "line 1: loading it raised ModuleNotFoundError"),
    ("import sys\nsys.exit(3)\n", "the file called exit(3) while it was loaded"),
])
def test_profile_costs_features_file_that_fails_to_load(tmp_path: Path, source: str, needle: str) -> None:
    """Errors other than a ValueError escaped as tracebacks; sys.exit(3) in the file ended the command with 3."""
    src = tmp_path / "feats.py"
    src.write_text(source)
    code, out, err = run("profile-costs", src, "--sizes", "10,20,30", "--repeats", "1", "-o", tmp_path / "c.csv")
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("args", [("sklearn:iris", "--scheduler", "tcp://127.0.0.1:9"),
                                  ("sklearn:breast_cancer", "--budget", "5", "--jobs", "2")])
def test_nb_jobs_and_scheduler_where_there_is_no_search_to_spread(tmp_path: Path, args: tuple[str, ...]) -> None:
    """nb's --jobs/--scheduler spread the two-class budget search only; with K classes or --budget they were
    ignored without a word (a bad scheduler address trained on, exit 0)."""
    code, _, err = run("train", "nb-stop", *args, "-o", tmp_path / "m.msgpack")
    assert code == 2 and "spread nb's two-class budget search, and there is none to spread here" in err
    assert not (tmp_path / "m.msgpack").exists()


def test_a_scheduler_address_without_a_port_is_one_error_at_once() -> None:
    """A failed distributed.Client left half built waited 20 s at exit and printed an ignored traceback."""
    from compiler.parallel import ParallelError, run_map

    with pytest.raises(ParallelError, match=r"^cannot reach the Dask scheduler at bogus: give it as tcp://HOST:PORT"):
        run_map(abs, [1, 2], scheduler="bogus")


def test_a_cost_float32_rounds_to_zero_is_refused(tmp_path: Path) -> None:
    costs = tmp_path / "c.csv"
    costs.write_text("feature,cost\n*,1e-46\n")
    code, _, err = run("train", "miser", "sklearn:iris", "--trees", 5, "--costs", costs, "-o", tmp_path / "m.msgpack")
    assert code == 2 and "cost 1e-46 rounds to 0 in float32" in err
    assert not (tmp_path / "m.msgpack").exists()


def test_eval_text_shows_no_python_reprs(tmp_path: Path) -> None:
    model = tmp_path / "sk.msgpack"
    assert run("train", "skyline", "sklearn:wine", "-o", model)[0] == 0
    code, out, err = run("eval", model, "sklearn:wine", "--budget-sweep")
    assert code == 0, err
    assert "{'" not in out and "None" not in out and "[{" not in out
    assert "budget sweep:" in out
    header = out.split("budget sweep:\n", 1)[1].splitlines()[0].split()
    assert header == ["budget", "accuracy", "mean_cost", "max_cost", "nothing_fits"]
