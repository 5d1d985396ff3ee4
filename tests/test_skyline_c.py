"""The C skyline lookup: unit test under sanitizers, and exact agreement with the numpy lookup."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from host_build import cffi_module
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.skyline.index import build_size_index
from pyruntime.build_cffi import runtime_include_flags, runtime_source
from pyruntime.skyline.index import NO_MODEL, SkylineIndex

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime_c"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


@pytest.mark.parametrize("cc,sanitize", [("gcc", True), ("clang", False)])
def test_c_unit_test(cc: str, sanitize: bool, tmp_path: Path) -> None:
    """gcc with address + undefined sanitizers; clang strict (its sanitizer runtime may be absent)."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    exe = tmp_path / "test_skyline"
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if sanitize else ["-O2"]
    sources = [RUNTIME / "tests" / "test_skyline.c", runtime_source("fm_skyline.c"), runtime_source("fm_common.c")]
    cmd = [cc, *STRICT, *flags, *runtime_include_flags(), *map(str, sources), "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "test_skyline: all checks passed" in out.stdout


@pytest.fixture(scope="module")
def csky(tmp_path_factory):
    """A small cffi module of fm_skyline.c alone (until the lead's pyruntime build includes it)."""
    pytest.importorskip("cffi")
    return cffi_module(tmp_path_factory.mktemp("skyline_cffi"), "_fm_skyline_test", ["skyline"],
                       "#include \"fm_skyline.h\"",
                       [runtime_source("fm_skyline.c")], cdef_prefix="#define FM_OK 0\n#define FM_E_BUDGET -5\n")


class CIndex:
    """An fm_skyline over the arrays of a SkylineIndex (kept alive here)."""

    def __init__(self, mod, index: SkylineIndex) -> None:
        ffi, self.lib = mod.ffi, mod.lib
        self.ffi = ffi
        arrays = (index.model_coef.reshape(-1), index.feat_ptr, index.feat_idx, index.breaks, index.sky_ptr,
                  index.sky_model)
        self.keep = [np.ascontiguousarray(a) for a in arrays]
        coef, fptr, fidx, br, sptr, smod = self.keep
        s = ffi.new("fm_skyline *")
        s.n_features = index.n_features
        s.n_models = index.n_models
        s.n_ranges = index.n_ranges
        s.model_coef = ffi.cast("const double *", ffi.from_buffer(coef))
        s.feat_ptr = ffi.cast("const uint32_t *", ffi.from_buffer(fptr))
        s.feat_idx = ffi.cast("const uint32_t *", ffi.from_buffer(fidx)) if fidx.size else ffi.NULL
        s.breaks = ffi.cast("const double *", ffi.from_buffer(br))
        s.sky_ptr = ffi.cast("const uint32_t *", ffi.from_buffer(sptr))
        s.sky_model = ffi.cast("const uint32_t *", ffi.from_buffer(smod)) if smod.size else ffi.NULL
        self.s = s
        self.model = ffi.new("uint32_t *")
        self.cost = ffi.new("double *")

    def check(self) -> int:
        return self.lib.fm_skyline_check(self.s)

    def lookup(self, budget: float, size: float) -> tuple[int, float]:
        rc = self.lib.fm_skyline_select(self.s, budget, size, self.model, self.cost)
        if rc == self.lib.FM_E_BUDGET:
            assert self.model[0] == 0xFFFFFFFF
            return NO_MODEL, 0.0
        assert rc == self.lib.FM_OK
        return int(self.model[0]), float(self.cost[0])


curve = st.tuples(st.floats(0, 1e3), st.floats(0, 50), st.floats(0, 2))


@st.composite
def indexes(draw) -> SkylineIndex:
    coef = np.array(draw(st.lists(curve, min_size=1, max_size=20)), dtype=np.float64)
    m = coef.shape[0]
    acc = np.array(draw(st.lists(st.floats(0, 1), min_size=m, max_size=m)))
    if draw(st.booleans()):  # a real index from the walk
        lo = draw(st.floats(0, 50))
        sized = build_size_index(coef, acc, np.arange(m), lo, lo + draw(st.floats(1, 500)))
        breaks, skylines = sized.breaks, sized.skylines
    else:  # arbitrary (even unsorted) in-range tables
        breaks = sorted(draw(st.lists(st.floats(-10, 500), min_size=1, max_size=6, unique=True)))
        skylines = [draw(st.lists(st.integers(0, m - 1), max_size=8)) for _ in breaks]
    return SkylineIndex(n_features=0, model_coef=coef, model_acc=acc, feat_ptr=np.zeros(m + 1, np.uint32),
                        feat_idx=np.zeros(0, np.uint32), breaks=np.array(breaks, dtype=np.float64),
                        sky_ptr=np.cumsum([0] + [len(s) for s in skylines]),
                        sky_model=np.array([k for s in skylines for k in s], dtype=np.uint32))


@settings(max_examples=150, deadline=None)
@given(indexes(), st.lists(st.tuples(st.floats(-100, 1e6, allow_nan=False), st.floats(-20, 800)), min_size=1,
                           max_size=20))
def test_c_and_numpy_lookups_agree_exactly(csky, index: SkylineIndex, queries) -> None:
    c = CIndex(csky, index)
    assert c.check() == 0
    for budget, size in queries:
        got_c = c.lookup(budget, size)
        got_py = index.lookup(budget, size)
        assert got_c == (got_py.model, got_py.cost)
        assert got_c[0] == NO_MODEL or got_c[1] <= budget


def test_c_rejects_what_python_rejects(csky) -> None:
    index = SkylineIndex(n_features=2, model_coef=np.ones((2, 3)), model_acc=[0.5, 0.7], feat_ptr=[0, 1, 2],
                         feat_idx=[0, 1], breaks=[0.0], sky_ptr=[0, 2], sky_model=[0, 1])
    c = CIndex(csky, index)
    assert c.check() == 0
    c.keep[5][1] = 2  # model index out of range, behind the IR's back
    assert c.check() == -4
    nan = float("nan")
    assert csky.lib.fm_skyline_select(c.s, nan, 1.0, c.model, c.cost) == -1
