"""The peers' own virtual environment (benchmarks/.venv: emlearn, lightgbm, scikit-learn, numpy).

Peers never enter the project's venv. A full run makes benchmarks/.venv on first use (pip, the
ordinary client); a --quick run never installs anything and skips a missing peer with a printed note.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER_VENV = ROOT / "benchmarks" / ".venv"
PACKAGES = ("emlearn", "lightgbm", "scikit-learn", "numpy")


def peer_python(create: bool) -> Path | None:
    """The peers' interpreter; made (with PACKAGES) when missing and create is set, else None."""
    py = PEER_VENV / "bin" / "python"
    if py.exists():
        return py
    if not create:
        return None
    subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return py


def has(module: str, create: bool) -> Path | None:
    """The peers' interpreter when it imports `module`, else None."""
    py = peer_python(create)
    if py is None:
        return None
    res = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True)
    return py if res.returncode == 0 else None


def skipped(module: str) -> str:
    """The note printed when a peer is missing."""
    return (f"note: peer {module} skipped: not importable in {PEER_VENV.relative_to(ROOT)} "
            f"(a full run or `make bench-peers` makes it)")
