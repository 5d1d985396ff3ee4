"""One model of the pipeline benchmark: train through the CLI, test accuracy and features read (eval), and the
whole pipeline's instructions on a target (bench)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.common.cli import frugalml as run_cli
from pyruntime import format as fmt

ROOT = Path(__file__).resolve().parents[2]


def frugalml(*args: str | Path) -> str:
    """`frugalml ARGS` (in this process: benchmarks/common/cli.py) and its stdout."""
    try:
        return run_cli(*args, echo_stderr=False)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"frugalml {' '.join(map(str, args))}: {exc.stderr.decode().strip()}") from None


@dataclass
class Row:
    name: str
    accuracy: float  # mean over seeds, test part
    features: float  # mean features read per prediction
    lazy: float | None  # instructions per prediction, lazy pipeline
    eager: float | None  # eager pipeline, the same model
    eager_extraction: float | None  # every planned feature computed, no model
    extraction: float | None = None  # lazy pipeline less the model: the features read, counted
    profiled: float | None = None  # the same features' extraction by the costs CSV (each group once)
    profiled_error: float | None = None  # mean over windows of |profiled - counted| / counted
    n_test: int = 0  # test windows over all seeds: one of them is 1 / n_test of the mean accuracy
    model: float = 0.0  # the model alone on precomputed values (its walk), instructions per prediction
    trees: float = 0.0  # trees in the model (tree kinds; 0 otherwise)

    @property
    def per_tree(self) -> float:
        """The model's instructions per tree on the target (the --tree-cost a budgeted tree model is charged)."""
        return self.model / self.trees if self.trees else 0.0


def model_row(name: str, train_args: list[str], data: str, windows: str, seeds: list[int], work: Path,
              target: str, rows: int, costs: Path) -> Row:
    """``costs``: the CSV profiled on ``target``; bench compares its extraction of the features each window read
    with the counted extraction. Every figure is the mean over the seeds' models (bench: the same ``rows`` windows
    for each)."""
    acc, feats, trees, n_test = [], [], [], 0
    benches: list[dict[str, float]] = []
    for seed in seeds:
        model = work / f"{name.replace(' ', '_')}_{seed}.msgpack"
        frugalml("train", *train_args, data, "--seed", str(seed), "-o", model)
        ev = json.loads(frugalml("eval", model, data, "--json"))
        trees.append(float(fmt.load(model).meta.get("training", {}).get("trees_chosen", 0)))
        acc.append(ev["accuracy"])
        feats.append(ev["mean_features"])
        n_test += int(ev["n"])
        benches.append(json.loads(frugalml("bench", model, "--data", windows, "--on", target, "--rows", str(rows),
                                           "--costs", costs, "--json")))
    bench = {k: float(np.mean([b[k] for b in benches])) for k in (
        "instructions_per_prediction", "eager_instructions_per_prediction", "eager_extraction_instructions",
        "extraction_instructions", "profiled_extraction_instructions", "profiled_error", "model_instructions")}
    return Row(name, float(np.mean(acc)), float(np.mean(feats)), bench["instructions_per_prediction"],
               bench["eager_instructions_per_prediction"], bench["eager_extraction_instructions"],
               bench["extraction_instructions"], bench["profiled_extraction_instructions"], bench["profiled_error"],
               n_test, bench["model_instructions"], float(np.mean(trees)))


def forest_accuracy(data: str, seeds: list[int], trees: int, depth: int, features: str = "default") -> float:
    """A random forest over every planned feature (scikit-learn's RandomForestClassifier, the model emlearn
    converts), trained on each seed's train part, tested on its test part."""
    from sklearn.ensemble import RandomForestClassifier  # noqa: PLC0415

    from compiler import tasks  # noqa: PLC0415

    out = []
    for seed in seeds:
        t = tasks.prepare(data, seed=seed, features=features)
        rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0)
        rf.fit(t.data.X[t.train], t.y[t.train])
        out.append(float(np.mean(rf.predict(t.data.X[t.test]) == t.y[t.test])))
    return float(np.mean(out))
