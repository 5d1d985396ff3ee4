"""The COST column text: pyruntime.costtext.cost_text (what `frugalml predict` prints) and its C twin
runtime_c/include/core/fm_cost_text.h (what the firmware prints) agree on every float32 tried, and the
text is the value rounded to 6 decimals (checked against exact decimal arithmetic)."""

from __future__ import annotations

import shutil
import subprocess
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import pytest

from pyruntime.build_cffi import runtime_include_flags
from pyruntime.costtext import cost_text, device_costs

ROOT = Path(__file__).resolve().parents[1]
DRIVER = r"""
#include <stdio.h>
#include "fm_cost_text.h"
int main(void)
{
    char buf[FM_COST_TEXT_SIZE];
    unsigned long b;
    while (scanf("%lx", &b) == 1) {
        uint32_t u = (uint32_t)b;
        float f;
        memcpy(&f, &u, sizeof f);
        puts(fm_cost_text(buf, f));
    }
    return 0;
}
"""


def sample_bits() -> np.ndarray:
    rng = np.random.default_rng(0)
    edge = np.array([0, 0x80000000, 0x3F800000, 0x7F800000, 0xFF800000, 0x7FC00000, 1, 0x5F800000, 0x5F7FFFFF,
                     0x3DCCCCCD, 0x3500_0000, 0x358637BD, 0x358637BE, 0x4B7FFFFF, 0x4B800000], np.uint32)
    ints = np.arange(0, 2000, dtype=np.float32).view(np.uint32)
    small = (rng.random(4000) * 20).astype(np.float32).view(np.uint32)
    halves = (np.arange(1, 400, dtype=np.float32) * np.float32(2.0 ** -7)).view(np.uint32)  # ties at 6 decimals?
    rand = rng.integers(0, 2 ** 32, 12000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([edge, ints, small, halves, rand])


def test_known_texts() -> None:
    assert [cost_text(np.float32(v)) for v in (0, 3, 2.5, 0.1, 1e-7, 12.0000004, 7.25, -1.5)] == [
        "0", "3", "2.5", "0.1", "0", "12", "7.25", "-1.5"]
    assert cost_text(np.float32(np.inf)) == "inf" and cost_text(np.float32(2.0 ** 70)) == f"{1 << 23}*2^47"


def test_text_is_the_value_rounded_to_6_decimals() -> None:
    for b in sample_bits():
        v = np.uint32(b).view(np.float32)
        if not np.isfinite(v) or abs(float(v)) >= 2.0 ** 64:
            continue
        exact = Decimal(float(v)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_EVEN)
        assert Decimal(cost_text(v)) == exact, hex(b)


def test_c_twin_prints_the_same_text(tmp_path: Path) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", *runtime_include_flags(),
                    str(tmp_path / "driver.c"), "-o", str(exe)],
                   check=True)
    bits = sample_bits()
    p = subprocess.run([str(exe)], input="\n".join(f"{int(b):x}" for b in bits), capture_output=True, text=True,
                       check=True)
    assert p.stdout.splitlines() == [cost_text(np.uint32(b).view(np.float32)) for b in bits]


def test_q15_device_cost_is_one_float32_multiply() -> None:
    unit = 0.37
    cost_q = np.array([0, 1, 7, 65535, 3_000_000_123], np.int64)
    got = device_costs(cost_q * unit, True, unit)
    assert got.dtype == np.float32
    assert got.tolist() == (cost_q.astype(np.float32) * np.float32(unit)).tolist()
