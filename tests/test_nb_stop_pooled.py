"""The K-class NB stop rule judges each stop point's cut on every validation row stopped so far (the
criterion's counts pooled over the stop points): on digits the learned stop points then meet the `safe`
criterion over all stopped validation rows together, and they stop more rows than points judged alone."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from compiler.nb.multi_train import learn_margin_stops, overtake_bounds
from compiler.nb.train import NaiveBayesBudget, StopRule
from pyruntime.nb.multi import NBMultiModel


def test_pooled_stop_points_meet_the_safe_criterion_and_stop_more() -> None:
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))
    tr, va = idx[:1000], idx[1000:1400]
    est = NaiveBayesBudget(budget=50, early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    static: NBMultiModel = est.model_
    P = static.partial_scores(X[va])
    full = np.argmax(P[:, -1], axis=1)
    rule = StopRule()
    read = {}
    for pooled in (False, True):
        stops = learn_margin_stops(P, y[va], overtake_bounds(static), rule, cumulative=pooled)
        model = NBMultiModel(**{**static.to_dict(), "stop_at": [s[0] for s in stops],
                                "stop_margin": [s[1] for s in stops]})
        p = model.predict_reference(X[va])
        read[pooled] = float(np.mean(p.n_read))
        early = p.stage > 0
        n = int(early.sum())
        assert n > 0
        # safe: no loss against the full model on the stopped rows, (disagreements + 3) / stopped <= 2%
        assert np.sum(p.label[early] == y[va][early]) >= np.sum(full[early] == y[va][early])
        assert (np.sum(p.label[early] != full[early]) + 3) <= rule.disagreement * n
    assert read[True] < read[False]


def _wine_split(seed: int) -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_wine  # noqa: PLC0415
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    X, y = load_wine(return_X_y=True)
    Xa, Xt, ya, yt = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    Xr, Xv, yr, yv = train_test_split(Xa, ya, test_size=0.25, stratify=ya, random_state=seed)
    return Xr, yr, Xv, yv, Xt, yt


def test_a_small_validation_part_learns_its_cuts_out_of_fold_on_the_pooled_rows() -> None:
    """Wine's 36 validation rows cannot meet 'safe' (the rule of three wants 150 stopped rows): its cuts come
    from out-of-fold scores of the 142 pooled rows, where no stopped row's early answer differs from its fold
    model's full answer; the cuts stay under the exact overtake bound and the model reads fewer features."""
    from compiler.nb.discretize import fit_bins  # noqa: PLC0415
    from compiler.nb.multi_train import out_of_fold_parts, pooled_partial_scores  # noqa: PLC0415
    from compiler.options import CV_FOLDS, stratified_folds  # noqa: PLC0415

    Xr, yr, Xv, yv, Xt, _ = _wine_split(0)
    est = NaiveBayesBudget(budget=13, bins="mean-std").fit(Xr, yr, eval_set=(Xv, yv))
    model: NBMultiModel = est.model_
    assert len(model.stop_at) > 0
    # the validation rows alone learn nothing: the rule before round 30
    static = NaiveBayesBudget(budget=13, bins="mean-std", early_stopping=False).fit(Xr, yr,
                                                                                   eval_set=(Xv, yv)).model_
    bounds = overtake_bounds(static)
    assert learn_margin_stops(static.partial_scores(Xv), yv, bounds, StopRule()) == []
    # the learned cuts, recomputed from the pooled out-of-fold scores: zero disagreements on the stopped rows
    y_pool = np.concatenate([yr, yv])
    parts = out_of_fold_parts(fit_bins(Xr.astype(np.float32)), Xr, yr, Xv, yv, 3, 1.0, "counts",
                              stratified_folds(y_pool, CV_FOLDS, 0))
    P, y_stop = pooled_partial_scores(parts, np.asarray(model.order), 13)
    assert P.shape == (y_pool.size, 14, 3) and sorted(y_stop.tolist()) == sorted(y_pool.tolist())
    full = np.argmax(P[:, -1], axis=1)
    running = np.ones(P.shape[0], dtype=bool)
    for at, cut in zip(model.stop_at, model.stop_margin):
        assert np.float32(cut) <= bounds[at]
        lead, margin = (np.argmax(P[:, at], axis=1), np.sort(P[:, at], axis=1))
        margin = (margin[:, -1] - margin[:, -2]).astype(np.float32)
        stopped = running & (margin > np.float32(cut))
        assert stopped.any() and np.array_equal(lead[stopped], full[stopped])
        running &= ~stopped
    p = model.predict_reference(Xt)
    assert float(np.mean(p.n_read)) < 13 and p.stage.max() > 0


