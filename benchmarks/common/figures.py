"""Doc figures written by the benchmark that measures them.

A figure in README.md or docs/*.md sits between two marker comments; the begin
marker names the exact command that produced it, the commit and the date:

    <!-- figure: .venv/bin/python benchmarks/skyline.py | commit 9fff53f | 2026-11-25 -->
    ```text
    ... the command's stdout ...
    ```
    <!-- /figure -->

Running that command with `--write-docs` (the flag is not part of the stated
command) replaces every block whose command is the run's own with the run's
stdout, and records in docs/figures.json the hash of every repository file the
run loaded (its Python modules, the C runtime, the benchmark's C sources), so
that tools/check_figures.py can list the figures whose generating code changed
after they were written, and the environment the run had (Python, the numeric
packages, the C compiler, the machine, the CPU and its BLAS kernels): the same
code can give other figures elsewhere, so a moved figure can be traced to either.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from compiler.cli import SOURCES_DIR_ENV, loaded_repo_modules  # each CLI subprocess writes its modules there

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "docs" / "figures.json"
PYTHON = ".venv/bin/python"
BEGIN = re.compile(r"^<!-- figure: (?P<command>.+?) \| commit (?P<commit>\S+) \| (?P<date>\S+) -->$")
END = "<!-- /figure -->"
FLAG = "--write-docs"
# Always part of a figure's generating code: the C runtime (the cffi module and every harness build it),
# the benchmarks' C harnesses and the shared helpers.
ALWAYS = ("runtime_c/include", "runtime_c/src", "benchmarks/c", "benchmarks/common")
WRITER = "benchmarks/common/figures.py"
# The packages whose versions a figure records: what the trainers and the reference evaluators compute with.
ENV_PACKAGES = ("numpy", "scipy", "scikit-learn", "cffi", "msgpack")


class FigureError(Exception):
    """A doc figure block is malformed or missing."""


@dataclass(frozen=True)
class Block:
    doc: Path
    command: str
    commit: str
    date: str
    begin: int  # line index of the begin marker
    end: int  # line index of the end marker


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def blocks(doc: Path) -> list[Block]:
    """Every figure block of one Markdown file (FigureError on an unterminated or nested block)."""
    lines = doc.read_text().splitlines()
    out: list[Block] = []
    open_at: int | None = None
    m = None
    for i, line in enumerate(lines):
        hit = BEGIN.match(line.strip())
        if hit:
            if open_at is not None:
                raise FigureError(f"{doc.name}:{i + 1}: figure block opened inside the block of line {open_at + 1}")
            open_at, m = i, hit
        elif line.strip() == END:
            if open_at is None or m is None:
                raise FigureError(f"{doc.name}:{i + 1}: '{END}' without a begin marker")
            out.append(Block(doc, m["command"], m["commit"], m["date"], open_at, i))
            open_at = None
        elif line.lstrip().startswith("<!-- figure"):
            raise FigureError(f"{doc.name}:{i + 1}: malformed figure marker: {line.strip()}")
    if open_at is not None:
        raise FigureError(f"{doc.name}:{open_at + 1}: figure block without '{END}'")
    return out


def all_blocks(root: Path = ROOT) -> list[Block]:
    return [b for doc in doc_files(root) if doc.exists() for b in blocks(doc)]


def command_of(script: Path, argv: list[str]) -> str:
    """The stated command of a run: interpreter, script relative to the repository, arguments."""
    rel = script.resolve().relative_to(ROOT)
    return shlex.join([PYTHON, str(rel), *(a for a in argv if a != FLAG)])


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def tracked(paths: Iterable[str], root: Path = ROOT) -> list[str]:
    """Files under the given repository paths that git tracks (sorted)."""
    res = subprocess.run(["git", "-C", str(root), "ls-files", "--", *paths], check=True, capture_output=True,
                         text=True)
    return sorted(set(res.stdout.split()))


SNAPSHOT_PATHS = ("benchmarks", "compiler", "pyruntime", "power_bench", "runtime_c", "firmware_examples")


def snapshot(root: Path = ROOT) -> dict[str, str]:
    """{repository path: content hash} of every tracked file that can generate a figure, taken when a run
    starts (so that an edit made while it runs is not recorded as what it ran)."""
    return {f: file_hash(root / f) for f in tracked(SNAPSHOT_PATHS, root) if (root / f).is_file()}


def loaded_sources(start: dict[str, str], extra: Iterable[str] = (), children: Path | None = None
                   ) -> dict[str, str]:
    """The part of the start snapshot that generated a figure: the repository's Python modules this process
    loaded, those the CLI subprocesses it ran loaded (each wrote a list into ``children``, see compiler.cli's
    SOURCES_DIR_ENV), ALWAYS and `extra` (paths or folders, for other code run in subprocesses)."""
    files: set[str] = set(tracked([*ALWAYS, *extra]))
    if children is not None:
        for listing in children.glob("*.txt"):
            files.update(line for line in listing.read_text().splitlines() if line)
    files |= loaded_repo_modules()
    files.discard(WRITER)  # how a figure is written into the docs, not what measured it
    return {f: start[f] for f in sorted(files) if f in start}


def head_commit(root: Path = ROOT) -> str:
    res = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True)
    return res.stdout.strip() or "unknown"


def read_manifest(path: Path = MANIFEST) -> dict[str, dict]:
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def environment() -> dict[str, str]:
    """What else a figure depends on besides the repository's files: Python, ENV_PACKAGES' versions, the host C
    compiler (first line of `cc --version`, the runtime's cffi build), the machine, the CPU and the BLAS kernels
    numpy and scipy run on it (CSCC's L-BFGS-B weights moved between two machines with the same code)."""
    env = {"python": platform.python_version(), "machine": platform.machine()}
    for name in ENV_PACKAGES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = "absent"
    env["cpu"] = _cpu_model()
    env["blas"] = _blas_kernels()
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
        env["cc"] = out.splitlines()[0].strip() if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        env["cc"] = "unknown"
    return env


def _blas_kernels() -> str:
    """The BLAS libraries numpy and scipy load and the kernels they picked for this CPU (OpenBLAS DYNAMIC_ARCH:
    Haswell, SkylakeX, ...). scipy's is loaded first, so a run that imported scipy and one that did not record
    the same set."""
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        return "unknown"
    try:
        import scipy.linalg  # noqa: F401, PLC0415
    except ImportError:
        pass
    return "; ".join(sorted({f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
                             for i in threadpool_info() if i.get("user_api") == "blas"})) or "none"


def _cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo; platform.processor() elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


LOCK = ".figures.lock"  # in docs/: held while a run rewrites the docs and docs/figures.json


@contextmanager
def docs_lock(root: Path = ROOT) -> Iterator[None]:
    """Exclusive lock (flock on the file LOCK names, in the docs folder) over reading and rewriting the docs and
    the manifest: two benchmark runs that finish together (`make figures` in two shells, a parallel regeneration)
    each re-read the files under the lock, so neither loses the other's block or record."""
    import fcntl  # noqa: PLC0415 - POSIX only; the benchmarks run on Linux

    path = root / "docs" / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _replace_text(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path`` (a reader never sees half
    a file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # the doc keeps its former text, and no temporary file is left behind
        raise


def write_figure(command: str, text: str, sources: dict[str, str], root: Path = ROOT,
                 today: str | None = None) -> list[Path]:
    """Replace the body of every block stated with `command`; returns the docs changed (FigureError if none).
    The docs and docs/figures.json are read and rewritten under :func:`docs_lock`."""
    commit = head_commit(root)
    today = today or datetime.date.today().isoformat()
    env = environment()  # the compiler and package probes run before the lock: another run never waits on them
    with docs_lock(root):
        return _write_figure_locked(command, text, sources, root, commit, today, env)


def _write_figure_locked(command: str, text: str, sources: dict[str, str], root: Path, commit: str,
                         today: str, env: dict[str, str]) -> list[Path]:
    changed: list[Path] = []
    for doc in doc_files(root):
        if not doc.exists():
            continue
        found = [b for b in blocks(doc) if b.command == command]
        if not found:
            continue
        lines = doc.read_text().splitlines()
        for b in sorted(found, key=lambda b: b.begin, reverse=True):
            body = [f"<!-- figure: {command} | commit {commit} | {today} -->", "```text",
                    *text.strip("\n").splitlines(), "```", END]
            lines[b.begin:b.end + 1] = body
        _replace_text(doc, "\n".join(lines) + "\n")
        changed.append(doc)
    if not changed:
        raise FigureError(f"no doc block states the command {command!r}; add "
                          f"'<!-- figure: {command} | commit - | - -->' and '{END}' where the figure belongs")
    manifest_path = root / "docs" / "figures.json"
    manifest = read_manifest(manifest_path)
    manifest[command] = {"commit": commit, "date": today, "sources": sources, "environment": env}
    _replace_text(manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return changed


class _Tee(io.TextIOBase):
    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream = stream
        self.buffer_ = io.StringIO()

    def write(self, s: str) -> int:
        self.buffer_.write(s)
        return self.stream.write(s)

    def flush(self) -> None:
        self.stream.flush()


@contextmanager
def report(argv: list[str] | None, script: str, extra_sources: Iterable[str] = ()) -> Iterator[None]:
    """Around a benchmark's main: with --write-docs in argv, its stdout becomes the doc figure(s) stated
    with its command. The run must finish without an exception for anything to be written."""
    argv = sys.argv[1:] if argv is None else argv
    if FLAG not in argv:
        yield
        return
    start = snapshot()
    tee = _Tee(sys.stdout)
    old, sys.stdout = sys.stdout, tee
    children = tempfile.TemporaryDirectory(prefix="fm_figure_sources_")
    old_env = os.environ.get(SOURCES_DIR_ENV)
    os.environ[SOURCES_DIR_ENV] = children.name  # inherited by the CLI subprocesses the benchmark runs
    try:
        yield
    finally:
        sys.stdout = old
        if old_env is None:
            os.environ.pop(SOURCES_DIR_ENV, None)
        else:
            os.environ[SOURCES_DIR_ENV] = old_env
    command = command_of(Path(script), argv)
    with children:
        sources = loaded_sources(start, extra_sources, Path(children.name))
    docs = write_figure(command, tee.buffer_.getvalue(), sources)
    print(f"figure written: {command} -> {', '.join(str(d.relative_to(ROOT)) for d in docs)}", file=sys.stderr)


def add_argument(ap: argparse.ArgumentParser) -> None:
    """The --write-docs flag (what report() looks for), so that it shows in --help."""
    ap.add_argument(FLAG, action="store_true",
                    help="write this run's output into the doc blocks stated with this command (docs/figures.json)")


def run_main(main: Callable[[list[str] | None], int | None], script: str,
             extra_sources: Iterable[str] = ()) -> None:
    """`if __name__ == "__main__"` of every entry script: main(argv) under report(), then exit with its code."""
    with report(None, script, extra_sources):
        rc = main(None)
    sys.exit(rc or 0)
