"""The kind registry loads a family when it is used (round 49): compiler.kinds' tables name the module of each
kind and model-file kind, checked here against what every kind module registers, and a run of one kind imports
no other family, so a doc figure records (and restales with) only the families it ran."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import kinds as registry

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("compiler.cstc", "compiler.gated", "compiler.nb", "compiler.skyline", "compiler.trees")

# In a fresh interpreter: import the modules given, or run the CLI with the argv given; print what registered
# and which families' modules loaded.
PROBE = """
import importlib, json, sys
modules, argv = json.loads(sys.argv[1]), json.loads(sys.argv[2])
from compiler import kinds
from compiler.header import EMITTERS
for m in modules:
    importlib.import_module(m)
code = 0
if argv:
    from compiler.cli import main
    sys.argv = ["frugalml", *argv]
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
families = sorted({".".join(m.split(".")[:2]) for m in sys.modules if m.startswith("compiler.") and
                   m.split(".")[1] in ("cstc", "gated", "nb", "skyline", "trees") and m.count(".") >= 2})
print(json.dumps({"code": code, "kinds": sorted(kinds.KINDS), "emitters": sorted(EMITTERS),
                  "metrics": sorted(kinds.FILE_METRICS), "budget": sorted(kinds.BUDGET_EVAL),
                  "families": families}), file=sys.stderr)
"""


def probe(modules: list[str], argv: list[str] | None = None) -> dict:
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(modules), json.dumps(argv or [])], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_the_tables_name_every_kind_module_and_only_those() -> None:
    from compiler import __path__ as pkg_path  # noqa: PLC0415

    found = set(registry.kind_modules("compiler", list(pkg_path)))
    assert found == set(registry.KIND_MODULES.values()) == set(registry.FILE_KIND_MODULES.values())


@pytest.mark.parametrize("module", sorted(set(registry.KIND_MODULES.values())))
def test_each_module_registers_the_kinds_the_tables_give_it(module: str) -> None:
    """Importing a kind's module alone registers that kind and the emitter of its file kinds (a module may load
    another family it builds on: the skyline's NB bases, miser's cascade tables)."""
    got = probe([module])
    assert {k for k, m in registry.KIND_MODULES.items() if m == module} <= set(got["kinds"])
    assert {k for k, m in registry.FILE_KIND_MODULES.items() if m == module} <= set(got["emitters"])


def test_every_registration_is_in_the_tables() -> None:
    every = probe(sorted(set(registry.KIND_MODULES.values())))
    assert every["kinds"] == sorted(registry.KIND_MODULES)
    assert every["emitters"] == sorted(registry.FILE_KIND_MODULES)
    # eval figures by file kind (or by a kind's name, which some kinds write as their file kind)
    assert set(every["metrics"]) <= set(registry.FILE_KIND_MODULES) | set(registry.KIND_MODULES)


def test_budget_kinds_and_extra_commands() -> None:
    every = probe(sorted(set(registry.KIND_MODULES.values())))
    assert tuple(every["budget"]) == registry.BUDGET_FILE_KINDS
    for extra in registry.EXTRA_COMMANDS:
        module, _, attr = extra.ref.partition(":")
        assert hasattr(__import__(module, fromlist=[attr]), attr)


def test_kind_spec_loads_its_module_and_refuses_an_unknown_kind() -> None:
    assert registry.kind_spec("nb-stop").name == "nb-stop"
    with pytest.raises(KeyError):
        registry.kind_spec("no-such-kind")


def test_one_kind_loads_one_family(tmp_path: Path) -> None:
    assert probe([])["families"] == []  # importing the CLI loads no family
    got = probe([], ["train", "nb-stop", "--help"])
    assert got["code"] == 0 and got["families"] == ["compiler.nb"]
    model = tmp_path / "m.msgpack"
    got = probe([], ["train", "nb-stop", "sklearn:breast_cancer", "-o", str(model), "--budget", "5"])
    assert got["code"] == 0 and got["families"] == ["compiler.nb"]
    for argv in (["eval", str(model), "sklearn:breast_cancer"], ["export-c", str(model), "-o", str(tmp_path / "m.h")]):
        got = probe([], argv)
        assert got["code"] == 0 and got["families"] == ["compiler.nb"], argv
    got = probe([], ["train", "--help"])  # the list of kinds: every family
    assert got["code"] == 0 and got["families"] == sorted(FAMILIES)


def test_an_option_of_another_kind_still_says_so() -> None:
    got = probe([], ["train", "nb-static", "sklearn:breast_cancer", "-o", "unused.msgpack", "--trees", "3"])
    assert got["code"] == 2
