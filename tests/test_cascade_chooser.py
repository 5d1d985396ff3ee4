"""benchmarks/cascade_chooser.py: its validation rules pick known candidates, the bar's test is issue 22's, and the
candidate recorder sees every frontier candidate, scores the kept one as the fitted cascade predicts, and leaves
the frontier module as it found it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compiler.trees.frontier as frontier  # noqa: E402
from benchmarks import cascade_chooser as cc  # noqa: E402


def cand(name: str, ok: list[int], cost: float, test: tuple[float, float] = (0.0, 0.0)) -> cc.Candidate:
    arr = np.asarray(ok, dtype=bool)
    return cc.Candidate(name, arr, float(arr.mean()), cost, *test)


def test_within_keeps_the_cheapest_inside_the_tolerance() -> None:
    ref = cand("miser lambda=0", [1] * 100, 50.0)
    close = cand("miser lambda=1", [1] * 99 + [0], 30.0)  # -0.01: inside 0.01, outside 0.005
    cheap = cand("miser lambda=10", [1] * 97 + [0] * 3, 10.0)  # -0.03
    cs = [ref, close, cheap]
    assert cc.within(0.01)(cs) is close
    assert cc.within(0.005)(cs) is ref
    assert cc.within(0.05)(cs) is cheap
    tie = cand("miser lambda=1, exits every 1", [1] * 100, 30.0)  # same cost, more accurate: kept first
    assert cc.within(0.01)([ref, close, tie]) is tie


def test_one_standard_error_uses_the_reference_rows() -> None:
    ref = cand("r", [1] * 90 + [0] * 10, 50.0)  # p = 91/102, se = 0.0311 over 100 rows
    inside = cand("a", [1] * 87 + [0] * 13, 20.0)  # -0.03
    outside = cand("b", [1] * 86 + [0] * 14, 10.0)  # -0.04
    assert cc.one_se([ref, inside, outside]) is inside


def test_paired_non_inferiority_judges_the_rows_a_candidate_changes() -> None:
    n = 400
    base = np.ones(n, dtype=int)
    base[:40] = 0
    ref = cand("r", base.tolist(), 50.0)
    # one row lost, nothing else changed: the difference is known precisely -> admissible
    one = base.copy()
    one[100] = 0
    precise = cand("precise", one.tolist(), 30.0)
    # the same difference (one row, -0.0025) as 30 rows gained and 31 lost: noisy -> refused
    noisy_rows = base.copy()
    noisy_rows[:30] = 1
    noisy_rows[100:131] = 0
    noisy = cand("noisy", noisy_rows.tolist(), 10.0)
    assert noisy.val_acc == pytest.approx(precise.val_acc)
    assert cc.within(0.01)([ref, precise, noisy]) is noisy  # the absolute rule cannot tell them apart
    assert cc.non_inferior(0.01, 1.0)([ref, precise, noisy]) is precise


def test_wins_is_issue_22s_test() -> None:
    peer = {"acc": 0.90, "cost": 100.0}
    assert cc.wins(0.895, 99.9, peer)  # 0.5 points under, cheaper
    assert not cc.wins(0.8949, 50.0, peer)  # more than 0.5 points under
    assert not cc.wins(0.95, 100.0, peer)  # not cheaper
    won, ratio, points = cc.summary([(cand("x", [1], 0, (0.9, 50.0)), {"coupled": peer}),
                                     (cand("y", [1], 0, (0.8, 150.0)), {"coupled": peer})], "coupled")
    assert (won, ratio, points) == (1, 1.0, pytest.approx(-5.0))


def test_judge_noise_pairs_each_candidate_with_its_runs_reference(tmp_path: Path) -> None:
    run_a = [cand("r", [1, 1, 1, 1], 9.0, (0.75, 9.0)), cand("a", [1, 1, 1, 0], 5.0, (0.50, 5.0))]
    run_b = [cand("r", [1, 0], 9.0, (1.0, 9.0)), cand("b", [1, 1], 5.0, (0.5, 5.0)), cand("c", [0, 0], 1.0, (0.5, 1.0))]
    dv, dt = cc.judge_noise([run_a, run_b])
    assert dv.tolist() == pytest.approx([-25.0, 50.0, -50.0])
    assert dt.tolist() == pytest.approx([-25.0, -50.0, -50.0])
    out = tmp_path / "sub" / "noise.png"
    cc.plot_noise([{"data": "x"}, {"data": "y"}], [run_a, run_b], out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cheap_first_names_are_recognised() -> None:
    assert cand("miser lambda=0.3 for 26 iterations, then 0.1442, exits every 1", [1], 0).cheap_first
    assert not cand("miser lambda=0.1442, exits every 5", [1], 0).cheap_first
    assert not cand("cscc", [1], 0).cheap_first


def test_recorder_sees_every_candidate_and_restores_the_frontier() -> None:
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, random_state=0)
    X = X.astype(np.float32)
    tr, va, te = np.arange(0, 360), np.arange(360, 480), np.arange(480, 600)
    costs = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 50.0])
    est = frontier.CascadeFrontierClassifier(costs=costs, n_trees=20, lambdas=(0.0, 1.0), refine=0,
                                             with_cscc=False)
    rows: list[dict] = []
    original = frontier.validation_report
    with cc.candidates_scored(X[te], y[te], rows):
        assert frontier.validation_report is not original
        est.fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    assert frontier.validation_report is original
    assert len(rows) == len(est.frontier_) >= 2
    for r, f in zip(rows, est.frontier_, strict=True):
        assert r["val_acc"] == f["validation_accuracy"] and r["val_cost"] == f["validation_cost"]
        assert r["val_ok"].shape == (va.size,) and r["val_ok"].mean() == pytest.approx(r["val_acc"])
    kept = [f["model"] for f in est.frontier_].index(est.best_name_)
    assert rows[kept]["test_acc"] == pytest.approx(float(np.mean(est.predict(X[te]) == y[te])))
    with pytest.raises(RuntimeError, match="boom"), cc.candidates_scored(X[te], y[te], []):
        raise RuntimeError("boom")
    assert frontier.validation_report is original
