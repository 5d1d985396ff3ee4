"""The serial harness through real pseudo-terminals with the real byte protocols (no mocked serial)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from power_bench import cli as power_cli
from power_bench.cli import power
from power_bench.emulator import CycleValues, Emulator
from power_bench.framing import decodes_as
from power_bench.meters import METERS, Meter, find_meter
from power_bench.protocols import PROTOCOLS
from power_bench.sources import PortLost, Sample, SerialSource

ROOT = Path(__file__).resolve().parents[1]
FAMILY_METERS = ["tenma-72-7730a", "uni-t-ut60e", "uni-t-ut61d", "uni-t-ut61e"]


def collect(source: SerialSource, n: int, timeout: float = 10.0) -> tuple[list[Sample], str]:
    """Poll until n decoded readings, the port disappears, or timeout. Returns (samples, lost message)."""
    out: list[Sample] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and sum(s.reading is not None for s in out) < n:
        try:
            out += source.poll(0.05)
        except PortLost as exc:
            return out + exc.samples, str(exc)
    return out, ""


def session(meter: Meter, path: str, n: int, timeout: float = 10.0) -> tuple[SerialSource, list[Sample], str]:
    """Open the meter's port, collect ``n`` readings (see ``collect``), close it: (source, samples, lost)."""
    source = SerialSource(meter, path)
    source.open()
    try:
        samples, lost = collect(source, n, timeout)
    finally:
        source.close()
    return source, samples, lost


def test_meter_table_names_and_aliases() -> None:
    assert find_meter("tenma-72-7730").name == "tenma-72-7730a"
    assert find_meter("UNI-T-UT61E-ser").protocol == "es51922"
    assert {m.protocol for m in METERS} == {"ut71x", "fs9721", "fs9922", "es51922"}
    assert all(m.dtr and not m.rts for m in METERS)
    with pytest.raises(KeyError):
        find_meter("fluke-87")


@pytest.mark.parametrize("name", FAMILY_METERS)
def test_values_survive_the_pty_with_garbage(name: str) -> None:
    meter = find_meter(name)
    values = CycleValues.parse("123.4mA,-0.512A,5V")
    with Emulator(meter, values, interval=0.005, garbage=0.3, seed=7) as emu:
        source, samples, lost = session(meter, emu.path, 30)
    assert not lost
    readings = [s.reading for s in samples if s.reading is not None]
    assert len(readings) >= 30
    got = {(round(r.value, 6), r.unit) for r in readings}
    assert got == {(0.1234, "A"), (-0.512, "A"), (5.0, "V")}
    # readings arrive in the emulated order (cyclic), none invented by the resynchronization
    order = [round(r.value, 6) for r in readings]
    cycle = [0.1234, -0.512, 5.0]
    start = cycle.index(order[0])
    assert order == [cycle[(start + i) % 3] for i in range(len(order))]
    stats = source.stats()
    assert stats["dropped_packets"] > 0 and stats["garbage_bytes"] > 0
    assert stats["undecodable_packets"] == 0


def test_port_disappearing_mid_read_is_reported_with_data_kept() -> None:
    meter = find_meter("uni-t-ut61e")
    emu = Emulator(meter, CycleValues.parse("50mA"), interval=0.005, count=40)
    emu.start()
    try:
        _, samples, lost = session(meter, emu.path, 10_000, timeout=10)
    finally:
        emu.stop()
    assert lost and "lost" in lost
    n = sum(s.reading is not None for s in samples)
    assert 20 <= n <= 40


