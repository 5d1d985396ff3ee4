"""The measurement protocol end to end: emulated meter on a real pty, fake workload in a subprocess."""

from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_work import strict_json
from click.testing import CliRunner

from power_bench.cli import power
from power_bench.emulator import CycleValues, Emulator, PhaseProfile
from power_bench.measure import Measurement, RunSettings
from power_bench.meters import find_meter
from power_bench.reading import Quantity, parse_quantity
from power_bench.sources import SerialSource
from power_bench.workload import ArgvBuilder, WorkloadError, parse_report, run_workload, template_workload

ROOT = Path(__file__).resolve().parents[1]

PREDICTIONS = 1000
FAKE = ("import json, sys, time; s = float(sys.argv[1]); time.sleep(s); print('log line'); "
        f"print(json.dumps({{'predictions': {PREDICTIONS}, 'seconds': s}}))")


def fake_workload(model: str, data: str, seconds: float) -> list[str]:
    """Stands in for `python -m pyruntime.workload`: busy for `seconds`, reports a fixed prediction count."""
    return [sys.executable, "-c", FAKE, f"{seconds:.3f}"]


class AlternatingProfile(PhaseProfile):
    """Known current per phase with deterministic +-noise (alternating), so window means are exact-ish."""

    def __init__(self, levels: dict[str, Quantity], noise: float, every: dict[int, Quantity] | None = None):
        super().__init__(levels, 0.0)
        self.amp = noise
        self.n = 0
        self.every = every or {}

    def next(self) -> Quantity:
        self.n += 1
        for k, q in self.every.items():
            if self.n % k == 0:
                return q
        q = super().next()
        sign = 1 if self.n % 2 else -1
        return Quantity(q.value + sign * self.amp, q.unit, q.prefix)


def run_emulated(tmp_path: Path, profile: PhaseProfile, meter: str = "tenma-72-7730a", compare: bool = False,
                 settings: RunSettings | None = None, count: int | None = None, interval: float = 0.01,
                 workload: ArgvBuilder = fake_workload, garbage: float = 0.0) -> dict:
    m = find_meter(meter)
    emu = Emulator(m, profile, interval=interval, count=count, garbage=garbage, seed=3)
    emu.start()
    source = SerialSource(m, emu.path)
    source.open()
    models = [("A", "a.msgpack")] + ([("B", "b.msgpack")] if compare else [])
    st = settings or RunSettings(volts=5.0, idle_seconds=0.5, min_samples=15, settle_seconds=0.05)
    try:
        run = Measurement(source, models, "data.csv", workload, st, tmp_path / "run", profile.set_phase)
        return run.run()
    finally:
        source.close()
        emu.stop()


def levels(**kw: str) -> dict[str, Quantity]:
    return {k: parse_quantity(v) for k, v in kw.items()}


def truth(delta_amps: float, summary: dict, label: str = "A", volts: float = 5.0) -> float:
    m = summary["models"][label]
    return delta_amps * volts * m["seconds"] / m["predictions"]


@pytest.mark.parametrize("meter", ["tenma-72-7730a", "uni-t-ut61e"])
def test_known_answer_inside_confidence_interval(tmp_path: Path, meter: str) -> None:
    profile = AlternatingProfile(levels(idle="100mA", A="150mA"), noise=0.002)
    s = run_emulated(tmp_path, profile, meter)
    assert s["status"] == "ok", s["errors"]
    m = s["models"]["A"]
    expected = truth(0.050, s)
    lo, hi = m["ci95_j"]
    assert lo <= expected <= hi
    assert m["energy_per_prediction_j"] == pytest.approx(expected, rel=0.01)
    assert m["total_energy_per_prediction_j"] == pytest.approx(0.150 * 5 * m["seconds"] / m["predictions"],
                                                               rel=0.01)
    assert m["samples"] >= 15 and s["idle"]["samples"] >= 15
    assert m["predictions"] == PREDICTIONS


