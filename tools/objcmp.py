"""Compare the runtime's object code of two revisions, function by function.

A refactor of runtime_c (a fold into a shared header, a macro, a renamed static) should leave the code the compiler
emits unchanged; this tool shows that it does, or names the functions that changed. Each revision's runtime_c/src
is compiled with the flags of the runtime for every configuration (x86-64 gcc -O2, and with arm-none-eabi-gcc
Cortex-M0/M3/M4F/M33), native and -DFM_PORTABLE; every object is disassembled (`objdump -d -r`) and every function
compared instruction by instruction after layout-only details are normalised (addresses, absolute branch targets,
local label numbers, RIP-relative displacements, offsets into other symbols; a branch within the function keeps
its offset). A function present in one revision only is a difference unless --rename maps it.

    .venv/bin/python tools/objcmp.py [BASE] [NEW] [--configs x86,m0,m3,m4f,m33] [--rename OLD=NEW ...] [-v]

BASE and NEW are git revisions (default: HEAD and the working tree, written `.`). Prints one line per differing
function (configuration, object, function, instruction counts) and a summary line; exit 0 when nothing differs,
1 when something does, 2 on bad input (unknown revision, missing compiler).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-ffp-contract=off"]


@dataclass(frozen=True)
class Config:
    name: str
    cc: str
    objdump: str
    flags: tuple[str, ...]


CONFIGS = {
    "x86": Config("x86", "gcc", "objdump", ("-O2",)),
    "m0": Config("m0", "arm-none-eabi-gcc", "arm-none-eabi-objdump", ("-O2", "-mthumb", "-mcpu=cortex-m0")),
    "m3": Config("m3", "arm-none-eabi-gcc", "arm-none-eabi-objdump", ("-O2", "-mthumb", "-mcpu=cortex-m3")),
    "m4f": Config("m4f", "arm-none-eabi-gcc", "arm-none-eabi-objdump",
                  ("-O2", "-mthumb", "-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")),
    "m33": Config("m33", "arm-none-eabi-gcc", "arm-none-eabi-objdump", ("-O2", "-mthumb", "-mcpu=cortex-m33")),
}

Functions = dict[str, list[str]]

_HEADER = re.compile(r"^[0-9a-f]+ <(.+)>:$")
_ADDRESS = re.compile(r"^\s*[0-9a-f]+:\s*")
_TARGET = re.compile(r"\b[0-9a-f]+ (<[^>]*>)")
_SECTION = re.compile(r"<\.text[^>]*>")
_LABEL = re.compile(r"\.LC\d+|\.L\d+")
_OFFSET = re.compile(r"<([^>+]*)\+0x[0-9a-f]+>")
_RIP = re.compile(r"-?0x[0-9a-f]+\(%rip\)")
_SYMBOL = re.compile(r"<([^>+]+)")


def functions(disassembly: str) -> Functions:
    """Function name -> its normalised instruction lines (relocation lines keep their type, not their offset)."""
    out: Functions = {}
    current: str | None = None
    for line in disassembly.splitlines():
        header = _HEADER.match(line)
        if header:
            current = header.group(1)
            out[current] = []
            continue
        if current is None or not line.strip():
            continue
        text = _ADDRESS.sub("", line)
        text = _TARGET.sub(r"\1", text)
        text = _SECTION.sub("<.text>", text)
        text = _OFFSET.sub(lambda m, f=current: m.group(0) if m.group(1) == f else f"<{m.group(1)}>", text)
        text = _LABEL.sub(".L", text)
        text = _RIP.sub("(%rip)", text)
        out[current].append(" ".join(text.split()))
    return out


def export_tree(revision: str, into: Path) -> Path:
    """runtime_c of REVISION (a git revision, or `.` for the working tree) copied under INTO."""
    into.mkdir(parents=True)
    if revision == ".":
        shutil.copytree(ROOT / "runtime_c" / "src", into / "runtime_c" / "src")
        shutil.copytree(ROOT / "runtime_c" / "include", into / "runtime_c" / "include")
        return into
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "runtime_c/src", "runtime_c/include"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise ValueError(f"not a git revision with runtime_c: {revision}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def disassemble(tree: Path, config: Config, portable: bool) -> dict[str, Functions]:
    """Object name -> its functions, for every runtime .c of TREE compiled in CONFIG."""
    runtime = tree / "runtime_c"
    includes = sorted({f"-I{p.parent}" for p in (runtime / "include").rglob("*.h")})
    defines = ["-DFM_PORTABLE"] if portable else []
    out: dict[str, Functions] = {}
    for source in sorted((runtime / "src").rglob("*.c")):
        obj = source.with_suffix(f".{config.name}{'-p' if portable else ''}.o")
        subprocess.run([config.cc, *WARN, *config.flags, *defines, *includes, "-c", str(source), "-o", str(obj)],
                       check=True, cwd=runtime)
        listing = subprocess.run([config.objdump, "-d", "-r", "--no-show-raw-insn", str(obj)],
                                 capture_output=True, text=True, check=True).stdout
        out[str(source.relative_to(runtime / "src"))] = functions(listing)
    return out


def compare(base: dict[str, Functions], new: dict[str, Functions], renames: dict[str, str], where: str
            ) -> tuple[int, list[str]]:
    """(functions compared, one line per difference) of two builds of the same configuration."""
    lines: list[str] = []
    compared = 0
    for obj in sorted(set(base) | set(new)):
        if obj not in base or obj not in new:
            lines.append(f"{where} {obj}: only in {'the new' if obj in new else 'the base'} revision")
            continue
        old_funcs = {renames.get(name, name): [_SYMBOL.sub(lambda m: "<" + renames.get(m.group(1), m.group(1)), line)
                                               for line in body]
                     for name, body in base[obj].items()}
        new_funcs = new[obj]
        for name in sorted(set(old_funcs) ^ set(new_funcs)):
            lines.append(f"{where} {obj} {name}: only in {'the new' if name in new_funcs else 'the base'} revision")
        for name in sorted(set(old_funcs) & set(new_funcs)):
            compared += 1
            if old_funcs[name] != new_funcs[name]:
                lines.append(f"{where} {obj} {name}: differs ({len(old_funcs[name])} -> {len(new_funcs[name])} lines)")
    return compared, lines


def parse_renames(pairs: list[str]) -> dict[str, str]:
    renames = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old or not new:
            raise ValueError(f"--rename wants OLD=NEW, got {pair!r}")
        renames[old] = new
    return renames


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", nargs="?", default="HEAD", help="git revision (default HEAD)")
    parser.add_argument("new", nargs="?", default=".", help="git revision, or . for the working tree (default)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated of " + ", ".join(CONFIGS))
    parser.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                        help="a function renamed between the revisions (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="a progress line per configuration")
    args = parser.parse_args(argv)
    try:
        renames = parse_renames(args.rename)
        configs = [CONFIGS[name] for name in args.configs.split(",") if name]
    except KeyError as err:
        print(f"error: unknown configuration {err.args[0]!r} (known: {', '.join(CONFIGS)})", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for config in configs:
        for tool in (config.cc, config.objdump):
            if shutil.which(tool) is None:
                print(f"error: {tool} not found (tools/install_toolchains.sh installs it)", file=sys.stderr)
                return 2
    with tempfile.TemporaryDirectory(prefix="objcmp-") as tmp:
        try:
            base_tree = export_tree(args.base, Path(tmp) / "base")
            new_tree = export_tree(args.new, Path(tmp) / "new")
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        total, differences = 0, []
        for config in configs:
            for portable in (False, True):
                where = f"{config.name}-{'portable' if portable else 'native'}"
                if args.verbose:
                    print(f"... {where}", file=sys.stderr)
                n, lines = compare(disassemble(base_tree, config, portable), disassemble(new_tree, config, portable),
                                   renames, where)
                total += n
                differences += lines
    for line in differences:
        print(line)
    print(f"functions compared: {total}, differences: {len(differences)} ({args.base} -> {args.new})")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
