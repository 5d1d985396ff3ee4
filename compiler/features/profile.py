"""Feature costs measured on the target: ``frugalml profile-costs --on TARGET`` counts the instructions of each
group of a feature plan (a channel's pass, centred pass, spectrum; a 3-axis magnitude) and of each feature's own
part, at several window lengths, and writes the costs CSV with groups (compiler/costs.py): a group's cost is paid
once per prediction, a feature's own cost each time it is read.

How: runtime_c/tools/fm_feat_profile.c runs steps from a generated header; each step starts a window, computes
prime features unmeasured and calls one feature between two calls of ``fm_profile_mark``. Counted on the host by
valgrind callgrind (``--dump-before=fm_profile_mark``: one dump per mark), on Cortex-M (qemu-system-arm) and the Pi
(qemu-aarch64) by the repository's TCG plugin (runtime_c/tools/qemu_insn_count.c with ``mark=ADDR``). A feature's
own cost is a repeated call (its groups done); a group's cost is a probe feature's first call after the group's
dependencies ran, less the probe's own cost. Counts are exact and repeat run to run; the worst of several random
windows per length is kept, and c0 + c1 n + c2 n^2 (n = window length) is fitted to the lengths (non-negative
least squares), or the costs at one length are written with ``at_length``.

The window's start (fm_feat_begin: the feature context reset that every prediction reading a feature pays once,
whatever it reads) is counted too, and written as one more group, ``window__start``, that every feature uses: the
cost model's extraction of a prediction is then the window's start, each group once and each own part.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from compiler.costs import START_GROUP, cost_text  # START_GROUP: the window's start, a group every feature uses
from compiler.skyline.profile_costs import fit_polynomial
from pyruntime.build_cffi import runtime_include_flags, runtime_sources
from pyruntime.features import catalog as cat
from pyruntime.features.groups import scratch_bound
from pyruntime.features.plan import FeaturePlan
from pyruntime.outfiles import write_file

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime_c"
TOOL = RUNTIME / "tools" / "fm_feat_profile.c"
PLUGIN = RUNTIME / "build" / "qemu_insn_count.so"
CORTEX_M = ("cortex-m0", "cortex-m3", "cortex-m4f", "cortex-m33")
TARGETS = ("host", *CORTEX_M, "pi")
DEFAULT_LENGTHS = (32, 64, 128, 256)
NONE = 0xFFFF
ALL = 0xFFFE  # the plan's features in one context
START = 0xFFFD  # the window's start itself (fm_feat_begin)


class ProfileError(ValueError):
    """The profile cannot run (a missing tool, a plan it cannot measure); one line."""


@dataclass
class Step:
    window: int
    measured: int | None  # index into specs, ALL, or None
    primes: list[int]


@dataclass
class Profile:
    """Worst-case instructions per length: groups[g][i] and own[f][i] at lengths[i]."""

    plan: FeaturePlan
    lengths: list[int]
    groups: dict[tuple[int, int], list[float]]
    own: list[list[float]]
    target: str
    numeric: str
    measured_eager: list[float]  # every feature once in one context, counted as one step
    start: list[float] = field(default_factory=list)  # the window's start (fm_feat_begin), per length

    def eager(self) -> list[float]:
        """The cost model's instructions to compute every feature of the plan once per window: each group once
        plus each feature's own part, at each length (compare measured_eager)."""
        return [sum(g[i] for g in self.groups.values()) + sum(o[i] for o in self.own)
                for i in range(len(self.lengths))]


def _probe(group: tuple[int, int]) -> tuple[cat.FeatureSpec, list[cat.FeatureSpec]]:
    """A feature whose first call runs exactly this group once its prime features ran."""
    kind, c = group
    if kind == cat.PASS:
        return cat.FeatureSpec(0, c), []
    if kind == cat.CENTERED:
        return cat.FeatureSpec(1, c), [cat.FeatureSpec(0, c)]
    if kind in cat.SPECTRUM_KINDS:
        return cat.FeatureSpec(9, c, decimate=cat.SPECTRUM_KINDS[kind]), [cat.FeatureSpec(0, c)]
    return cat.FeatureSpec(12, c), [cat.FeatureSpec(0, c + i) for i in range(3)]


