"""Every entry script of benchmarks/ runs its --quick mode to the end: a broken benchmark fails the suite.

The top level of benchmarks/ holds only entry scripts (helpers live in subfolders), so the list is the
folder's *.py files. Each run's stdout must hold its tables (a header line) and no traceback; peers
missing from benchmarks/.venv are skipped by the scripts themselves with a printed note.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
# A line each --quick run must print (its main table's header or summary), so that an empty run fails.
EXPECTED = {
    "adapt_letters.py": "Part 1: gamma",
    "base_learner.py": "| data | seed | test rows | miser lambda 0 |",
    "blas_threads.py": "| machine | default threads (ms/fit) |",
    "cascade_chooser.py": "| rule | candidates | won vs coupled |",
    "cegb.py": "| rows | miser fit (s) |",
    "cscc_keel.py": "| data | seed |",
    "cstc.py": "model     lambda",
    "demo.py": "speedup (static / early-stopping)",
    "energy.py": "J/prediction",
    "flash_stops.py": "| target (numeric) | k | stop points |",
    "energy_pipeline.py": "energy ratio B/A",
    "gated.py": "trainer",
    "miser_cascade.py": "sweep choice lambda=",
    "multiclass.py": "sklearn GradientBoosting",
    "multiclass_seeds.py": "early exits every 10 iterations",
    "nb_floor.py": "x86 f32",
    "nb_cost_aware.py": "| data | K | features | nb-static plain |",
    "nb_k_defaults.py": "| data | K | val rows | forms kept (34) |",
    "nb_table_forms.py": "| data | seed | K | cv mean-std",
    "nb_small_binary.py": "| data | val rows | features | nb-static |",
    "nb_stop.py": "== At the budget with the best static validation weighted accuracy",
    "nb_stop_cost.py": "check/read",
    "nb_stop_midsize.py": "| data | K | val rows | features | nb-static |",
    "pipeline.py": "eager / lazy",
    "pipeline_unseen.py": "eager / lazy",
    "q15_agreement.py": "term shifts",
    "runtime.py": "instr/prediction",
    "shared_runs.py": "flat/shared",
    "skyline.py": "accuracy vs budget",
    "skyline_count.py": "x86 instr  /feat lookup",
    "skyline_cv.py": "curve higher cross-validated on",
}


def test_every_entry_script_is_listed() -> None:
    assert sorted(p.name for p in SCRIPTS) == sorted(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_quick_mode_runs(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, "FRUGALML_PROGRESS": "off", "MPLBACKEND": "Agg"}
    res = subprocess.run([sys.executable, str(script), "--quick"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, f"{script.name} --quick failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    assert "Traceback" not in res.stdout + res.stderr
    assert EXPECTED[script.name] in res.stdout, res.stdout[-2000:]


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_help_names_quick_and_write_docs(script: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # in this process (the script's module loaded from its file, its main(["--help"])): no interpreter start and
    # import of numpy, scikit-learn and the runtime per script; the --quick runs above start each script as a
    # program. The path entries a script adds at import are undone with the test (monkeypatch).
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location(f"_benchmark_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    out = capsys.readouterr()
    assert exc.value.code in (0, None), out.err
    assert "--quick" in out.out and "--write-docs" in out.out


def test_pipeline_kinds_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/pipeline.py --kinds: only the named kinds' rows are measured (in the order given), an unknown kind
    is a usage error (exit 2) before anything runs."""
    import argparse

    monkeypatch.setattr(sys, "path", list(sys.path))
    from benchmarks import pipeline

    ap = argparse.ArgumentParser()
    pipeline.add_kinds_argument(ap)
    assert ap.parse_args(["--kinds", "cascade,nb-stop"]).kinds == ["cascade", "nb-stop"]
    assert ap.parse_args([]).kinds is None
    with pytest.raises(SystemExit) as exc:
        ap.parse_args(["--kinds", "cascade,forest"])
    assert exc.value.code == 2
    seen: list[str] = []

    def row(name: str, *args: object) -> pipeline.Row:
        seen.append(name)
        return pipeline.Row(name, 1.0, 1.0, 1.0, 1.0, 1.0, trees=4.0, model=8.0)

    monkeypatch.setattr(pipeline, "frugalml", lambda *args: "")
    monkeypatch.setattr(pipeline, "model_row", row)
    monkeypatch.setattr(pipeline, "forest_accuracy", lambda *args: 0.5)
    table, forest = pipeline.measure("data", "windows", 3, 128, 50, False, ["cascade"])
    assert [r.name for r in table] == seen == ["cascade, all features", pipeline.budgeted_name("cascade")]
    assert forest == 0.5
