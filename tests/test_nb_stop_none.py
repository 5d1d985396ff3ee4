"""nb-stop says so when it keeps no stop point (round 49: on keel:segment and keel:vowel the defaults kept none and
the model read its whole order as nb-static does, silently): one stderr line naming the rules that held every cut
back, and `stop_points_kept` in the model file's training record."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from compiler.cli import cli
from pyruntime import format as fmt


def _train(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "m.msgpack"
    res = CliRunner().invoke(cli, ["train", *args, "sklearn:breast_cancer", "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    return fmt.load(out).meta["training"], res.stderr


def test_no_stop_point_kept_is_said_and_recorded(tmp_path: Path) -> None:
    # a check that costs more reads than the order holds can never pay for itself
    t, err = _train(tmp_path, "nb-stop", "--budget", "8", "--stop-cost", "100")
    assert t["stop_points_kept"] == 0 and t["validation_mean_features"] == 8
    line = [ln for ln in err.splitlines() if "no stop point was kept" in ln]
    assert len(line) == 1 and "all 8 features" in line[0] and "--stop-cost 100" in line[0]
    assert "--criterion safe" in line[0]


def test_kept_stop_points_are_counted_and_not_warned(tmp_path: Path) -> None:
    t, err = _train(tmp_path, "nb-stop", "--budget", "8", "--stop-cost", "0")
    assert t["stop_points_kept"] >= 1 and t["validation_mean_features"] < 8
    assert "no stop point was kept" not in err
    t, err = _train(tmp_path, "nb-static", "--budget", "8")
    assert "stop_points_kept" not in t and "no stop point" not in err
