"""Prediction workload for energy measurements.

    python -m pyruntime.workload MODEL DATA --seconds S [--numeric float32|q15]

Loops C-runtime predictions over every row of DATA for at least S seconds and
prints, as its last line, {"predictions": N, "seconds": T}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pyruntime.data import load_for_model
from pyruntime.errors import FrugalmlError
from pyruntime.evaluators import c_evaluator
from pyruntime.format import load


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pyruntime.workload", description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--numeric", choices=("float32", "q15"), default="float32")
    args = ap.parse_args(argv)
    try:
        model = load(args.model)
        X = load_for_model(args.data, model.meta).X  # the model's columns, plan and target column
        ev = c_evaluator(model, args.numeric)
        ev.predict(X[:1])
    except FrugalmlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n = 0
    t0 = time.perf_counter()
    while True:
        ev.predict(X)
        n += X.shape[0]
        elapsed = time.perf_counter() - t0
        if elapsed >= args.seconds:
            break
    print(json.dumps({"predictions": n, "seconds": elapsed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
