"""``frugalml profile-costs``: time feature functions over item sizes, fit c0 + c1*n + c2*n^2.

A features file is a Python file that defines the feature functions, either
as a dict ``FEATURES = {"name": func, ...}`` or as functions named
``feature_<name>(item)``; optionally ``make_item(n)`` builds an item of size
n (default: ``n`` uniform floats from a fixed seed). Each function is timed
on items of every size (``repeats`` calls, the ``percentile``-th percentile kept: 100 = the
slowest call, the default, because the paper provisions for the worst-case extraction time so
that budgets hold; 0 = the fastest call), and a non-negative least
squares fit gives the cost polynomial per feature, written as a costs CSV
``feature,c0,c1,c2`` (read by compiler/costs.py).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np
from scipy.optimize import nnls

from compiler.costs import cost_text
from compiler.options import OutputFile, refuse_overwriting_input
from pyruntime.cli_errors import NumberRange, RequiredInUsage, first_line
from pyruntime.errors import OutputError
from pyruntime.outfiles import write_file

UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
DEFAULT_SIZES = (100, 300, 1000, 3000, 10000)


@dataclass
class CostProfile:
    """Measured times (in ``unit``) per feature and size, and the fitted polynomials."""

    names: list[str]
    sizes: np.ndarray  # float64 [n_sizes]
    times: np.ndarray  # float64 [n_features, n_sizes]
    coef: np.ndarray  # float64 [n_features, 3]
    unit: str

    def predicted(self) -> np.ndarray:
        n = self.sizes
        return self.coef[:, :1] + self.coef[:, 1:2] * n + self.coef[:, 2:3] * n * n


def fit_polynomial(sizes: Sequence[float], times: Sequence[float]) -> np.ndarray:
    """Least-squares c0, c1, c2 >= 0 with times ~ c0 + c1*n + c2*n^2 (columns scaled for conditioning)."""
    n = np.asarray(sizes, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    if n.shape != t.shape or n.ndim != 1 or n.size == 0:
        raise ValueError("sizes and times must be 1-D and of the same length")
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(t))):
        raise ValueError("sizes and times must be finite")
    scale = max(float(np.max(np.abs(n))), 1.0)
    u = n / scale
    A = np.column_stack([np.ones_like(u), u, u * u])
    tscale = max(float(np.max(np.abs(t))), 1e-300)
    x, _ = nnls(A, t / tscale)
    return np.array([x[0], x[1] / scale, x[2] / (scale * scale)]) * tscale


def default_item(n: int) -> np.ndarray:
    return np.random.default_rng(0).random(int(n))


def _call(func: Callable[[Any], Any], item: Any, what: str) -> Any:
    """``func(item)``; an exception of the user's function becomes one ValueError line naming it."""
    try:
        return func(item)
    except Exception as exc:  # noqa: BLE001 -- any error of the user's code, named
        raise ValueError(f"{what} raised {type(exc).__name__}: {first_line(exc)}") from None


def time_call(func: Callable[[Any], Any], item: Any, repeats: int, timer: Callable[[], float],
              percentile: float = 100.0, name: str = "the feature") -> float:
    """The ``percentile``-th percentile (100: the slowest) of ``repeats`` (>= 1) timed calls, in the timer's
    unit. An exception of ``func`` is a ValueError naming the feature ``name``."""
    if not 0.0 <= float(percentile) <= 100.0:
        raise ValueError(f"percentile must be in [0, 100], got {percentile}")
    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times = []
    for _ in range(int(repeats)):  # exactly ``repeats`` calls, each timed (a try costs nothing when nothing raises)
        t0 = timer()
        _call(func, item, f"feature {name!r}")
        times.append(timer() - t0)
    return float(np.percentile(times, float(percentile)))


