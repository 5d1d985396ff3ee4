"""tools/regen_figures.py: the stale figures' commands rerun with --write-docs, longest first on N streams, each
run's wall time kept for the next plan, a failure reported without stopping the others."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.regen_figures import plan, read_times  # noqa: E402

TOOL = ROOT / "tools" / "regen_figures.py"
# a figure command of the fake repository: writes its block through benchmarks.common.figures (as every
# benchmark does), after an optional sleep; exit 3 when asked
SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from benchmarks.common import figures
args = sys.argv[1:]
name = args[0]
time.sleep(float(args[1]))
if name == "bad":
    sys.exit(3)
assert args[-1] == "--write-docs" and sys.stdin.read() == ""
figures.write_figure(" ".join([".venv/bin/python", "benchmarks/b.py", *args[:-1]]), f"table of {{name}}\\n",
                     {{"benchmarks/b.py": figures.file_hash(figures.Path("benchmarks/b.py"))}},
                     root=figures.Path.cwd(), today="2026-12-05")
"""


def fake_repo(tmp: Path, names: list[str]) -> Path:
    (tmp / "docs").mkdir()
    (tmp / "benchmarks").mkdir()
    (tmp / ".venv" / "bin").mkdir(parents=True)
    py = tmp / ".venv" / "bin" / "python"  # this venv's python (a symlink would lose the venv's packages)
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    (tmp / "benchmarks" / "b.py").write_text(SCRIPT.format(root=str(ROOT)))
    blocks = "".join(f"<!-- figure: .venv/bin/python benchmarks/b.py {n} | commit - | - -->\n<!-- /figure -->\n"
                     for n in names)
    (tmp / "docs" / "figs.md").write_text("# figures\n\n" + blocks)
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    return tmp


def regen(root: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FRUGALML_SOURCES_DIR"}
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *extra], capture_output=True, text=True,
                          timeout=120, env=env)


def test_plan_puts_untimed_first_then_longest_on_the_first_free_stream() -> None:
    times = {"a": 10.0, "b": 50.0, "c": 30.0, "d": 25.0}
    jobs, wall = plan(["a", "b", "c", "d", "new"], times, 2)
    assert [j.command for j in jobs] == ["new", "b", "c", "d", "a"]
    # each on the stream free first (the lower on ties): new (counted 0 s) and b on the first (0, 50), c and d
    # on the second (30, 55), a on the first again (free at 50, before 55): 60 s in all
    assert [j.stream for j in jobs] == [0, 0, 1, 1, 0]
    assert wall == 60.0
    assert plan([], times, 3) == ([], 0.0)


def test_runs_every_stale_figure_and_records_times(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, ["one 0", "two 0.2", "three 0"])
    dry = regen(root, "--dry-run")
    assert dry.returncode == 0 and "3 figure command(s) on 2 stream(s)" in dry.stdout and "never timed" in dry.stdout
    assert not (root / "docs" / "figure_times.json").exists()  # a dry run writes nothing
    res = regen(root, "--jobs", "2", "--log-dir", str(tmp_path / "logs"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 of 3 figure command(s) done" in res.stdout
    text = (root / "docs" / "figs.md").read_text()
    assert all(f"table of {n}" in text for n in ("one", "two", "three"))
    times = read_times(root)
    assert sorted(times) == [f".venv/bin/python benchmarks/b.py {n}" for n in ("one 0", "three 0", "two 0.2")]
    assert times[".venv/bin/python benchmarks/b.py two 0.2"] >= 0.2
    again = regen(root)
    assert again.returncode == 0 and "no stale figure: nothing to run" in again.stdout
    # once timed, the plan runs the longest first, by the recorded times (set here: the runs' own wall times are
    # mostly the interpreter's start-up, whose order a loaded machine can turn around, as CI's once did)
    (root / "benchmarks" / "b.py").write_text((root / "benchmarks" / "b.py").read_text() + "\n")
    recorded = {".venv/bin/python benchmarks/b.py one 0": 1.0, ".venv/bin/python benchmarks/b.py two 0.2": 5.0,
                ".venv/bin/python benchmarks/b.py three 0": 9.0}
    (root / "docs" / "figure_times.json").write_text(json.dumps(recorded))
    dry = regen(root, "--dry-run", "--jobs", "1")
    lines = [line for line in dry.stdout.splitlines() if line.startswith("[")]
    assert [line.rsplit("b.py ", 1)[1] for line in lines] == ["three 0", "two 0.2", "one 0"], dry.stdout
    only = regen(root, "--dry-run", "--match", "three")
    assert only.stdout.count("[") == 1 and "three" in only.stdout


def test_a_failure_is_reported_and_the_others_still_run(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, ["bad 0", "good 0"])
    res = regen(root, "--jobs", "1", "--log-dir", str(tmp_path / "logs"))
    assert res.returncode == 1
    assert "FAILED (exit 3): .venv/bin/python benchmarks/b.py bad 0" in res.stdout
    assert "1 of 2 figure command(s) done" in res.stdout
    assert "table of good" in (root / "docs" / "figs.md").read_text()
    assert list(read_times(root)) == [".venv/bin/python benchmarks/b.py good 0"]  # a failed run is not timed


@pytest.mark.parametrize(("setup", "needle"), [
    (lambda r: (r / "docs" / "figure_times.json").write_text("[1, 2]"), "not a map of command to seconds"),
    (lambda r: (r / "docs" / "figs.md").write_text("<!-- figure: x | commit - | - -->\n"), "error:"),
])
def test_unreadable_input_is_one_line_and_exit_2(tmp_path: Path, setup: object, needle: str) -> None:
    root = fake_repo(tmp_path, ["one 0"])
    setup(root)  # type: ignore[operator]
    res = regen(root)
    assert res.returncode == 2 and needle in res.stderr and res.stderr.count("\n") == 1
    res = regen(root, "--jobs", "0")
    assert res.returncode == 2 and "--jobs must be at least 1" in res.stderr