def _start_emulator_process(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "power_bench", "emulate", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    path = proc.stdout.readline().strip()
    assert path.startswith("/dev/"), proc.stderr.read() if proc.stderr else ""
    return proc, path


def test_emulate_command_prints_pty_then_read_command_decodes_it() -> None:
    proc, path = _start_emulator_process("tenma-72-7730a", "--values", "123.4mA,-0.512A,5V",
                                         "--interval", "0.01", "--garbage", "0.2")
    try:
        result = CliRunner().invoke(power, ["read", "--meter", f"tenma-72-7730a:{path}", "--samples", "6"])
        json_result = CliRunner().invoke(power, ["read", "--meter", f"tenma-72-7730:{path}", "--samples", "3",
                                                 "--json"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 6
    heads = {" ".join(line.split()[:3]) for line in lines}
    assert heads == {"0.1234 A DC", "-0.512 A DC", "5 V DC"}
    assert json_result.exit_code == 0
    objs = [json.loads(line) for line in json_result.stdout.strip().splitlines()]
    assert len(objs) == 3 and all(o["unit"] in ("A", "V") and o["coupling"] == "DC" for o in objs)


def test_emulate_count_ends_stream_and_read_reports_lost_port() -> None:
    proc, path = _start_emulator_process("uni-t-ut60e", "--values", "20mA", "--interval", "0.01",
                                         "--count", "30")
    try:
        result = CliRunner().invoke(power, ["read", "--meter", f"uni-t-ut60e:{path}", "--seconds", "20"])
    finally:
        proc.wait(timeout=10)
    assert result.exit_code == 1
    assert "lost" in result.stderr
    assert 1 <= len(result.stdout.strip().splitlines()) <= 30
    assert proc.returncode == 0


def test_emulate_profile_file_and_bad_input(tmp_path: Path) -> None:
    profile = tmp_path / "profile.txt"
    profile.write_text("# value,repeat\n100mA,2\nOLmA\n")
    proc, path = _start_emulator_process("uni-t-ut61d", "--profile", str(profile), "--interval", "0.01")
    try:
        result = CliRunner().invoke(power, ["read", "--meter", f"uni-t-ut61d:{path}", "--samples", "6"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert result.exit_code == 0
    heads = [line.split()[0] for line in result.stdout.strip().splitlines()]
    assert heads.count("OL") in (2, 3) and heads.count("0.1") in (3, 4)
    argv = [sys.executable, "-m", "power_bench", "emulate", "uni-t-ut61e", "--values", "3 parsecs"]
    bad = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "parsecs" in bad.stderr
    unknown = CliRunner().invoke(power, ["emulate", "fluke-87"])
    assert unknown.exit_code == 2 and "unknown meter" in unknown.stderr


def test_read_bad_usage_exits_2() -> None:
    runner = CliRunner()
    both = runner.invoke(power, ["read", "--meter", "uni-t-ut61e:/dev/null", "--samples", "1",
                                 "--seconds", "1"])
    assert both.exit_code == 2
    no_port = runner.invoke(power, ["read", "--meter", "uni-t-ut61e:/nonexistent/tty", "--samples", "1"])
    assert no_port.exit_code == 2 and no_port.stderr.startswith("error: cannot open /nonexistent/tty")
    no_colon = runner.invoke(power, ["read", "--meter", "uni-t-ut61e", "--samples", "1"])
    assert no_colon.exit_code == 2 and "METER:PORT" in no_colon.stderr


def test_dtr_rts_set_before_open_on_a_pty() -> None:
    meter = find_meter("tenma-72-7730a")
    with Emulator(meter, CycleValues.parse("1mA"), interval=0.01) as emu:
        source = SerialSource(meter, emu.path)
        source.open()  # would raise ENOTTY if DTR/RTS were set after opening a pty
        try:
            assert source._serial is not None and source._serial.dtr and not source._serial.rts
            samples, _ = collect(source, 2)
        finally:
            source.close()
    assert sum(s.reading is not None for s in samples) >= 2
    assert os.path.exists("/dev/ptmx")


def test_reopening_a_seven_bit_port_falls_back_cleanly() -> None:
    # Some pty stacks refuse a 7O1 termios setting (EINVAL) once the port was configured: the reader must
    # then open 8N1 and strip bit 7, as a 7O1 UART would, and still decode every packet.
    meter = find_meter("uni-t-ut61e")
    with Emulator(meter, CycleValues.parse("123.4mA"), interval=0.005) as emu:
        for _ in range(2):
            source, samples, lost = session(meter, emu.path, 3)
            assert not lost
            assert all(s.reading is not None and s.reading.value == pytest.approx(0.1234)
                       for s in samples if s.kind == "packet")
            assert sum(s.reading is not None for s in samples) >= 3
            assert all("8N1" in note for note in source.notes)


@pytest.mark.parametrize("sent", FAMILY_METERS)
def test_bytes_of_another_family_are_recognised(sent: str) -> None:
    """Each family's packets (with junk, from mid-packet) read as every other family name the family sent;
    read as their own family, or as noise, they name none."""
    meter = find_meter(sent)
    emu = Emulator(meter, CycleValues.parse("123.4mA,-0.512A,5V,OLmA"), garbage=0.3, seed=5)
    raw = b"".join(emu.packets(8))[5 : 5 + power_cli.PROBE_BYTES]
    for named in FAMILY_METERS:
        got = decodes_as(raw, find_meter(named).proto, PROTOCOLS.values())
        assert (got.name if got else None) == (None if named == sent else meter.protocol), named
    noise = bytes(range(256)) * 2
    assert all(decodes_as(noise, p, PROTOCOLS.values()) is None for p in PROTOCOLS.values())


@pytest.mark.parametrize(
    ("sent", "named", "hint"),
    [
        ("uni-t-ut61d", "uni-t-ut60e", "fs9922 (uni-t-ut61b, uni-t-ut61c, uni-t-ut61d, voltcraft-vc830): "
                                       "try --meter uni-t-ut61b:"),
        ("uni-t-ut61e", "tenma-72-7730a", "es51922 (uni-t-ut61e): try --meter uni-t-ut61e:"),  # some pass as ut71x
        ("tenma-72-7730a", "uni-t-ut61e", "ut71x (tenma-72-7730a, tenma-72-7732, tenma-72-9380a, uni-t-ut71a and "
                                          "7 more): try --meter tenma-72-7730a:"),
        ("uni-t-ut60e", "uni-t-ut61d", "fs9721 (uni-t-ut60a, uni-t-ut60e, tenma-72-7745, voltcraft-vc820, "
                                       "voltcraft-vc840): try --meter uni-t-ut60a:"),
    ],
    ids=["fs9922-as-fs9721", "es51922-as-ut71x", "ut71x-as-es51922", "fs9721-as-fs9922"],
)
@pytest.mark.parametrize("when", ["while reading", "at the end"])
def test_read_of_a_meter_of_another_family_says_which_it_is(sent: str, named: str, hint: str, when: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if when == "at the end":  # stopped (--seconds, Ctrl-C) before PROBE_BYTES arrived: checked on what came
        monkeypatch.setattr(power_cli, "PROBE_BYTES", 10**9)
    with Emulator(find_meter(sent), CycleValues.parse("123.4mA,-0.512A,5V"), interval=0.005) as emu:
        seconds = "0.5" if when == "at the end" else "20"
        res = CliRunner().invoke(power, ["read", "--meter", f"{named}:{emu.path}", "--seconds", seconds])
    assert res.exit_code == 2, (res.output, res.exception)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"error: {emu.path} does not send {named} ")
    assert f"these bytes decode as {hint}{emu.path}\n" in res.stderr


def test_read_of_the_named_family_gives_no_hint() -> None:
    with Emulator(find_meter("uni-t-ut61e"), CycleValues.parse("123.4mA"), interval=0.005, garbage=0.2) as emu:
        res = CliRunner().invoke(power, ["read", "--meter", f"uni-t-ut61e:{emu.path}", "--samples", "40"])
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) == 40 and "decode as" not in res.stderr


def test_read_of_packets_the_named_decoder_refuses_says_so_not_another_family(tmp_path: Path) -> None:
    """ES51922 packets of a dial position the decoder refuses (temperature): their tails decode as ut71x, and
    `power read` advised --meter tenma-72-7730a (round 65's probe). They are the named meter's: a warning names
    the decoder's reason; a stream of another family is still named (test above)."""
    packet = b"0025004800:0\r\n"
    raw = packet * 12
    assert decodes_as(raw, find_meter("uni-t-ut61e").proto, PROTOCOLS.values()) is None
    master, slave = os.openpty()
    feeder = threading.Timer(0.3, os.write, (master, raw))  # after the reader opened (and flushed) the port
    try:
        feeder.start()
        res = CliRunner().invoke(power, ["read", "--meter", f"uni-t-ut61e:{os.ttyname(slave)}", "--seconds", "1.5"])
    finally:
        feeder.join()
        os.close(master)
        os.close(slave)
    assert res.exit_code == 0 and res.stdout == "", res.output
    assert ("warning: no reading decoded; 12 well-framed packets refused (ES51922: temperature mode carries no "
            "range exponent)") in res.stderr and "decode as" not in res.stderr
