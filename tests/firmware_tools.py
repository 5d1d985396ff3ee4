"""Helpers of the firmware tests: the frugalml CLI, the example Makefiles,
and skips (with the reason) when a cross tool is missing."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware_examples"
CORTEX_M = FIRMWARE / "cortex_m"
PI = FIRMWARE / "raspberry_pi"
# Developers may point the builds at another runtime tree (default: the repository's).
RUNTIME = os.environ.get("FRUGALML_FW_RUNTIME", str(ROOT / "runtime_c"))

CORTEX_M_TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm")
PI_TOOLS = {
    "": ("gcc",),
    "aarch64-linux-gnu-": ("aarch64-linux-gnu-gcc", "qemu-aarch64"),
    "arm-linux-gnueabihf-": ("arm-linux-gnueabihf-gcc", "qemu-arm"),
}


def require_tools(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (run `make toolchains`)")


# firmware_examples/cortex_m/Makefile's flags for the Cortex-M0 (targets.mk's CPU, WARN, the code-size options)
M0_CFLAGS = ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
             "-O2", "-ffunction-sections", "-fno-tree-loop-distribute-patterns")


def cortex_m0_undefined(src: Path, obj: Path, *flags: str) -> set[str]:
    """The symbols an object compiled from src for the Cortex-M0, as the firmware builds it, leaves undefined (the
    calls it makes outside itself: memcpy where GCC could not inline a copy, the soft-float helpers)."""
    require_tools("arm-none-eabi-gcc", "arm-none-eabi-nm")
    subprocess.run(["arm-none-eabi-gcc", *M0_CFLAGS, *flags, "-c", str(src), "-o", str(obj)], check=True)
    return set(subprocess.run(["arm-none-eabi-nm", "-u", str(obj)], capture_output=True, text=True,
                              check=True).stdout.split())


def frugalml(*args: str | Path) -> str:
    """Runs the CLI in this process (click's runner: the same command, without a fresh interpreter importing
    numpy, scikit-learn and the runtime per call); returns stdout, fails the test with stderr on a non-zero
    exit."""
    from cli_work import run  # noqa: PLC0415 - imports scikit-learn

    code, out, err = run(*args)
    assert code == 0, f"frugalml {' '.join(map(str, args))} failed:\n{err}"
    return out


# Compiled runtime objects shared by the builds of one test session: they do not depend on the
# model, only on the folder's compiler settings (TARGET / CROSS / CFLAGS), which key the folder.
_OBJ_CACHE = Path(tempfile.mkdtemp(prefix="fm_fw_objs_"))
_OBJ_KEYS = ("TARGET=", "CROSS=", "CFLAGS=")


def runtime_obj_dir(folder: Path, args: tuple[str, ...]) -> Path:
    settings = "\0".join([str(folder), RUNTIME, *sorted(a for a in args if a.startswith(_OBJ_KEYS))])
    return _OBJ_CACHE / hashlib.sha1(settings.encode()).hexdigest()[:16]


def make(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    extra = [f"RUNTIME_OBJ={runtime_obj_dir(folder, args)}"] if folder in (CORTEX_M, PI) else []
    p = subprocess.run(["make", "-s", "-C", str(folder), f"RUNTIME={RUNTIME}", *extra, *args], capture_output=True,
                       text=True, timeout=120)
    if check:
        assert p.returncode == 0, f"make {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


def cortex_m_lines(header: Path, target: str, machine: str, build: Path, *extra: str) -> list[str]:
    """The Cortex-M firmware's output lines for ``header`` built for ``target`` in ``build`` and run under
    QEMU's ``machine`` (``extra``: more make variables); the run must exit 0."""
    p = make(CORTEX_M, f"MODEL={header}", f"TARGET={target}", f"MACHINE={machine}", f"BUILD={build}", *extra, "run",
             check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def size_report(text: str) -> tuple[int, int]:
    """(flash_bytes, ram_bytes) from a `make size` output."""
    flash = re.search(r"^flash_bytes (\d+)$", text, re.M)
    ram = re.search(r"^ram_bytes (\d+)$", text, re.M)
    assert flash and ram, text
    return int(flash.group(1)), int(ram.group(1))


def embedded_bytes(header: Path) -> int:
    """Bytes of const data a generated header puts in flash: its tables (MODEL_TABLE_BYTES; 0 for the code
    form, whose constants are instructions) and its embedded rows (FM_N_ROWS x features x element size)."""
    text = header.read_text()
    table = re.search(r"_TABLE_BYTES (\d+)u", text)
    rows = re.search(r"static const (float|int16_t|int32_t) \w+_rows\[(\d+)\]\[(\d+)\]", text)
    size = {"float": 4, "int16_t": 2, "int32_t": 4}
    return (int(table.group(1)) if table else 0) + (
        size[rows.group(1)] * int(rows.group(2)) * int(rows.group(3)) if rows else 0)


def object_bytes(obj: Path, tool: str = "arm-none-eabi-size") -> int:
    """text + data bytes of an object file (Berkeley `size`)."""
    out = subprocess.run([tool, str(obj)], check=True, capture_output=True, text=True).stdout.splitlines()
    text, data, _ = (int(v) for v in out[1].split()[:3])
    return text + data


def expected_lines(model: Any, numeric: str, X: np.ndarray) -> list[str]:
    """The lines a firmware must print for rows X (as `frugalml predict` prints them), from the host C
    evaluator after checking that it equals the numpy reference on these rows (label, features read,
    stage, cost): a firmware that matches them matches the reference too, not only the same C source."""
    from pyruntime.costtext import predict_lines
    from pyruntime.evaluators import c_evaluator, reference_evaluator

    ev = c_evaluator(model, numeric)
    got, ref = ev.predict(X), reference_evaluator(model, numeric).predict(X)
    for field in ("label", "n_read", "stage", "cost"):
        np.testing.assert_array_equal(getattr(got, field), getattr(ref, field), err_msg=f"{model.kind} {field}")
    return predict_lines(model.tables, ref, numeric == "q15", ev.cost_unit, classes=model.classes)
