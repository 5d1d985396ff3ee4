"""``--bins auto``: which discretization and table estimate an NB model's tables take, judged on held-out rows.

The paper's four mean-std bins (zero, below mu - sigma, within, above mu + sigma) with counted entries suit
features that are roughly one bump per class; where a class sits between two others on a feature, or a feature
is skewed, four bins merge what the classes keep apart. ``auto`` judges three forms of the same naive Bayes
and keeps the most accurate:

- ``mean-std`` + ``counts`` (the paper's; kept unless another form beats it by more than one standard error of
  its held-out accuracy, and at least ``AUTO_MARGIN``: ``switch_margin``),
- ``quantile:8`` + ``counts`` (eight equal-mass bins),
- ``quantile:32`` + ``gaussian`` (a Gaussian per class and feature integrated over 32 bins: GaussianNB in tables).

Each form is judged by the accuracy of its naive Bayes on every feature (log prior plus the tables, argmax),
5-fold cross-validated on the training and validation rows pooled; with ``--likelihood`` given, the three bins with
those entries are judged (NB fits are counts, so the 15 fits cost
little; the folds are stratified by the split's seed). What the form is used for afterwards (the ordering,
the budget, the stop points) is chosen on the validation part as before. The C runtime reads the same tables
whatever the form.
"""

from __future__ import annotations

import numpy as np

from compiler.nb.discretize import fit_bins
from compiler.nb.likelihood import log_likelihoods
from compiler.nb.multi_train import log_prior

AUTO_FORMS: tuple[tuple[str, str], ...] = (("mean-std", "counts"), ("quantile:8", "counts"),
                                           ("quantile:32", "gaussian"))
AUTO_MARGIN = 0.005  # another form must beat the paper's by more than this held-out accuracy, at least
AUTO_FOLDS = 5


def switch_margin(accuracy: float, n_rows: int) -> float:
    """How much held-out accuracy another form must gain over the paper's to replace it: one standard error of
    the paper form's accuracy over the ``n_rows`` rows it was judged on, sqrt(p (1 - p) / n) (Breiman's
    one-standard-error rule, as miser's --one-se), and at least AUTO_MARGIN. The paper's form keeps the
    runtime's fastest walk and the paper's figures, so it gives way only to a gain the rows can tell from
    noise."""
    p = min(max(float(accuracy), 0.0), 1.0)
    return max(AUTO_MARGIN, float(np.sqrt(p * (1.0 - p) / max(int(n_rows), 1))))


def full_nb_accuracy(X: np.ndarray, y: np.ndarray, Xe: np.ndarray, ye: np.ndarray, n_classes: int, bins: str,
                     likelihood: str, alpha: float = 1.0) -> float:
    """Accuracy on (Xe, ye) of the naive Bayes on every feature fitted on (X, y) with these bins and entries
    (the runtime's prior, in float64)."""
    b = fit_bins(X, bins)
    B = b.transform(X)
    ll, _ = log_likelihoods(B, y, n_classes, b, alpha, likelihood, X)
    score = np.tile(log_prior(y, n_classes, alpha), (Xe.shape[0], 1))
    Be = b.transform(Xe).astype(np.intp)
    for j, table in enumerate(ll):
        score += table[Be[:, j]]
    return float(np.mean(np.argmax(score, axis=1) == ye))


def candidate_forms(likelihood: str | None) -> tuple[tuple[str, str], ...]:
    """``AUTO_FORMS``, or with the entries fixed (--likelihood given) the three bins with those entries."""
    if likelihood is None:
        return AUTO_FORMS
    return tuple((bins, likelihood) for bins in ("mean-std", "quantile:8", "quantile:32"))


def choose_table_form(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, n_classes: int,
                      seed: int, alpha: float = 1.0,
                      likelihood: str | None = None) -> tuple[str, str, list[dict[str, object]]]:
    """(bins, likelihood, curve): the form of ``candidate_forms(likelihood)`` with the best cross-validated
    accuracy on the pooled rows (the first, mean-std, unless another beats it by more than ``switch_margin``);
    curve lists each form's figure. Fewer than ``AUTO_FOLDS`` rows in a class: judged on the validation part
    instead."""
    Xp, yp = np.concatenate([X, X_val]), np.concatenate([y, y_val])
    counts = np.bincount(yp, minlength=n_classes)
    if counts.min() >= AUTO_FOLDS:
        from compiler.options import stratified_folds  # noqa: PLC0415 - click only when judging

        parts = [(np.asarray(a), np.asarray(b)) for a, b in stratified_folds(yp, AUTO_FOLDS, seed)]
    else:
        parts = [(np.arange(y.size), np.arange(y.size, yp.size))]
    judged = f"{AUTO_FOLDS}-fold cross-validated, pooled rows" if len(parts) > 1 else "on the validation part"
    curve: list[dict[str, object]] = []
    for bins, entries in candidate_forms(likelihood):
        acc = float(np.mean([full_nb_accuracy(Xp[tr], yp[tr], Xp[te], yp[te], n_classes, bins, entries, alpha)
                             for tr, te in parts]))
        curve.append({"bins": bins, "likelihood": entries, "accuracy": acc, "judged": judged})
    n_judged = sum(int(te.size) for _, te in parts)
    margin = switch_margin(float(curve[0]["accuracy"]), n_judged)
    curve[0]["margin"] = margin  # what another form had to gain
    best = 0
    for i, p in enumerate(curve[1:], start=1):
        if float(p["accuracy"]) > float(curve[best]["accuracy"]) + (margin if best == 0 else 0.0):
            best = i
    curve[best]["kept"] = True
    return str(curve[best]["bins"]), str(curve[best]["likelihood"]), curve
