"""benchmarks/cegb.py --from-json: runs measured per set merge into one table and summary (known answers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import cegb  # noqa: E402


def _run(name: str, sweep: tuple[float, float], cegb_val: tuple[float, float], miser0: float) -> dict:
    p = lambda a, c: {"acc": a, "cost": c}  # noqa: E731
    return {"data": name, "seed": 0, "miser0": p(miser0, 10), "lgb": p(0.90, 10), "sweep": p(*sweep),
            "cascade": p(*sweep), **{f"cegb_{k}": {"val_choice": p(*cegb_val), "hindsight": p(0.9, 5)}
                                     for k in ("coupled", "lazy")}}


def test_from_json_merges_runs_into_one_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"runs": [_run("a", (0.896, 4.0), (0.90, 8.0), 0.895)]}))  # cheaper, -0.4 points
    b.write_text(json.dumps({"runs": [_run("b", (0.90, 12.0), (0.90, 8.0), 0.88)]}))  # dearer
    assert cegb.main(["--from-json", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.count("| a | 0 |") == 1 and out.count("| b | 0 |") == 1
    assert "median -1.25, min -2.00, mean -1.25 over 2 runs; more than 1 point below on 1" in out
    assert "sweep vs CEGB coupled (validation choice): cheaper at accuracy >= CEGB - 0.5 points on 1/2 runs; " \
           "median cost ratio 1.00" in out
    assert "| rows |" not in out  # nothing trained, no scaling


def test_a_refused_model_is_a_row_and_a_lost_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trainer that refuses on purpose (a trivial model, say) gives a row that says so; the summary counts the
    run as lost and leaves it out of the medians."""
    won = _run("a", (0.896, 4.0), (0.90, 8.0), 0.895)
    lost = {**_run("b", (0.90, 2.0), (0.90, 8.0), 0.88), "cascade": {"refused": "cascade: the trained model is "
                                                                                 "trivial", "seconds": 1.0}}
    a = tmp_path / "a.json"
    a.write_text(json.dumps({"runs": [won, lost]}))
    assert cegb.main(["--from-json", str(a)]) == 0
    out = capsys.readouterr().out
    assert "| 0.9000 / 2.0 | refused | - |" in out
    assert "cascade vs CEGB coupled (validation choice): cheaper at accuracy >= CEGB - 0.5 points on 1/2 runs; " \
           "median cost ratio 0.50; median accuracy -0.40 points; refused on 1" in out
    assert "sweep vs CEGB coupled (validation choice): cheaper at accuracy >= CEGB - 0.5 points on 2/2 runs; " \
           "median cost ratio 0.38" in out  # (4/8 + 2/8) / 2, nothing refused: no note
    lost["miser0"] = {"refused": "trivial", "seconds": 1.0}
    a.write_text(json.dumps({"runs": [won, lost]}))
    assert cegb.main(["--from-json", str(a)]) == 0
    assert "over 1 runs; more than 1 point below on 0; refused on 1" in capsys.readouterr().out


def test_frugal_point_reports_a_refusal_instead_of_raising(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from compiler.tasks import TrivialModelError

    class Refusing:
        def train(self, *args: object) -> None:
            raise TrivialModelError("cascade: the trained model is trivial: validation accuracy 0.6522\nmore")

    class Task:
        class data:  # noqa: N801 - the attribute path frugal_point reads
            name = "keel:x"

    monkeypatch.setattr(cegb, "kind_spec", lambda kind: Refusing())
    point = cegb.frugal_point("cascade", Task(), {}, None, None, None)  # type: ignore[arg-type]
    assert point["refused"] == "cascade: the trained model is trivial: validation accuracy 0.6522"
    assert "refused on keel:x" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "says"), [
    (None, "cannot read it"),
    ("nope", "not JSON"),
    ('{"x": 1}', "no 'runs' list"),
    ('[1, 2]', "no 'runs' list"),
    ('{"runs": [{"data": "a", "seed": 0}]}', "run 0 lacks miser0, sweep, cascade"),
    ('{"runs": [3]}', "run 0 lacks data, seed"),
])
def test_from_json_refuses_a_file_that_is_not_runs_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               text: str | None, says: str) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"runs": [_run("a", (0.896, 4.0), (0.90, 8.0), 0.895)]}))
    bad = tmp_path / "bad.json"
    if text is not None:
        bad.write_text(text)
    with pytest.raises(SystemExit) as exc:
        cegb.main(["--from-json", str(good), str(bad)])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing printed before the refusal: no half table
    last = captured.err.strip().splitlines()[-1]
    assert f"error: --from-json {bad}: " in last and says in last
