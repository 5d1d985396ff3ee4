"""K-class models on the device targets (issue 19), the steps of tests/test_multiclass_targets.py: the two sets'
data (26 and 10 classes), the kinds' small training options, the (form, numeric) pairs each model offers, and
the firmware checks. Each set is one pytest-xdist unit of work (tests/conftest.py), so the two sets' builds run
on two workers and no model is trained twice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner
from firmware_tools import CORTEX_M, CORTEX_M_TOOLS, FIRMWARE, PI, PI_TOOLS, make, require_tools

from compiler.cli import cli
from compiler.codegen import code_kinds, render_code_header
from compiler.header import render_header
from pyruntime import format as fmt
from pyruntime.costtext import predict_lines
from pyruntime.data import load_dataset
from pyruntime.evaluators import c_evaluator

ROWS = 24
# K-class kinds and small options (the firmware runs every embedded row)
TRAIN: dict[str, tuple[str, ...]] = {
    "nb-static": ("--budget", "20"),
    "nb-stop": ("--budget", "30"),
    "miser": ("--trees", "4", "--depth", "3", "--lambda", "0.01"),  # depth 3: the K-output depth-3 walk
    "cascade": ("--early-exit-every", "2", "--trees", "4", "--depth", "2"),
    # the gated kinds: f0 off the device (DEFER), so f0 only shapes the gate's training: rf, whose fit and 3
    # out-of-fold clones take ~1 s CPU on digits (gbrt's K-class boosting: ~20 s); adapt-lin's gamma 0.03 keeps
    # DEFER answers among the embedded rows with rf's flatter probabilities (DEFERS)
    "adapt-gbrt": ("--trees", "4", "--depth", "2", "--hpc", "rf", "--hpc-remote"),
    "adapt-lin": ("--hpc", "rf", "--hpc-remote", "--pfull", "0.3", "--gamma", "0.03"),  # K linear f1, margin gate
    "l1-gate": ("--hpc", "rf", "--hpc-remote", "--pfull", "0.3"),
    "skyline": ("--method", "greedy-acc", "--max-sets", "200"),  # K-class NB per feature set
    "skyline-linear": ("--base", "linear", "--method", "greedy-acc", "--max-sets", "40"),  # K class scorers per set
    "cstc": ("--depth", "2", "--max-iter", "2"),  # binary routers, K class scorers per leaf; tables only
}
VARIANTS = {"skyline-linear": "skyline"}  # TRAIN keys that are another kind's option set


def kind_of(key: str) -> str:
    return VARIANTS.get(key, key)


DEFERS = ("adapt-lin", "l1-gate")  # kinds whose embedded rows include DEFER answers (-1) on both sets
TARGETS = {("digits", "q15"): ("cortex-m0", "mps2-an385"), ("digits", "float32"): ("cortex-m4f", "mps2-an386"),
           ("letters", "q15"): ("cortex-m3", "mps2-an385"), ("letters", "float32"): ("cortex-m33", "mps2-an505")}
PI_CROSS = {"digits": "aarch64-linux-gnu-", "letters": "arm-linux-gnueabihf-"}


def write_set(d: Path, name: str) -> None:
    """d/letters.npz for "letters": 26 generated classes "a" .. "z" (8 features, exact zeros: the NB zero slots);
    "digits" is scikit-learn's (bundled: nothing to write)."""
    if name == "letters":
        rng = np.random.default_rng(26)
        y = np.repeat(np.arange(26), 40)
        centres = rng.normal(scale=2.0, size=(26, 8))
        X = centres[y] + rng.normal(size=(y.size, 8))
        X[rng.random(X.shape) < 0.1] = 0.0  # exact zeros: the NB zero slots
        np.savez(d / "letters.npz", X=X, y=np.array([chr(ord("a") + i) for i in y]))


def data_of(work: Path, name: str) -> str:
    return "sklearn:digits" if name == "digits" else str(work / "letters.npz")


def model_of(work: Path, kind: str, name: str) -> Path:
    path = work / f"{kind}-{name}.msgpack"
    if not path.exists():
        res = CliRunner().invoke(cli, ["train", kind_of(kind), data_of(work, name), "-o", str(path), *TRAIN[kind]],
                                 catch_exceptions=False, env={"FRUGALML_PROGRESS": "off"})
        assert res.exit_code == 0, (kind, res.stderr)
    return path


def cases(work: Path, kind: str, name: str) -> list[tuple[str, str]]:
    """(form, numeric) pairs the model offers: tables, and code for kinds with a code form that takes it."""
    m = fmt.load(model_of(work, kind, name))
    assert len(m.classes) == (10 if name == "digits" else 26)
    out = [("tables", "float32"), ("tables", "q15")]  # every kind has q15 tables (skyline since round 19)
    if m.kind in code_kinds():
        try:
            render_code_header(m, "float32", "model")
            out += [("code", "float32"), ("code", "q15")]
        except ValueError as exc:  # gated models with linear parts: tables only (one line)
            assert "--form tables" in str(exc)
    return out


def export(work: Path, kind: str, name: str, form: str, numeric: str, target: str,
           out: Path) -> tuple[Path, list[str]]:
    m = fmt.load(model_of(work, kind, name))
    X = load_dataset(data_of(work, name)).X[::37][:ROWS]
    header = out / f"model_{form}_{numeric}.h"
    render = render_code_header if form == "code" else render_header
    header.write_text(render(m, numeric, "model", X, target))
    ev = c_evaluator(m, numeric)
    pred = ev.predict(X)
    lines = predict_lines(m.tables, pred, numeric == "q15", ev.cost_unit, classes=m.classes)
    assert len({line.split()[0] for line in lines}) > 2  # several classes answered
    assert kind not in DEFERS or np.any(pred.label == -1), kind  # the firmware prints DEFER answers too
    return header, lines


def check_cortex_m(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    """Every form and numeric type of the model, under QEMU on the set's two Cortex-M targets."""
    require_tools(*CORTEX_M_TOOLS)
    for form, numeric in cases(work, kind, name):
        target, machine = TARGETS[(name, numeric)]
        header, expected = export(work, kind, name, form, numeric, target, tmp_path)
        p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"MACHINE={machine}",
                 f"BUILD={tmp_path / form / numeric}", "run", check=False)
        assert p.returncode == 0, (form, numeric, p.stderr)
        assert p.stdout.splitlines() == expected, (form, numeric)


def check_raspberry_pi(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    """Every form and numeric type of the model, under QEMU user mode on the set's Pi target."""
    cross = PI_CROSS[name]
    require_tools(*PI_TOOLS[cross])
    for form, numeric in cases(work, kind, name):
        header, expected = export(work, kind, name, form, numeric, "pi", tmp_path)
        p = make(PI, f"MODEL={header}", f"CROSS={cross}", f"BUILD={tmp_path / form / numeric}", "run",
                 check=False)
        assert p.returncode == 0, (form, numeric, p.stderr)
        assert p.stdout.splitlines() == expected, (form, numeric)


def check_arduino(work: Path, tmp_path: Path, kind: str, name: str) -> None:
    """Every form and numeric type of the set's model in the Arduino sketch (C++, one compile each)."""
    require_tools("arm-none-eabi-g++")
    for form, numeric in cases(work, kind, name):
        header, _ = export(work, kind, name, form, numeric, "cortex-m4f", tmp_path)
        p = make(FIRMWARE / "arduino", f"MODEL={header}", "TARGET=cortex-m4f", f"BUILD={tmp_path / form / numeric}",
                 "check", check=False)
        assert p.returncode == 0, (form, numeric, p.stderr)