def profile_costs(features: Mapping[str, Callable[[Any], Any]], sizes: Sequence[int] = DEFAULT_SIZES,
                  make_item: Callable[[int], Any] | None = None, repeats: int = 5,
                  timer: Callable[[], float] = time.perf_counter, unit: str = "us",
                  percentile: float = 100.0) -> CostProfile:
    """Time every feature function at every size and fit its cost polynomial (timer in seconds)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}")
    if not features:
        raise ValueError("no feature functions to profile")
    if not 0.0 <= float(percentile) <= 100.0:
        raise ValueError(f"percentile must be in [0, 100], got {percentile}")
    sz = np.asarray(sorted({int(s) for s in sizes}), dtype=np.float64)
    if np.any(sz < 0):
        raise ValueError(f"sizes must be >= 0, got {int(sz.min())}")
    if sz.size < 3 and sz.size != 1:
        raise ValueError("give at least 3 distinct sizes to fit c0 + c1*n + c2*n^2 (or 1 for a constant)")
    make = make_item or default_item
    names = list(features)
    times = np.zeros((len(names), sz.size))
    for k, n in enumerate(sz):
        item = _call(make, int(n), f"make_item({int(n)})")
        for i, name in enumerate(names):
            times[i, k] = time_call(features[name], item, repeats, timer, percentile, name) * UNITS[unit]
    if sz.size == 1:
        coef = np.column_stack([times[:, 0], np.zeros(len(names)), np.zeros(len(names))])
    else:
        coef = np.array([fit_polynomial(sz, times[i]) for i in range(len(names))])
    return CostProfile(names, sz, times, coef, unit)


def load_features(path: str | Path) -> tuple[dict[str, Callable[[Any], Any]], Callable[[int], Any] | None]:
    """Feature functions (FEATURES dict or ``feature_*`` functions) and optional make_item from a file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"features file not found: {p}")
    spec = importlib.util.spec_from_file_location(f"_frugalml_features_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {p} as Python")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ValueError(f"{p} line {exc.lineno}: SyntaxError: {exc.msg}") from None
    except SystemExit as exc:  # sys.exit() in the file: a clear error, not the file's exit status
        raise ValueError(f"{p}: the file called exit({exc.code!r}) while it was loaded") from None
    except Exception as exc:  # noqa: BLE001 - any error of the user's file, named with its line
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == p.resolve()]
        where = f" line {lines[-1]}" if lines else ""
        raise ValueError(f"{p}{where}: loading it raised {type(exc).__name__}: {exc}") from None
    feats = getattr(module, "FEATURES", None)
    if feats is None:
        feats = {name[len("feature_"):]: getattr(module, name) for name in sorted(vars(module))
                 if name.startswith("feature_") and callable(getattr(module, name))}
    if not isinstance(feats, Mapping) or not feats or not all(callable(f) for f in feats.values()):
        raise ValueError(f"{p}: define FEATURES = {{name: function}} or functions named feature_<name>")
    make = getattr(module, "make_item", None)
    return {str(k): v for k, v in feats.items()}, make if callable(make) else None


def write_costs_csv(path: str | Path, names: Sequence[str], coef: np.ndarray) -> None:
    """Write ``feature,c0,c1,c2`` rows (12 significant digits: compiler.costs.cost_text)."""
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(["feature", "c0", "c1", "c2"])
    for name, c in zip(names, np.asarray(coef, dtype=np.float64), strict=True):
        w.writerow([name, *(cost_text(v) for v in c)])
    write_file(path, fh.getvalue())


ON_ONLY = ("channels", "plan_spec", "lengths", "numeric", "n_windows", "at_length")  # --on TARGET's options
FILE_ONLY = ("sizes", "repeats", "percentile", "unit")  # FEATURES_FILE's options


