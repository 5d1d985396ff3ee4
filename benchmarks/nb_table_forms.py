"""NB's table forms: the paper's four mean-std bins against `--bins auto` (round 27; K > 2's default since round 34).

    .venv/bin/python benchmarks/nb_table_forms.py [--sets keel:texture,sklearn:wine] [--seeds 0,1,2]
        [--write-docs]

Per data set and split seed (`frugalml train`'s 60/20/20 split): nb-static trained as `frugalml train nb-static
DATA --bins ...` trains it, once with `--bins mean-std` (the paper's; the default for two classes) and once with
`--bins auto` (the default for K > 2 classes: the most accurate of mean-std, quantile:8 and quantile:32 with
Gaussian entries, each as NB on every feature, 5-fold cross-validated on the train and validation parts pooled,
mean-std kept unless beaten by more than one standard error; compiler.nb.table_form). Printed: each form's
cross-validated figure, the kept form, the test accuracy and the features read of both models, and scikit-learn's
GaussianNB on the raw inputs (every feature) for scale; on seed 0 also x86 instructions per prediction of both
models' float32 tables (`export-c --embed DATA`, callgrind, as benchmarks/nb_floor.py counts them): finer bins
leave the runtime's two-edge walk. The last lines count the runs where auto gains or loses more than half a point
on test. --quick: keel:hayes-roth, seed 0.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402
from benchmarks.common.sets_seeds import SetsSeeds  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.nb.kind import train_nb  # noqa: E402
from pyruntime import format as fmt  # noqa: E402

SETS = ("keel:texture,keel:segment,keel:vehicle,keel:vowel,keel:satimage,keel:hayes-roth,keel:movement_libras,"
        "keel:led7digit,keel:contraceptive,sklearn:wine,sklearn:digits,keel:pima,keel:sonar,keel:german,"
        "keel:magic,keel:spambase,keel:bands,keel:phoneme,keel:twonorm,sklearn:breast_cancer")
RUNS = SetsSeeds(SETS, "0,1,2", "keel:hayes-roth", "0")


def nb_row(task: tasks.Task, opts: dict[str, str], spec: str, work: Path | None) -> tuple[float, float, dict, str]:
    """(test accuracy, mean features read on test, training record, x86 instructions per prediction or '-') of
    nb-static trained with opts; the count when work (a folder) is given."""
    with contextlib.redirect_stderr(io.StringIO()):  # the training lines: the table says what they would
        model = train_nb("nb-static", task, opts, None)
    pred = model.tables.predict_reference(task.data.X[task.test])
    y = task.y[task.test]
    instr = "-"
    if work is not None:
        from benchmarks.nb_floor import export, x86_count  # noqa: PLC0415 - builds and valgrind only when counted

        work.mkdir(parents=True, exist_ok=True)
        path = work / "nb-static.msgpack"
        fmt.save(model, path)
        instr = f"{x86_count(export(path, 'float32', spec, 200, work))[0]:.0f}"
    return float(np.mean(pred.label == y)), float(np.mean(pred.n_read)), model.meta["training"], instr


def gaussian_nb(task: tasks.Task) -> float:
    from sklearn.naive_bayes import GaussianNB  # noqa: PLC0415

    X, y = task.data.X, task.y
    return float(np.mean(GaussianNB().fit(X[task.train], y[task.train]).predict(X[task.test]) == y[task.test]))


def main(argv: list[str] | None = None) -> int:
    sets, seeds = RUNS.parse(argv, __doc__.splitlines()[0], "data specs")
    print("| data | seed | K | cv mean-std / q8 / q32 gauss | kept | mean-std test (feat) | auto test (feat) "
          "| auto - mean-std | x86 instr mean-std / auto | GaussianNB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    gains: list[float] = []
    with tempfile.TemporaryDirectory(prefix="fm_nb_forms_") as tmp:
        for spec in sets:
            for seed in seeds:
                task = tasks.prepare(spec, seed=seed)
                where = Path(tmp) / f"{spec.replace(':', '_')}_{seed}" if seed == 0 else None
                paper, paper_feats, _, paper_ir = nb_row(task, {"bins": "mean-std"}, spec, where and where / "paper")
                auto, auto_feats, record, auto_ir = nb_row(task, {"bins": "auto"}, spec, where and where / "auto")
                cv = " / ".join(f"{f['accuracy']:.4f}" for f in record["table_forms"])
                kept = f"{record['bins_chosen']} {record['likelihood_chosen']}"
                gains.append(100 * (auto - paper))
                print(f"| {spec} | {seed} | {task.n_classes} | {cv} | {kept} | {paper:.4f} ({paper_feats:.1f}) | "
                      f"{auto:.4f} ({auto_feats:.1f}) | {100 * (auto - paper):+.2f} | {paper_ir} / {auto_ir} | "
                      f"{gaussian_nb(task):.4f} |", flush=True)
    g = np.asarray(gains)
    print(f"\nauto - mean-std on test over {g.size} runs (points): median {np.median(g):+.2f}, mean {g.mean():+.2f}, "
          f"min {g.min():+.2f}, max {g.max():+.2f}; more than 0.5 points better on {int(np.sum(g > 0.5))}, worse on "
          f"{int(np.sum(g < -0.5))}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
