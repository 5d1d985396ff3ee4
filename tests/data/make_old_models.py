"""Write the old-format model files of tests/data/vN/ (run once, with the code of main that still wrote
format version N; kept so the fixtures can be traced, not re-run by the tests).

    python tests/data/make_old_models.py v1    # main before the format-2 bump (issue 11)
    python tests/data/make_old_models.py v2    # main before the format-3 bump (issue 19, K classes)

Trains one tiny model per file kind on sklearn:breast_cancer through the CLI and records, in
tests/data/vN/expected.json, the numpy reference's float32 predictions of that code on every 40th row of the
data set, so a later frugalml that loads these files can be checked against what version N predicted. The
git commit recorded is that of the code that ran (run the script with that checkout's interpreter).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = "sklearn:breast_cancer"
ROWS = list(range(0, 569, 40))  # rows of the data set whose predictions are recorded

# file name -> train command arguments (small options: the files stay a few KB)
MODELS = {
    "nb_stop": ["nb-stop", "--budget", "8"],
    "miser": ["miser", "--trees", "6", "--depth", "2"],
    "cascade": ["cascade", "--early-exit-every", "2", "--trees", "6", "--depth", "2"],
    "gated": ["adapt-gbrt", "--hpc-remote", "--trees", "4", "--depth", "2"],
    "cstc": ["cstc", "--depth", "2"],
    "skyline": ["skyline", "--base", "nb", "--max-sets", "6"],
}


def main(out_name: str) -> None:
    from pyruntime import format as fmt
    from pyruntime.data import load_dataset
    from pyruntime.evaluators import reference_evaluator

    OUT = HERE / out_name
    OUT.mkdir(exist_ok=True)
    code_root = Path(fmt.__file__).resolve().parent.parent
    X = load_dataset(DATA).X[ROWS]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=code_root, capture_output=True, text=True,
                            check=True).stdout.strip()
    expected: dict[str, object] = {"format_version": fmt.FORMAT_VERSION, "commit": commit, "data": DATA,
                                   "rows": ROWS, "models": {}}
    for name, args in MODELS.items():
        path = OUT / f"{name}.msgpack"
        subprocess.run([sys.executable, "-m", "compiler.cli", "train", args[0], DATA, "-o", str(path), *args[1:]],
                       cwd=code_root, check=True)
        model = fmt.load(path)
        pred = reference_evaluator(model, "float32").predict(X)
        expected["models"][name] = {  # type: ignore[index]
            "kind": model.kind, "args": args,
            "label": pred.label.tolist(), "n_read": pred.n_read.tolist(), "stage": pred.stage.tolist(),
            "score": np.asarray(pred.score, dtype=np.float32).astype(float).tolist(),
            "cost": np.asarray(pred.cost, dtype=np.float64).tolist(),
        }
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "v1")
