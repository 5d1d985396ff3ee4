"""The K-class NB stop rule judges each stop point's cut on every validation row stopped so far (the
criterion's counts pooled over the stop points): on digits the learned stop points then meet the `safe`
criterion over all stopped validation rows together, and they stop more rows than points judged alone."""

from __future__ import annotations

import numpy as np
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
