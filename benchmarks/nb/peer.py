"""The peer: emlearn's Gaussian NB compiled to C, timed in benchmarks/c/emlearn_time.c.

Only emlearn's documented convert() / save() API is used; the harness is ours.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-unused-function"]


def emlearn_available() -> str | None:
    """None when emlearn imports, else the reason."""
    saved = np.geterr()
    try:
        import emlearn  # noqa: F401
    except ImportError as exc:
        return f"emlearn not installed ({exc})"
    finally:
        np.seterr(**saved)  # emlearn.bayes sets numpy.seterr(all='raise') on import
    return None


@dataclass
class PeerBuild:
    exe: Path
    rows: Path
    sklearn_pred: np.ndarray  # the GaussianNB's own predictions on the test rows


def build(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, out: Path,
          var_smoothing: float = 1e-9) -> PeerBuild:
    """Fit sklearn GaussianNB, convert with emlearn, compile the timing harness."""
    from sklearn.naive_bayes import GaussianNB

    saved = np.geterr()
    try:
        import emlearn

        clf = GaussianNB(var_smoothing=var_smoothing).fit(X_train, y_train)
        with np.errstate(all="ignore"):
            cmodel = emlearn.convert(clf, method="loadable")
        out.mkdir(parents=True, exist_ok=True)
        cmodel.save(name="peer", file=str(out / "emlearn_model.h"))
        include = emlearn.includedir
    finally:
        np.seterr(**saved)
    rows = out / "rows.bin"
    X32 = np.ascontiguousarray(X_test, dtype="<f4")
    with rows.open("wb") as fh:
        fh.write(np.array(X32.shape, dtype="<u4").tobytes())
        fh.write(X32.tobytes())
    exe = out / "emlearn_time"
    subprocess.run(["cc", *CFLAGS, f"-I{include}", f"-I{out}", str(HERE / "c" / "emlearn_time.c"),
                    "-o", str(exe), "-lm"], check=True)
    return PeerBuild(exe, rows, clf.predict(X_test).astype(np.int64))


def run(b: PeerBuild, min_seconds: float) -> tuple[np.ndarray, float] | str:
    """Labels of every test row and ns per prediction, or why the program failed."""
    res = subprocess.run([str(b.exe), str(b.rows), str(min_seconds)], capture_output=True, text=True)
    if res.returncode != 0:
        return f"exit {res.returncode}" + (" (SIGFPE)" if res.returncode == -8 else "")
    text = res.stdout.split("\n")
    ns = float(next(s.split()[1] for s in text if s.startswith("ns_per")))
    labels = np.array([int(s) for s in text if s and not s.startswith("ns_per")], dtype=np.int64)
    return labels, ns
