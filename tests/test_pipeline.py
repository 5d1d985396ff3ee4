"""One pipeline on the device: export-c writes a window-trained model with its extraction plan, and the generated
FM_PREDICT_WINDOW turns a raw window into the same LABEL FEATURES_READ [COST] line as `frugalml predict` on those
windows (features from the numpy reference), lazily and eagerly; each bad window gives its status code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compiler.cli import cli
from pyruntime.data import BUNDLED_WINDOWS
from tests.host_build import run_with_header

TEST_TS = BUNDLED_WINDOWS / "BasicMotions" / "BasicMotions_TEST.ts"
N = 12

# prints every embedded window's predict line, lazily then eagerly, then the status of each bad window
BODY = """    static uint64_t buf[16384];
    static float bad[FM_PLAN_CHANNELS * FM_WINDOW_LEN];
    int eager, rc;
    char cost[FM_COST_TEXT_SIZE];
    if (FM_WINDOW_SCRATCH_SIZE(FM_WINDOW_LEN) > sizeof buf) return 3;
    for (eager = 0; eager < 2; ++eager) {
        for (i = 0; i < FM_N_WINDOWS; ++i) {
            rc = FM_PREDICT_WINDOW(FM_WINDOWS[i], FM_PLAN_CHANNELS, FM_WINDOW_LEN, buf, sizeof buf, eager, &r);
            if (rc != FM_OK) return 1;
#if FM_REPORTS_COST
            printf("%s %u %s\\n", FM_LABEL_TEXT(r.label), (unsigned)r.n_read, fm_cost_text(cost, FM_RESULT_COST(&r)));
#else
            (void)cost;
            printf("%s %u\\n", FM_LABEL_TEXT(r.label), (unsigned)r.n_read);
#endif
        }
    }
    printf("channels %d\\n", FM_PREDICT_WINDOW(FM_WINDOWS[0], FM_PLAN_CHANNELS - 1u, FM_WINDOW_LEN, buf, sizeof buf,
                                              0, &r));
    printf("short %d\\n", FM_PREDICT_WINDOW(FM_WINDOWS[0], FM_PLAN_CHANNELS, FM_PLAN_MIN_LEN - 1u, buf, sizeof buf,
                                           0, &r));
    printf("scratch %d\\n", FM_PREDICT_WINDOW(FM_WINDOWS[0], FM_PLAN_CHANNELS, FM_WINDOW_LEN, buf,
                                             FM_WINDOW_SCRATCH_SIZE(FM_WINDOW_LEN) - 1u, 0, &r));
    for (i = 0; i < FM_PLAN_CHANNELS * FM_WINDOW_LEN; ++i) bad[i] = NAN;
    printf("nan %d\\n", FM_PREDICT_WINDOW(bad, FM_PLAN_CHANNELS, FM_WINDOW_LEN, buf, sizeof buf, 0, &r));
    for (i = 0; i < FM_PLAN_CHANNELS * FM_WINDOW_LEN; ++i) bad[i] = i % 7u == 3u ? -INFINITY : 0.25f;
    printf("inf %d\\n", FM_PREDICT_WINDOW(bad, FM_PLAN_CHANNELS, FM_WINDOW_LEN, buf, sizeof buf, 1, &r));
    {
        static const fm_feat_spec unknown[1] = {{99u, 0u, 0u, 0u, 0u, 0u}}, lag0[1] = {{7u, 0u, 0u, 0u, 0u, 0u}},
                                  far[1] = {{0u, FM_PLAN_CHANNELS, 0u, 0u, 0u, 0u}};
        const fm_plan p1 = {unknown, 1u, FM_PLAN_CHANNELS, 1u}, p2 = {lag0, 1u, FM_PLAN_CHANNELS, 2u},
                      p3 = {far, 1u, FM_PLAN_CHANNELS, 1u};
        printf("plan %d %d %d %d\\n", fm_plan_check(&FM_PLAN), fm_plan_check(&p1), fm_plan_check(&p2),
               fm_plan_check(&p3));
    }
