"""Why the small-model trainers hold BLAS to one thread: the skyline's linear base fitted on many feature sets
with OpenBLAS's default thread count and with one, on an idle machine and with every other core busy (not a
test).

    .venv/bin/python benchmarks/blas_threads.py [--data sklearn:digits] [--sets 30] [--quick] [--write-docs]

The unit of work is what a budget-index search repeats thousands of times: compiler.skyline.linear_base's
StandardLogistic (L-BFGS-B on standardised columns; K = 10 class scorers on digits) fitted on one feature set
of the task's training part (`frugalml train`'s 60/20/20 split, seed 0). --sets feature sets of 2 to d features
(drawn once, seed 0) are fitted under threadpoolctl's limit of one BLAS thread and under the BLAS libraries'
default (OpenBLAS: one per core), on an idle machine, with one process per other core spinning in pure
Python, and with one process per other core fitting the same sets under the same limit (two benchmarks side
by side under `make figures`, two test workers under `make test`: what the machine runs beside each fit).
Columns: mean milliseconds per fit, their ratio, and the largest difference between the two fits' weights
(0: the thread count does not change the model). Wall times of one run on this machine; the ratio is taken
within the run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("FRUGALML_PROGRESS", "off")

from benchmarks.common import figures  # noqa: E402


def _spin(stop: Any) -> None:
    """Keep one core busy in pure Python until ``stop`` is set."""
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1_103_515_245 + 12_345) & 0x7FFFFFFF


def _fit_until(stop: Any, threads: int | None, X: np.ndarray, y: np.ndarray, sets: list[np.ndarray]) -> None:
    """Keep one core busy until ``stop`` is set with the measured process's fits under the same BLAS limit (a
    second benchmark beside it)."""
    i = 0
    while not stop.is_set():
        _fit_ms(X, y, sets[i % len(sets)], threads)
        i += 1


def _fit_ms(X: np.ndarray, y: np.ndarray, cols: np.ndarray, threads: int | None) -> tuple[float, np.ndarray]:
    """Milliseconds of one StandardLogistic fit on the columns under a BLAS limit (None: the default), and
    its weights."""
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    from compiler.skyline.linear_base import StandardLogistic  # noqa: PLC0415

    with threadpool_limits(limits=threads, user_api="blas"):
        t0 = time.perf_counter()
        model = StandardLogistic().fit(X[:, cols], y)
        ms = 1e3 * (time.perf_counter() - t0)
    return ms, np.concatenate([model.coef_.ravel(), model.intercept_.ravel()])


def measure(X: np.ndarray, y: np.ndarray, sets: list[np.ndarray], others: int, fitting: bool,
            threads: int | None) -> tuple[float, list[np.ndarray]]:
    """Mean ms per fit under the limit with ``others`` neighbour processes (fitting the same sets under the same
    limit, or spinning in Python), and the fitted weights."""
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=_fit_until, args=(stop, threads, X, y, sets[k::others] or sets),
                                     daemon=True) if fitting
             else multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for k in range(others)]
    for p in procs:
        p.start()
    try:
        if procs:
            time.sleep(0.5)  # the neighbours are at work
        got = [_fit_ms(X, y, cols, threads) for cols in sets]
    finally:
        stop.set()
        for p in procs:
            p.join()
    return float(np.mean([g[0] for g in got])), [g[1] for g in got]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="sklearn:digits", help="data spec (default sklearn:digits)")
    ap.add_argument("--sets", type=int, default=30, help="feature sets fitted per condition (default 30)")
    ap.add_argument("--quick", action="store_true", help="4 feature sets")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    if args.sets < 1:
        ap.error("--sets must be >= 1")
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    from compiler import tasks  # noqa: PLC0415

    n_sets = 4 if args.quick else int(args.sets)
    task = tasks.prepare(args.data, seed=0)
    X, y = np.asarray(task.data.X[task.train], np.float64), task.y[task.train]
    d = X.shape[1]
    rng = np.random.default_rng(0)
    sets = [np.sort(rng.choice(d, size=int(rng.integers(min(2, d), d + 1)), replace=False)) for _ in range(n_sets)]
    blas = sorted({(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()
                   if i.get("user_api") == "blas"})
    cores = os.cpu_count() or 1
    print(f"{args.data}: {X.shape[0]} training rows, {d} features, {task.n_classes} classes; {n_sets} feature sets "
          f"of 2..{d} features; {cores} cores; BLAS default threads: "
          + ", ".join(f"{api} {n}" for api, n in blas))
    print("\n| machine | default threads (ms/fit) | 1 thread (ms/fit) | default / 1 | max weight difference |")
    print("|---|---:|---:|---:|---:|")
    others = cores - 1 if cores > 1 else 1
    for label, n_others, fitting in (("idle", 0, False),
                                     (f"{others} other core(s) spinning in Python", others, False),
                                     (f"{others} other process(es) fitting the same way", others, True)):
        many, w_many = measure(X, y, sets, n_others, fitting, None)
        one, w_one = measure(X, y, sets, n_others, fitting, 1)
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w_many, w_one, strict=True))
        print(f"| {label} | {many:.1f} | {one:.1f} | {many / one:.2f}x | {diff:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