def test_the_pooled_rule_is_only_for_small_validation_parts() -> None:
    """200 validation rows or more: the cuts come from the validation rows alone, as before (digits; 400 rows, so
    that the K-class bound of 1% can be met, which needs 300 stopped rows: docs/nb_stop.md)."""
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(1).permutation(len(y))
    tr, va = idx[:1000], idx[1000:1400]
    est = NaiveBayesBudget(budget=30).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    static = NaiveBayesBudget(budget=30, early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va])).model_
    rule = StopRule(disagreement=est.disagreement_)  # the estimator's own bound (0.01 for K > 2 since round 45)
    stops = learn_margin_stops(static.partial_scores(X[va]), y[va], overtake_bounds(static), rule)
    assert stops and [s[0] for s in stops] == list(est.model_.stop_at)
    # cut where validation says, not only where no class can overtake the leader any more
    assert np.any(np.asarray(est.model_.stop_margin) < overtake_bounds(static)[list(est.model_.stop_at)])
    assert np.allclose([s[1] for s in stops], est.model_.stop_margin)


def test_a_small_validation_part_refits_the_final_tables_on_the_pooled_rows() -> None:
    """Under 200 validation rows the order, budget and cuts are judged on the train and validation rows pooled,
    so the final tables learn from all of them (wine: 106 + 36 rows), with the train part's bins; the prior
    counts the pooled rows. With 200 validation rows or more (digits) the tables are the train part's alone."""
    from compiler.nb.discretize import fit_bins  # noqa: PLC0415
    from compiler.nb.multi_train import fit_multi_tables, log_prior  # noqa: PLC0415

    def expected(est: NaiveBayesBudget, X_fit: np.ndarray, y_fit: np.ndarray, X_bins: np.ndarray) -> NBMultiModel:
        bins = fit_bins(X_bins.astype(np.float32), est.bins_)
        X32 = X_fit.astype(np.float32)
        tables, _ = fit_multi_tables(bins.transform(X32), y_fit, est.classes_.size, bins, est.alpha, est.likelihood_,
                                     X32)
        return tables.model(est.ordering_[: est.budget_], X_fit.shape[1])

    Xr, yr, Xv, yv, _, _ = _wine_split(0)
    for stop in (False, True):
        est = NaiveBayesBudget(early_stopping=stop).fit(Xr, yr, eval_set=(Xv, yv))
        pooled_X, pooled_y = np.concatenate([Xr, Xv]), np.concatenate([yr, yv])
        want = expected(est, pooled_X, pooled_y, Xr)
        assert np.array_equal(est.model_.d, want.d) and np.array_equal(est.model_.d0, want.d0)
        assert np.array_equal(est.model_.d0, log_prior(pooled_y, 3).astype(np.float32))
        assert not np.array_equal(est.model_.d0, log_prior(yr, 3).astype(np.float32))
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(1).permutation(len(y))
    tr, va = idx[:1000], idx[1000:1250]
    est = NaiveBayesBudget(budget=30, early_stopping=False).fit(X[tr], y[tr], eval_set=(X[va], y[va]))
    want = expected(est, X[tr], y[tr], X[tr])
    assert np.array_equal(est.model_.d, want.d) and np.array_equal(est.model_.d0, want.d0)


