"""Rerun the command of every stale doc figure with --write-docs, several at a time, longest first.

    .venv/bin/python tools/regen_figures.py [--root DIR] [--jobs N] [--dry-run] [--log-dir DIR] [--match TEXT ...]

The stale commands are tools/check_figures.py's (`--commands`). Each runs from the repository root through the
shell, with `--write-docs` appended, stdin from /dev/null (a command must not drain the list) and
FRUGALML_PROGRESS=summary, its output in LOG_DIR/NN.log. Commands start longest first by the wall times of their
earlier runs (docs/figure_times.json, written here after every successful run; a command without one goes
first, as the one most likely to be long), each on the first of --jobs streams that is free: the plan
`--dry-run` prints, with the expected wall time of the whole run. Each figure command writes its own blocks
under the docs lock (benchmarks/common/figures.py), so streams finishing together lose nothing.

One line per start and end on stdout; a failing command does not stop the others: the run ends with the
failures and their logs, exit 1. Exit 2 when the figures cannot be read (a malformed marker, an unreadable
record). Ctrl-C stops every running command (each runs in its own process group) and exits 130.

--match TEXT keeps the stale commands containing TEXT (any of them, if given more than once).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common.figures import FigureError, docs_lock  # noqa: E402
from tools.check_figures import stale_figures  # noqa: E402

TIMES = Path("docs") / "figure_times.json"  # command -> seconds of its last successful run


@dataclass
class Job:
    index: int
    command: str
    expected: float | None  # seconds of its last successful run; None: never timed
    stream: int = -1
    seconds: float = 0.0
    returncode: int | None = None
    log: Path | None = None


def read_times(root: Path) -> dict[str, float]:
    """docs/figure_times.json: {command: seconds}; empty when absent. ValueError when it is not such a map."""
    path = root / TIMES
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) for v in data.values()):
        raise ValueError(f"{path}: not a map of command to seconds")
    return {str(k): float(v) for k, v in data.items()}


def record_time(root: Path, command: str, seconds: float) -> None:
    """Store one command's wall time in docs/figure_times.json (under the docs lock, read again inside it)."""
    with docs_lock(root):
        times = read_times(root)
        times[command] = round(seconds, 1)
        path = root / TIMES
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(dict(sorted(times.items())), indent=1) + "\n")
        tmp.replace(path)


def plan(commands: list[str], times: dict[str, float], jobs: int) -> tuple[list[Job], float]:
    """The jobs in start order (never timed first, then longest first) with the stream each would take if every
    command took its recorded time (list scheduling: the first stream to come free takes the next command), and
    the expected wall time of the run (the commands never timed counted as 0)."""
    order = sorted(commands, key=lambda c: (c in times, -times.get(c, 0.0)))
    free = [0.0] * jobs
    out = []
    for i, c in enumerate(order):
        s = min(range(jobs), key=lambda k: free[k])
        free[s] += times.get(c, 0.0)
        out.append(Job(i + 1, c, times.get(c), s))
    return out, max(free, default=0.0)


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}"


class Runner:
    """Runs the planned jobs on ``jobs`` streams; ``stop()`` kills every running command's process group."""

    def __init__(self, root: Path, todo: list[Job], jobs: int, log_dir: Path) -> None:
        self.root, self.todo, self.jobs, self.log_dir = root, list(todo), jobs, log_dir
        self.lock = threading.Lock()
        self.running: dict[int, subprocess.Popen[bytes]] = {}
        self.stopped = False
        self.total = len(todo)

    def say(self, line: str) -> None:
        with self.lock:
            print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)

    def next_job(self) -> Job | None:
        with self.lock:
            return None if self.stopped or not self.todo else self.todo.pop(0)

    def stream(self, stream: int) -> None:
        while (job := self.next_job()) is not None:
            job.stream, job.log = stream, self.log_dir / f"{job.index:02d}.log"
            expected = f", expected {_clock(job.expected)}" if job.expected is not None else ", never timed"
            self.say(f"[{job.index}/{self.total}] start on stream {stream + 1}{expected}: {job.command}")
            env = {**os.environ, "FRUGALML_PROGRESS": "summary"}
            start = time.monotonic()
            with open(job.log, "wb") as log:
                proc = subprocess.Popen(f"{job.command} --write-docs", shell=True, cwd=self.root, env=env,
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
                with self.lock:
                    self.running[job.index] = proc
                job.returncode = proc.wait()
                with self.lock:
                    self.running.pop(job.index, None)
            job.seconds = time.monotonic() - start
            if job.returncode == 0:
                record_time(self.root, job.command, job.seconds)
            verdict = "done" if job.returncode == 0 else f"FAILED (exit {job.returncode}; log {job.log})"
            self.say(f"[{job.index}/{self.total}] {verdict} in {_clock(job.seconds)}: {job.command}")

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            procs = list(self.running.values())
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def run(self) -> None:
        threads = [threading.Thread(target=self.stream, args=(s,), daemon=True) for s in range(self.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this one)")
    ap.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the expected wall time; run nothing")
    ap.add_argument("--log-dir", type=Path, default=None,
                    help="where each command's output goes (default: a new folder under the system's temp dir)")
    ap.add_argument("--match", action="append", default=None, metavar="TEXT",
                    help="only the stale commands containing TEXT (repeatable: any of them)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    root = args.root.resolve()
    try:
        stale, _ = stale_figures(root)
        times = read_times(root)
    except (FigureError, ValueError, KeyError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    commands = list(dict.fromkeys(s.command for s in stale))
    if args.match:
        commands = [c for c in commands if any(m in c for m in args.match)]
    if not commands:
        print("no stale figure" + (" matches --match" if args.match else "") + ": nothing to run")
        return 0
    jobs, wall = plan(commands, times, args.jobs)
    untimed = sum(j.expected is None for j in jobs)
    summary = (f"{len(jobs)} figure command(s) on {args.jobs} stream(s), expected wall time {_clock(wall)}"
               + (f" plus {untimed} never timed" if untimed else ""))
    if args.dry_run:
        for j in jobs:
            exp = _clock(j.expected) if j.expected is not None else "never timed"
            print(f"[{j.index}/{len(jobs)}] stream {j.stream + 1}, {exp}: {j.command}")
        print(summary)
        return 0
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="frugalml_figures_"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"{summary}; logs in {log_dir}", flush=True)
    runner = Runner(root, jobs, args.jobs, log_dir)
    start = time.monotonic()
    try:
        runner.run()
    except KeyboardInterrupt:
        runner.stop()
        print("interrupted: the running commands were stopped; their figures are not written", file=sys.stderr)
        return 130
    failed = [j for j in jobs if j.returncode not in (0, None)]
    print(f"{len(jobs) - len(failed)} of {len(jobs)} figure command(s) done in {_clock(time.monotonic() - start)}")
    for j in failed:
        print(f"FAILED (exit {j.returncode}): {j.command}; log {j.log}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
