"""The README's demo figures: `make demo` (static vs early-stopping NB on digits) and the sparse demo.

Usage: .venv/bin/python benchmarks/demo.py [--data sklearn:digits] [--positive 8] [--quick]

Runs compiler.demo (what `make demo` runs) into a temporary folder and prints its table: weighted
accuracy, mean features read, ns per prediction in C and through cffi, stop points, msgpack bytes, and
the speedup. Timings (ns) move by a few percent run to run; accuracy, features and bytes repeat exactly.
--quick: the same table on a small generated sparse set (gen:sparse:1500:400).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import figures  # noqa: E402
from compiler import demo  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="DATA (default sklearn:digits; --quick: gen:sparse:1500:400)")
    ap.add_argument("--positive", default=None, help="positive class, '-' for none (default 8; --quick: -)")
    ap.add_argument("--quick", action="store_true", help="a small generated sparse set (seconds)")
    figures.add_argument(ap)
    args = ap.parse_args(argv)
    data = args.data or ("gen:sparse:1500:400" if args.quick else "sklearn:digits")
    positive = args.positive or ("-" if args.quick or data.startswith("gen:") else "8")
    with tempfile.TemporaryDirectory(prefix="fm_demo_") as tmp:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = demo.main(["--data", data, "--positive", positive, "--out", tmp])
        print(buf.getvalue().replace(tmp, "demo_out"), end="")  # the same lines wherever it ran
    return rc


if __name__ == "__main__":
    figures.run_main(main, __file__)