def _stopped_against_the_refit(seed: int) -> int:
    """Pooled (train + validation) rows of `train nb-stop sklearn:wine --seed SEED` that the model stops with an
    answer other than its own full answer."""
    from compiler import tasks  # noqa: PLC0415
    from compiler.nb.kind import train_nb  # noqa: PLC0415

    task = tasks.prepare("sklearn:wine", None, None, seed)
    m: NBMultiModel = train_nb("nb-stop", task, {}, None).tables
    X = task.data.X[np.concatenate([task.train, task.validation])].astype(np.float32)
    static = NBMultiModel(**{**m.to_dict(), "stop_at": [], "stop_margin": []})
    p, full = m.predict_reference(X), static.predict_reference(X)
    return int(np.sum((p.stage > 0) & (p.label != full.label)))


def test_out_of_fold_cuts_are_checked_on_the_refitted_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cuts learned on the fold models are checked on the refitted model's own scores of the pooled rows: it
    stops none of them against its own full answer (split seeds 0-4); without the check, seed 3's first cut
    stopped one."""
    import compiler.nb.multi_train as mt  # noqa: PLC0415

    assert [_stopped_against_the_refit(s) for s in range(5)] == [0] * 5
    learn = mt.learn_margin_stops

    def unchecked(P: np.ndarray, y: np.ndarray, bounds: np.ndarray, rule: StopRule, cumulative: bool = True,
                  floor: list[tuple[int, float]] | None = None) -> list[tuple[int, float]]:
        return floor if floor is not None else learn(P, y, bounds, rule, cumulative)

    monkeypatch.setattr(mt, "learn_margin_stops", unchecked)
    assert sum(_stopped_against_the_refit(s) for s in range(5)) > 0


def test_refit_check_raises_a_cut_and_drops_a_point_that_no_longer_pays() -> None:
    """The criterion ('safe' on the pooled rows: under 400 rows, no stopped row against the full answer) picks each
    cut again on the refitted model's scores; a cut is only raised, and a point the raise leaves unpaid is dropped."""
    def refit_checked_stops(stops: list[tuple[int, float]], P: np.ndarray, y: np.ndarray, bounds: np.ndarray,
                            rule: StopRule) -> list[tuple[int, float]]:
        return learn_margin_stops(P, y, bounds, rule, floor=stops)

    # 6 rows, 3 classes, scores after 0..3 features; full answers (and labels): class 0 for rows 0-3, 1 for 4-5
    P = np.zeros((6, 4, 3), dtype=np.float32)
    P[:, 3] = [[5, 0, 0]] * 4 + [[0, 5, 0]] * 2
    P[:, 1] = [[4, 0, 0], [3, 0, 0], [1, 0, 0], [0, 0, 0], [2.5, 0, 0], [0, 0, 0]]  # row 4 leads wrongly by 2.5
    P[:, 2] = [[4, 0, 0], [3, 0, 0], [2, 0, 0], [0, 0, 0], [0, 3, 0], [0, 0, 0]]
    y = np.array([0, 0, 0, 0, 1, 1])
    P, y = np.repeat(P, 3, axis=0), np.repeat(y, 3)  # each row three times: the rule of three's term wants 3 rows
    bounds = np.full(4, 100.0, dtype=np.float32)
    rule = StopRule(stop_cost=0.0, support=0.0).pooled()
    (at1, cut1), (at2, cut2) = refit_checked_stops([(1, 0.5), (2, 1.0)], P, y, bounds, rule)
    assert (at1, at2) == (1, 2) and 2.5 <= cut1 < 3.0  # raised past row 4's margin: rows 0-1 stop at 1
    assert cut2 == 1.0  # rows 2 and 4 stop at 2 (row 5, leading wrongly by 0, does not): the given cut stays
    assert refit_checked_stops([(1, 3.5), (2, 1.0)], P, y, bounds, rule)[0] == (1, 3.5)  # never lowered
    # the pay rule on the rows: at the raised cut two of six rows stop at 1, skipping 2 reads each, 4 < 0.8 x 6:
    # dropped (without row 4 the given cut stands: three of five rows stop, 6 >= 0.8 x 5)
    pay = StopRule(stop_cost=0.8, support=0.0).pooled()
    assert refit_checked_stops([(1, 0.5)], P, y, bounds, pay) == []
    keep = np.flatnonzero(np.repeat(np.arange(6), 3) != 4)
    assert refit_checked_stops([(1, 0.5)], P[keep], y[keep], bounds, pay) == [(1, 0.5)]
