"""tools/objcmp.py: layout-only changes compare equal, a changed instruction or branch does not, renames map."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("objcmp", ROOT / "tools" / "objcmp.py")
assert SPEC is not None and SPEC.loader is not None
objcmp = importlib.util.module_from_spec(SPEC)
sys.modules["objcmp"] = objcmp
SPEC.loader.exec_module(objcmp)

LISTING = """
0000000000000{a}0 <f>:
 {a}0:\tmov    %rdi,%rax
 {a}3:\tje     {a}8 <f+0x{j}>
 {a}5:\tlea    -0x{d}(%rip),%rsi        # 5f0 <table>
 {a}7:\tcall   {a}c <f+0x1c>
\t\t\t{a}8: R_X86_64_PLT32\t{callee}-0x4
"""


def listing(a: str = "6", j: str = "8", d: str = "130", callee: str = "g") -> str:
    return LISTING.format(a=a, j=j, d=d, callee=callee)


def test_addresses_and_rip_displacements_are_layout_only() -> None:
    assert objcmp.functions(listing(a="6", d="130")) == objcmp.functions(listing(a="7", d="70"))


def test_a_branch_inside_the_function_keeps_its_offset() -> None:
    assert objcmp.functions(listing(j="8")) != objcmp.functions(listing(j="c"))


def test_renamed_callee_and_function_map() -> None:
    base = {"a.c": objcmp.functions(listing(callee="old_g").replace("<f", "<old_f"))}
    new = {"a.c": objcmp.functions(listing(callee="g"))}
    compared, lines = objcmp.compare(base, new, {}, "x86")
    assert compared == 0 and len(lines) == 2  # f only in new, old_f only in base
    base = {"a.c": objcmp.functions(listing().replace("<f", "<old_f"))}
    compared, lines = objcmp.compare(base, {"a.c": objcmp.functions(listing())}, {"old_f": "f"}, "x86")
    assert (compared, lines) == (1, [])


def test_bad_rename_is_refused() -> None:
    with pytest.raises(ValueError, match="OLD=NEW"):
        objcmp.parse_renames(["nothing"])


C_BASE = "int f(int x) { return x * 3 + 1; }\nint g(int x) { return x - 2; }\n"


def build(tmp: Path, name: str, source: str) -> dict:
    tree = tmp / name
    (tree / "runtime_c" / "src" / "core").mkdir(parents=True)
    (tree / "runtime_c" / "include").mkdir(parents=True)
    (tree / "runtime_c" / "include" / "x.h").write_text("int f(int x);\n")
    (tree / "runtime_c" / "src" / "core" / "x.c").write_text('#include "x.h"\n' + source)
    return objcmp.disassemble(tree, objcmp.CONFIGS["x86"], portable=False)


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("objdump") is None, reason="needs gcc and objdump")
def test_compiled_trees(tmp_path: Path) -> None:
    base = build(tmp_path, "base", C_BASE)
    same = build(tmp_path, "same", "static const int pad[4] = {1, 2, 3, 4};\nint h(int i) { return pad[i & 3]; }\n"
                 + C_BASE)
    compared, lines = objcmp.compare(base, same, {}, "x86")
    assert compared == 2 and lines == ["x86 core/x.c h: only in the new revision"]
    changed = build(tmp_path, "changed", C_BASE.replace("x * 3 + 1", "x * 5 + 1"))
    compared, lines = objcmp.compare(base, changed, {}, "x86")
    assert compared == 2 and len(lines) == 1 and lines[0].startswith("x86 core/x.c f: differs")


def test_unknown_configuration_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert objcmp.main(["HEAD", ".", "--configs", "x86,m99"]) == 2
    assert "unknown configuration 'm99'" in capsys.readouterr().err
