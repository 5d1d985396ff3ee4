"""What round 67's probe of the CLI found, each checked against the wanted behaviour: `eval --plot` onto the model
file is refused (it destroyed the model); the default cascade on a small set refuses the exit-every cascade's
options as on a large one (it replaced them by its own grid, even invalid ones); --target-column on data whose labels
are in place is refused (it was ignored); infinite values of options that need a finite number are usage errors
naming the option; a data path that is a folder says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_work import run

os.environ.setdefault("FRUGALML_PROGRESS", "off")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("probe67") / "m.msgpack"
    code, _, err = run("train", "nb-static", "sklearn:iris", "-o", path)
    assert code == 0, err
    return path


def test_eval_plot_onto_the_model_file_is_refused(model: Path) -> None:
    before = model.read_bytes()
    code, _, err = run("eval", model, "sklearn:iris", "--plot", model)
    assert code == 2
    assert f"--plot {model} is the model file: writing it would destroy the input" in err
    assert model.read_bytes() == before


def test_eval_plot_elsewhere_still_writes(model: Path, tmp_path: Path) -> None:
    png = tmp_path / "cm.png"
    code, _, err = run("eval", model, "sklearn:iris", "--plot", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("option", [("--exit-lambdas", "1,x"), ("--exit-every-grid", "0"), ("--exit-lambdas", "5"),
                                    ("--loss", "squared")])
def test_small_set_cascade_refuses_the_exit_every_options(tmp_path: Path, option: tuple[str, str]) -> None:
    """iris's validation part has 30 rows (< 200): the default cascade is judged by cross-validation, which set
    its own exit grid over the user's (exit 0, the user's values never used)."""
    out = tmp_path / "c.msgpack"
    code, _, err = run("train", "cascade", "sklearn:iris", "--trees", 5, *option, "-o", out)
    assert code == 2
    assert f"{option[0]} applies with --early-exit-every only" in err
    assert not out.exists()


@pytest.mark.parametrize("data", ["sklearn:iris", "gen:sparse:300:20"])
def test_target_column_on_data_without_named_columns_is_refused(tmp_path: Path, data: str) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "nb-static", data, "--target-column", "nope", "-o", out)
    assert code == 2
    assert "--target-column 'nope' applies to data with named columns (a .csv or .arff file)" in err
    assert not out.exists()


def test_target_column_still_names_a_csv_column(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("kind,a,b\n" + "".join(f"{'xy'[i % 2]},{i % 2 + i * 0.01},{i * 0.3 % 1}\n" for i in range(60)))
    code, _, err = run("train", "nb-static", csv, "--target-column", "kind", "-o", tmp_path / "m.msgpack")
    assert code == 0, err


@pytest.mark.parametrize(("kind", "option"), [("nb-stop", "--stop-cost"), ("skyline", "--epsilon"),
                                              ("skyline", "--approx"), ("cstc", "--internal-loss"),
                                              ("cstc", "--rho"), ("miser", "--lambda"), ("miser", "--tree-cost"),
                                              ("adapt-gbrt", "--l2"), ("adapt-lin", "--gamma")])
def test_an_infinite_value_is_refused_naming_the_option(tmp_path: Path, kind: str, option: str) -> None:
    """Was: "stop_cost must be a finite number >= 0 or None, got inf" (the estimator's name), or a fit on it."""
    code, _, err = run("train", kind, "sklearn:iris", option, "inf", "-o", tmp_path / "m.msgpack")
    assert code == 2
    assert f"Invalid value for '{option}': 'inf' is not a finite number" in err


def test_a_data_folder_is_named_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "data.csv"
    folder.mkdir()
    code, _, err = run("train", "nb-static", folder, "-o", tmp_path / "m.msgpack")
    assert code == 2
    assert f"data path is a folder, not a file: {folder}" in err
