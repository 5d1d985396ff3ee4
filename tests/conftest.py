"""Scheduling of the suite under pytest-xdist (`make test` runs `pytest -n auto --dist loadgroup`).

The groups: a test file that defines a fixture wider than one test (scope "module", "class" or "package": a
trained model, a fuzzer build, a work folder ...) is one unit of work, run by one worker, so that the fixture
is built once as in a serial run; the tests of every other file are handed out one by one. Such a file may
split itself into several units by a parameter: `XDIST_UNITS = ("a", "b")` at the start of a line makes the
tests whose parameter ids name "a" one unit and those naming "b" another (e.g. one unit per data set, whose
lazily trained models the set's tests share; a test naming none stays in the file's own unit). The controller
decides this from the file's text (it collects no tests); pytest-xdist's own `xdist_group` markers are not
used (its loadgroup renames node ids, which pytest 9.2 no longer allows).

The order: xdist hands out the units with the most tests first, then the single tests in collection order;
this file puts the `slow` single tests first in that order, so that no minute-long test starts at the end of
the run. Without xdist (`-n 0`, plain `pytest`) only that order changes.

Tests never write to a fixed path (runtime_c/build, /tmp/NAME, the repository): each uses tmp_path or
tmp_path_factory, one folder per test and worker.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

SHARED_FIXTURE = re.compile(r"""@pytest\.fixture\([^)]*scope=["'](module|class|package|session)["']""")


XDIST_UNITS = re.compile(r"^XDIST_UNITS = \(([^)]*)\)", re.MULTILINE)


@cache
def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _shares_fixtures(path: Path) -> bool:
    return SHARED_FIXTURE.search(_text(path)) is not None


@cache
def _units(path: Path) -> tuple[str, ...]:
    """The parameter values of the file's XDIST_UNITS tuple (none when it has none)."""
    m = XDIST_UNITS.search(_text(path))
    return tuple(re.findall(r"""["']([^"']+)["']""", m.group(1))) if m else ()


def _unit_of(rootdir: Path, nodeid: str) -> str:
    """A test's unit of work: its file when the file shares fixtures (split by the XDIST_UNITS value its
    parameter ids name, "-"-separated), else the test itself."""
    file = nodeid.split("::", 1)[0]
    if not _shares_fixtures(rootdir / file):
        return nodeid
    params = nodeid.partition("[")[2].removesuffix("]").split("-")
    named = [u for u in _units(rootdir / file) if u in params]
    return f"{file}::{named[0]}" if named else file


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest-xdist missing: plain serial runs need none of this
    LoadScopeScheduling = None
else:

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(self.config.rootpath, nodeid)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> LoadScopeScheduling | None:
        return SharedFixtureScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # stable sort: the slow tests of the files handed out test by test first; every other test keeps its place
    def later(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is None or _shares_fixtures(item.path)

    items.sort(key=later)
