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

from power_bench.measure import Measurement, RunSettings
from power_bench.sources import MeterError
from power_bench.spec import open_spec
from power_bench.workload import pyruntime_workload, template_workload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="baseline model first")
    ap.add_argument("--meter", required=True)
    ap.add_argument("--volts", type=float)
    ap.add_argument("--data", required=True)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--min-samples", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--numeric", choices=("float32", "q15"))
    ap.add_argument("--workload-cmd")
    ap.add_argument("--emulate")
    ap.add_argument("-o", "--out", default="energy-bench")
    args = ap.parse_args(argv)
    if len(args.models) < 2:
        ap.error("give a baseline model and at least one model to compare")
    workload = template_workload(args.workload_cmd) if args.workload_cmd else pyruntime_workload(args.numeric)
    settings = RunSettings(volts=args.volts, idle_seconds=args.idle_seconds, min_samples=args.min_samples,
                           rounds=args.rounds)
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
    sys.exit(main())
