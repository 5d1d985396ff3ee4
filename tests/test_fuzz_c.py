"""libFuzzer harnesses of the C runtime (runtime_c/fuzz): each family's harness builds (clang,
-fsanitize=fuzzer,address,undefined) and survives a bounded smoke run. `make -C runtime_c fuzz` runs
each for 1M inputs (docs/fuzzing.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[1] / "runtime_c"
FAMILIES = sorted(p.stem.removeprefix("fuzz_") for p in (RUNTIME / "fuzz").glob("fuzz_*.c"))
SMOKE_RUNS = 20000


def _libfuzzer_missing(tmp: Path) -> str | None:
    if shutil.which("clang") is None:
        return "clang is not installed"
    src = tmp / "probe.c"
    src.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
    p = subprocess.run(["clang", "-fsanitize=fuzzer,address,undefined", str(src), "-o", str(tmp / "probe")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "clang lacks the libFuzzer/sanitizer runtimes (Debian: libclang-rt-14-dev): " + \
            (p.stderr.strip().splitlines() or ["link failed"])[-1]
    return None


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fuzz")
    reason = _libfuzzer_missing(out)
    if reason:
        pytest.skip(reason)
    p = subprocess.run(["make", "-s", "-C", str(RUNTIME), f"BUILD={out}", "-j2", "fuzz-build"],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def test_every_family_has_a_harness() -> None:
    assert set(FAMILIES) >= {"nb", "linear", "trees", "cascade", "gated", "skyline", "skymodel", "cstc"}


@pytest.mark.parametrize("family", FAMILIES)
def test_harness_smoke_run_is_clean(build: Path, family: str) -> None:
    corpus = build / f"corpus_{family}"
    corpus.mkdir(exist_ok=True)
    total = 0
    # the harness must also reach past the check: some fuzzed tables are accepted and predicted. Some
    # families' checks accept few random tables, so the run continues (the corpus grows) until one is.
    for runs in (SMOKE_RUNS, 5 * SMOKE_RUNS, 20 * SMOKE_RUNS):
        p = subprocess.run([str(build / f"fuzz_{family}"), f"-runs={runs}", "-seed=1", str(corpus)],
                           capture_output=True, text=True, timeout=600, cwd=build)
        assert p.returncode == 0, p.stderr[-3000:]
        assert f"Done {runs} runs" in p.stderr
        accepted = [line for line in p.stderr.splitlines() if line.startswith("fz_stats:")]
        assert accepted, p.stderr[-2000:]
        total += int(accepted[0].split()[2])
        if total > 0:
            break
    assert total > 0, f"no fuzzed {family} table passed the check in {35 * SMOKE_RUNS} runs"