def refuse_other_mode_options(on: bool) -> None:
    """Exit 2 when an option of the other mode is given (it would be silently ignored): --at-length without --on,
    --sizes with --on, ..."""
    ctx = click.get_current_context()
    given = [p for p in ctx.command.params if p.name in (FILE_ONLY if on else ON_ONLY)
             and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
    if given:
        opt = given[0].opts[-1] if given[0].opts[-1].startswith("--") else given[0].opts[0]
        mode = "FEATURES_FILE (wall time of Python functions)" if on else "--on TARGET (the C feature library)"
        raise click.UsageError(f"{opt} applies with {mode} only")


@click.command("profile-costs", cls=RequiredInUsage)
@click.argument("features_file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--sizes", default=",".join(map(str, DEFAULT_SIZES)), show_default=True,
              help="Item sizes to time, comma-separated.")
@click.option("--repeats", type=click.IntRange(min=1), default=5, show_default=True,
              help="Timed calls per feature and size.")
@click.option("--percentile", type=NumberRange(0, 100), default=100.0, show_default=True,
              help="Percentile of the repeated timings that is fitted (100: worst case, so budgets hold; 0: best).")
@click.option("--unit", type=click.Choice(list(UNITS)), default="us", show_default=True, help="Cost unit.")
@click.option("--on", "on_target", default=None,
              type=click.Choice(["host", "cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33", "pi"]),
              help="Instead of FEATURES_FILE: count the instructions of the C feature library's groups and features "
              "of a plan on this target (callgrind on the host, QEMU elsewhere); costs in instructions.")
@click.option("--channels", type=click.IntRange(1, 64), default=None, help="With --on: channels of the windows.")
@click.option("--plan", "plan_spec", default="default", show_default=True, metavar="SPEC",
              help="With --on: the feature plan (a named set or a file of feature names).")
@click.option("--lengths", default="32,64,128,256", show_default=True,
              help="With --on: window lengths to count at (the fit's sizes).")
@click.option("--numeric", type=click.Choice(["float32", "q15"]), default="float32", show_default=True,
              help="With --on: the float32 or the q15 feature library.")
@click.option("--windows", "n_windows", type=click.IntRange(1, 20), default=3, show_default=True,
              help="With --on: random windows per length (the worst count is kept).")
@click.option("--at-length", type=click.IntRange(min=1), default=None,
              help="With --on: write the costs at this window length (feature,cost,group) instead of the fit.")
@click.option("-o", "--output", type=OutputFile(), required=True, help="Costs CSV to write.")
def profile_costs_command(features_file: str | None, sizes: str, repeats: int, percentile: float, unit: str,
                          on_target: str | None, channels: int | None, plan_spec: str, lengths: str, numeric: str,
                          n_windows: int, at_length: int | None, output: str) -> None:
    """Time the feature functions of FEATURES_FILE over item sizes and fit c0 + c1*n + c2*n^2 each; or, with
    --on TARGET --channels N, count each group's and each feature's instructions of the C feature library at
    several window lengths and write the costs CSV with groups (compiler/features/profile.py).

    FEATURES_FILE is a Python file defining a dict FEATURES (name -> function of one item) or functions named
    feature_NAME (and optionally make_item(n), an item of size n); each is timed on items of every --sizes size
    and its cost written in --unit (us, ms, ns or s of wall time)."""
    refuse_overwriting_input(output, plan_file=plan_spec, features_file=features_file)
    refuse_other_mode_options(on_target is not None)
    if on_target is not None:
        if features_file is not None:
            raise click.UsageError("give FEATURES_FILE or --on TARGET, not both")
        from compiler.features.profile_cli import run_profile  # noqa: PLC0415

        run_profile(on_target, channels, plan_spec, lengths, numeric, n_windows, at_length, output)
        return
    if features_file is None:
        raise click.UsageError("give FEATURES_FILE (Python feature functions) or --on TARGET (the C feature library)")
    try:
        size_list = [int(s) for s in sizes.split(",") if s.strip()]
        feats, make = load_features(features_file)
        prof = profile_costs(feats, size_list, make, repeats, unit=unit, percentile=percentile)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        write_costs_csv(output, prof.names, prof.coef)
    except OutputError as exc:
        raise click.UsageError(str(exc)) from None
    for name, c in zip(prof.names, prof.coef, strict=True):
        click.echo(f"{name}: {c[0]:.4g} + {c[1]:.4g}*n + {c[2]:.4g}*n^2 {unit}")
