"""The prediction workload: a subprocess that loops predictions and reports how many it made.

Contract: the command prints, as its last stdout line, one JSON object
``{"predictions": N, "seconds": T}`` where T is the time spent in the prediction loop.
The default command is ``python -m pyruntime.workload MODEL DATA --seconds S [--numeric N]``;
any other command can be injected (a function building argv, or a template string).
"""

from __future__ import annotations

import json
import math
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

ArgvBuilder = Callable[[str, str, float], list[str]]
# a workload's reported T may exceed its wall time by clock granularity only (5%, plus 0.5 s of rounding)
LIFETIME_SLACK = 1.05


class WorkloadError(RuntimeError):
    """The workload failed or did not report its prediction count."""


class WorkloadInterrupted(WorkloadError):
    """The workload was stopped before it finished (port lost, Ctrl-C)."""


class WorkloadCheckError(WorkloadError):
    """The workload cannot run on this model and data (checked before anything is measured)."""


def pyruntime_workload(numeric: str | None = None, python: str = sys.executable) -> ArgvBuilder:
    """argv for the C runtime's workload in ``pyruntime.workload``."""

    def build(model: str, data: str, seconds: float) -> list[str]:
        argv = [python, "-m", "pyruntime.workload", model, data, "--seconds", f"{seconds:.3f}"]
        if numeric:
            argv += ["--numeric", numeric]
        return argv

    return build


def template_workload(template: str) -> ArgvBuilder:
    """argv from a shell-like template with ``{model}``, ``{data}``, ``{seconds}`` placeholders
    (replaced literally; other braces are left alone),
    e.g. ``ssh pi@rpi ./bench {model} {data} {seconds}``."""
    tokens = shlex.split(template)
    if not tokens:
        raise ValueError("empty workload command")

    def build(model: str, data: str, seconds: float) -> list[str]:
        values = {"{model}": model, "{data}": data, "{seconds}": f"{seconds:.3f}"}
        out = []
        for token in tokens:
            for key, value in values.items():
                token = token.replace(key, value)
            out.append(token)
        return out

    return build


@dataclass(frozen=True)
class WorkloadResult:
    predictions: int
    seconds: float
    t_start: float  # time.monotonic() at launch
    t_end: float  # time.monotonic() when the process had exited


def _number(report: dict[str, Any], key: str) -> float:
    """report[key] as a finite float: a JSON number (or a numeric string), not true/false, NaN or infinite."""
    value = report[key]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f'"{key}" is {json.dumps(value)}, not a number')
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f'"{key}" is {value}, not a finite number')
    return number


def parse_report(stdout: str) -> tuple[int, float]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise WorkloadError('the workload printed nothing; expected {"predictions": N, "seconds": T} last')
    try:
        report = json.loads(lines[-1])
        if not isinstance(report, dict):
            raise TypeError("not a JSON object")
        count, seconds = _number(report, "predictions"), _number(report, "seconds")
    except (ValueError, KeyError, TypeError) as exc:
        raise WorkloadError(f"cannot read the workload's last line {lines[-1]!r}: {exc}") from exc
    if count != int(count):
        raise WorkloadError(f"the workload reported {count:g} predictions: a count is a whole number")
    predictions = int(count)
    if predictions <= 0 or seconds <= 0:
        raise WorkloadError(f"the workload reported {predictions} predictions in {seconds} s")
    return predictions, seconds


def run_workload(
    argv: list[str], stop: threading.Event | None = None, timeout: float | None = None
) -> WorkloadResult:
    """Run the workload to completion; terminate it if ``stop`` is set or ``timeout`` passes."""
    t_start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise WorkloadError(f"cannot start the workload {argv[0]!r}: {exc}") from exc
    try:
        out, err = _wait_for(proc, t_start, stop, timeout)
    except BaseException:  # Ctrl-C / SIGTERM of the measuring process: the workload must not outlive it
        _end(proc)
        raise
    t_end = time.monotonic()
    if proc.returncode != 0:
        raise WorkloadError(failure_message(proc.returncode, err))
    predictions, seconds = parse_report(out)
    if seconds > LIFETIME_SLACK * (t_end - t_start) + 0.5:  # T is the time the predictions took, within its run
        raise WorkloadError(f"the workload reported {predictions} predictions in {seconds:g} s but ran for "
                            f"{t_end - t_start:.3g} s: T must be the time its predictions took")
    return WorkloadResult(predictions, seconds, t_start, t_end)


