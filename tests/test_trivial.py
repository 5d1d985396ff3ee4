"""Every trainer refuses a trivial model (exit 2, one line, no file) unless --allow-trivial."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from compiler.tasks import TrivialModelError, check_not_trivial

KINDS = {
    "nb-static": [], "nb-stop": [], "miser": ["--trees", "5"], "cascade": ["--trees", "5", "--pool-lambdas", "0"],
    "adapt-gbrt": ["--trees", "5"], "adapt-lin": [], "l1-gate": [], "skyline": [],
}


@pytest.fixture(scope="module")
def constant_data(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Features that carry nothing (constant): every model is the majority class."""
    rng = np.random.default_rng(0)
    n = 240
    y = (rng.random(n) < 0.35).astype(int)
    path = tmp_path_factory.mktemp("trivial") / "const.csv"
    rows = ["a,b,target"] + [f"1.0,2.0,{v}" for v in y]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_trivial_model_is_refused_then_allowed(kind: str, constant_data: str, tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    r = CliRunner().invoke(cli, ["train", kind, constant_data, "-o", str(out), *KINDS[kind]])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "trivial" in lines[0] and "--allow-trivial" in lines[0], r.output
    assert not out.exists()
    r = CliRunner().invoke(cli, ["train", kind, constant_data, "-o", str(out), "--allow-trivial", *KINDS[kind]])
    assert r.exit_code == 0, r.output
    assert out.exists()


def test_check_not_trivial_rules() -> None:
    y = np.array([0] * 70 + [1] * 30)
    # constant answer: refused
    with pytest.raises(TrivialModelError, match="does not beat the majority class"):
        check_not_trivial("k", y, np.zeros(100, int), np.ones(100), {}, "change x")
    # a model that finds the rare class (balanced accuracy above 1/2) passes even below the majority's accuracy
    pred = np.r_[np.ones(35, int), np.zeros(35, int), np.ones(30, int)]
    assert check_not_trivial("k", y, pred, np.ones(100), {}, "change x")["trivial"] is False
    # reads nothing while the reference is much better: refused; allowed on request
    good = y.copy()
    good[:20] = 1
    with pytest.raises(TrivialModelError, match="reads no feature"):
        check_not_trivial("k", y, good, np.zeros(100), {}, "change x", ("f0", 0.99))
    assert check_not_trivial("k", y, good, np.zeros(100), {"allow_trivial": True}, "x", ("f0", 0.99))["trivial"]