def plan_steps(plan: FeaturePlan, n_windows: int) -> tuple[list[cat.FeatureSpec], list[Step], list[tuple]]:
    """Specs, steps and what each step measures: ('none',), ('own', f) or ('probe', group) per window."""
    specs: list[cat.FeatureSpec] = []
    index: dict[cat.FeatureSpec, int] = {}

    def at(f: cat.FeatureSpec) -> int:
        if f not in index:
            index[f] = len(specs)
            specs.append(f)
        return index[f]

    steps: list[Step] = []
    what: list[tuple] = []
    probes = {g: _probe(g) for g in plan.groups()}
    extra = [p for p, _ in probes.values() if p not in plan.features]
    for f in plan.features:  # the plan's features are specs 0 .. n-1 (the ALL step computes them)
        at(f)
    for w in range(n_windows):
        steps.append(Step(w, None, []))
        what.append(("none", w))
        steps.append(Step(w, ALL, []))
        what.append(("all", w))
        steps.append(Step(w, START, []))
        what.append(("start", w))
        for f in (*plan.features, *dict.fromkeys(extra)):
            steps.append(Step(w, at(f), [at(f)]))
            what.append(("own", w, f))
        for g, (p, primes) in probes.items():
            steps.append(Step(w, at(p), [at(q) for q in primes]))
            what.append(("probe", w, g, p))
    return specs, steps, what


def write_header(path: Path, plan: FeaturePlan, windows: list[np.ndarray], q15: bool, specs: list[cat.FeatureSpec],
                 steps: list[Step]) -> None:
    samples: list[int] = []
    rows = []
    for x in windows:
        rows.append(f"{{{x.shape[1]}u, {len(samples)}u}}")
        samples.extend(int(v) for v in (x.ravel() if q15 else x.astype(np.float32).ravel().view(np.uint32)))
    primes: list[int] = []
    step_rows = []
    for s in steps:
        step_rows.append(f"{{{s.window}u, {NONE if s.measured is None else s.measured}u, {len(primes)}u, "
                         f"{len(s.primes)}u}}")
        primes.extend(s.primes)
    longest = max(x.shape[1] for x in windows)
    # the largest need over the lengths, not the longest's: past FM_FEAT_MAX_FFT samples a window has no spectrum
    # of its own (nor, past 2,049, of its means of 2), so 1,025 samples need less scratch than 1,024
    scratch = max(scratch_bound(plan.n_channels, x.shape[1]) for x in windows)
    fmt = "{}" if q15 else "0x{:08x}u"
    data = ", ".join(fmt.format(v) for v in samples)
    text = [
        "/* generated by compiler/features/profile.py */",
        f"#define FP_N_WINDOWS {len(windows)}u", f"#define FP_N_CHANNELS {plan.n_channels}u",
        f"#define FP_MAX_SAMPLES {plan.n_channels * longest}u", f"#define FP_SCRATCH_WORDS {scratch // 8 + 1}u",
        f"#define FP_Q15 {int(q15)}", f"#define FP_N_STEPS {len(steps)}u",
        f"#define FP_N_PLAN {len(plan.features)}u",
        "static const uint32_t fp_windows[][2] = {" + ", ".join(rows) + "};",
        f"static const uint32_t fp_f32_bits[] = {{{'0u' if q15 else data}}};",
        f"static const int16_t fp_q15[] = {{{data if q15 else '0'}}};",
        "static const fm_feat_spec fp_specs[] = {" + ", ".join(
            f.c_init() for f in specs) + "};",
        "static const uint16_t fp_steps[][4] = {" + ", ".join(step_rows) + "};",
        "static const uint16_t fp_primes[] = {" + (", ".join(map(str, primes)) or "0") + "};",
    ]
    path.write_text("\n".join(text) + "\n")


def _require(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise ProfileError(f"profile-costs needs {', '.join(missing)} (run `make toolchains`)")


def _run(args: list[str], what: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env)
    if p.returncode != 0:  # the last line of the program's own, not valgrind's "==pid==" summary
        lines = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if not ln.startswith("==")]
        raise ProfileError(f"{what} failed (exit {p.returncode}): {lines[-1] if lines else 'it printed nothing'}")
    return p


def _symbol(nm: str, exe: Path) -> str:
    out = _run([nm, str(exe)], f"{nm} {exe.name}").stdout
    m = re.search(r"^([0-9a-fA-F]+) T fm_profile_mark$", out, re.M)
    if m is None:
        raise ProfileError(f"{exe}: no fm_profile_mark symbol")
    return m.group(1)


def _plugin() -> Path:
    _run(["make", "-s", "-C", str(RUNTIME), "qemu-plugin"], "building the QEMU counting plugin")
    return PLUGIN


def _shared(runtime_obj: Path | None) -> list[str]:
    """make's RUNTIME_OBJ: the compiled runtime shared by several builds (none: in the build folder)."""
    return [] if runtime_obj is None else [f"RUNTIME_OBJ={runtime_obj}"]


