"""sigrok-cli backend and Linux energy counters: used when present, clean messages when absent."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from power_bench.cli import power
from power_bench.energy_counters import EnergyCounterSource, find_counters, select_counters
from power_bench.measure import Measurement, RunSettings
from power_bench.sigrok import SigrokSource, parse_sigrok_line
from power_bench.sources import MeterError

FAKE = ("import json, sys, time; s = float(sys.argv[1]); time.sleep(s); "
        "print(json.dumps({'predictions': 400, 'seconds': s}))")


def test_parse_sigrok_lines() -> None:
    r = parse_sigrok_line("P1: 123.400000 mA DC AUTO")
    assert r is not None and r.value == pytest.approx(0.1234) and r.unit == "A" and r.dc and r.auto
    r = parse_sigrok_line("P1: -0.512 A DC")
    assert r is not None and r.value == pytest.approx(-0.512)
    r = parse_sigrok_line("P1: 230.0 V AC RMS")
    assert r is not None and r.ac and r.unit == "V" and "RMS" in r.flags
    r = parse_sigrok_line("P1: inf A DC")
    assert r is not None and r.overload
    assert parse_sigrok_line("sr: serial: some log line") is None
    # sigrok-cli's units as it prints them: ohm sign U+2126, micro sign U+00B5, no AC/DC on ohms
    r = parse_sigrok_line("P1: 4.700 k\u2126 AUTO")
    assert r is not None and r.unit == "Ohm" and r.value == pytest.approx(4700.0) and not (r.ac or r.dc)
    r = parse_sigrok_line("P1: 2.200 \u00b5F AUTO")
    assert r is not None and r.unit == "F" and r.value == pytest.approx(2.2e-6)
    # prefixes beyond the decoders': a nano range below 1 nA, a mega range over 999 MOhm (round 62's fuzzing)
    r = parse_sigrok_line("P1: 686 pA DC")
    assert r is not None and r.unit == "A" and r.value == pytest.approx(686e-12) and r.dc
    r = parse_sigrok_line("P1: 3.242 G\u2126 AUTO")
    assert r is not None and r.unit == "Ohm" and r.value == pytest.approx(3.242e9)


def test_sigrok_absent_gives_clean_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MeterError, match="sigrok-cli was not found"):
        SigrokSource("uni-t-ut61e-ser", "/dev/ttyUSB0").open()
    r = CliRunner().invoke(power, ["read", "--meter", "sigrok:uni-t-ut61e-ser:/dev/ttyUSB0",
                                   "--samples", "1"])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: sigrok-cli was not found") and r.stderr.count("\n") == 1


def test_sigrok_backend_with_a_stand_in_sigrok_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "sigrok-cli"
    port = tmp_path / "ttyX"  # the port must exist: it is checked before sigrok-cli starts
    port.write_text("")
    script.write_text(f"#!{sys.executable}\n"
                      "import sys, time\n"
                      "if sys.argv[1:] == ['-L']:\n"
                      "    print('Supported hardware drivers:\\n  uni-t-ut61e-ser   UNI-T UT61E\\n')\n"
                      "    sys.exit(0)\n"
                      f"assert sys.argv[1:] == ['--driver', 'uni-t-ut61e-ser:conn={port}', '--continuous',"
                      " '-O', 'analog'], sys.argv\n"
                      "for line in ['P1: 123.400000 mA DC AUTO', 'noise', 'P1: -0.512000 A DC']:\n"
                      "    print(line, flush=True); time.sleep(0.01)\n"
                      "sys.exit(3)\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    r = CliRunner().invoke(power, ["read", "--meter", f"sigrok:uni-t-ut61e-ser:{port}", "--seconds", "10"])
    lines = r.stdout.strip().splitlines()
    assert [" ".join(line.split()[:3]) for line in lines] == ["0.1234 A DC", "-0.512 A DC"]
    assert r.exit_code == 1 and "sigrok-cli exited with code 3" in r.stderr
    assert "unparsed lines: 1" in r.stderr
    r = CliRunner().invoke(power, ["read", "--meter", f"sigrok:uni-t-ut61d-ser:{port}", "--seconds", "10"])
    assert r.exit_code == 2 and "sigrok-cli has no driver 'uni-t-ut61d-ser'" in r.stderr, r.output


def _fake_sysfs(root: Path) -> Path:
    rapl = root / "powercap" / "intel-rapl:0"
    (rapl / "intel-rapl:0:0").mkdir(parents=True)
    (rapl / "name").write_text("package-0\n")
    (rapl / "energy_uj").write_text("1000\n")
    (rapl / "max_energy_range_uj").write_text("262143328850\n")
    (rapl / "intel-rapl:0:0" / "energy_uj").write_text("5\n")
    sub = root / "powercap" / "intel-rapl:0:0"  # sub-zones also appear at top level in sysfs
    sub.mkdir()
    (sub / "energy_uj").write_text("5\n")
    hw = root / "hwmon" / "hwmon0"
    hw.mkdir(parents=True)
    (hw / "name").write_text("ina219\n")
    (hw / "power1_input").write_text("2000000\n")
    return hw / "power1_input"


def test_energy_counters_found_and_skipped_cleanly(tmp_path: Path) -> None:
    _fake_sysfs(tmp_path)
    names = [c.name for c in find_counters(tmp_path)]
    assert names == ["powercap:intel-rapl:0:package-0", "hwmon:ina219:power1_input"]
    assert [c.name for c in select_counters("hwmon", tmp_path)] == ["hwmon:ina219:power1_input"]
    assert find_counters(tmp_path / "nothing") == []
    with pytest.raises(MeterError, match="no energy counters found"):
        select_counters("powercap", tmp_path / "nothing")


@pytest.mark.skipif(Path("/sys/class/powercap").exists(), reason="this machine has powercap counters")
def test_cli_powercap_absent_exit_2() -> None:
    r = CliRunner().invoke(power, ["read", "--meter", "powercap", "--samples", "1"])
    assert r.exit_code == 2 and "no energy counters found" in r.stderr


def test_energy_counter_wraparound(tmp_path: Path) -> None:
    _fake_sysfs(tmp_path)
    zone = tmp_path / "powercap" / "intel-rapl:0" / "energy_uj"
    zone.write_text("262143328000\n")  # just below the wrap point
    source = EnergyCounterSource(select_counters("powercap", tmp_path), interval=0.01)
    source.open()
    t_open = source._last[0]  # when open() read the counter (monotonic clock, as the samples' t)
    zone.write_text("150\n")  # wrapped: 850 + 150 = 1000 uJ since the last read
    samples = source.poll(0.05)
    assert samples and samples[0].reading is not None
    assert samples[0].reading.unit == "W"
    # exactly 1000 uJ over the time between the two reads (a missed wrap would give a negative or a huge value)
    assert samples[0].reading.value == pytest.approx(1000e-6 / (samples[0].t - t_open), rel=1e-12)


def test_measurement_in_watts_from_hwmon_power_sensor(tmp_path: Path) -> None:
    """A power sensor (W) needs no --volts: energy = (mean load W - mean idle W) x seconds / predictions."""
    power_file = _fake_sysfs(tmp_path)
    lock = threading.Lock()

    def on_phase(phase: str) -> None:  # atomic replace, as a sysfs read never sees a half-written value
        with lock:
            tmp = power_file.with_suffix(".tmp")
            tmp.write_text("3500000\n" if phase == "A" else "2000000\n")
            os.replace(tmp, power_file)

    source = EnergyCounterSource(select_counters("hwmon", tmp_path), interval=0.01)
    source.open()
    st = RunSettings(volts=None, idle_seconds=0.4, min_samples=15, settle_seconds=0.05)
    s = Measurement(source, [("A", "m")], "d", lambda m, d, sec: [sys.executable, "-c", FAKE, f"{sec:.3f}"],
                    st, tmp_path / "run", on_phase).run()
    assert s["status"] == "ok", s["errors"]
    m = s["models"]["A"]
    expected = 1.5 * m["seconds"] / 400
    assert m["energy_per_prediction_j"] == pytest.approx(expected, rel=1e-9)
    assert s["unit"] == "W"
