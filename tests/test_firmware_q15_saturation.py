"""q15 saturation at the extremes of every table, in the C runtime on the
host and in the integer-only firmware (Cortex-M0/M3 under QEMU, Pi q15):
edge keys at -FLT_MAX / 0 / FLT_MAX, entries at +-32767, d0 and threshold
quantized to the int32 limits, stop bounds at +-inf (INT32_MAX / INT32_MIN)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from firmware_tools import CORTEX_M_TOOLS, PI, PI_TOOLS, cortex_m_lines, make, require_tools

from compiler.header import render_header
from pyruntime import format as fmt
from pyruntime.fixedpoint import INT32_MAX, INT32_MIN
from pyruntime.nb.binding import CNaiveBayes
from pyruntime.nb.model import NBModel

FMAX = float(np.finfo(np.float32).max)
P = 32767 / 16384  # quantizes to exactly 32767 with the scale 2**14
VALUES = [-FMAX, -1e-45, -0.0, 0.0, 1e-45, FMAX]  # subnormals and signed zeros too


def extreme_model(sign: int) -> NBModel:
    """Four positions, edges [-FLT_MAX, 0, FLT_MAX]; FLT_MAX adds +P, -FLT_MAX adds -P.
    d0 = sign * 3e38 saturates to INT32_MAX / INT32_MIN when quantized."""
    zero_bin = [1, 0, 1, 0]
    d: list[float] = []
    for zb in zero_bin:
        d += ([0.5] if zb else []) + [-P, 0.25, P, 1.0]  # [zero], <= -FMAX, (-FMAX, 0], (0, FMAX], > FMAX
    return NBModel(
        n_features=4, order=[0, 1, 2, 3], zero_bin=zero_bin, edge_start=[0, 3, 6, 9, 12],
        edges=np.float32([-FMAX, 0.0, FMAX] * 4), table_start=np.concatenate([[0], np.cumsum([5, 4, 5, 4])]),
        d=np.float32(d), d0=sign * 3e38, threshold=sign * 131070.0,  # q15: +-(INT32_MAX - 32767)
        stop_at=[2], stop_hi=[np.inf], stop_lo=[-np.inf],
    )


ROWS = np.array(list(itertools.product(VALUES, repeat=4)), dtype=np.float32)


@pytest.mark.parametrize("sign", [1, -1])
def test_quantized_tables_sit_at_the_limits(sign: int) -> None:
    q = extreme_model(sign).q15()
    assert q.shift == 14 and int(np.abs(q.d).max()) == 32767
    assert q.d0 == (INT32_MAX if sign > 0 else INT32_MIN)
    assert q.threshold == sign * (INT32_MAX - 32767 if sign > 0 else 2**31 - 32768)
    assert q.stop_hi[0] == INT32_MAX and q.stop_lo[0] == INT32_MIN
    assert q.edge_keys.min() < 0 < q.edge_keys.max()


def test_host_runtime_saturates_known_answers() -> None:
    """Known scores: the int32 accumulator clamps at each addition."""
    M, N = FMAX, -FMAX
    pos = CNaiveBayes(extreme_model(1), "q15").predict(np.float32([[M, M, M, M], [M, M, M, N], [N, N, N, N]]))
    # +4P clamps at INT32_MAX; MAX +3P -P = MAX - P (not MAX + 2P), which is not > threshold
    assert pos.score.tolist() == [INT32_MAX, INT32_MAX - 32767, INT32_MAX - 4 * 32767]
    assert pos.label.tolist() == [1, 0, 0]
    neg = CNaiveBayes(extreme_model(-1), "q15").predict(np.float32([[N, N, N, N], [N, N, N, M], [M, M, M, M]]))
    assert neg.score.tolist() == [INT32_MIN, INT32_MIN + 32767, INT32_MIN + 4 * 32767]
    # a stop bound of +-inf never fires, even on a saturated score
    assert set(pos.n_read.tolist()) == {4} and set(neg.n_read.tolist()) == {4}


@pytest.mark.parametrize("sign", [1, -1])
def test_host_runtime_equals_reference_on_every_extreme_row(sign: int) -> None:
    m = extreme_model(sign)
    got = CNaiveBayes(m, "q15").predict(ROWS)
    ref = m.q15().predict_reference(ROWS)
    np.testing.assert_array_equal(got.label, ref.label)
    np.testing.assert_array_equal(got.score, ref.score)
    np.testing.assert_array_equal(got.n_read, ref.n_read)


def _header(sign: int, target: str, path: Path) -> list[str]:
    m = extreme_model(sign)
    model = fmt.ModelFile(kind="nb-stop", tables=m, meta={})
    path.write_text(render_header(model, "q15", "model", ROWS, target))
    ref = m.q15().predict_reference(ROWS)
    return [f"{int(a)} {int(b)}" for a, b in zip(ref.label, ref.n_read)]


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize(("target", "machine"), [("cortex-m0", "microbit"), ("cortex-m3", "mps2-an385")])
def test_integer_firmware_saturates_like_the_reference(tmp_path: Path, sign: int, target: str, machine: str) -> None:
    require_tools(*CORTEX_M_TOOLS)
    expected = _header(sign, target, tmp_path / "model.h")
    assert cortex_m_lines(tmp_path / "model.h", target, machine, tmp_path / "b") == expected


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("cross", ["arm-linux-gnueabihf-", "aarch64-linux-gnu-", ""])
def test_pi_q15_saturates_like_the_reference(tmp_path: Path, cross: str, sign: int) -> None:
    """Also natively under ASan + UBSan: a signed overflow would abort the run."""
    require_tools(*PI_TOOLS[cross])
    expected = _header(sign, "pi", tmp_path / "model.h")
    san = [] if cross else ["CFLAGS=-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"]
    p = make(PI, f"MODEL={tmp_path / 'model.h'}", f"CROSS={cross}", f"BUILD={tmp_path / 'b'}", "run", *san,
             check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == expected
