"""Progress on stderr (pyruntime.progress): a bar on a terminal, one summary line otherwise, nothing on
stdout; used by the CLI's long loops and by power runs."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from pyruntime.progress import Progress, mode, quiet, track

SUMMARY = re.compile(r"^(?P<desc>.+): done: (?P<n>\d+) steps in (?P<s>\d+\.\d) s$")


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _auto_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FRUGALML_PROGRESS", raising=False)


def summaries(text: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := SUMMARY.match(line))]


def drain(master: int) -> bytes:
    """Everything a pty's master side has to read until it is quiet for half a second."""
    got = b""
    while select.select([master], [], [], 0.5)[0]:
        chunk = os.read(master, 65536)
        if not chunk:
            break
        got += chunk
    return got


def test_not_a_terminal_one_summary_line_even_when_nested() -> None:
    out = io.StringIO()
    with Progress("outer", total=3, file=out) as p:
        for _ in range(3):
            for _ in track(range(5), "inner", file=out):
                pass
            p.update()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    m = SUMMARY.match(lines[0])
    assert m is not None and m["desc"] == "outer" and m["n"] == "3"


def test_no_summary_when_the_loop_fails_or_is_quiet() -> None:
    out = io.StringIO()
    with pytest.raises(ValueError), Progress("failing", total=2, file=out) as p:
        p.update()
        raise ValueError("bad")
    with quiet():
        for _ in track(range(4), "quiet", file=out):
            pass
    assert out.getvalue() == ""
    for _ in track(range(4), "after", file=out):  # the failed loop left no nesting behind
        pass
    assert [m["desc"] for m in summaries(out.getvalue())] == ["after"]


def test_terminal_draws_a_bar_and_no_summary_line() -> None:
    tty = FakeTty()
    for _ in track(range(7), "sweep", file=tty):
        pass
    text = tty.getvalue()
    assert "\r" in text and "sweep" in text and "7/7" in text and "100%" in text
    assert summaries(text.replace("\r", "\n")) == []


def test_a_real_pty_gets_a_bar() -> None:
    master, slave = os.openpty()  # a pty without a size: the bar still has a width
    try:
        with os.fdopen(slave, "w", closefd=False) as stream:
            assert mode(stream) == "bar"
            with Progress("pty loop", total=4, file=stream) as p:
                for _ in range(4):
                    p.update()
        got = drain(master)
    finally:
        os.close(master)
        os.close(slave)
    text = got.decode()
    assert "pty loop" in text and "4/4" in text and "|" in text


def test_environment_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRUGALML_PROGRESS", "off")
    out = io.StringIO()
    for _ in track(range(2), "off", file=out):
        pass
    assert out.getvalue() == ""
    monkeypatch.setenv("FRUGALML_PROGRESS", "bar")
    assert mode(io.StringIO()) == "bar"


# ------------------------------------------------------------------------------ the CLI
@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300)
    X = np.column_stack([(2.0 * y - 1.0)[:, None] + rng.normal(size=(300, 3)), rng.normal(size=(300, 2))])
    np.savez(d / "data.npz", X=X, y=y)
    return d


def test_cli_train_one_summary_line_and_clean_stdout(data: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["train", "miser", str(data / "data.npz"), "-o", str(tmp_path / "m.msgpack"),
                                   "--sweep", "--trees", "5", "--lambda-grid", "1,10", "--folds", "1", "--refine", "0"],
                           catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    found = summaries(res.stderr)
    assert len(found) == 1 and found[0]["desc"] == "miser lambda sweep" and found[0]["n"] == "3"
    # 60 validation rows: by default the sweep cross-validates (5 folds), then refits the kept lambda: one line each
    res = CliRunner().invoke(cli, ["train", "miser", str(data / "data.npz"), "-o", str(tmp_path / "cv.msgpack"),
                                   "--sweep", "--trees", "5", "--lambda-grid", "1,10", "--refine", "0"],
                           catch_exceptions=False)
    assert res.exit_code == 0 and res.stdout == "", res.stderr
    assert [f["desc"] for f in summaries(res.stderr)] == ["miser lambda sweep, 5-fold", "miser boosting"]
    # with bars forced on, eval --json still prints exactly one JSON object on stdout
    res = CliRunner().invoke(cli, ["eval", str(tmp_path / "m.msgpack"), str(data / "data.npz"), "--json"],
                             env={"FRUGALML_PROGRESS": "bar"}, catch_exceptions=False)
    assert res.exit_code == 0
    assert isinstance(json.loads(res.stdout), dict)


def test_cli_bar_on_a_terminal_stdout_unaffected(data: Path, tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        env = {k: v for k, v in os.environ.items() if k != "FRUGALML_PROGRESS"}
        proc = subprocess.run(
            [sys.executable, "-m", "compiler.cli", "train", "nb-stop", str(data / "data.npz"), "-o",
             str(tmp_path / "n.msgpack")],
            stdout=subprocess.PIPE, stderr=slave, env=env, timeout=120, check=False)
        got = drain(master)
    finally:
        os.close(master)
        os.close(slave)
    text = got.decode(errors="replace")
    assert proc.returncode == 0, text
    assert proc.stdout == b""
    assert "nb budget search" in text and "\r" in text and "|" in text
    assert summaries(text.replace("\r", "\n")) == []


def test_power_run_one_summary_line(tmp_path: Path) -> None:
    from power_bench.cli import power

    (tmp_path / "m.msgpack").write_bytes(b"x")
    fake = ("import json, sys, time; s = float(sys.argv[1]); time.sleep(s); "
            "print(json.dumps({'predictions': 1000, 'seconds': s}))")
    args = ["run", "--meter", "emulated:uni-t-ut61e", "--model", str(tmp_path / "m.msgpack"), "--data",
            "sklearn:digits", "--idle-seconds", "0.5", "--settle-seconds", "0.05", "--volts", "5",
            "--min-samples", "10", "--workload-cmd", f'{sys.executable} -c "{fake}" {{seconds}}',
            "--emulate", "idle=100mA,A=150mA,noise=0.5mA,interval=0.01", "-o", str(tmp_path / "out"), "--json"]
    res = CliRunner().invoke(power, args)
    assert res.exit_code == 0, res.stdout + res.stderr
    json.loads(res.stdout)  # the summary JSON, untouched
    found = summaries(res.stderr)
    assert len(found) == 1 and found[0]["desc"] == "power run" and int(found[0]["n"]) >= 3
