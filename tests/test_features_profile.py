"""profile-costs --on TARGET: instructions of each group and each feature's own part of the C feature library,
counted by callgrind (host) or the QEMU plugin's marks (Cortex-M, Pi), written as a costs CSV with groups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from compiler.costs import load_costs
from compiler.features.profile import START_GROUP, Profile, profile, write_costs
from pyruntime.features import catalog as cat
from pyruntime.features.plan import from_names
from tests.firmware_tools import require_tools

NAMES = ["c0__mean", "c0__standard_deviation", "c1__fft_centroid", "c1__fft_band_energy__band_0__bands_4",
         "c0_c1_c2__magnitude_mean", "c0_c2__correlation", "c2__autocorrelation__lag_4"]
PLAN = from_names(NAMES, 3, "test plan")


@pytest.mark.parametrize("target", ["host", "cortex-m3", "pi"])
def test_profile_counts_groups_and_features(tmp_path: Path, target: str) -> None:
    require_tools(*{"host": ("gcc", "valgrind"), "cortex-m3": ("arm-none-eabi-gcc", "qemu-system-arm"),
                    "pi": ("aarch64-linux-gnu-gcc", "qemu-aarch64")}[target])
    prof = profile(PLAN, target, [32, 128], n_windows=2)
    assert set(prof.groups) == set(PLAN.groups())
    pass0 = prof.groups[(cat.PASS, 0)]
    spectrum = prof.groups[(cat.SPECTRUM, 1)]
    # a channel's pass is linear in the window: 4x the samples, a little under 4x the instructions (a fixed part)
    assert 3.3 < pass0[1] / pass0[0] < 4.0
    assert spectrum[1] > 4 * spectrum[0] > 4 * pass0[0]  # an FFT costs more than a pass, and grows faster
    own = dict(zip(NAMES, prof.own, strict=True))
    assert own["c0__mean"][0] == own["c0__mean"][1]  # a mean read from its group does not depend on the length
    assert own["c2__autocorrelation__lag_4"][1] > 3 * own["c2__autocorrelation__lag_4"][0] > 0
    # the cost model (each group once + each feature's own part) equals the counted extraction of the whole plan
    for model, counted in zip(prof.eager(), prof.measured_eager, strict=True):
        assert abs(model / counted - 1) < 0.02, (model, counted)
    again = profile(PLAN, target, [32, 128], n_windows=2)
    assert again.groups == prof.groups and again.own == prof.own and again.start == prof.start  # counts repeat
    out = tmp_path / "costs.csv"
    write_costs(out, prof)
    costs = load_costs(out, NAMES)
    # the window's start is one more group, used by every feature: paid once by a prediction that reads anything
    assert costs.group_names == (START_GROUP, *(cat.group_name(g) for g in PLAN.groups()))
    assert all(0 < v < prof.eager()[0] / 10 for v in prof.start), prof.start
    for i, n in enumerate(prof.lengths):  # the fit reproduces the counts (two lengths: exact up to rounding)
        assert costs.cost_of(list(range(len(NAMES))), size=n) == pytest.approx(prof.eager()[i] + prof.start[i],
                                                                               rel=0.02)
        assert costs.cost_of([0], size=n) == pytest.approx(prof.start[i] + sum(prof.groups[(cat.PASS, 0)][i:i + 1])
                                                           + prof.own[0][i], rel=0.02)


def test_square_roots_take_the_cores_instructions() -> None:
    """fm_feat_sqrtf uses the FPU's correctly rounded square root where there is one (same bits as the C routine:
    tests/test_features_targets.py), so the 3-axis magnitude, a square root per sample, costs on the Cortex-M4F a
    fraction of the Cortex-M3's digit-by-digit routine. Budget: 40 instructions per sample (34 measured; the C
    routine: about 270), so that it cannot creep back."""
    require_tools("arm-none-eabi-gcc", "qemu-system-arm")
    plan = from_names(["c0_c1_c2__magnitude_mean"], 3, "test plan")
    n = 128
    m4f = profile(plan, "cortex-m4f", [n], n_windows=1).groups[(cat.MAGNITUDE, 0)][0]
    m3 = profile(plan, "cortex-m3", [n], n_windows=1).groups[(cat.MAGNITUDE, 0)][0]
    assert m4f <= 40 * n, m4f
    assert m3 > 4 * m4f, (m3, m4f)
    # q15 takes integer roots: Newton's iteration on the M3 (CLZ and UDIV; 57 a sample measured), bit by bit on
    # the M0 (neither)
    m3q = profile(plan, "cortex-m3", [n], n_windows=1, numeric="q15").groups[(cat.MAGNITUDE, 0)][0]
    m0q = profile(plan, "cortex-m0", [n], n_windows=1, numeric="q15").groups[(cat.MAGNITUDE, 0)][0]
    assert m3q <= 64 * n and m0q > 2 * m3q, (m3q, m0q)


def test_cli_writes_costs_at_one_length(tmp_path: Path) -> None:
    require_tools("gcc", "valgrind")
    plan = tmp_path / "plan.txt"
    plan.write_text("\n".join(NAMES) + "\n")
    out = tmp_path / "c.csv"
    r = CliRunner().invoke(cli, ["profile-costs", "--on", "host", "--channels", "3", "--plan", str(plan),
                                 "--lengths", "50", "--windows", "1", "--at-length", "50", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "every feature once (counted)" in r.output
    costs = load_costs(out, NAMES)
    assert costs.is_constant and costs.has_groups
    assert np.all(costs.at(0) > 0)


def test_cli_counts_lengths_on_both_sides_of_the_fft_bound(tmp_path: Path) -> None:
    """1,000 and 2,000 samples: the default plan for both has no spectrum of the window's own, and the shorter
    window needs more scratch than the longer (the C lays out its 1,024-point spectrum, which 2,000 samples have
    not); the profile program's scratch is the largest need over its windows, not the longest window's."""
    require_tools("gcc", "valgrind")
    out = tmp_path / "c.csv"
    r = CliRunner().invoke(cli, ["profile-costs", "--on", "host", "--channels", "1", "--lengths", "1000,2000",
                                 "--windows", "1", "--at-length", "1500", "-o", str(out)])
    assert r.exit_code == 0, r.output
    plan_names = [ln.split(",")[0] for ln in out.read_text().splitlines()[1:]]
    assert "c0__fft_centroid__decimate_2" in plan_names and "c0__fft_centroid" not in plan_names


def test_failed_program_is_named_by_its_own_last_line() -> None:
    from compiler.features.profile import ProfileError, _run  # noqa: PLC0415 - the helper alone

    script = "echo '==7== Callgrind' >&2; echo 'scratch too small' >&2; echo '==7== I   refs: 12' >&2; exit 1"
    with pytest.raises(ProfileError, match=r"^the program failed \(exit 1\): scratch too small$"):
        _run(["sh", "-c", script], "the program")
    with pytest.raises(ProfileError, match="it printed nothing"):
        _run(["sh", "-c", "echo '==7== I   refs: 12' >&2; exit 1"], "the program")


@pytest.mark.parametrize(("args", "message"), [
    (["--on", "host"], "--on needs --channels"),
    # the basic plan's lag-4 autocorrelation needs 6 samples (the default plan leaves it out below 6 since round 64)
    (["--on", "host", "--channels", "3", "--plan", "basic", "--lengths", "4"], "window lengths must be"),
    (["--on", "host", "--channels", "3", "--lengths", "x"], "comma-separated window lengths of at least 1 sample"),
    (["--on", "host", "--channels", "1", "--lengths", "32,64", "--at-length", "2000"], "add 2000 to --lengths"),
    (["--on", "host", "--channels", "1", "--lengths", "32,64", "--at-length", "10"], "counted, 32..64"),
    # the named set basic keeps the window's own spectrum: 1,024 samples at most (the default plan adapts)
    (["--on", "host", "--channels", "1", "--plan", "basic", "--lengths", "2000"],
     "must be 6..1024 for the plan these lengths give"),
    # round 65: a traceback from the default plan of no features (0), and empty items taken
    (["--on", "host", "--channels", "2", "--lengths", "0"], "comma-separated window lengths of at least 1 sample"),
    (["--on", "host", "--channels", "2", "--lengths", "-5"], "comma-separated window lengths of at least 1 sample"),
    (["--on", "host", "--channels", "2", "--lengths", "64,,"], "comma-separated window lengths of at least 1"),
    (["--on", "host", "--channels", "2", "--plan", "nosuchset"], "neither a named set"),
    ([], "give FEATURES_FILE"),
])
def test_cli_errors(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "c.csv"
    r = CliRunner().invoke(cli, ["profile-costs", *args, "-o", str(out)])
    assert r.exit_code == 2 and message in r.output and not out.exists(), r.output


def test_costs_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """write_costs builds the CSV before it writes (pyruntime.outfiles.write_file): a profile that cannot be
    written (here one own-cost row short of the plan's features) leaves an existing costs file as it was."""
    plan = from_names(["c0__mean", "c0__maximum"], 1, "test")
    out = tmp_path / "c.csv"
    write_costs(out, Profile(plan, [32], {}, [[10.0], [12.0]], "host", "float32", [22.0]), at_length=32)
    before = out.read_text()
    assert before.splitlines()[1:] == ["c0__mean,10,c0__pass", "c0__maximum,12,c0__pass"]
    with pytest.raises(ValueError):
        write_costs(out, Profile(plan, [32], {}, [[10.0]], "host", "float32", [10.0]), at_length=32)
    assert out.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.csv"]
