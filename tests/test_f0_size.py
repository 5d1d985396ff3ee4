"""--hpc NAME:TREES[:DEPTH]: the gated trainers' f0 sized for a microcontroller (round 66: the default 100
unbounded trees made a 64-class adapt-lin model of 6 MB of tables, which export-c refuses for a Cortex-M4F's
flash, and its remedy "a smaller f0" had no option but a pickled estimator)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_work import run
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from compiler.gated.adapt_gbrt import make_hpc
from compiler.gated.common import make_f0
from compiler.gated.f0_spec import F0Error, f0_spec


def test_specs_build_the_sized_forest_and_the_names_stay_as_they_were() -> None:
    rf = make_f0("rf:30:8")
    assert isinstance(rf, RandomForestClassifier) and (rf.n_estimators, rf.max_depth) == (30, 8)
    assert (make_f0("rf:12").n_estimators, make_f0("rf:12").max_depth) == (12, None)
    gb = make_hpc("gbrt:40:2")
    assert isinstance(gb, GradientBoostingClassifier) and (gb.n_estimators, gb.max_depth) == (40, 2)
    assert make_f0("gbrt:7").max_depth == 3  # gradient boosting's own default depth
    assert (make_f0("rf").n_estimators, make_f0("rf").max_depth) == (100, None)  # the default f0 unchanged
    assert f0_spec("model.pkl") is None and f0_spec("rf") == ("rf", None, None)


@pytest.mark.parametrize("bad", ["rf:0", "rf:x", "rf:1:2:3", "gbrt:", "rf::4", "svm-rbf:3", "rf:-2", "rf:1:0"])
def test_malformed_sizes_are_refused(bad: str) -> None:
    with pytest.raises(F0Error, match="rf\\|gbrt\\[:TREES\\[:DEPTH\\]\\]"):
        make_f0(bad)


def test_cli_trains_the_sized_f0_and_refuses_a_bad_size_before_training(tmp_path: Path) -> None:
    out = tmp_path / "m.msgpack"
    code, _, err = run("train", "adapt-lin", "sklearn:wine", "--hpc", "rf:4:3", "-o", out)
    assert code == 0, err
    code, text, _ = run("inspect", out)
    assert code == 0 and "f0: type=trees, n_trees=12, max_depth=3" in text  # 4 trees x 3 classes
    assert "f0 kind: rf:4:3" in text
    code, _, err = run("train", "adapt-lin", "sklearn:wine", "--hpc", "rf:0", "-o", tmp_path / "x.msgpack")
    assert code == 2 and "Invalid value for '--hpc': hpc 'rf:0'" in err and "training" not in err, err
    assert not (tmp_path / "x.msgpack").exists()
