"""Energy per prediction of models side by side, measured with a meter (or an emulated one).

    python benchmarks/energy.py --meter tenma-72-7730a:/dev/ttyUSB0 --volts 5 --data sklearn:breast_cancer \
        static.msgpack stop.msgpack [more.msgpack ...]

The first model is the baseline: every other model is run alternately with it (A B A B) and the table
gives its energy per prediction, the 95% interval, the sample counts and the ratio to the baseline.
Without hardware, use --meter emulated:METER with --emulate (a current per phase, A = baseline,
B = the other model). Each pair leaves its logs in OUT/<model name>/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import figures  # noqa: E402
from power_bench.measure import Measurement, RunSettings  # noqa: E402
from power_bench.sources import MeterError  # noqa: E402
from power_bench.spec import open_spec  # noqa: E402
from power_bench.workload import pyruntime_workload, template_workload  # noqa: E402

QUICK = {"meter": "emulated:tenma-72-7730a", "volts": 5.0, "data": "sklearn:breast_cancer", "idle_seconds": 0.3,
         "min_samples": 5, "rounds": 1, "emulate": "idle=100mA,A=150mA,B=130mA,noise=0.5mA,interval=0.02"}


def quick_models(out: Path) -> list[str]:
    """--quick without models: static and early-stopping NB on breast_cancer, trained by the CLI's code."""
    from compiler.nb.kind import train_nb  # noqa: PLC0415 - the device path (power_bench) needs no compiler
    from compiler.tasks import prepare  # noqa: PLC0415
    from pyruntime.format import save  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    task = prepare(QUICK["data"], None, None, 0)
    paths = []
    for kind in ("nb-static", "nb-stop"):
        path = out / f"{kind}.msgpack"
        save(train_nb(kind, task, {}, None), path)
        paths.append(str(path))
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="baseline model first (--quick: two NB models it trains)")
    ap.add_argument("--meter")
    ap.add_argument("--volts", type=float)
    ap.add_argument("--data")
    ap.add_argument("--idle-seconds", type=float, default=None, help="default 10 (--quick: 0.3)")
    ap.add_argument("--min-samples", type=int, default=None, help="default 30 (--quick: 5)")
    ap.add_argument("--rounds", type=int, default=None, help="default 2 (--quick: 1)")
    ap.add_argument("--numeric", choices=("float32", "q15"))
    ap.add_argument("--workload-cmd")
    ap.add_argument("--emulate")
    ap.add_argument("-o", "--out", default="energy-bench")
    ap.add_argument("--quick", action="store_true",
                    help=f"an emulated meter ({QUICK['meter']}, {QUICK['emulate']}), short phases (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    defaults = QUICK if args.quick else {"idle_seconds": 10.0, "min_samples": 30, "rounds": 2}
    for key, value in defaults.items():
        if getattr(args, key) is None and not (key == "emulate" and not str(args.meter or "emulated").startswith(
                "emulated")):
            setattr(args, key, value)
    if args.meter is None or args.data is None:
        ap.error("--meter and --data are required (or --quick)")
    if args.quick and not args.models:
        args.models = quick_models(Path(args.out) / "models")
    if len(args.models) < 2:
        ap.error("give a baseline model and at least one model to compare")
    workload = template_workload(args.workload_cmd) if args.workload_cmd else pyruntime_workload(args.numeric)
    settings = RunSettings(volts=args.volts, idle_seconds=args.idle_seconds, min_samples=args.min_samples,
                           rounds=args.rounds)
    if args.quick:
        settings.settle_seconds, settings.min_load_seconds = 0.1, 0.3
    rows = []
    for other in args.models[1:]:
        try:
            source, listener = open_spec(args.meter, emulate=args.emulate)
            source.open()
        except (ValueError, MeterError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            out = Path(args.out) / Path(other).stem
            s = Measurement(source, [("A", args.models[0]), ("B", other)], args.data, workload, settings, out,
                            listener).run()
        finally:
            source.close()
        for label, path in (("A", args.models[0]), ("B", other)):
            m = s["models"].get(label, {})
            rows.append((Path(path).name, m.get("energy_per_prediction_j"), m.get("ci95_j"), m.get("samples", 0),
                         s["idle"]["samples"], (s["ratio"] or {}).get("value") if label == "B" else 1.0,
                         s["status"]))
    print(f"{'model':28} {'J/prediction':>12} {'95% CI':>25} {'load n':>7} {'idle n':>7} {'vs base':>8} status")
    for name, e, ci, n, n_idle, ratio, status in rows:
        e_txt = f"{e:.4g}" if e is not None else "-"
        ci_txt = f"{ci[0]:.4g} .. {ci[1]:.4g}" if ci else "-"
        r_txt = f"{ratio:.3f}" if ratio is not None else "-"
        print(f"{name:28} {e_txt:>12} {ci_txt:>25} {n:>7} {n_idle:>7} {r_txt:>8} {status}")
    return 0


if __name__ == "__main__":
    figures.run_main(main, __file__)