"""

KINDS = {
    "miser": ["miser", "uea:BasicMotions"],
    "miser-q15": ["miser", "uea:BasicMotions", "--trees", "30"],  # q15 tables (float32 features)
    "cascade": ["cascade", "uea:BasicMotions", "--positive", "Walking", "--trees", "30"],
    "nb-stop": ["nb-stop", "uea:BasicMotions"],
}


def run(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_predict_window_matches_predict_lazily_and_eagerly(kind: str, tmp_path: Path) -> None:
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", *KINDS[kind], "-o", model)
    assert code == 0, err
    header = tmp_path / "m.h"
    numeric = ["--numeric", "q15" if kind.endswith("-q15") else "float32"]
    code, _, err = run("export-c", model, "-o", header, "--embed", TEST_TS, "--rows", str(N), *numeric)
    assert code == 0, err
    text = header.read_text()
    assert "#define FM_N_WINDOWS 12u" in text and "fm_plan" in text
    code, out, err = run("predict", model, TEST_TS, "--rows", str(N), *numeric)
    assert code == 0, err
    want = out.strip().splitlines()
    lines = run_with_header(text.replace('#include "fm_window.h"', '#include "fm_window.h"\n#include "fm_cost_text.h"'),
                            BODY, tmp_path)
    assert lines[:N] == want, kind
    assert lines[N:2 * N] == want, kind
    assert lines[2 * N:] == ["channels -8", "short -6", "scratch -1", "nan -7", "inf -7", "plan 0 -9 -9 -8"]


def test_embed_says_when_the_raw_windows_are_left_out(tmp_path: Path) -> None:
    """The code form and windows of unequal lengths embed the host's feature rows only: export-c warns."""
    model = tmp_path / "m.msgpack"
    code, _, err = run("train", *KINDS["nb-stop"], "-o", model)
    assert code == 0, err
    code, _, err = run("export-c", model, "-o", tmp_path / "t.h", "--embed", TEST_TS, "--rows", "3")
    assert code == 0 and "warning" not in err and "FM_N_WINDOWS" in (tmp_path / "t.h").read_text(), err
    code, _, err = run("export-c", model, "-o", tmp_path / "c.h", "--form", "code", "--embed", TEST_TS, "--rows", "3")
    text = (tmp_path / "c.h").read_text()
    assert code == 0 and "FM_N_WINDOWS" not in text and "FM_N_ROWS" in text, err
    assert "warning: --form code has no on-device feature pipeline" in err
    lines = TEST_TS.read_text().splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data") + 1
    cut = lines[first].split(":")  # the first window 10 samples shorter in every channel
    lines[first] = ":".join([",".join(c.split(",")[:-10]) for c in cut[:-1]] + [cut[-1]])
    uneq = tmp_path / "uneq.ts"
    uneq.write_text("\n".join(ln for ln in lines if not ln.lower().startswith(("@equallength", "@serieslength")))
                    + "\n")
    code, _, err = run("export-c", model, "-o", tmp_path / "u.h", "--embed", uneq, "--rows", "3")
    assert code == 0 and "FM_N_WINDOWS" not in (tmp_path / "u.h").read_text(), err
    assert "warning: the embedded windows have unequal lengths" in err


def test_embed_warns_when_the_kind_has_no_window_pipeline(tmp_path: Path) -> None:
    """A gated model trained on windows has a feature plan but no FM_PREDICT_WINDOW: export-c embeds the host's
    feature rows, not windows no call would use, and says so."""
    model = tmp_path / "g.msgpack"
    code, _, err = run("train", "adapt-lin", "uea:BasicMotions", "--hpc-remote", "-o", model)
    assert code == 0, err
    code, _, err = run("export-c", model, "-o", tmp_path / "g.h", "--embed", TEST_TS, "--rows", "3")
    text = (tmp_path / "g.h").read_text()
    assert code == 0 and "FM_N_WINDOWS" not in text and "FM_N_ROWS 3u" in text and "FM_PREDICT_WINDOW" not in text
    assert "warning: the adapt-lin (gated tables) model has no on-device feature pipeline" in err


def test_trained_as_names_the_trainer_and_the_file_kind_only_when_they_differ() -> None:
    from types import SimpleNamespace

    from compiler.cli import trained_as

    assert trained_as(SimpleNamespace(kind="gated", meta={"training": {"kind": "l1-gate"}})) == "l1-gate (gated tables)"
    assert trained_as(SimpleNamespace(kind="cstc", meta={"training": {"kind": "cstc"}})) == "cstc"
    assert trained_as(SimpleNamespace(kind="nb", meta={})) == "nb"  # a file without a training record


def test_q15_warning_advice_fits_plan_features(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Features a plan computes on the device cannot be scaled before training: the q15 warning says float32."""
    from types import SimpleNamespace

    from compiler.cli import q15_agreement
    from pyruntime import format as fmt
    from pyruntime.data import load_dataset

    model_path = tmp_path / "m.msgpack"
    code, _, err = run("train", *KINDS["nb-stop"], "-o", model_path)
    assert code == 0, err
    model = fmt.load(str(model_path))
    X = load_dataset("uea:BasicMotions").X[:8]
    wrong = SimpleNamespace(label=np.full(X.shape[0], -5))  # no row agrees
    assert q15_agreement(model, X, wrong) == 0.0
    err = capsys.readouterr().err
    assert "use float32 tables (--numeric float32)" in err and "center and scale" not in err
    model.meta.pop("feature_plan")
    q15_agreement(model, X, wrong)
    assert "center and scale" in capsys.readouterr().err