def _wait_for(proc: subprocess.Popen[str], t_start: float, stop: threading.Event | None,
              timeout: float | None) -> tuple[str, str]:
    """(stdout, stderr) once the workload exited; WorkloadInterrupted when ``stop`` is set or it runs late."""
    while True:
        try:
            return proc.communicate(timeout=0.05)
        except subprocess.TimeoutExpired:
            late = timeout is not None and time.monotonic() - t_start > timeout
            if (stop is not None and stop.is_set()) or late:
                _end(proc)
                raise WorkloadInterrupted("workload timed out" if late else "workload stopped") from None


def _end(proc: subprocess.Popen[str]) -> None:
    """Terminate the workload (kill it if it lingers) and reap it."""
    proc.terminate()  # a no-op when it has exited
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def failure_message(returncode: int, stderr: str, lines: int = 3, chars: int = 300) -> str:
    """``the workload exited with code N`` (or was killed by a signal), then the last ``lines`` lines of
    its stderr (at most ``chars`` characters), or that it printed nothing there."""
    how = f"exited with code {returncode}"
    if returncode < 0:
        try:
            how = f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
    tail = " | ".join([line.strip() for line in stderr.splitlines() if line.strip()][-lines:])
    if not tail:
        return f"the workload {how}, no output on stderr"
    if len(tail) > chars:
        tail = "..." + tail[-chars:]
    return f"the workload {how}, stderr: {tail}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_pyruntime_models(models: Sequence[str], data: str, numeric: str | None = None) -> None:
    """What ``pyruntime.workload`` needs, checked in this process in a fraction of a second: every model
    loads, the data loads, its feature count is the model's, and one prediction goes through the C runtime.

    Raises WorkloadCheckError with a one-line reason naming the model or the data.
    """
    from pyruntime.data import load_for_model
    from pyruntime.errors import FrugalmlError
    from pyruntime.evaluators import c_evaluator
    from pyruntime.format import load

    loaded = []
    for path in models:
        try:
            loaded.append((path, load(path)))
        except (FrugalmlError, ValueError, OSError) as exc:
            raise WorkloadCheckError(f"cannot load model {path}: {_first_line(exc)}") from exc
    for path, model in loaded:
        try:  # as predict reads it: the model's feature plan (raw windows), target column and column names
            X = load_for_model(data, model.meta).X
        except (FrugalmlError, ValueError, OSError, ImportError) as exc:
            raise WorkloadCheckError(f"cannot load data {data} for model {path}: {_first_line(exc)}") from exc
        expected = int(model.tables.n_features)
        if X.shape[1] != expected:
            raise WorkloadCheckError(f"data {data} has {X.shape[1]} features but model {path} expects "
                                     f"{expected}: pass the data the model was trained on")
        try:
            c_evaluator(model, numeric or "float32").predict(X[:1])
        except (FrugalmlError, ValueError, RuntimeError) as exc:
            raise WorkloadCheckError(f"model {path} cannot predict on {data}: {_first_line(exc)}") from exc


def check_workload(build: ArgvBuilder, models: Sequence[str], data: str, seconds: float = 0.01,
                   timeout: float = 120.0) -> None:
    """Run the workload command once, briefly, for each model: it must exit 0 and report its count.

    This is the real command (also a ``--workload-cmd`` one, e.g. over ssh), so what fails here would
    have failed after the idle phase. Raises WorkloadCheckError with a one-line reason.
    """
    for path in models:
        try:
            run_workload(build(path, data, seconds), timeout=timeout)
        except WorkloadInterrupted as exc:
            raise WorkloadCheckError(f"the workload for model {path} did not finish a {seconds:g} s trial run "
                                     f"within {timeout:g} s") from exc
        except WorkloadError as exc:
            raise WorkloadCheckError(f"trial run of the workload for model {path} failed: "
                                     f"{_first_line(exc)}") from exc
