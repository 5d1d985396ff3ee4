"""`frugalml ...` run in this process (click's test runner) instead of a `python -m compiler.cli` subprocess:
the same command and files, without a fresh interpreter importing numpy, scikit-learn and the runtime for each
call (seconds per call; the benchmarks make dozens of calls)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def frugalml(*args: str | Path, echo_stderr: bool = True) -> str:
    """Runs `frugalml ARGS` and returns its stdout; its stderr goes to this process's stderr (as a subprocess's
    would) unless ``echo_stderr`` is false. A non-zero exit raises subprocess.CalledProcessError with the output
    and stderr as bytes (as `subprocess.run(..., check=True, capture_output=True)` would)."""
    from click.testing import CliRunner  # noqa: PLC0415

    from compiler.cli import cli  # noqa: PLC0415 - imports scikit-learn

    argv = [str(a) for a in args]
    res = CliRunner().invoke(cli, argv, catch_exceptions=True)
    err = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback  # noqa: PLC0415

        err += "".join(traceback.format_exception(res.exception))
    if echo_stderr and err:
        sys.stderr.write(err)
    if res.exit_code != 0:
        raise subprocess.CalledProcessError(res.exit_code, ["frugalml", *argv], output=res.stdout.encode(),
                                            stderr=err.encode())
    return res.stdout
