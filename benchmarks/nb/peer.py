"""The peer: emlearn's Gaussian NB compiled to C, timed in benchmarks/c/emlearn_time.c.

Only emlearn's documented convert() / save() API is used; the harness is ours. emlearn lives in the
peers' venv (benchmarks/common/peers.py): build_in() runs build() there.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-unused-function"]


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
    pred = clf.predict(X_test).astype(np.int64)
    np.save(out / "sklearn_pred.npy", pred)
    return PeerBuild(exe, rows, pred)


def build_in(py: Path, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, out: Path,
             var_smoothing: float = 1e-9) -> PeerBuild:
    """build() run by the peers' interpreter `py` (CalledProcessError with its stderr when it fails)."""
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "data.npz", Xtr=X_train, ytr=y_train, Xte=X_test)
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import numpy as np; from pathlib import Path; "
            f"from nb import peer; z = np.load({str(out / 'data.npz')!r}); "
            f"peer.build(z['Xtr'], z['ytr'], z['Xte'], Path({str(out)!r}), {var_smoothing!r})")
    subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True)
    return PeerBuild(out / "emlearn_time", out / "rows.bin", np.load(out / "sklearn_pred.npy"))


def run(b: PeerBuild, min_seconds: float) -> tuple[np.ndarray, float] | str:
    """Labels of every test row and ns per prediction, or why the program failed."""
    res = subprocess.run([str(b.exe), str(b.rows), str(min_seconds)], capture_output=True, text=True)
    if res.returncode != 0:
        return f"exit {res.returncode}" + (" (SIGFPE)" if res.returncode == -8 else "")
    text = res.stdout.split("\n")
    ns = float(next(s.split()[1] for s in text if s.startswith("ns_per")))
    labels = np.array([int(s) for s in text if s and not s.startswith("ns_per")], dtype=np.int64)
    return labels, ns