def test_compare_alternates_and_reports_ratio(tmp_path: Path) -> None:
    profile = AlternatingProfile(levels(idle="100mA", A="150mA", B="125mA"), noise=0.001)
    st = RunSettings(volts=5.0, idle_seconds=0.5, min_samples=15, settle_seconds=0.05, rounds=2)
    s = run_emulated(tmp_path, profile, compare=True, settings=st)
    assert s["status"] == "ok", s["errors"]
    assert [seg["label"] for seg in s["segments"]] == ["A", "B", "A", "B"]
    for label, delta in (("A", 0.050), ("B", 0.025)):
        lo, hi = s["models"][label]["ci95_j"]
        assert lo <= truth(delta, s, label) <= hi
    r = s["ratio"]
    assert r["ci95_low"] <= 0.5 <= r["ci95_high"]
    assert r["value"] == pytest.approx(0.5, rel=0.02)


def test_logs_written_per_line_with_raw_bytes_summary_and_plot(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"), noise=0.001, seed=1)
    s = run_emulated(tmp_path, profile, garbage=0.2)
    run = tmp_path / "run"
    rows = list(csv.DictReader((run / "samples.csv").open()))
    packets = [r for r in rows if r["kind"] == "packet"]
    dropped = [r for r in rows if r["kind"] == "dropped"]
    assert len(packets) >= 30 and dropped
    first = bytes.fromhex(packets[0]["raw_hex"])
    assert len(first) == 11 and first.endswith(b"\r\n")
    assert {r["phase"] for r in packets} >= {"idle", "A"}
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "ok"
    assert summary["meter_stats"]["dropped_packets"] >= len(dropped)  # each dropped row: >= 1 packet
    assert (run / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert s["meter_stats"]["garbage_bytes"] > 0


def test_wrong_function_and_overload_readings_are_left_out(tmp_path: Path) -> None:
    every = {5: parse_quantity("5V"), 7: parse_quantity("OLmA")}
    profile = AlternatingProfile(levels(idle="100mA", A="150mA"), noise=0.002, every=every)
    s = run_emulated(tmp_path, profile)
    text = " ".join(s["warnings"])
    assert "in V, not A" in text and "wrong function" in text
    assert "OL (overload)" in text
    assert s["readings"]["left_out"]["unit V"] > 0 and s["readings"]["left_out"]["overload"] > 0
    m = s["models"]["A"]
    lo, hi = m["ci95_j"]
    assert lo <= truth(0.050, s) <= hi  # the V and OL readings would have wrecked the mean


def test_meter_on_volts_gives_error_naming_the_problem(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="5V", A="5V"))
    s = run_emulated(tmp_path, profile)
    assert s["status"] == "insufficient"
    assert s["models"]["A"]["energy_per_prediction_j"] is None
    assert "wrong function" in s["errors"][0]


def test_range_change_mid_run_warns(tmp_path: Path) -> None:
    # UT71x mA function: 35 mA fits the 40.000 mA range, 45 mA needs the 400.00 mA range
    profile = AlternatingProfile(levels(idle="35mA", A="45mA"), noise=0.0001)
    s = run_emulated(tmp_path, profile)
    assert any("changed range" in w and "mA r0 -> mA r1" in w for w in s["warnings"])
    lo, hi = s["models"]["A"]["ci95_j"]
    assert lo <= truth(0.010, s) <= hi


def test_port_disappearing_mid_run_gives_partial_result_and_keeps_logs(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"), noise=0.001)
    st = RunSettings(volts=5.0, idle_seconds=0.5, min_samples=30, settle_seconds=0.05, rounds=3)
    s = run_emulated(tmp_path, profile, settings=st, count=90)  # ~0.9 s of data, the run needs more
    assert s["status"] == "partial"
    assert "lost" in s["errors"][0] and "keeping everything logged" in s["errors"][0]
    rows = list(csv.DictReader((tmp_path / "run" / "samples.csv").open()))
    assert len([r for r in rows if r["kind"] == "packet"]) >= 80
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "partial"
    assert sum(seg["complete"] for seg in s["segments"]) < 3  # not all planned runs happened


def test_too_few_samples_gives_no_number(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"), noise=0.001)
    st = RunSettings(volts=5.0, idle_seconds=0.3, min_samples=200, settle_seconds=0.05, max_load_seconds=0.4)
    s = run_emulated(tmp_path, profile, settings=st, interval=0.02)
    assert s["status"] == "insufficient"
    assert s["models"]["A"]["energy_per_prediction_j"] is None
    assert any("too few samples" in e for e in s["errors"])


def test_idle_extension_cut_by_max_seconds_says_so(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"), noise=0.001)
    st = RunSettings(volts=5.0, idle_seconds=0.3, min_samples=200, settle_seconds=0.05, max_load_seconds=0.4)
    told: list[str] = []
    m = find_meter("tenma-72-7730a")
    with Emulator(m, profile, interval=0.02) as emu:
        source = SerialSource(m, emu.path)
        source.open()
        try:
            s = Measurement(source, [("A", "a.msgpack")], "data.csv", fake_workload, st, tmp_path / "run",
                            profile.set_phase, notice=told.append).run()
        finally:
            source.close()
    assert len(told) == 1, told
    assert told[0].startswith("warning: the idle phase is extended by 0.4 s, not the ")
    assert "200 idle readings (--min-samples)" in told[0] and "--max-seconds 0.4 caps the extension" in told[0]
    assert told[0] in s["notes"]
    assert s["idle"]["samples"] < 200 and s["status"] == "insufficient"
    assert any("--max-seconds" in e for e in s["errors"] if "too few samples" in e)


def test_workload_failure_without_stderr_says_so(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"))
    silent = template_workload(f"{sys.executable} -c \"import sys; sys.exit(3)\"")
    s = run_emulated(tmp_path, profile, workload=silent)
    assert s["status"] == "error"
    assert "workload for A (a.msgpack) failed: the workload exited with code 3, no output on stderr" in s["errors"]


def test_workload_failure_message_gives_a_short_stderr_tail() -> None:
    def failure(code: str) -> str:
        with pytest.raises(WorkloadError) as info:
            run_workload([sys.executable, "-c", code])
        return str(info.value)

    assert failure("import sys; sys.exit(3)") == "the workload exited with code 3, no output on stderr"
    assert failure("import sys; sys.stderr.write('\\n \\n'); sys.exit(4)") == (
        "the workload exited with code 4, no output on stderr")
    lines = "import sys; [print(f'line {i}', file=sys.stderr) for i in range(6)]; sys.exit(1)"
    assert failure(lines) == "the workload exited with code 1, stderr: line 3 | line 4 | line 5"
    long = failure("import sys; sys.stderr.write('x' * 5000 + 'END'); sys.exit(1)")
    assert long.endswith("xEND") and len(long) < 400
    killed = failure("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed == "the workload was killed by SIGKILL, no output on stderr"


def test_workload_failure_is_reported(tmp_path: Path) -> None:
    profile = PhaseProfile(levels(idle="100mA", A="150mA"))
    failing = template_workload(f"{sys.executable} -c \"import sys; sys.exit('no model')\"")
    s = run_emulated(tmp_path, profile, workload=failing)
    assert s["status"] == "error"
    assert any("exited with code 1" in e and "no model" in e for e in s["errors"])


def test_workload_report_contract() -> None:
    assert parse_report('warming up\n{"predictions": 12, "seconds": 0.5}\n') == (12, 0.5)
    for bad in ("", "not json", '{"predictions": 0, "seconds": 1}'):
        with pytest.raises(RuntimeError):
            parse_report(bad)
    argv = template_workload("ssh pi ./bench {model} {data} {seconds}")("m.msgpack", "d.csv", 2.5)
    assert argv == ["ssh", "pi", "./bench", "m.msgpack", "d.csv", "2.500"]


# ------------------------------------------------------------------ CLI


def _cli_run(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    (tmp_path / "m.msgpack").write_bytes(b"x")
    (tmp_path / "o.msgpack").write_bytes(b"y")
    template = f"{sys.executable} -c \"{FAKE}\" {{seconds}}"
    args = ["run", "--meter", "emulated:uni-t-ut61e", "--model", str(tmp_path / "m.msgpack"),
            "--data", "sklearn:digits", "--idle-seconds", "0.5", "--settle-seconds", "0.05",
            "--workload-cmd", template, "-o", str(tmp_path / "out"), "--quiet", *extra]
    r = CliRunner().invoke(power, args)
    return r.exit_code, r.stdout, r.stderr


def test_cli_run_with_emulated_meter(tmp_path: Path) -> None:
    code, out, err = _cli_run(tmp_path, "--volts", "5", "--min-samples", "15", "--compare",
                              str(tmp_path / "o.msgpack"), "--emulate",
                              "idle=100mA,A=150mA,B=120mA,noise=0.5mA,interval=0.01")
    assert code == 0, out + err
    assert "energy per prediction:" in out and "energy ratio B/A" in out and "status: ok" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ratio"]["value"] == pytest.approx(0.4, rel=0.05)


def test_cli_run_too_few_samples_exit_1_without_number(tmp_path: Path) -> None:
    code, out, err = _cli_run(tmp_path, "--volts", "5", "--min-samples", "500", "--max-seconds", "0.5",
                              "--emulate", "idle=100mA,A=150mA,interval=0.05")
    assert code == 1
    assert "too few samples" in out and "no figure" in out and "decode as" not in err
    # the idle phase needed ~30 s more for 500 readings: --max-seconds cut it to 0.5 s, and says so once
    told = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(told) == 1 and "idle phase is extended by 0.5 s" in told[0] and "--max-seconds 0.5" in told[0]


def test_cli_run_on_a_meter_of_another_family_says_which_it_is(tmp_path: Path) -> None:
    """A UT61D (fs9922) named as a UT60E (fs9721): nothing decodes, no figure (exit 1, logs kept), and the
    line `power read` gives names the family the bytes decode as."""
    with Emulator(find_meter("uni-t-ut61d"), CycleValues.parse("123.4mA"), interval=0.005) as emu:
        code, out, err = _cli_run(tmp_path, "--volts", "5", "--meter", f"uni-t-ut60e:{emu.path}")
    assert code == 1, out + err
    assert "no readings from the meter during the idle phase" in out
    assert err.splitlines()[-1] == (
        f"error: {emu.path} does not send uni-t-ut60e (fs9721) packets; these bytes decode as fs9922 (uni-t-ut61b, "
        f"uni-t-ut61c, uni-t-ut61d, voltcraft-vc830): try --meter uni-t-ut61b:{emu.path}"), err
    assert (tmp_path / "out" / "samples.csv").exists()


def test_cli_run_help_says_max_seconds_caps_the_idle_phase() -> None:
    res = CliRunner().invoke(power, ["run", "--help"], terminal_width=400, max_content_width=400)
    options = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip().startswith("--")}
    assert "by at most --max-seconds" in options["--idle-seconds"]
    assert "idle phase's extension" in options["--max-seconds"]


def killed_if_alive(pid: int) -> bool:
    """Whether process pid was still running (then it is killed, so no test leaves it behind)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    os.kill(pid, signal.SIGKILL)
    return True


SLOW = """import json, os, sys, time
seconds = float(sys.argv[1])
if seconds > 0.1:  # the measured run, not the trial run: tell the test it runs, then outlast the test
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    time.sleep(60)
print(json.dumps({"predictions": 10, "seconds": seconds}))
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run_stops_workload_and_reports_what_was_measured(tmp_path: Path, sig: signal.Signals) -> None:
    if sig == signal.SIGINT and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        pytest.skip("SIGINT is ignored in this process, so in its children too")
    (tmp_path / "m.msgpack").write_bytes(b"x")
    (tmp_path / "slow.py").write_text(SLOW)
    marker = tmp_path / "workload.pid"
    out = tmp_path / "out"
    command = " ".join(shlex.quote(a) for a in (sys.executable, str(tmp_path / "slow.py"))) + \
        f" {{seconds}} {shlex.quote(str(marker))}"
    argv = [sys.executable, "-m", "power_bench", "run", "--meter", "emulated:uni-t-ut61e", "--volts", "5",
            "--model", str(tmp_path / "m.msgpack"), "--data", "x", "--idle-seconds", "0.3", "--settle-seconds",
            "0.05", "--min-samples", "5", "--emulate", "idle=100mA,A=150mA,interval=0.01",
            "--workload-cmd", command, "-o", str(out)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = 0
    give_up = time.monotonic() + 120  # only against a hang; nothing is asserted about time
    try:
        while not marker.exists() and proc.poll() is None and time.monotonic() < give_up:
            time.sleep(0.02)  # readiness: the measured workload has started
        assert marker.exists(), proc.communicate()
        pid = int(marker.read_text())
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    workload_alive = killed_if_alive(pid)
    assert proc.returncode == 1, (proc.returncode, stdout, stderr)
    assert not workload_alive, "the workload outlived the run"
    reason = "SIGTERM" if sig == signal.SIGTERM else "Ctrl-C"
    assert "idle: mean 0.1 A over" in stdout and stdout.rstrip().endswith("status: partial")
    assert f"error: interrupted ({reason}); the result covers what was measured before" in stdout
    assert f"logs: {out}/samples.csv" in stderr and "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "partial" and summary["idle"]["samples"] > 0
    rows = list(csv.DictReader((out / "samples.csv").open()))
    assert {r["phase"] for r in rows if r["kind"] == "packet"} >= {"idle", "A"}
    assert (out / "plot.png").exists()


def test_cli_run_bad_usage_exit_2(tmp_path: Path) -> None:
    code, _out, err = _cli_run(tmp_path, "--emulate", "idle=100mA,interval=0.01")
    assert code == 2 and "--volts" in err
    code, _out, err = _cli_run(tmp_path, "--volts", "5", "--meter", "emulated:fluke-87")
    assert code == 2 and err.startswith("error: unknown meter")
    code, _out, err = _cli_run(tmp_path, "--volts", "5", "--emulate", "idle=100")
    assert code == 2


def test_idle_phase_shorter_than_settle_time_is_extended(tmp_path: Path) -> None:
    # every idle reading falls in the settle time: the idle phase must be extended, not left with none
    profile = AlternatingProfile(levels(idle="100mA", A="150mA"), noise=0.002)
    st = RunSettings(volts=5.0, idle_seconds=0.2, min_samples=15, settle_seconds=0.3)
    s = run_emulated(tmp_path, profile, settings=st)
    assert s["status"] == "ok", s["errors"]
    assert s["idle"]["samples"] >= 15
    lo, hi = s["models"]["A"]["ci95_j"]
    assert lo <= truth(0.050, s) <= hi


# ------------------------------------------------------------------ round 62's probe of the run


@pytest.mark.parametrize(("idle", "load", "needle"), [
    ("-100mA", "-150mA", "its leads are reversed (swap them)"),  # a meter in the supply line the wrong way round
    ("150mA", "100mA", "A: the load A is below idle"),  # something else drew more at idle
])
def test_negative_energy_is_reported_with_its_reason(tmp_path: Path, idle: str, load: str, needle: str) -> None:
    profile = AlternatingProfile(levels(idle=idle, A=load), noise=0.002)
    s = run_emulated(tmp_path, profile)
    assert s["models"]["A"]["energy_per_prediction_j"] < 0
    assert any(needle in w for w in s["warnings"]), s["warnings"]
    assert sum("reversed" in w or "below idle" in w for w in s["warnings"]) == 1, s["warnings"]  # one reason
    ok = run_emulated(tmp_path / "ok", AlternatingProfile(levels(idle="100mA", A="150mA"), noise=0.002))
    assert not any("reversed" in w or "below idle" in w for w in ok["warnings"])


def test_cli_run_json_is_strict_json(tmp_path: Path) -> None:
    """A model whose readings are all OL has no mean: null, not the NaN strict parsers refuse."""
    code, out, err = _cli_run(tmp_path, "--volts", "5", "--min-samples", "5", "--json", "--emulate",
                              "idle=100mA,A=OLmA,interval=0.01")
    assert code == 1, out + err
    summary = strict_json(out)
    assert summary["models"]["A"]["mean"] is None


def test_sigterm_during_the_trial_run_ends_it(tmp_path: Path) -> None:
    """A SIGTERM while the --workload-cmd's trial run goes left it running (maybe over ssh) and power run died
    with no word; now it ends as Ctrl-C does: the trial run is stopped, nothing is measured or written."""
    marker = tmp_path / "trial.pid"
    (tmp_path / "m.msgpack").write_bytes(b"x")
    (tmp_path / "slow.py").write_text("import os, sys, time\nopen(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
                                      "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\ntime.sleep(60)\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'slow.py'))} {shlex.quote(str(marker))}"
    argv = [sys.executable, "-m", "power_bench", "run", "--meter", "emulated:uni-t-ut61e", "--volts", "5", "--model",
            str(tmp_path / "m.msgpack"), "--data", "x", "--workload-cmd", command, "-o", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    give_up = time.monotonic() + 120  # only against a hang; nothing is asserted about time
    try:
        while not marker.exists() and proc.poll() is None and time.monotonic() < give_up:
            time.sleep(0.02)
        assert marker.exists(), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert not killed_if_alive(int(marker.read_text())), "the trial run outlived power run"
    assert proc.returncode == 1 and "aborted" in stderr and "Traceback" not in stderr, (proc.returncode, stderr)
    assert not (tmp_path / "out").exists()
