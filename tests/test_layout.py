"""The package layout's contracts: per-kind CLI help, runtime side free of the compiler,
cdef order, by-name C initializers, C identifiers for --name, one status table."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import cli
from compiler.header import c_init, check_name
from compiler.kinds import load_kind_modules
from compiler.train_cli import help_for_kind

KINDS = load_kind_modules()  # every kind (the CLI imports a kind's module when it is used)

ROOT = Path(__file__).resolve().parents[1]
COMMON = {"--output", "--positive", "--target-column", "--seed", "--costs", "--on", "--features", "--help"}


def option_names(text: str) -> set[str]:
    """Long option names of the option lines of a click help page (lines "  -x, --name ...")."""
    names = set()
    for line in text.split("\nOptions:\n", 1)[1].splitlines():
        if line.startswith("  -"):
            for tok in line.split():
                tok = tok.rstrip(",")
                if tok.startswith("--"):
                    names.add(tok)
                elif not tok.startswith("-"):
                    break
    return names


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_train_kind_help_shows_only_its_options(kind: str) -> None:
    res = CliRunner().invoke(cli, ["train", kind, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    shown = option_names(res.output) - COMMON
    own = {d for o in KINDS[kind].options for d in o.opts if d.startswith("--")}
    assert shown == own
    others = {d for k, s in KINDS.items() if k != kind for o in s.options for d in o.opts} - own
    assert not shown & others
    for other in set(KINDS) - {kind}:  # no other kind's notes in brackets
        assert f"[{other}" not in res.output and f"{other}:" not in res.output


def test_train_help_lists_every_kind() -> None:
    res = CliRunner().invoke(cli, ["train", "--help"], terminal_width=200)
    assert res.exit_code == 0
    assert "Kinds:" in res.output
    for kind in KINDS:
        assert kind in res.output


def test_foreign_option_and_unknown_kind_are_one_line_errors(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "compiler.cli", "train"]
    never = tmp_path / "never.msgpack"
    p = subprocess.run([*exe, "nb-static", "sklearn:breast_cancer", "-o", str(never), "--trees", "3"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--trees does not apply to kind nb-static" in p.stderr
    p = subprocess.run([*exe, "nosuchkind", "x.csv", "-o", "m"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "unknown kind 'nosuchkind'" in p.stderr
    assert "did you mean" not in p.stderr
    p = subprocess.run([*exe, "nb-stp", "x.csv", "-o", "m"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "unknown kind 'nb-stp' (did you mean 'nb-stop'?" in p.stderr
    assert not never.exists()


def test_bracket_notes_are_split_by_kind() -> None:
    kinds = ["cascade", "miser", "nb-static", "nb-stop"]
    text = "Penalty [miser: default 1; cascade: default 10; cascade --early-exit-every: default 0]."
    assert help_for_kind(text, "miser", kinds) == "Penalty. [default 1]"
    assert help_for_kind(text, "cascade", kinds) == "Penalty. [default 10; with --early-exit-every: default 0]"
    assert help_for_kind("Order [nb-*; default ig]", "nb-stop", kinds) == "Order. [default ig]"
    assert help_for_kind("Plain help.", "miser", kinds) == "Plain help."


@pytest.mark.parametrize("name", ["int", "static", "class", "_Bool", "fm_model", "__x", "_Upper", "_x", "a__b",
                                  "9lives", "a-b", "fm", "FM", "Fm_x"])
def test_export_c_rejects_keywords_and_bad_names(name: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        check_name(name)
    model = tmp_path / "m.msgpack"
    runner = CliRunner()
    res = runner.invoke(cli, ["train", "nb-static", "sklearn:breast_cancer", "-o", str(model), "--budget", "5"])
    assert res.exit_code == 0, res.output
    p = subprocess.run([sys.executable, "-m", "compiler.cli", "export-c", str(model), "-o", str(tmp_path / "m.h"),
                        "--name", name], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.startswith("error: --name") and p.stderr.count("\n") == 1
    assert not (tmp_path / "m.h").exists()


LIBRARY_HEADERS = ("math.h", "stdio.h", "stdlib.h", "string.h", "stdint.h", "stddef.h", "float.h", "time.h",
                   "ctype.h", "errno.h")


def compiles_as_model_name(name: str, tmp_path: Path) -> bool:
    """Does a file that includes the C standard headers a generated header and the firmware examples include, and
    names an object as export-c names the model, compile (gcc -std=c99 -Wall -Wextra -Werror -pedantic)?"""
    src = tmp_path / f"n_{name}.c"
    src.write_text("".join(f"#include <{h}>\n" for h in LIBRARY_HEADERS)
                   + f"static const int {name} = 1;\nint use(void);\nint use(void) {{ return {name}; }}\n")
    p = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", str(src), "-o",
                        str(tmp_path / f"n_{name}.o")], capture_output=True, text=True)
    return p.returncode == 0


@pytest.mark.parametrize("name", ["log", "round", "expf", "floorl", "main", "errno", "NULL", "printf", "exit",
                                  "uint8_t", "INT32_MAX", "FLT_MAX", "isalpha", "strlen", "EOF"])
def test_export_c_refuses_names_of_the_c_library(name: str, tmp_path: Path) -> None:
    """`--name log` wrote `static const fm_nbk log = {...}` next to `#include <math.h>`: a header that never
    compiled. Each name here does not compile as the model's name (checked with gcc where it is installed), and
    check_name refuses it in one line naming a way out."""
    with pytest.raises(ValueError, match=f"--name {name!r} is a name of the C standard library.*{name}_model"):
        check_name(name)
    if shutil.which("gcc") and name != "main":  # main is the examples' own function, not a header's
        assert not compiles_as_model_name(name, tmp_path)


@pytest.mark.parametrize("name", ["model", "logistic", "my_log", "exp2x", "nb_digits", "Model_t1", "isnan"])
def test_names_close_to_library_ones_are_kept(name: str, tmp_path: Path) -> None:
    assert check_name(name) == name
    if shutil.which("gcc"):
        assert compiles_as_model_name(name, tmp_path)


def test_c_init_builds_by_field_name() -> None:
    fields = {"n_features": "3u", "nnz": "1u", "feature": "f", "weight": "w", "bias": "0.0f",
              "decision_threshold": "0.5f", "costs": "NULL"}
    text = c_init("fm_linear", dict(reversed(list(fields.items()))))  # order given does not matter
    order = [line.split("*/")[0].strip("/* ") for line in text.splitlines()[1:-1]]
    assert order == list(fields)  # declaration order of fm_linear
    with pytest.raises(ValueError, match="missing fields"):
        c_init("fm_linear", {k: v for k, v in fields.items() if k != "bias"})
    with pytest.raises(ValueError, match="unknown fields"):
        c_init("fm_linear", {**fields, "left": "x"})


def test_runtime_side_never_imports_compiler_or_sklearn() -> None:
    code = ("import sys, pyruntime, power_bench, pyruntime.workload; import pyruntime.evaluators;"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('compiler', 'sklearn')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
    for path in [*ROOT.glob("pyruntime/**/*.py"), *ROOT.glob("power_bench/**/*.py")]:
        text = path.read_text()
        assert "from compiler" not in text and "import compiler" not in text, path


def test_status_codes_match_the_c_runtime() -> None:
    from pyruntime._frugalml_c import ffi, lib

    from pyruntime import errors

    names = ("FM_OK", "FM_E_ARG", "FM_E_READ", "FM_E_VALUE", "FM_E_MODEL", "FM_E_BUDGET", "FM_E_WINDOW",
             "FM_E_SAMPLE", "FM_E_CHANNEL", "FM_E_FEATURE")
    for name in names:
        assert getattr(errors, name) == getattr(lib, name), name
    assert set(errors.STATUS_MESSAGES) == {getattr(lib, name) for name in names}
    assert set(ffi.typeof("fm_status").relements) == {name for name in dir(lib) if name.startswith("FM_E_")} | {
        "FM_OK"}
    # fm_strerror gives the same one-line text for every code, and one text for any other value
    for code, message in errors.STATUS_MESSAGES.items():
        assert ffi.string(lib.fm_strerror(code)).decode() == message == errors.status_message(code)
    for unknown in (1, -10, 2**31 - 1, -(2**31)):
        assert ffi.string(lib.fm_strerror(unknown)).decode() == errors.UNKNOWN_STATUS == errors.status_message(unknown)


def test_vec_bounds_match_the_c_runtime() -> None:
    from pyruntime._frugalml_c import lib

    from compiler.header import VEC_MAX_FEATURES, VEC_MAX_OUTPUTS
    from pyruntime.skyline.model import MAX_VEC_FEATURES

    assert lib.FM_VEC_MAX_FEATURES == VEC_MAX_FEATURES == MAX_VEC_FEATURES
    assert lib.FM_VEC_MAX_OUTPUTS == VEC_MAX_OUTPUTS


def test_export_c_warns_when_the_model_is_over_the_vec_bounds(tmp_path: Path) -> None:
    """A tree model of more than FM_VEC_MAX_FEATURES features (16 channels of the default window plan: 553) exported
    without a word, and its header then stopped compilation with an #error: export-c now says so with the -D flags."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(0)
    y = np.arange(120) % 2
    X = rng.normal(size=(120, 520)) + y[:, None]
    data = tmp_path / "wide.csv"
    data.write_text(",".join([*(f"f{j}" for j in range(520)), "label"]) + "\n"
                    + "".join(",".join([*(f"{v:.3f}" for v in row), str(c)]) + "\n" for row, c in zip(X, y)))
    runner = CliRunner()
    res = runner.invoke(cli, ["train", "miser", str(data), "-o", str(tmp_path / "m.msgpack"), "--trees", "5"])
    assert res.exit_code == 0, res.output
    p = subprocess.run([sys.executable, "-m", "compiler.cli", "export-c", str(tmp_path / "m.msgpack"), "-o",
                        str(tmp_path / "m.h")], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    warning = [line for line in p.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "520 features" in warning[0] and "-DFM_VEC_MAX_FEATURES=520" in warning[0]
    assert "#error" in (tmp_path / "m.h").read_text()


def test_every_cdef_file_is_in_the_explicit_order() -> None:
    from pyruntime.build_cffi import CDEF_ORDER, cdef_files

    present = [n for n in CDEF_ORDER if (ROOT / "pyruntime/cdefs" / f"{n}.cdef").exists()]
    assert [p.stem for p in cdef_files()] == present
    assert {p.stem for p in (ROOT / "pyruntime/cdefs").glob("*.cdef")} <= set(CDEF_ORDER)


def test_families_are_mirrored() -> None:
    comp = {p.parent.name for p in ROOT.glob("compiler/*/kind*.py")}
    run = {p.parent.name for p in ROOT.glob("pyruntime/*/kind*.py")}
    assert comp == run and {"nb", "trees", "gated", "skyline"} <= comp


def test_runtime_c_has_one_folder_per_family() -> None:
    """runtime_c/src and runtime_c/include hold the same folders: core/ and the families named as in compiler/
    and pyruntime/ (no source left at the top)."""
    src = {p.name for p in (ROOT / "runtime_c/src").iterdir() if p.is_dir()}
    inc = {p.name for p in (ROOT / "runtime_c/include").iterdir() if p.is_dir()}
    families = {p.parent.name for p in ROOT.glob("compiler/*/kind*.py")}
    assert src == inc and "core" in src and families <= src
    assert not list((ROOT / "runtime_c/src").glob("*.c")) and not list((ROOT / "runtime_c/include").glob("*.h"))


TARGET_MARKS = ("__asm__", "asm(", "__GNUC__", "__attribute__", "__builtin", "__arm__", "__thumb", "__x86_64__",
                "__i386__", "__aarch64__", "__ARM_")


def test_target_specific_code_is_only_in_the_port_header() -> None:
    """Every compiler- or target-specific construct sits in runtime_c/include/core/fm_port.h, behind the
    FM_PORTABLE switch; no other runtime file names one."""
    files = [*(ROOT / "runtime_c/src").rglob("*.c"), *(ROOT / "runtime_c/include").rglob("*.h")]
    port = ROOT / "runtime_c/include/core/fm_port.h"
    assert port in files
    for path in files:
        if path != port:
            text = path.read_text()
            assert not [m for m in TARGET_MARKS if m in text], path
    assert "FM_PORTABLE" in port.read_text()


def test_nb_header_emitter_does_not_load_the_c_binding() -> None:
    """compiler/nb/header.py takes the record layout from pyruntime/nb/records.py, not from the cffi binding."""
    code = ("import sys, compiler.nb.header; "
            "print([m for m in ('pyruntime.nb.binding', 'pyruntime._frugalml_c') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_code_forms_are_registered_by_the_families() -> None:
    """Every compiler/<family>/code.py registers the kinds it generates code for (no hand-kept table)."""
    from compiler.codegen import CODE_FORMS, code_kinds, generator

    assert code_kinds() == ["cascade", "gated", "miser", "nb-static", "nb-stop"]
    assert {generator(k).__module__ for k in code_kinds()} == {
        f"compiler.{p.parent.name}.code" for p in ROOT.glob("compiler/*/code.py")}
    assert set(CODE_FORMS) == set(code_kinds())
