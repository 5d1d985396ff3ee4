"""Two-class nb-stop under the small-set rule (round 38): with fewer than 200 validation rows its stop cuts and
threshold are judged on out-of-fold scores of the train and validation rows pooled, the tables staying the train
part's; --folds 1 (or 200 validation rows and more) keeps the validation part alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_work import run
from dict_round_trip import assert_same_tables
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.model_selection import train_test_split

from compiler.nb.discretize import fit_bins
from compiler.nb.train import NaiveBayesBudget, StopRule, best_threshold, fit_tables, learn_stop_points
from compiler.options import CV_FOLDS, stratified_folds
from compiler.tasks import class_weights
from pyruntime import format as fmt
from pyruntime.nb.model import NBModel


def _cancer_split(seed: int = 0) -> tuple[np.ndarray, ...]:
    X, y = load_breast_cancer(return_X_y=True)
    Xa, Xt, ya, yt = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    Xr, Xv, yr, yv = train_test_split(Xa, ya, test_size=0.25, stratify=ya, random_state=seed)
    return Xr, yr, Xv, yv, Xt, yt


def _scores(model: NBModel, X: np.ndarray) -> np.ndarray:
    """float32 running sums after 0..k features, as the runtime adds them (the test's own loop)."""
    E = model.entries(np.asarray(X, dtype=np.float32))
    out = np.empty((E.shape[0], E.shape[1] + 1), dtype=np.float32)
    out[:, 0] = model.d0
    for i in range(E.shape[1]):
        out[:, i + 1] = (out[:, i] + E[:, i]).astype(np.float32)
    return out


def test_small_validation_part_learns_the_cuts_out_of_fold() -> None:
    """Breast cancer's 114 validation rows learn no stop point (the rule of three wants 150 stopped rows on a
    side); the pooled 455 rows do, each cut stops only rows whose early answer is the fold model's full answer,
    no stopped row answers worse, the tables are nb-static's and the model reads fewer features on test."""
    Xr, yr, Xv, yv, Xt, _ = _cancer_split()
    assert Xv.shape[0] < 200
    est = NaiveBayesBudget(budget=30).fit(Xr, yr, eval_set=(Xv, yv))
    static_est = NaiveBayesBudget(budget=30, early_stopping=False).fit(Xr, yr, eval_set=(Xv, yv))
    model, static = est.model_, static_est.model_
    assert est.cut_folds_ == CV_FOLDS and est.refit_folds_ == 0 and static_est.cut_folds_ == 0
    for key in ("order", "edges", "d", "d0", "zero_bin"):  # the tables stay the train part's
        assert np.array_equal(np.asarray(getattr(model, key)), np.asarray(getattr(static, key))), key
    assert len(model.stop_at) > 0
    # the validation rows alone learn nothing (the rule before round 38)
    Pv = _scores(static, Xv)
    w = class_weights(yv)
    assert learn_stop_points(Pv, yv, best_threshold(Pv[:, -1], yv, w), w, StopRule())[0] == []
    # the pooled out-of-fold scores, fitted here fold by fold with the train part's bins
    bins = fit_bins(Xr.astype(np.float32), est.bins_)
    Xp, yp = np.concatenate([Xr, Xv]), np.concatenate([yr, yv])
    P, y_stop = [], []
    for tr, te in stratified_folds(yp, CV_FOLDS, 0):
        tables, _ = fit_tables(bins.transform(Xp[tr]), yp[tr], bins)
        P.append(_scores(tables.model(np.asarray(model.order), 0.0, Xr.shape[1]), Xp[te]))
        y_stop.append(yp[te])
    S, ys = np.concatenate(P), np.concatenate(y_stop)
    assert S.shape == (yp.size, 31)
    full = (S[:, -1] > best_threshold(S[:, -1], ys, class_weights(ys))).astype(int)
    running = np.ones(ys.size, dtype=bool)
    for at, hi, lo in zip(model.stop_at, model.stop_hi, model.stop_lo):
        s = S[:, at]
        up, down = running & (s > np.float32(hi)), running & (s < np.float32(lo))
        stopped = up | down
        assert stopped.any()
        early = np.where(up, 1, 0)
        # safe on the pooled rows: agreement >= 99.75% (no disagreement under 400 rows), no loss
        assert np.sum(early[stopped] != full[stopped]) <= 0.0025 * stopped.sum()
        assert np.sum(early[stopped] == ys[stopped]) >= np.sum(full[stopped] == ys[stopped])
        running &= ~stopped
    p = model.predict_reference(Xt)
    assert float(np.mean(p.n_read)) < 30 and p.stage.max() > 0


def test_folds_one_and_large_validation_parts_keep_the_validation_rows() -> None:
    """folds=1 is today's procedure on a small set; with 200 validation rows or more the default is the same as
    folds=1 (cut_folds_ 0): the stop points come from the validation rows alone."""
    Xr, yr, Xv, yv, _, _ = _cancer_split(1)
    one = NaiveBayesBudget(budget=30, folds=1).fit(Xr, yr, eval_set=(Xv, yv))
    assert one.cut_folds_ == 0 and len(one.model_.stop_at) == 0
    X, y = make_classification(n_samples=1500, n_features=20, n_informative=6, random_state=0)
    a = NaiveBayesBudget(budget=20).fit(X[:1000], y[:1000], eval_set=(X[1000:1250], y[1000:1250]))
    b = NaiveBayesBudget(budget=20, folds=1).fit(X[:1000], y[:1000], eval_set=(X[1000:1250], y[1000:1250]))
    assert a.cut_folds_ == 0
    assert_same_tables(a.model_, b.model_)
    c = NaiveBayesBudget(budget=20, folds=3).fit(X[:1000], y[:1000], eval_set=(X[1000:1250], y[1000:1250]))
    assert c.cut_folds_ == 3


@pytest.mark.parametrize("folds", [0, -1, 2.5, "5"])
def test_bad_folds_are_refused_at_fit(folds: object) -> None:
    Xr, yr, Xv, yv, _, _ = _cancer_split()
    with pytest.raises(ValueError, match=r"folds must be an integer >= 1 or None"):
        NaiveBayesBudget(folds=folds).fit(Xr, yr, eval_set=(Xv, yv))


def test_cli_records_the_folds_and_refuses_too_many(tmp_path: Path) -> None:
    """The model file records cut_folds / refit_folds; a K-class model refitted on the pooled rows prints its
    figures as in-sample; --folds larger than a class: exit 2, one line, nothing written."""
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "-o", tmp_path / "b.msgpack")
    assert code == 0, err
    tr = fmt.load(tmp_path / "b.msgpack").meta["training"]
    assert (tr["cut_folds"], tr["refit_folds"]) == (CV_FOLDS, 0) and "validation accuracy" in err
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "-o", tmp_path / "one.msgpack", "--folds", "1")
    assert code == 0, err
    assert fmt.load(tmp_path / "one.msgpack").meta["training"]["cut_folds"] == 0
    code, _, err = run("train", "nb-static", "sklearn:wine", "-o", tmp_path / "w.msgpack")
    assert code == 0, err
    tr = fmt.load(tmp_path / "w.msgpack").meta["training"]
    assert (tr["cut_folds"], tr["refit_folds"]) == (0, CV_FOLDS) and "in-sample accuracy" in err
    code, _, err = run("train", "nb-static", "sklearn:wine", "-o", tmp_path / "w1.msgpack", "--folds", "1")
    assert code == 0, err
    assert fmt.load(tmp_path / "w1.msgpack").meta["training"]["refit_folds"] == 0 and "in-sample" not in err
    out = tmp_path / "x.msgpack"
    code, _, err = run("train", "nb-stop", "sklearn:breast_cancer", "-o", out, "--folds", "300")
    assert code == 2 and not out.exists()
    assert err.strip().splitlines()[-1] == ("error: --folds 300: class 0 has 169 rows in the train and validation "
                                            "parts, fewer than the folds: lower --folds")
