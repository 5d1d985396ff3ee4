"""Feature-library cases for the C-vs-reference tests: windows (float32 and q15, several channel counts and
lengths, with NaN/inf samples, constant channels, short windows), the features to evaluate (the default plan of 6
channels plus edge parameters and bad specs), the cases header that tests/c/feat_selftest.c runs, and the lines
the numpy reference expects from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pyruntime.features import catalog as cat
from pyruntime.features import f32, q15
from pyruntime.features.groups import scratch_bound
from pyruntime.features.plan import default_plan


@dataclass
class Window:
    x: np.ndarray  # (C, L) float32 or int16
    q15: bool


def specs() -> list[cat.FeatureSpec]:
    out = list(default_plan(6).features)
    out += [cat.FeatureSpec(7, 0, param=30), cat.FeatureSpec(8, 1, param=7, param2=8),
            cat.FeatureSpec(8, 2, param=0, param2=200), cat.FeatureSpec(13, 5, channel2=0),
            cat.FeatureSpec(11, 3), cat.FeatureSpec(11, 4),  # c4..c6: channel 6 only in wider windows
            cat.FeatureSpec(99, 0), cat.FeatureSpec(7, 0, param=0), cat.FeatureSpec(8, 0, param=4, param2=4),
            cat.FeatureSpec(13, 2, channel2=2)]
    # spectra of block means (long windows too: 1100 samples over 8 is 137), and two bad decimations
    out += [cat.FeatureSpec(9, 0, decimate=2), cat.FeatureSpec(10, 1, decimate=4), cat.FeatureSpec(9, 2, decimate=8),
            cat.FeatureSpec(8, 0, param=1, param2=4, decimate=4), cat.FeatureSpec(8, 5, param=3, param2=8, decimate=8),
            cat.FeatureSpec(10, 0, decimate=8), cat.FeatureSpec(8, 3, param=0, param2=2, decimate=2),
            cat.FeatureSpec(9, 0, decimate=3), cat.FeatureSpec(0, 1, decimate=2)]
    return out


def windows(seed: int = 7, small: bool = False) -> list[Window]:
    """A mix of lengths (1 .. 300 and 1100, over the FFT bound; small: 1 .. 64, for the 16 KB of RAM of the
    micro:bit) and channel counts (3, 6, 7)."""
    rng = np.random.default_rng(seed)
    out: list[Window] = []
    lengths = [64, 37, 1, 2, 5, 50] if small else [100, 64, 37, 1, 2, 5, 128, 300, 1100]
    for i, length in enumerate(lengths):
        n_ch = (6, 7, 3)[i % 3]
        scale = rng.uniform(0.001, 50.0, size=(n_ch, 1))
        t = np.arange(length)
        x = rng.normal(size=(n_ch, length)) * scale + np.sin(2 * np.pi * t * rng.uniform(0.02, 0.4) )
        out.append(Window(x.astype(np.float32), False))
        q = np.clip(np.round(rng.normal(size=(n_ch, length)) * rng.uniform(5, 30000, size=(n_ch, 1))),
                    -32768, 32767)
        out.append(Window(q.astype(np.int16), True))
    special = rng.normal(size=(6, 50)).astype(np.float32)
    special[1, 7] = np.nan
    special[4, 0] = np.inf
    special[2, :] = 3.25  # constant: zero variance and zero spectrum
    special[3, :10] = -0.0
    special[5, :] = 1e30  # squares overflow to inf: FM_E_VALUE where they are used
    out.append(Window(special, False))
    const = np.zeros((6, 40), np.int16)
    const[0, :] = -32768
    const[1, :] = 32767
    const[2, ::2] = -32768
    const[2, 1::2] = 32767
    out.append(Window(const, True))
    return out


def reference(w: Window, spec_list: list[cat.FeatureSpec]) -> list[tuple[int, int, int]]:
    """(status, new_groups, value bits) per feature, as the C prints them."""
    x = w.x[None]
    vals, status = (q15.values(x, spec_list) if w.q15 else f32.values(x, spec_list))
    bad = set() if w.q15 else {c for c in range(w.x.shape[0]) if not np.all(np.isfinite(w.x[c]))}
    done: set[tuple[int, int]] = set()
    out = []
    for j, f in enumerate(spec_list):
        st = int(status[0, j])
        new = 0
        if st not in (cat.E_FEATURE, cat.E_CHANNEL, cat.E_WINDOW):
            for g in f.groups():
                if g in done:
                    continue
                if g[0] == cat.PASS and g[1] in bad:
                    break
                done.add(g)
                new += 1
        bits = int(vals[0, j].view(np.uint32)) if st == cat.OK else 0
        out.append((st, new, bits))
    return out


def expected_lines(ws: list[Window], spec_list: list[cat.FeatureSpec]) -> list[str]:
    lines = []
    for i, w in enumerate(ws):
        for j, (st, new, bits) in enumerate(reference(w, spec_list)):
            lines.append(f"{i} {j} {st} {new} {bits:x}")
    return lines + ["done"]


def write_header(path: Path, ws: list[Window], spec_list: list[cat.FeatureSpec]) -> Path:
    rows, f_bits, q_vals = [], [], []
    max_samples, scratch = 1, 8
    for w in ws:
        n_ch, length = w.x.shape
        arr = q_vals if w.q15 else f_bits
        rows.append(f"{{{n_ch}u, {length}u, {int(w.q15)}u, {len(arr)}u}}")
        flat = w.x.ravel()
        arr.extend(int(v) for v in (flat if w.q15 else flat.view(np.uint32)))
        max_samples = max(max_samples, flat.size)
        scratch = max(scratch, scratch_bound(n_ch, length))

    def block(values: list[int], fmt: str) -> str:
        values = values or [0]
        return ",\n".join(", ".join(fmt.format(v) for v in values[i:i + 12]) for i in range(0, len(values), 12))

    text = [f"#define FT_N_WINDOWS {len(ws)}u", f"#define FT_N_SPECS {len(spec_list)}u",
            f"#define FT_MAX_SAMPLES {max_samples}u", f"#define FT_SCRATCH_WORDS {scratch // 8 + 1}u",
            "static const uint32_t ft_windows[][4] = {" + ", ".join(rows) + "};",
            "static const uint32_t ft_f32_bits[] = {\n" + block(f_bits, "0x{:08x}u") + "};",
            "static const int16_t ft_q15[] = {\n" + block(q_vals, "{}") + "};",
            "static const fm_feat_spec ft_specs[] = {\n" + ",\n".join(
                f"    {f.c_init()}" for f in spec_list) + "};"]
    path.write_text("/* generated by tests/feature_cases.py */\n" + "\n".join(text) + "\n")
    return path
