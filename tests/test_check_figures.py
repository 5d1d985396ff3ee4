"""tools/check_figures.py and benchmarks/common/figures.py: a figure written by its command is fresh until a
file that generated it changes; then (and for a figure never written) the check lists it. Malformed markers
are an error (exit 2), never a silent pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import figures  # noqa: E402

CHECK = ROOT / "tools" / "check_figures.py"
CMD = ".venv/bin/python benchmarks/b.py --n 3"


def check(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), "--root", str(root), *extra], capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "b.py").write_text("print('table')\n")
    (tmp_path / "README.md").write_text(f"# x\n\n<!-- figure: {CMD} | commit - | - -->\n<!-- /figure -->\nend\n")
    (tmp_path / "docs" / "other.md").write_text("no figures here\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_written_figure_is_fresh_then_stale_when_its_code_changes(repo: Path) -> None:
    assert "1 of 1 doc figures stale" in check(repo).stdout  # never written
    src = {"benchmarks/b.py": figures.file_hash(repo / "benchmarks" / "b.py")}
    changed = figures.write_figure(CMD, "k  acc\n5  0.91\n", src, root=repo, today="2026-11-25")
    assert changed == [repo / "README.md"]
    text = (repo / "README.md").read_text()
    assert f"<!-- figure: {CMD} | commit unknown | 2026-11-25 -->\n```text\nk  acc\n5  0.91\n```\n" in text
    assert text.startswith("# x\n") and text.endswith("<!-- /figure -->\nend\n")
    res = check(repo, "--strict")
    assert res.returncode == 0 and res.stdout.strip() == "0 of 1 doc figures stale"
    (repo / "benchmarks" / "b.py").write_text("print('another table')\n")
    res = check(repo, "--strict")
    assert res.returncode == 1
    assert res.stdout.splitlines()[0].startswith(f"README.md:3: {CMD}: changed since unknown (2026-11-25): "
                                                 "benchmarks/b.py")
    assert check(repo).returncode == 0  # without --strict it only lists


def test_commands_lists_each_stale_command_once(repo: Path) -> None:
    (repo / "docs" / "other.md").write_text(f"<!-- figure: {CMD} | commit - | - -->\n<!-- /figure -->\n")
    res = check(repo, "--commands", "--strict")
    assert res.returncode == 1 and res.stdout == f"{CMD}\n"  # two blocks, one command: `make figures` reruns it once
    figures.write_figure(CMD, "t\n", {"benchmarks/b.py": figures.file_hash(repo / "benchmarks" / "b.py")}, root=repo)
    res = check(repo, "--commands", "--strict")
    assert res.returncode == 0 and res.stdout == ""


def test_rewriting_keeps_the_rest_of_the_doc(repo: Path) -> None:
    for body in ("first\n", "second\nrun\n"):
        figures.write_figure(CMD, body, {}, root=repo, today="2026-11-25")
    text = (repo / "README.md").read_text()
    assert "first" not in text and "second\nrun\n```" in text and text.count("<!-- /figure -->") == 1


def test_a_command_with_no_block_is_an_error(repo: Path) -> None:
    with pytest.raises(figures.FigureError, match="no doc block states the command"):
        figures.write_figure(".venv/bin/python benchmarks/b.py", "x\n", {}, root=repo)


@pytest.mark.parametrize("bad", ["<!-- figure: x | commit - | - -->\ntext\n",  # never closed
                                 "<!-- /figure -->\n",  # closed, never opened
                                 "<!-- figure: x -->\n<!-- /figure -->\n"])  # no commit, no date
def test_malformed_markers_exit_2(repo: Path, bad: str) -> None:
    (repo / "docs" / "other.md").write_text(bad)
    res = check(repo)
    assert res.returncode == 2 and res.stderr.startswith("error: other.md:1:"), res.stderr


def test_command_of_drops_the_write_flag() -> None:
    got = figures.command_of(ROOT / "benchmarks" / "cstc.py", ["--seed", "1", "--write-docs", "--plot", ""])
    assert got == ".venv/bin/python benchmarks/cstc.py --seed 1 --plot ''"


def test_the_repository_s_markers_parse() -> None:
    res = check(ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].endswith("doc figures stale")
    assert len(figures.all_blocks(ROOT)) >= 3


def test_modules_a_cli_subprocess_loaded_are_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark that trains through `python -m compiler.cli` records the trainer's modules too (the child
    writes its list into the directory report() names), so a trainer change makes its figures stale."""
    out = tmp_path / "children"
    out.mkdir()
    monkeypatch.setenv(figures.SOURCES_DIR_ENV, str(out))
    res = subprocess.run([sys.executable, "-m", "compiler.cli", "train", "miser", "--help"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    listed = {line for f in out.glob("*.txt") for line in f.read_text().splitlines()}
    assert {"compiler/cli.py", "compiler/trees/kind_miser.py"} <= listed
    assert all((ROOT / f).is_file() and f.endswith(".py") for f in listed)
    start = figures.snapshot()
    sources = figures.loaded_sources(start, children=out)
    assert sources["compiler/trees/kind_miser.py"] == start["compiler/trees/kind_miser.py"]


def test_a_figure_records_its_environment_and_the_check_names_what_moved(repo: Path) -> None:
    src = {"benchmarks/b.py": figures.file_hash(repo / "benchmarks" / "b.py")}
    figures.write_figure(CMD, "t\n", src, root=repo)
    env = figures.read_manifest(repo / "docs" / "figures.json")[CMD]["environment"]
    import numpy  # noqa: PLC0415

    assert env["numpy"] == numpy.__version__ and env["python"] == sys.version.split()[0]
    assert {"scipy", "scikit-learn", "cffi", "msgpack", "cc", "machine", "cpu", "blas"} <= set(env)
    res = check(repo, "--environment")
    assert res.returncode == 0 and res.stdout.strip() == "every figure was written in this environment"
    manifest = figures.read_manifest(repo / "docs" / "figures.json")
    manifest[CMD]["environment"]["numpy"] = "1.0.0"
    (repo / "docs" / "figures.json").write_text(json.dumps(manifest))
    res = check(repo, "--environment")
    assert res.stdout.strip() == f"{CMD}: numpy 1.0.0 -> {numpy.__version__}"
    assert check(repo, "--strict").returncode == 0  # another environment is not staleness
    del manifest[CMD]["environment"]
    (repo / "docs" / "figures.json").write_text(json.dumps(manifest))
    assert "no environment recorded" in check(repo, "--environment").stdout


def test_a_run_waits_for_the_docs_lock_and_rereads_the_docs(repo: Path) -> None:
    """A second run that finishes while another rewrites the docs waits for it and then re-reads the docs, so
    neither loses the other's block (two parallel regenerations once lost a record of docs/figures.json)."""
    import threading  # noqa: PLC0415

    other = ".venv/bin/python benchmarks/b.py --n 4"
    (repo / "README.md").write_text((repo / "README.md").read_text()
                                    + f"<!-- figure: {other} | commit - | - -->\n<!-- /figure -->\n")
    done = threading.Event()

    def second_run() -> None:
        figures.write_figure(other, "second\n", {}, root=repo, today="2026-11-25")
        done.set()

    with figures.docs_lock(repo):  # the first run, in the middle of its rewrite
        worker = threading.Thread(target=second_run)
        worker.start()
        assert not done.wait(0.3)  # the second run waits for the lock
        figures._write_figure_locked(CMD, "first\n", {}, repo, "unknown", "2026-11-25", {})
    worker.join(10)
    assert done.is_set()
    text = (repo / "README.md").read_text()
    assert "```text\nfirst\n```" in text and "```text\nsecond\n```" in text
    manifest = json.loads((repo / "docs" / "figures.json").read_text())
    assert set(manifest) == {CMD, other}
    assert not list(repo.rglob("*.tmp"))  # each rewrite renamed its temporary file over the doc


def test_the_lock_is_released_when_a_run_fails(repo: Path) -> None:
    """A run whose command has no block raises FigureError; the lock is free afterwards (taken without waiting)."""
    import fcntl  # noqa: PLC0415

    with pytest.raises(figures.FigureError):
        figures.write_figure(".venv/bin/python benchmarks/none.py", "x\n", {}, root=repo)
    with open(repo / "docs" / figures.LOCK, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if still held
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def test_a_failed_rename_keeps_the_doc_and_leaves_no_temporary_file(repo: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    before = (repo / "README.md").read_text()

    def refuse(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(figures.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        figures.write_figure(CMD, "t\n", {}, root=repo)
    assert (repo / "README.md").read_text() == before
    assert [f.name for f in repo.rglob("*.tmp")] == []


def test_touching_lists_the_figures_a_change_would_restale(repo: Path, tmp_path_factory: pytest.TempPathFactory
                                                            ) -> None:
    """--touching PATH: the commands whose recorded sources include PATH (relative or absolute inside the
    repository), before anything changes; a path outside the repository is one line and exit 2."""
    (repo / "benchmarks" / "c.py").write_text("print('c')\n")
    other = ".venv/bin/python benchmarks/c.py"
    (repo / "docs" / "other.md").write_text(f"<!-- figure: {other} | commit - | - -->\n<!-- /figure -->\n")
    b = {"benchmarks/b.py": figures.file_hash(repo / "benchmarks" / "b.py")}
    figures.write_figure(CMD, "t\n", b, root=repo)
    figures.write_figure(other, "t\n", {**b, "benchmarks/c.py": figures.file_hash(repo / "benchmarks" / "c.py")},
                         root=repo)
    res = check(repo, "--touching", "benchmarks/b.py")
    assert res.returncode == 0 and res.stdout.splitlines() == [
        CMD, other, "2 of 2 figure commands read benchmarks/b.py"]
    res = check(repo, "--touching", str(repo / "benchmarks" / "c.py"), "README.md")
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and lines[0] == other and lines[1].startswith("1 of 2")
    assert check(repo, "--touching", "docs/other.md").stdout.startswith("0 of 2")
    assert check(repo, "--strict").returncode == 0  # nothing changed: --touching only reads
    outside = tmp_path_factory.mktemp("elsewhere") / "x.py"
    res = check(repo, "--touching", str(outside))
    assert res.returncode == 2 and res.stdout == "" and res.stderr.strip() == (
        f"error: {outside} is not inside the repository {repo.resolve()}")