def _qemu_marks(out: Path) -> list[int]:
    marks = [int(v) for v in re.findall(r"^mark (\d+)$", out.read_text(), re.M)]
    if "lost_marks" in out.read_text():
        raise ProfileError("too many marks for the counting plugin: profile fewer lengths or windows")
    return marks


HOST_FLAGS = ("-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-pedantic")


def _host_objects(folder: Path) -> list[str]:
    """The runtime's sources compiled for the host into folder, once (the same flags and link order as the sources
    given to one gcc command: the same code): several builds of one run share them."""
    src = RUNTIME / "src"
    objs = []
    for c in runtime_sources():
        obj = folder / (str(c.relative_to(src).with_suffix(".o")).replace("/", "__"))
        if not obj.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            _run(["gcc", *HOST_FLAGS, *runtime_include_flags(), "-c", str(c), "-o", str(obj)],
                 "building the runtime for the profile program")
        objs.append(str(obj))
    return objs


def count_steps(header: Path, target: str, work: Path, n_steps: int, app: Path = TOOL,
                runtime_obj: Path | None = None) -> list[int]:
    """Instructions of each step's measured call (marks' overhead included): app (the profile program by default)
    built with FM_MODEL_HEADER=header calls fm_profile_mark twice a step. runtime_obj: a folder for the compiled
    runtime, shared by several calls (bench's windows of several lengths); None: compiled afresh in work."""
    if target == "host":
        _require("gcc", "valgrind")
        exe = work / "fm_feat_profile"
        srcs = [str(p) for p in runtime_sources()] if runtime_obj is None else _host_objects(runtime_obj)
        _run(["gcc", *HOST_FLAGS, *runtime_include_flags(), f"-DFM_MODEL_HEADER=\"{header}\"", str(app), *srcs,
              "-o", str(exe)], "building the profile program")
        out = work / "cg.out"
        # bind libc symbols at load: the first memset (GCC turns zeroing loops into calls) would otherwise pay
        # the dynamic linker's lazy binding inside a measured call
        _run(["valgrind", "--tool=callgrind", "--dump-before=fm_profile_mark", f"--callgrind-out-file={out}",
              str(exe)], "the profile program under valgrind callgrind (exit 1: a window or feature call the C "
             "library refused)", env={**os.environ, "LD_BIND_NOW": "1"})
        counts = []
        for i in range(1, 2 * n_steps + 1):
            text = (work / f"cg.out.{i}").read_text()
            m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
            if m is None:
                raise ProfileError(f"callgrind dump {i}: no totals")
            counts.append(int(m.group(1)))
        return counts[1::2]
    if target in CORTEX_M:
        _require("arm-none-eabi-gcc", "qemu-system-arm")
        folder, nm = ROOT / "firmware_examples" / "cortex_m", "arm-none-eabi-nm"
        build = work / "build"
        base = ["make", "-s", "-C", str(folder), f"RUNTIME={RUNTIME}", f"MODEL={header}", f"APP={app}",
                f"TARGET={target}", f"BUILD={build}", "QEMU_TIMEOUT=600", *_shared(runtime_obj)]
        if target == "cortex-m0":
            base.append("MACHINE=mps2-an385")  # M0 code on a machine with the RAM for the windows (micro:bit: 16 KB)
        _run([*base, "all"], f"building the profile program for {target}")
        mark = _symbol(nm, build / "app.elf")
        out = work / "insns"
        _run([*base, f"QEMU_PLUGIN={_plugin()},out={out},mark={mark}", "run"], f"qemu-system-arm ({target})")
    else:
        _require("aarch64-linux-gnu-gcc", "qemu-aarch64")
        folder, build = ROOT / "firmware_examples" / "raspberry_pi", work / "build"
        base = ["make", "-s", "-C", str(folder), f"RUNTIME={RUNTIME}", f"MODEL={header}", f"APP={app}",
                "CROSS=aarch64-linux-gnu-", f"BUILD={build}", *_shared(runtime_obj)]
        _run([*base, "all"], "building the profile program for the Pi (aarch64)")
        mark = _symbol("aarch64-linux-gnu-nm", build / "fm_pi")
        out = work / "insns"
        _run([*base, f"RUNNER=qemu-aarch64 -plugin {_plugin()},out={out},mark={mark}", "run"], "qemu-aarch64")
    marks = _qemu_marks(out)
    if len(marks) != 2 * n_steps:
        raise ProfileError(f"expected {2 * n_steps} marks, the plugin wrote {len(marks)}")
    return [marks[2 * k + 1] - marks[2 * k] for k in range(n_steps)]


