"""Progress of long loops on stderr, shared by the compiler, the benchmarks and power_bench.

When the stream (stderr by default) is a terminal, a tqdm bar is drawn (inner loops get their own
bar below the outer one and vanish when done). Otherwise nothing is printed while the loop runs and
one line is written when it ends::

    miser lambda sweep: done: 10 steps in 12.3 s

Only the outermost loop of a nest writes that line, so a command prints at most one summary line
per top-level loop, and nothing when the loop ends with an exception (the error message stays the
only line). Loops run inside :func:`quiet` (e.g. on a parallel worker) print nothing.

``FRUGALML_PROGRESS`` overrides the choice: ``off`` (or ``0``) prints nothing, ``bar`` always draws a
bar, ``summary`` always writes the summary line.

Nothing is ever written to stdout, so JSON or CSV printed there stays clean.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import IO, Any, TypeVar

T = TypeVar("T")

_local = threading.local()


def _depth() -> int:
    return int(getattr(_local, "depth", 0))


def _quiet() -> bool:
    return bool(getattr(_local, "quiet", False))


@contextmanager
def quiet() -> Iterator[None]:
    """No progress output from loops run inside (in this thread)."""
    old = _quiet()
    _local.quiet = True
    try:
        yield
    finally:
        _local.quiet = old


def mode(stream: IO[str] | None = None) -> str:
    """'bar', 'summary' or 'off' for the given stream (default stderr)."""
    env = os.environ.get("FRUGALML_PROGRESS", "").strip().lower()
    if env in ("off", "0", "no", "false"):
        return "off"
    if env in ("bar", "summary"):
        return env
    stream = sys.stderr if stream is None else stream
    try:
        return "bar" if stream.isatty() else "summary"
    except (AttributeError, ValueError):  # closed or odd stream
        return "summary"


def _columns(stream: IO[str]) -> int:
    """Width of the terminal behind stream (0 when unknown, e.g. a pty without a size)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


class Progress:
    """A progress display for one loop; use as a context manager and call :meth:`update` per step.

    ``total`` may be None (unknown). ``file`` is the stream (default: stderr at the time of entry).
    """

    def __init__(self, desc: str, total: int | None = None, unit: str = "step", file: IO[str] | None = None) -> None:
        self.desc = desc
        self.total = total
        self.unit = unit
        self.file = file
        self.n = 0
        self._bar: Any = None
        self._mode = "off"
        self._outer = False
        self._t0 = 0.0

    def __enter__(self) -> Progress:
        stream = sys.stderr if self.file is None else self.file
        self.file = stream
        depth = _depth()
        self._outer = depth == 0
        _local.depth = depth + 1
        self._t0 = time.perf_counter()
        self._mode = "off" if _quiet() else mode(stream)
        if self._mode == "bar":
            from tqdm import tqdm

            wide = _columns(stream) > 0
            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, file=stream, leave=self._outer,
                             position=depth, dynamic_ncols=wide, ncols=None if wide else 100,
                             nrows=None if wide else 24, mininterval=0.2)
        return self

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._bar is not None:
            self._bar.update(n)

    def note(self, text: str) -> None:
        """Short status shown after the bar (terminal only)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._t0

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _local.depth = max(_depth() - 1, 0)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if exc_type is None and self._mode == "summary" and self._outer and self.file is not None:
            self.file.write(summary_line(self.desc, self.n, self.seconds) + "\n")
            self.file.flush()


def summary_line(desc: str, n: int, seconds: float) -> str:
    return f"{desc}: done: {n} steps in {seconds:.1f} s"


def track(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "step",
          file: IO[str] | None = None) -> Iterator[T]:
    """Iterate with a :class:`Progress` (one step per item).

    The summary line is written only when the iteration runs to its end; a loop that may ``break``
    should use :class:`Progress` itself."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with Progress(desc, total, unit, file) as p:
        for item in iterable:
            yield item
            p.update()
