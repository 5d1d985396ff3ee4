"""The C feature library (runtime_c/src/features) against its numpy reference (pyruntime/features) through
cffi: bit-exact values and statuses, float32 and q15, groups run once per window, known answers, each status."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyruntime.errors import DataError
from pyruntime.features import catalog as cat
from pyruntime.features import cbind, f32, q15, twiddle
from pyruntime.features.plan import default_plan
from tests.feature_cases import reference, specs, windows


def _bits(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v, np.float32).view(np.uint32)


def test_every_case_equals_the_reference_bit_for_bit() -> None:
    spec_list = specs()
    n_ok = 0
    for w in windows():
        got = cbind.run(w.x[None], spec_list, q15=w.q15)
        want = reference(w, spec_list)
        assert got.status[0].tolist() == [s for s, _, _ in want]
        assert got.new_groups[0].tolist() == [g for _, g, _ in want]
        assert _bits(got.values[0]).tolist() == [b for _, _, b in want]
        n_ok += int(np.sum(got.status == 0))
    assert n_ok > 800  # most calls succeed: the comparison is about values, not only errors


@pytest.mark.parametrize("length", [3, 16, 99, 100, 257, 1024])
def test_random_batches_equal_the_reference(length: int) -> None:
    rng = np.random.default_rng(length)
    plan = default_plan(6)
    x = (rng.standard_t(3, size=(25, 6, length)) * rng.uniform(1e-3, 1e3, size=(25, 6, 1))).astype(np.float32)
    rv, rs = f32.values(x, plan.features)
    c = cbind.run(x, plan.features)
    assert np.array_equal(rs, c.status) and np.array_equal(_bits(rv), _bits(c.values))
    xq = np.clip(rng.normal(size=(25, 6, length)) * rng.uniform(1, 40000, size=(25, 6, 1)), -32768,
                 32767).astype(np.int16)
    rv, rs = q15.values(xq, plan.features)
    c = cbind.run(xq, plan.features, q15=True)
    assert np.array_equal(rs, c.status) and np.array_equal(_bits(rv), _bits(c.values))


@pytest.mark.parametrize("level", [0.0, 7.5])
def test_a_flat_channel_has_no_energy_and_the_first_bin_dominant(level: float) -> None:
    """docs/features.md: a constant window's spectrum (its mean taken out) is all zeros: band energies and
    centroid 0, dominant frequency 1/(nfft D) (the first of bins 1..nfft/2), in C and numpy alike, float32 and q15."""
    names = ["c0__fft_dominant_frequency", "c0__fft_centroid", "c0__fft_band_energy__band_0__bands_4",
             "c0__fft_dominant_frequency__decimate_4"]
    spec_list = [cat.parse_name(n) for n in names]
    x = np.full((1, 1, 48), level, np.float32)  # nfft 64; of block means of 4: 12 points, nfft 16
    for xs, ref, q in ((x, f32, False), ((x * 1000).astype(np.int16), q15, True)):
        c = cbind.run(xs, spec_list, q15=q)
        rv, rs = ref.values(xs, spec_list)
        assert np.array_equal(c.status, rs) and np.array_equal(_bits(c.values), _bits(rv))
        assert c.values[0].tolist() == [1 / 64, 0.0, 0.0, 1 / 64] and not c.status.any()


@pytest.mark.parametrize("length", [7, 10, 100])
@pytest.mark.parametrize("level", [0.1, 7.7, -3.3, 1e-3])
def test_a_flat_channel_of_an_inexact_level_is_flat(level: float, length: int) -> None:
    """A constant float32 window whose sum / len is an ulp off its value (0.1 x 7, 7.7 x 3): the mean was that
    ulp off, the centred signal a tiny constant, and autocorrelation came out (n - lag) / n, the spectrum a box's
    (round 66's probe: 813 of 1,500 random constant windows; 0.1 x 7 read 0.857 and band 0 of 4 0.25). The mean
    is now the value itself, in C and numpy. (Four bands need nfft 8: 7 samples at least.)"""
    names = ["c0__mean", "c0__standard_deviation", "c0__autocorrelation__lag_1", "c0__fft_dominant_frequency",
             "c0__fft_centroid", "c0__fft_band_energy__band_0__bands_4"]
    spec_list = [cat.parse_name(n) for n in names]
    x = np.full((1, 1, length), level, np.float32)
    c = cbind.run(x, spec_list)
    rv, rs = f32.values(x, spec_list)
    assert np.array_equal(c.status, rs) and np.array_equal(_bits(c.values), _bits(rv)) and not c.status.any()
    nfft = 1 << (length - 1).bit_length()
    assert c.values[0].tolist() == [float(np.float32(level)), 0.0, 0.0, float(np.float32(1 / nfft)), 0.0, 0.0]


@pytest.mark.parametrize("length", [1025, 2049, 2050, 4096])
def test_default_plan_of_long_windows_runs_every_feature_as_the_reference(length: int) -> None:
    """Over 1,024 samples the window's own spectrum is over FM_FEAT_MAX_FFT, over 2,049 that of its means of 2: the
    default plan for such windows leaves those out and every feature it keeps runs (status OK), bit-exact."""
    plan = default_plan(6, length, length)
    decimations = {f.decimate for f in plan.features if f.id in cat.SPECTRAL_IDS}
    assert decimations == ({2, 4, 8} if length <= 2049 else {4, 8})
    dropped = 4 - len(decimations)  # spectra of 6 features for each of 6 channels
    assert plan.max_len >= length and len(plan.features) == len(default_plan(6).features) - 6 * 6 * dropped
    rng = np.random.default_rng(length)
    x = (rng.standard_t(3, size=(4, 6, length)) * rng.uniform(1e-3, 1e3, size=(4, 6, 1))).astype(np.float32)
    rv, rs = f32.values(x, plan.features)
    c = cbind.run(x, plan.features)
    assert np.all(rs == cat.OK) and np.array_equal(rs, c.status) and np.array_equal(_bits(rv), _bits(c.values))
    xq = np.clip(rng.normal(size=(4, 6, length)) * 3000, -32768, 32767).astype(np.int16)
    rv, rs = q15.values(xq, plan.features)
    c = cbind.run(xq, plan.features, q15=True)
    assert np.all(rs == cat.OK) and np.array_equal(rs, c.status) and np.array_equal(_bits(rv), _bits(c.values))
    assert all(f.max_len() < length for f in default_plan(6).features if f not in plan.features)


def test_sqrt_is_correctly_rounded_on_every_kind_of_float() -> None:
    from pyruntime._frugalml_c import lib

    rng = np.random.default_rng(1)
    bits = np.concatenate([rng.integers(0, 0x7F800000, 20000, dtype=np.uint32),  # positive normals + subnormals
                           rng.integers(1, 0x800000, 2000, dtype=np.uint32),  # subnormals
                           np.array([0, 1, 0x7F7FFFFF, 0x7F800000, 0x80000000, 0x3F800000], np.uint32)])
    x = bits.view(np.float32)
    got = np.array([lib.fm_feat_sqrtf(float(v)) for v in x], np.float32)
    assert np.array_equal(got.view(np.uint32), np.sqrt(x).view(np.uint32))
    assert math.isnan(lib.fm_feat_sqrtf(-1.0)) and math.isnan(lib.fm_feat_sqrtf(float("nan")))


def test_isqrt64_is_the_floor_square_root() -> None:
    from pyruntime._frugalml_c import lib

    rng = np.random.default_rng(2)
    values = [0, 1, 2, 3, 4, 2**32 - 1, 2**32, 2**62, 2**64 - 1] + [int(v) for v in rng.integers(0, 2**63, 3000)]
    values += [v * v - 1 for v in (2**31, 12345)] + [v * v for v in (2**31, 12345)]
    assert [lib.fm_feat_isqrt64(v) for v in values] == [math.isqrt(v) for v in values]
    small = rng.integers(0, 2**50, 5000)
    assert q15.isqrt(small).tolist() == [math.isqrt(int(v)) for v in small]


def test_twiddle_table_file_is_current() -> None:
    assert twiddle.C_FILE.read_text() == twiddle.c_source()


def _one(x: np.ndarray, spec: cat.FeatureSpec, q: bool = False) -> tuple[int, float]:
    out = cbind.run(x[None], [spec], q15=q)
    return int(out.status[0, 0]), float(out.values[0, 0])


def test_known_answers_float32() -> None:
    x = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [0, 0, 0, 0]], np.float32)
    assert _one(x, cat.FeatureSpec(0, 0)) == (0, 2.5)
    assert _one(x, cat.FeatureSpec(5, 1)) == (0, 3.0)
    assert _one(x, cat.FeatureSpec(4, 0))[1] == pytest.approx(math.sqrt(7.5), rel=1e-7)
    assert _one(x, cat.FeatureSpec(1, 0))[1] == pytest.approx(math.sqrt(1.25), rel=1e-7)
    assert _one(x, cat.FeatureSpec(13, 0, channel2=1)) == (0, -1.0)
    assert _one(x, cat.FeatureSpec(13, 0, channel2=2)) == (0, 0.0)  # zero variance: 0, not NaN
    assert _one(x, cat.FeatureSpec(6, 0)) == (0, np.float32(1) / np.float32(3))  # one mean crossing in 3 steps
    alt = np.array([[1, -1] * 8], np.float32)
    assert _one(alt, cat.FeatureSpec(6, 0)) == (0, 1.0)
    assert _one(alt, cat.FeatureSpec(7, 0, param=1)) == (0, np.float32(-15.0 / 16.0))
    t = np.arange(64)
    sine = np.sin(2 * np.pi * 5 * t / 64)[None].astype(np.float32)
    assert _one(sine, cat.FeatureSpec(9, 0)) == (0, 5 / 64)
    assert _one(sine, cat.FeatureSpec(10, 0))[1] == pytest.approx(5 / 64, rel=1e-4)
    assert _one(sine, cat.FeatureSpec(8, 0, param=0, param2=4))[1] == pytest.approx(1.0, rel=1e-5)  # bins 1..8
    xyz = np.array([[3, 0], [4, 0], [12, 0]], np.float32)
    assert _one(xyz, cat.FeatureSpec(12, 0)) == (0, 13.0)
    assert _one(xyz, cat.FeatureSpec(11, 0)) == (0, 6.5)


def test_known_answers_q15() -> None:
    x = np.array([[16384] * 8, [-32768, 32767] * 4, [100, 200, 300, 400, 500, 600, 700, 800]], np.int16)
    assert _one(x, cat.FeatureSpec(0, 0), True) == (0, 0.5)
    assert _one(x, cat.FeatureSpec(1, 0), True) == (0, 0.0)
    assert _one(x, cat.FeatureSpec(5, 1), True) == (0, 65535 / 32768)
    assert _one(x, cat.FeatureSpec(6, 1), True) == (0, 1.0)
    assert _one(x, cat.FeatureSpec(4, 0), True) == (0, 0.5)
    assert _one(x, cat.FeatureSpec(0, 2), True) == (0, 450 / 32768)
    t = np.arange(64)
    sine = np.round(20000 * np.sin(2 * np.pi * 3 * t / 64))[None].astype(np.int16)
    assert _one(sine, cat.FeatureSpec(9, 0), True) == (0, 3 / 64)
    xyz = np.array([[3000], [4000], [12000]], np.int16)
    assert _one(xyz, cat.FeatureSpec(12, 0), True) == (0, 13000 / 32768)


@pytest.mark.parametrize("q", [False, True])
def test_spectra_of_block_means_see_the_same_frequency(q: bool) -> None:
    """A sine of 5 cycles in 128 samples: the spectrum of its block means of D samples (5 cycles in 128 / D blocks)
    peaks at bin 5 of 128 / D, reported as 5 / 128 cycles per sample for every D; its energy is in the lowest band."""
    t = np.arange(128)
    sine = np.sin(2 * np.pi * 5 * t / 128)[None]
    x = np.round(20000 * sine).astype(np.int16) if q else sine.astype(np.float32)
    for d in (0, 2, 4, 8):
        assert _one(x, cat.FeatureSpec(9, 0, decimate=d), q) == (0, 5 / 128), d
        assert _one(x, cat.FeatureSpec(10, 0, decimate=d), q)[1] == pytest.approx(5 / 128, rel=0.02), d
    # bins 1..8 of the 16-point spectrum of 8-sample means hold it all; of the full spectrum, band 0 of 8
    assert _one(x, cat.FeatureSpec(8, 0, param=0, param2=1, decimate=8), q)[1] == pytest.approx(1.0, rel=1e-3)
    assert _one(x, cat.FeatureSpec(8, 0, param=1, param2=2, decimate=4), q)[1] == pytest.approx(0.0, abs=1e-3)


@pytest.mark.parametrize("q", [False, True])
def test_block_means_reach_windows_over_the_fft_bound(q: bool) -> None:
    """4000 samples: the window's own FFT would be over FM_FEAT_MAX_FFT (E_WINDOW); its means of 4 (1000) fit."""
    sine = np.sin(2 * np.pi * np.arange(4000) / 40)[None]  # 1/40 cycles per sample
    x = np.round(20000 * sine).astype(np.int16) if q else sine.astype(np.float32)
    assert _one(x, cat.FeatureSpec(9, 0), q)[0] == cat.E_WINDOW
    assert _one(x, cat.FeatureSpec(9, 0, decimate=2), q)[0] == cat.E_WINDOW  # 2000 means
    st, v = _one(x, cat.FeatureSpec(9, 0, decimate=4), q)
    assert st == 0 and v == pytest.approx(1 / 40, rel=0.03)
    assert _one(x[:, :15], cat.FeatureSpec(9, 0, decimate=8), q)[0] == cat.E_WINDOW  # one block of 8: needs two
    assert _one(x[:, :16], cat.FeatureSpec(9, 0, decimate=8), q)[0] == 0


def test_decimate_in_names() -> None:
    f = cat.parse_name("c2__fft_band_energy__band_1__bands_4__decimate_4")
    assert (f.id, f.channel, f.param, f.param2, f.decimate) == (8, 2, 1, 4, 4)
    assert f.name == "c2__fft_band_energy__band_1__bands_4__decimate_4"
    assert cat.parse_name("c0__fft_centroid__decimate_8").groups() == ((cat.PASS, 0), (cat.SPECTRUM_D8, 0))
    assert cat.group_name((cat.SPECTRUM_D2, 3)) == "c3__spectrum__decimate_2"
    for bad, why in (("c0__mean__decimate_2", "has no parameter 'decimate'"),
                     ("c0__fft_centroid__decimate_3", "decimate is 2, 4 or 8"),
                     ("c0__fft_centroid__decimate_1", "decimate is 2, 4 or 8"),
                     ("c0__fft_centroid__decimate_2__decimate_4", "has no parameter 'decimate'")):
        with pytest.raises(DataError, match=why):
            cat.parse_name(bad)


@pytest.mark.parametrize("name", ["c0__autocorrelation__lag_\u00b2", "c0__autocorrelation__lag_\u0663",
                                  "c\u0663__mean", "c0_c\u0661__correlation"])
def test_names_take_ascii_digits_only(name: str) -> None:
    """"lag_²" passed str.isdigit and then failed int() with a traceback; "lag_٣" was read as lag_3. A name is
    written with ASCII digits: anything else is refused in one line naming the feature."""
    with pytest.raises(DataError, match="feature .*(not NAME_INTEGER|not a feature name)"):
        cat.parse_name(name)


def test_groups_run_once_per_window_and_are_reported() -> None:
    x = np.random.default_rng(3).normal(size=(1, 6, 50)).astype(np.float32)
    seq = [cat.FeatureSpec(1, 0), cat.FeatureSpec(0, 0), cat.FeatureSpec(7, 0, param=2),
           cat.FeatureSpec(8, 0, param=1, param2=4), cat.FeatureSpec(9, 0), cat.FeatureSpec(13, 0, channel2=1),
           cat.FeatureSpec(11, 0), cat.FeatureSpec(12, 0), cat.FeatureSpec(11, 3)]
    got = cbind.run(x, seq)
    # std: pass + centered; mean: none; autocorr: none; band: spectrum; dominant: none;
    # correlation: pass c1 + centered c1; magnitude c0-c2: pass c2 + magnitude; max: none; c3-c5: 3 passes + magnitude
    assert got.new_groups[0].tolist() == [2, 0, 0, 1, 0, 2, 2, 0, 4]
    assert np.all(got.status == 0)


@pytest.mark.parametrize("q", [False, True])
def test_status_codes(q: bool) -> None:
    from pyruntime._frugalml_c import ffi, lib

    dtype = np.int16 if q else np.float32
    x = np.ones((3, 5), dtype)
    assert _one(x, cat.FeatureSpec(7, 0, param=4), q)[0] == cat.E_WINDOW  # lag 4 needs 6 samples
    assert _one(x, cat.FeatureSpec(8, 0, param=0, param2=8), q)[0] == cat.E_WINDOW  # 8 bands need nfft 16
    assert _one(x, cat.FeatureSpec(0, 3), q)[0] == cat.E_CHANNEL
    assert _one(x, cat.FeatureSpec(11, 1), q)[0] == cat.E_CHANNEL  # c1..c3
    assert _one(x, cat.FeatureSpec(40, 0), q)[0] == cat.E_FEATURE
    assert _one(x, cat.FeatureSpec(7, 0, param=0), q)[0] == cat.E_FEATURE
    assert _one(x, cat.FeatureSpec(8, 0, param=2, param2=2), q)[0] == cat.E_FEATURE
    assert _one(np.ones((1, 2000), dtype), cat.FeatureSpec(9, 0), q)[0] == cat.E_WINDOW  # over FM_FEAT_MAX_FFT
    assert _one(np.ones((1, 2000), dtype), cat.FeatureSpec(1, 0), q)[0] == 0
    if not q:
        for bad in (np.nan, np.inf, -np.inf):
            y = x.copy()
            y[1, 2] = bad
            assert _one(y, cat.FeatureSpec(0, 1))[0] == cat.E_SAMPLE
            assert _one(y, cat.FeatureSpec(0, 0))[0] == 0
            assert _one(y, cat.FeatureSpec(11, 0))[0] == cat.E_SAMPLE
        big = np.array([[3e38, 3.1e38, 3e38, 3e38]], np.float32)  # the sum (so the mean) overflows
        assert _one(big, cat.FeatureSpec(0, 0))[0] == cat.E_VALUE
        assert _one(np.full((1, 4), 3e38, np.float32), cat.FeatureSpec(0, 0)) == (0, np.float32(3e38))  # constant
    # begin: bad sizes; a context of the other numeric
    ctx = ffi.new("fm_feat_ctx *")
    scratch = ffi.new("uint64_t[]", 4096)
    buf = np.zeros(12, np.float32)
    xp = ffi.cast("float *", ffi.from_buffer(buf))
    size = lib.fm_feat_scratch_size(3, 4)
    assert lib.fm_feat_begin(ctx, xp, 3, 4, scratch, size - 1) == lib.FM_E_ARG
    assert lib.fm_feat_begin(ctx, xp, 0, 4, scratch, 4096 * 8) == lib.FM_E_ARG
    assert lib.fm_feat_begin(ctx, xp, 3, 0, scratch, 4096 * 8) == lib.FM_E_ARG
    assert lib.fm_feat_begin(ctx, xp, 3, lib.FM_FEAT_MAX_LEN + 1, scratch, 4096 * 8) == lib.FM_E_ARG
    assert cat.MAX_LEN == lib.FM_FEAT_MAX_LEN  # the host refuses the windows the device refuses
    assert lib.fm_feat_begin(ctx, ffi.NULL, 3, 4, scratch, size) == lib.FM_E_ARG
    odd = ffi.cast("char *", scratch) + 4  # uint64_t words at an address of 4 mod 8
    assert lib.fm_feat_begin(ctx, xp, 3, 4, odd, size) == lib.FM_E_ARG  # round 65: UB, not an error, before
    assert lib.fm_feat_value(ctx, cbind.c_specs([cat.FeatureSpec(0, 0)]), ffi.new("float *")) == lib.FM_E_ARG
    assert lib.fm_feat_begin(ctx, xp, 3, 4, scratch, size) == lib.FM_OK
    spec = cbind.c_specs([cat.FeatureSpec(0, 0)])
    value = ffi.new("float *")
    assert lib.fm_feat_q15_value(ctx, spec, value) == lib.FM_E_ARG
    assert lib.fm_feat_value(ctx, spec, ffi.NULL) == lib.FM_E_ARG
    assert lib.fm_feat_value(ctx, spec, value) == lib.FM_OK


def test_catalog_facts_equal_the_c() -> None:
    from pyruntime._frugalml_c import ffi, lib

    groups = ffi.new("fm_feat_group[4]")
    cases = [cat.FeatureSpec(i, 1, channel2=3) for i in range(14)]
    cases += [cat.FeatureSpec(7, 0, param=lag) for lag in (1, 9, 100)]
    cases += [cat.FeatureSpec(8, 0, param=0, param2=b) for b in (1, 2, 3, 4, 5, 8, 100, 512, 513)]
    cases += [cat.FeatureSpec(8, 0, param=3, param2=3), cat.FeatureSpec(13, 2, channel2=2), cat.FeatureSpec(11, 2)]
    cases += [cat.FeatureSpec(i, 2, param=1 if i == 8 else 0, param2=8 if i == 8 else 0, decimate=d)
              for i in (8, 9, 10) for d in (2, 3, 4, 5, 8, 16)]
    cases += [cat.FeatureSpec(i, 0, param=1, decimate=2) for i in (0, 1, 7, 11, 13)]
    for f in cases:
        spec = cbind.c_specs([f])
        assert lib.fm_feat_check(spec, 5) == f.check(5), f
        if f.check(5) != 0:
            continue
        assert lib.fm_feat_min_len(spec) == f.min_len(), f
        n = lib.fm_feat_groups(spec, groups)
        assert [(groups[i].kind, groups[i].channel) for i in range(n)] == list(f.groups()), f
    assert lib.FM_GROUP_SPECTRUM_D8 == cat.SPECTRUM_D8 and lib.FM_GROUP_N_KINDS == len(cat.GROUP_NAMES)
    assert lib.FM_FEAT_N_IDS == len(cat.KINDS) and lib.FM_FEAT_MAX_FFT == cat.MAX_FFT == twiddle.MAX_FFT
    assert lib.FM_FEAT_MAX_LEN == cat.MAX_LEN and lib.FM_FEAT_MAX_CHANNELS == cat.MAX_CHANNELS


def test_isqrt32_is_the_floor_square_root() -> None:
    from pyruntime._frugalml_c import lib

    rng = np.random.default_rng(4)
    values = [0, 1, 2, 3, 4, 2**32 - 1, 2**31, 3 * 2**30, 65535**2, 65536**2 - 1]
    values += [int(v) for v in rng.integers(0, 2**32, 5000)]
    assert [lib.fm_feat_isqrt32(v) for v in values] == [math.isqrt(v) for v in values]


def test_features_of_an_overflowed_intermediate_are_value_errors_in_c_and_numpy() -> None:
    """A spectrum whose power overflows float32 gave band energy and centroid 0 and a wrong dominant frequency,
    all with status OK (a 0.375 cycles-a-sample sine read 0.125 at amplitude 1e30); the crossing rate of a
    channel whose mean overflowed read 0, OK (round 61's probe). Now FM_E_VALUE in C and in the reference alike,
    and the same sine at amplitude 1 still reads right."""
    t = np.arange(64)
    names = ["c0__fft_dominant_frequency", "c0__fft_centroid", "c0__fft_band_energy__band_2__bands_4",
             "c0__mean_crossing_rate", "c0__autocorrelation__lag_1", "c0_c1__correlation"]
    spec_list = [cat.parse_name(n) for n in names]
    for amp, want_ok in ((1.0, True), (1e30, False), (3e38, False)):
        sine = (amp * np.sin(2 * np.pi * 0.375 * t)).astype(np.float32)
        x = np.stack([sine, sine[::-1]])[None]
        rv, rs = f32.values(x, spec_list)
        c = cbind.run(x, spec_list)
        assert np.array_equal(c.status, rs) and np.array_equal(_bits(c.values), _bits(rv)), (amp, c.status, rs)
        spectral = rs[0, :3]
        if want_ok:
            assert np.all(rs == cat.OK) and rv[0, 0] == np.float32(0.375) and rv[0, 2] > np.float32(0.99)
        else:
            assert np.all(spectral == cat.E_VALUE), (amp, rs)
    const = np.full((1, 2, 16), 3e38, np.float32)  # the mean overflows: so does everything centred on it
    const[..., ::2] = 3.1e38  # (not constant: a constant window's mean is its value, round 66)
    rv, rs = f32.values(const, spec_list)
    c = cbind.run(const, spec_list)
    assert np.array_equal(c.status, rs) and np.all(rs[0, 3:] == cat.E_VALUE), rs