def random_windows(n_channels: int, length: int, count: int, q15: bool, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed + length)
    out = []
    for _ in range(count):
        x = rng.normal(size=(n_channels, length)) * rng.uniform(0.1, 2.0, size=(n_channels, 1))
        out.append(np.clip(np.round(x * 8000), -32768, 32767).astype(np.int16) if q15 else x.astype(np.float32))
    return out


def profile(plan: FeaturePlan, target: str, lengths: list[int], numeric: str = "float32", n_windows: int = 3,
            seed: int = 0) -> Profile:
    if target not in TARGETS:
        raise ProfileError(f"unknown target {target!r} (use {', '.join(TARGETS)})")
    lengths = sorted(set(lengths))
    if not lengths or lengths[0] < plan.min_len or lengths[-1] > plan.max_len:
        raise ProfileError(f"window lengths must be {plan.min_len}..{plan.max_len} for the plan these lengths give "
                           f"(its features need at least {plan.min_len} samples; a spectrum has at most {cat.MAX_FFT} "
                           f"points; the default plan leaves out what the shortest length cannot afford), got "
                           f"{','.join(map(str, lengths))}")
    q15 = numeric == "q15"
    windows = [w for n in lengths for w in random_windows(plan.n_channels, n, n_windows, q15, seed)]
    specs, steps, what = plan_steps(plan, len(windows))
    with tempfile.TemporaryDirectory(prefix="fm_feat_profile_") as tmp:
        work = Path(tmp)
        header = work / "profile.h"
        write_header(header, plan, windows, q15, specs, steps)
        counts = count_steps(header, target, work, len(steps))
    base = {w[1]: c for w, c in zip(what, counts, strict=True) if w[0] == "none"}
    own_at: dict[tuple[int, cat.FeatureSpec], float] = {}
    probe_at: dict[tuple[int, tuple[int, int]], tuple[float, cat.FeatureSpec]] = {}
    for w, c in zip(what, counts, strict=True):
        if w[0] == "own":
            own_at[(w[1], w[2])] = c - base[w[1]]
        elif w[0] == "probe":
            probe_at[(w[1], w[2])] = (c - base[w[1]], w[3])
    groups = {g: [0.0] * len(lengths) for g in plan.groups()}
    own = [[0.0] * len(lengths) for _ in plan.features]
    measured = [0.0] * len(lengths)
    start = [0.0] * len(lengths)
    for w, c in zip(what, counts, strict=True):
        if w[0] == "all":
            measured[w[1] // n_windows] = max(measured[w[1] // n_windows], c - base[w[1]])
        elif w[0] == "start":
            start[w[1] // n_windows] = max(start[w[1] // n_windows], c - base[w[1]])
    for wi in range(len(windows)):
        li = wi // n_windows
        for j, f in enumerate(plan.features):
            own[j][li] = max(own[j][li], own_at[(wi, f)])
        for g in groups:
            total, probe_feature = probe_at[(wi, g)]
            groups[g][li] = max(groups[g][li], max(total - own_at[(wi, probe_feature)], 0.0))
    return Profile(plan, lengths, groups, own, target, numeric, measured, start)


def write_costs(path: Path, prof: Profile, at_length: int | None = None) -> None:
    """The costs CSV with groups: feature,c0,c1,c2,group (fitted over the lengths), or feature,cost,group at one
    length (at_length, evaluated on the fit)."""
    n = np.array(prof.lengths, dtype=np.float64)

    def coef(counts: list[float]) -> np.ndarray:
        return fit_polynomial(n, counts) if len(n) > 1 else np.array([counts[0], 0.0, 0.0])

    def fmt(c: np.ndarray) -> list[str]:
        if at_length is None:
            return [cost_text(v) for v in c]
        return [cost_text(c[0] + c[1] * at_length + c[2] * at_length * at_length)]

    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(["feature", "c0", "c1", "c2", "group"] if at_length is None else ["feature", "cost", "group"])
    start = [START_GROUP] if prof.start else []
    if prof.start:
        w.writerow([START_GROUP, *fmt(coef(prof.start)), ""])
    for g, counts in prof.groups.items():
        w.writerow([cat.group_name(g), *fmt(coef(counts)), ""])
    for f, counts in zip(prof.plan.features, prof.own, strict=True):
        w.writerow([f.name, *fmt(coef(counts)), ";".join([*start, *(cat.group_name(g) for g in f.groups())])])
    write_file(path, fh.getvalue())
