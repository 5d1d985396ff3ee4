"""One way to run the items of a sweep: serially, on local processes (joblib) or on a Dask cluster.

``run_map(fn, items, jobs, scheduler, desc)`` returns ``[fn(item) for item in items]`` in input
order, whichever way it runs:

- ``jobs == 1`` and no scheduler: a plain loop in this process (the reference);
- ``jobs > 1`` (or ``-1``: one per core): ``joblib.Parallel`` on local worker processes (loky);
- ``scheduler="ADDRESS"`` (e.g. ``tcp://10.0.0.5:8786``): joblib's ``dask`` backend on a
  ``distributed.Client(ADDRESS)``; ``jobs`` then caps the tasks in flight (default: every worker;
  ``jobs=1`` runs one task at a time on the cluster).

``fn`` and each item are pickled (cloudpickle) and sent to the workers; the result comes back the
same way. Every sweep in frugalml passes ``fn`` all it needs (data, seeds, a fitted f0) and reads no
shared mutable state, so the results equal the serial ones. Progress (pyruntime.progress) is shown
for the whole map in this process; the workers run quietly.

Kept import-light (click only at module level): joblib and dask are imported when a map runs in
parallel.
"""

from __future__ import annotations

import argparse
import atexit
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click

from pyruntime.errors import FrugalmlError
from pyruntime.progress import Progress, quiet

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler


class ParallelError(FrugalmlError, ValueError):
    """Bad --jobs, an unreachable scheduler, or dask not installed."""


PARALLEL_OPTIONS = [
    click.Option(["--jobs"], type=int, default=None, metavar="N",
                 help="Run the sweep's fits on N local processes, -1: one per core; same result as serial "
                      "[miser, adapt-gbrt, adapt-lin, l1-gate with --sweep; nb-* budget search; skyline; "
                      "default 1]."),
    click.Option(["--scheduler"], default=None, metavar="ADDRESS",
                 help="Run the sweep's fits on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (needs "
                      "frugalml[cluster]; docs/scaling.md) [miser, adapt-gbrt, adapt-lin, l1-gate with --sweep; "
                      "nb-* budget search; skyline]."),
]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """--jobs and --scheduler for a benchmark script's argument parser (same meaning as the CLI's)."""
    ap.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="fit the sweeps on N local processes (-1: one per core); timings stay in this process")
    ap.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="fit the sweeps on the Dask cluster at ADDRESS (see docs/scaling.md)")


def check_jobs(jobs: int | None) -> int | None:
    """jobs itself (None stays None); ParallelError unless jobs >= 1 or jobs == -1."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not (jobs >= 1 or jobs == -1):
        raise ParallelError(f"--jobs must be a positive number of processes or -1 (one per core), got {jobs!r}")
    return jobs


def from_options(opts: dict[str, Any]) -> dict[str, Any]:
    """``jobs`` and ``scheduler`` keyword arguments of run_map from a kind's option dict; connects to the
    scheduler now, so that a bad address fails before any training."""
    scheduler = opts.get("scheduler") or None
    if scheduler is not None:
        connect(scheduler)
    return {"jobs": check_jobs(opts.get("jobs")), "scheduler": scheduler}


RUN_OPTIONS = ("jobs", "scheduler")


def recorded(opts: dict[str, Any]) -> dict[str, Any]:
    """The options a model file records: how a sweep ran (jobs, scheduler) does not change the model."""
    return {k: v for k, v in opts.items() if v is not None and k not in RUN_OPTIONS}


def reject_without(opts: dict[str, Any], flag: str) -> None:
    """UsageError when --jobs/--scheduler are given but the run has no sweep (``flag`` names it)."""
    for name in ("jobs", "scheduler"):
        if opts.get(name) is not None:
            raise click.UsageError(f"--{name} needs {flag}")


_CLIENTS: dict[str, Any] = {}


def check_reachable(address: str, timeout: float) -> None:
    """ParallelError unless a TCP scheduler address (tcp://HOST:PORT or HOST:PORT) has a port and something
    listening there. Checked before distributed.Client is made: a Client that fails in its constructor is left
    half built, and at exit its cleanup waited 20 s and printed an "Exception ignored" traceback after the
    one-line error (round 68). Other schemes (tls://, ws://, inproc://) are left to the Client."""
    scheme, sep, rest = address.partition("://")
    if sep and scheme != "tcp":
        return
    hostport = rest if sep else address
    host, colon, port_text = hostport.rpartition(":")
    if not colon or not port_text.isdigit() or not host:
        raise ParallelError(f"cannot reach the Dask scheduler at {address}: give it as tcp://HOST:PORT "
                            "(e.g. tcp://10.0.0.5:8786)")
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout=timeout):
            pass
    except OSError as exc:
        raise ParallelError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}") from None


def connect(address: str, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` for the scheduler at address (one per address, kept for reuse until
    :func:`close_clients` or exit); ``timeout`` defaults to CONNECT_TIMEOUT."""
    try:
        from distributed import Client
    except ImportError:
        raise ParallelError("--scheduler needs dask.distributed: pip install 'frugalml[cluster]'") from None
    client = _CLIENTS.get(address)
    if client is not None and client.status == "running":
        return client
    check_reachable(address, CONNECT_TIMEOUT if timeout is None else timeout)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT if timeout is None else timeout, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 - OSError/TimeoutError/ValueError: all mean "cannot use it"
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise ParallelError(f"cannot reach the Dask scheduler at {address}: {why}") from None
    _CLIENTS[address] = client
    return client


def close_clients() -> None:
    """Close every client :func:`connect` opened."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        try:
            client.close()
        except Exception:  # noqa: BLE001, S110 - closing a client of a gone scheduler
            pass


atexit.register(close_clients)


class _Quiet:
    """fn without progress output (runs on a worker)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: Any) -> Any:
        with quiet():
            return self.fn(item)


def run_map(fn: Callable[[T], R], items: Iterable[T], jobs: int | None = None, scheduler: str | None = None,
            desc: str | None = None, progress: Progress | None = None) -> list[R]:
    """``[fn(x) for x in items]``, in input order, serially, on local processes or on a Dask cluster.

    ``jobs`` None means 1 locally and every worker with a scheduler. ``desc`` names the progress
    display of the map; or give an entered ``progress`` to advance (one step per item).
    """
    todo: Sequence[T] = list(items)
    n_jobs = check_jobs(jobs)
    if n_jobs is None:
        n_jobs = 1 if scheduler is None else -1
    own = Progress(desc, total=len(todo)) if desc and progress is None else None
    if own is not None:
        with own:
            return run_map(fn, todo, jobs, scheduler, progress=own)
    if scheduler is None and (n_jobs == 1 or len(todo) <= 1):
        out: list[R] = []
        for x in todo:
            out.append(fn(x))
            if progress is not None:
                progress.update()
        return out
    import joblib

    client = connect(scheduler) if scheduler is not None else None
    call = _Quiet(fn)

    def collect() -> list[R]:
        par = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
        got: list[R] = []
        for r in par(joblib.delayed(call)(x) for x in todo):
            got.append(r)
            if progress is not None:
                progress.update()
        return got

    if client is None:
        return collect()
    with joblib.parallel_config(backend="dask", client=client, wait_for_workers_timeout=CONNECT_TIMEOUT):
        return collect()
