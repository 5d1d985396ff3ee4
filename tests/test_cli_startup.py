"""CLI start-up stays light: importing the CLI, `--version`, `--help`, `inspect`, `predict` and `eval`
load neither scikit-learn nor scipy nor matplotlib (they cost seconds; only training needs them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import cli
from pyruntime.data import make_sparse_binary

HEAVY = ("sklearn", "scipy", "matplotlib")
ROOT = Path(__file__).resolve().parents[1]

# Runs the CLI in a fresh interpreter, then prints the heavy top-level packages it imported.
PROBE = """
import json, sys
argv, heavy_names = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
code = 0
if argv is not None:
    from compiler.cli import main
    sys.argv = ["frugalml", *argv]
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
else:
    import compiler.cli  # noqa: F401
heavy = sorted({m.split(".")[0] for m in sys.modules} & heavy_names)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def probe(argv: list[str] | None) -> dict:
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    return json.loads(p.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("startup")
    X, y = make_sparse_binary(400, 12, seed=3)
    data = d / "d.csv"
    data.write_text(",".join([f"w{j}" for j in range(12)] + ["label"]) + "\n"
                    + "\n".join(",".join([*(f"{v:g}" for v in x), str(t)]) for x, t in zip(X, y)) + "\n")
    res = CliRunner().invoke(cli, ["train", "nb-stop", str(data), "-o", str(d / "m.msgpack")])
    assert res.exit_code == 0, res.output
    return d / "m.msgpack", data


def test_importing_the_cli_loads_no_heavy_package() -> None:
    assert probe(None) == {"code": 0, "heavy": []}


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["train", "--help"], ["power", "--help"]])
def test_light_commands_load_no_heavy_package(argv: list[str]) -> None:
    assert probe(argv) == {"code": 0, "heavy": []}


@pytest.mark.parametrize("command", ["inspect", "predict", "eval"])
def test_model_commands_load_no_heavy_package(model: tuple[Path, Path], command: str) -> None:
    path, data = model
    argv = [command, str(path)] + ([] if command == "inspect" else [str(data)])
    assert probe(argv) == {"code": 0, "heavy": []}


def test_family_command_is_listed_and_loaded_only_when_run() -> None:
    """profile-costs (scipy) appears in --help with its one-line help, and runs when called."""
    res = CliRunner().invoke(cli, ["--help"])
    assert "profile-costs" in res.output and "power" in res.output
    res = CliRunner().invoke(cli, ["profile-costs", "--help"])
    assert res.exit_code == 0 and "--sizes" in res.output
