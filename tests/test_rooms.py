"""The rooms' contracts on the Python side: struct layouts read from the cdef text equal the binding's,
no compiler module loads the C binding, one source for the tree kinds' defaults (CLI, estimators, docs),
docstrings name modules and paths that exist, and docs/architecture.md follows every kind from
``frugalml train`` to its C in six files or fewer."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cli import cli
from compiler.kinds import load_kind_modules
from compiler.options import CASCADE_DEFAULTS, DEFAULT_GRID, MISER_DEFAULTS, SWEEP_TOLERANCE, floats_text
from pyruntime.layout import declarations, field_offsets, struct_fields, struct_layout

KINDS = load_kind_modules()  # every kind (the CLI imports a kind's module when it is used)

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ struct layouts ----
def test_struct_layout_from_cdef_text_equals_the_binding() -> None:
    from pyruntime._frugalml_c import ffi

    structs = declarations()[0]
    assert {"fm_result", "fm_trees", "fm_nb", "fm_cascade", "fm_gated", "fm_memo"} <= set(structs)
    for name in structs:
        assert [f.name for f in struct_fields(name)] == [n for n, _ in ffi.typeof(name).fields], name
        assert struct_layout(name, 8) == (ffi.sizeof(name), ffi.alignof(name)), name
        assert field_offsets(name, 8) == {n: ffi.offsetof(name, n) for n, _ in ffi.typeof(name).fields}, name


def test_struct_layout_known_answers_on_a_32_bit_target() -> None:
    assert struct_layout("fm_result", 4) == (28, 4)
    assert struct_layout("fm_reader", 4) == (8, 4)
    assert struct_layout("fm_nb_pos", 4) == (28, 4)  # feature, edge[2], d[4]
    assert struct_layout("fm_memo", 4) == (20, 4)  # two pointers, n, epoch (padded), keys


def test_no_compiler_module_loads_the_c_binding() -> None:
    """No compiler module names the binding, and importing every compiler module then writing a header of each
    kind's model file (tests/data/v2) leaves pyruntime._frugalml_c unloaded."""
    for path in (ROOT / "compiler").rglob("*.py"):
        assert "_frugalml_c" not in path.read_text(), path
    code = ("import sys, pkgutil, importlib, compiler\n"
            "from compiler.kinds import load_kind_modules\n"
            "from compiler.header import render_header\n"
            "from pyruntime.format import load\n"
            "load_kind_modules()\n"
            "for p in sorted(__import__('pathlib').Path('tests/data/v2').glob('*.msgpack')):\n"
            "    render_header(load(p), 'float32')\n"
            "print('pyruntime._frugalml_c' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False", out.stderr


# ------------------------------------------------------------------ defaults ----
def _help(kind: str) -> str:
    res = CliRunner().invoke(cli, ["train", kind, "--help"], terminal_width=400)
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_tree_defaults_have_one_source() -> None:
    from compiler.trees.cascade import EarlyExitEnsemble
    from compiler.trees.cscc import CsccCascadeClassifier
    from compiler.trees.miser import DEFAULT_LEAVES, GreedyMiserClassifier

    def defaults(cls: type) -> dict[str, object]:
        return {k: p.default for k, p in inspect.signature(cls).parameters.items()}

    m, c = defaults(GreedyMiserClassifier), defaults(CsccCascadeClassifier)
    assert (m["lam"], m["n_trees"], m["step"], m["tree_eval_cost"], DEFAULT_LEAVES) == (
        MISER_DEFAULTS["lambda"], MISER_DEFAULTS["trees"], MISER_DEFAULTS["step"], MISER_DEFAULTS["tree_cost"],
        MISER_DEFAULTS["leaves"])
    assert (c["n_stages"], c["n_trees"], c["rho"], c["max_depth"], c["step"]) == tuple(
        CASCADE_DEFAULTS[k] for k in ("stages", "trees", "rho", "depth", "step"))
    assert defaults(EarlyExitEnsemble)["min_agreement"] == CASCADE_DEFAULTS["min_agreement"]

    miser, cascade = _help("miser"), _help("cascade")
    for text in (f"default {MISER_DEFAULTS['trees']}", f"default {MISER_DEFAULTS['leaves']} unless",
                 f"default {MISER_DEFAULTS['lambda']:g}", f"default {SWEEP_TOLERANCE:g}", floats_text(DEFAULT_GRID)):
        assert text in miser, text
    for text in (f"default {CASCADE_DEFAULTS['trees']}", f"default {CASCADE_DEFAULTS['stages']}]",
                 f"default {floats_text(CASCADE_DEFAULTS['pool_lambdas'])}", f"default {CASCADE_DEFAULTS['rho']:g}",
                 f"default {CASCADE_DEFAULTS['min_agreement']:g}"):
        assert text in cascade, text

    doc = (ROOT / "docs/miser_cascade.md").read_text()
    for text in (f"--lambda {MISER_DEFAULTS['lambda']:g} [--trees {MISER_DEFAULTS['trees']}] "
                 f"[--leaves {MISER_DEFAULTS['leaves']} | --depth", f"--step {MISER_DEFAULTS['step']:g}",
                 f"(default {MISER_DEFAULTS['trees']})", f"[--tolerance {SWEEP_TOLERANCE:g}]",
                 f"[--stages {CASCADE_DEFAULTS['stages']}] [--trees {CASCADE_DEFAULTS['trees']}]",
                 f"[--pool-lambdas {floats_text(CASCADE_DEFAULTS['pool_lambdas'])}] "
                 f"[--rho {CASCADE_DEFAULTS['rho']:g}]",
                 f"[--min-agreement {CASCADE_DEFAULTS['min_agreement']:g}]"):
        assert text in doc, text


# ------------------------------------------------------------------ docstrings ----
PACKAGES = ("compiler", "pyruntime", "power_bench", "benchmarks", "tests", "tools")
DOTTED = re.compile(r"(?<![\w./])((?:compiler|pyruntime|power_bench)(?:\.\w+)+)")
PATH = re.compile(r"(?<![\w./-])((?:compiler|pyruntime|runtime_c|benchmarks|tests|docs|tools|firmware_examples|"
                  r"power_bench)/[\w./-]*\w)(?![\w{])")
PLACEHOLDER = re.compile(r"(^|/)[a-z]?[A-Z]+(/|\.|$)")  # tests/data/vN, compiler/NAME/...


@functools.cache
def _text(path: Path) -> str:
    return path.read_text()


def _python_files(pkg: str) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(ROOT / pkg):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        out += [Path(folder, f) for f in files if f.endswith(".py")]
    return out


@functools.cache
def _dotted_exists(name: str) -> bool:
    """A dotted name (package, modules, optional attribute): the longest module prefix exists and defines
    the next name, if any."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if list(base.parent.glob(f"{parts[i - 1]}.*.so")) and i == len(parts):
            return True  # a compiled extension (pyruntime._frugalml_c)
        if module.is_file():
            rest = parts[i:]
            return not rest or re.search(rf"\b{re.escape(rest[0])}\b", _text(module)) is not None
    return False


def _docstrings(path: Path) -> list[tuple[int, str]]:
    """The docstrings of the module, its functions and classes, and their methods (not nested functions)."""
    module = ast.parse(_text(path))
    nodes: list[ast.AST] = [module]
    for node in module.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            nodes.append(node)
            if isinstance(node, ast.ClassDef):
                nodes += [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    docs = [(getattr(n, "lineno", 1), ast.get_docstring(n, clean=False)) for n in nodes]  # type: ignore[arg-type]
    return [(line, doc) for line, doc in docs if doc]


@functools.cache
def _made_on_demand() -> frozenset[str]:
    """Plain names .gitignore lists (.venv, demo_out ...): folders the tools make when first needed, so a
    docstring may name them before they exist (benchmarks/.venv on a fresh clone)."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return frozenset(n.strip("/") for n in lines if n.strip() and not n.startswith("#") and not set(n) & set("*?[!"))


def test_every_sweep_takes_the_small_set_rule(tmp_path: Path) -> None:
    """Every kind with --sweep takes --folds, whose help states the one rule (compiler.options.auto_folds: CV_FOLDS
    folds under CV_BELOW validation rows, 1 = the validation part), and refuses it without --sweep."""
    from compiler.options import CV_BELOW, CV_FOLDS

    sweeping = sorted(k for k, spec in KINDS.items() if "sweep" in spec.option_names)
    assert {"miser", "adapt-gbrt", "adapt-lin", "l1-gate", "cstc"} <= set(sweeping)
    for kind in sweeping:
        folds = next(o for o in KINDS[kind].options if o.name == "folds")
        text = " ".join((folds.help or "").split())
        assert f"default {CV_FOLDS} when the validation part has fewer than {CV_BELOW} rows, else 1" in text, kind
        assert "1: the validation part alone" in text, kind
        out = tmp_path / f"{kind}.msgpack"
        res = CliRunner().invoke(cli, ["train", kind, "sklearn:wine", "-o", str(out), "--folds", "3"])
        assert res.exit_code == 2 and "--folds needs --sweep" in res.stderr, (kind, res.stderr)
        assert not out.exists()


def test_docstrings_name_modules_and_paths_that_exist() -> None:
    bad = []
    for pkg in PACKAGES:
        for path in _python_files(pkg):
            for line, doc in _docstrings(path):
                where = f"{path.relative_to(ROOT)}:{line}"
                bad += [f"{where} {m}" for m in DOTTED.findall(doc) if not _dotted_exists(m.rstrip("."))]
                bad += [f"{where} {m}" for m in PATH.findall(doc)
                        if not PLACEHOLDER.search(m) and not (ROOT / m).exists()
                        and not set(Path(m).parts) & _made_on_demand()]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------ architecture ----
def kind_files() -> dict[str, list[str]]:
    """The rows of docs/architecture.md's table of each kind's files (| `kind`[, `kind`] | `file` ... |)."""
    text = (ROOT / "docs/architecture.md").read_text()
    section = text.split("## Each kind from `frugalml train` to its C", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            files = re.findall(r"`([^`]+)`", cells[1])
            for kind in re.findall(r"`([^`]+)`", cells[0]):
                rows[kind] = files
    return rows


def test_architecture_follows_every_kind_in_six_files() -> None:
    rows = kind_files()
    assert set(rows) == set(KINDS)
    for kind, files in rows.items():
        assert 4 <= len(files) <= 6, (kind, files)
        for f in files:
            assert (ROOT / f).is_file(), (kind, f)
        assert any(f.startswith("compiler/") for f in files) and any(f.startswith("runtime_c/src/") for f in files)


@pytest.mark.parametrize("kind", ["miser", "cascade", "nb-stop"])
def test_architecture_lists_the_kind_module_that_registers_it(kind: str) -> None:
    assert f"{KINDS[kind].train.__module__.replace('.', '/')}.py" == kind_files()[kind][0]
