"""The feature library on every target: tests/c/feat_selftest.c evaluates the cases of tests/feature_cases.py
(float32 and q15 windows, every feature of the default plan plus edge and bad specs) and prints status, groups run
and value bits per call; the lines equal the numpy reference's on the host under ASan/UBSan (gcc and clang),
Cortex-M0/M3/M4F/M33 under qemu-system-arm and Raspberry Pi aarch64/armhf under qemu-user."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pyruntime.build_cffi import runtime_include_flags, runtime_sources
from tests.feature_cases import expected_lines, specs, windows, write_header
from tests.firmware_tools import CORTEX_M, CORTEX_M_TOOLS, PI, PI_TOOLS, ROOT, make, require_tools

APP = ROOT / "tests" / "c" / "feat_selftest.c"
RUNTIME = ROOT / "runtime_c"


def _cases(tmp: Path, small: bool) -> tuple[Path, list[str]]:
    ws, sp = windows(small=small), specs()
    return write_header(tmp / "cases.h", ws, sp), expected_lines(ws, sp)


def _compare(out: str, want: list[str]) -> None:
    got = out.strip().splitlines()
    assert len(got) == len(want), (len(got), len(want), got[-3:])
    diff = [(g, w) for g, w in zip(got, want, strict=True) if g != w]
    assert not diff, f"{len(diff)} lines differ, first: got {diff[0][0]!r}, want {diff[0][1]!r}"


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_host_under_sanitizers(tmp_path: Path, cc: str) -> None:
    require_tools(cc)
    header, want = _cases(tmp_path, small=False)
    srcs = [str(p) for p in runtime_sources()]
    exe = tmp_path / "feat_selftest"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-ffp-contract=off", "-O1", "-g",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *runtime_include_flags(),
                    f"-DFM_MODEL_HEADER=\"{header}\"", str(APP), *srcs, "-o", str(exe)], check=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and not p.stderr, p.stderr[-2000:]
    _compare(p.stdout, want)


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33"])
def test_cortex_m(tmp_path: Path, target: str) -> None:
    require_tools(*CORTEX_M_TOOLS)
    header, want = _cases(tmp_path, small=True)  # the micro:bit (M0) has 16 KB of RAM
    p = make(CORTEX_M, f"MODEL={header}", f"APP={APP}", f"TARGET={target}", f"BUILD={tmp_path / 'build'}",
             "QEMU_TIMEOUT=120", "run")
    _compare(p.stdout, want)


@pytest.mark.parametrize("cross", ["aarch64-linux-gnu-", "arm-linux-gnueabihf-"])
def test_raspberry_pi(tmp_path: Path, cross: str) -> None:
    require_tools(*PI_TOOLS[cross])
    header, want = _cases(tmp_path, small=False)
    p = make(PI, f"MODEL={header}", f"APP={APP}", f"CROSS={cross}", f"BUILD={tmp_path / 'build'}", "run")
    _compare(p.stdout, want)


def test_sources_compile_for_cortex_m_without_warnings() -> None:
    require_tools("arm-none-eabi-gcc")
    for src in sorted((RUNTIME / "src" / "features").glob("*.c")):
        subprocess.run(["arm-none-eabi-gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
                        "-mcpu=cortex-m0", "-mthumb", *runtime_include_flags(), "-c", str(src), "-o", "/dev/null"],
                       check=True)
    assert shutil.which("arm-none-eabi-gcc")
