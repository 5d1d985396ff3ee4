"""One BLAS thread for the trainers whose fits are many small dense solves.

CSCC, CSTC, the budget index (skyline), ADAPT-LIN and the L1 gate fit by L-BFGS-B, FISTA and small least
squares on matrices of tens of columns. A multi-threaded BLAS (OpenBLAS runs one thread per core) wakes and
waits for its other threads on every such call, which costs more than it saves, and much more when the other
cores are busy, as under `make figures` or `make test`'s two workers: benchmarks/blas_threads.py measures the
linear base of the index 1.0x idle and about 3x slower with a busy neighbour (docs/scaling.md, "One BLAS
thread for the small fits"). The models do not depend on the thread count.

The histogram trainers (miser, the cascades' trees, ADAPT-GBRT, NB) run their inner loops in compiled code
without the BLAS and are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

from threadpoolctl import threadpool_limits

F = TypeVar("F", bound=Callable[..., object])


def one_blas_thread(fit: F) -> F:
    """Run ``fit`` with every BLAS and OpenMP pool held to one thread; the caller's limits come back after it
    returns or raises."""

    @wraps(fit)
    def limited(*args: object, **kwargs: object) -> object:
        with threadpool_limits(limits=1):
            return fit(*args, **kwargs)

    return limited  # type: ignore[return-value]
