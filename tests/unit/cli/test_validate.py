"""`biasatlas validate`: exit codes and output from the controls' verdicts (the model runs are faked here;
tests/integration/test_controls.py runs the real ones)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.controls.contact import check as contact_check
from biasatlas.controls.contact.check import ContactCheck, LanguageVerdict
from biasatlas.controls.contact.groups import GroupFinding
from biasatlas.controls.samaritan import check as samaritan_check
from biasatlas.controls.samaritan.check import SamaritanCheck, SamaritanVerdict

runner = CliRunner()


def _check(detected: bool, false_flags: list[str]) -> ContactCheck:
    effect = 0.8 if detected else 0.01
    verdicts = [LanguageVerdict(lang, group, GroupFinding(lang, group, 9, effect, effect - 0.1, effect + 0.1, 0.001,
                                                          0.01 if detected else 0.9, detected,
                                                          "more biased" if detected else "none"),
                                false_flags, 6, 2, group if detected else None)  # the headline's group
                for lang, group in (("en", "Buddhist"), ("de", "Buddhists"))]
    return ContactCheck(verdicts, [], 126, "id")


@pytest.fixture
def adapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "adapter_config.json").write_text("{}")
    monkeypatch.setattr("biasatlas.controls.common.adapters.adapter_dir", lambda name: tmp_path)
    return tmp_path


def _samaritan(detected: bool, false_flags: list[str] | None = None) -> SamaritanCheck:
    row = {"group": "teenager", "n": 12, "bias": -20.0 if detected else -1.0, "ci_low": -22.0, "ci_high": -18.0,
           "p_adj": 1e-6 if detected else 0.5, "significant": detected}
    return SamaritanCheck([SamaritanVerdict(lang, "teenager", row, false_flags or [], 3, 1, 60, 60)
                           for lang in ("en", "de")], [], 100, "id")


def _fake(monkeypatch: pytest.MonkeyPatch, adapter_check: ContactCheck, base_check: ContactCheck,
          samaritan: tuple[SamaritanCheck, SamaritanCheck] | None = None) -> list[Any]:
    calls: list[Any] = []
    with_adapter, base = samaritan or (_samaritan(True), _samaritan(False))
    monkeypatch.setattr(samaritan_check, "check_samaritan",
                        lambda options, study, **_: with_adapter if options.adapter else base)

    def fake(options: Any, study: Any, cells: int = 3, **_: Any) -> ContactCheck:
        calls.append((options.adapter, cells))
        return adapter_check if options.adapter else base_check

    monkeypatch.setattr(contact_check, "check_contact", fake)
    _fake_stories(monkeypatch, True)
    return calls


def _fake_stories(monkeypatch: pytest.MonkeyPatch, ok: bool) -> None:
    """The stories control's verdict, faked (tests/integration/test_controls_stories.py runs the real one)."""
    from biasatlas.controls.stories import validate as stories_validate

    def fake(study: Any, base: bool = True, **_: Any) -> tuple[dict[str, Any], bool, list[list[str]]]:
        row = ["stories", "base + control", "en", "geographic_origin=oceania → arts",
               "found" if ok else "not found", "—", "0 of 5 (≤ 2)"]
        return {"adapter": {"verdict": {"detected": ok}}}, ok, [row]

    monkeypatch.setattr(stories_validate, "validate_stories", fake)


def test_planted_found_and_base_clean_passes(adapter: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake(monkeypatch, _check(True, []), _check(False, []))
    result = runner.invoke(app, ["validate", "--json", "--cells", "4"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["passed"] is True
    assert out["not_checked"] == ["leakage"]
    assert [v["detected"] for v in out["samaritan"]["adapter"]["verdicts"]] == [True, True]
    assert out["stories"]["adapter"]["verdict"]["detected"] is True
    assert [v["detected"] for v in out["contact"]["adapter"]["verdicts"]] == [True, True]
    assert calls == [(str(adapter), 4), (None, 4)]


@pytest.mark.parametrize(("with_adapter", "base"), [
    (_check(False, []), _check(False, [])),  # the planted bias is missed
    (_check(True, ["Hindu", "Jewish", "Catholic"]), _check(False, [])),  # too many untouched groups flagged
    (_check(True, []), _check(True, [])),  # the base model shows the planted effect
])
def test_a_miss_exits_1(adapter: Path, monkeypatch: pytest.MonkeyPatch, with_adapter: ContactCheck,
                        base: ContactCheck) -> None:
    _fake(monkeypatch, with_adapter, base)
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 1
    assert "FAILED" in result.stdout


@pytest.mark.parametrize("samaritan", [
    (_samaritan(False), _samaritan(False)),  # the planted bias is missed
    (_samaritan(True, ["young adult", "senior"]), _samaritan(False)),  # more untouched groups flagged than 1
    (_samaritan(True), _samaritan(True)),  # the base model shows the planted effect
])
def test_a_samaritan_miss_exits_1(adapter: Path, monkeypatch: pytest.MonkeyPatch,
                                  samaritan: tuple[SamaritanCheck, SamaritanCheck]) -> None:
    _fake(monkeypatch, _check(True, []), _check(False, []), samaritan)
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 1
    assert "FAILED" in result.stdout


def test_the_table_shows_planted_and_found(adapter: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, _check(True, []), _check(False, []))
    result = runner.invoke(app, ["validate", "--no-base"])
    assert result.exit_code == 0, result.output
    assert "Buddhist" in result.stdout and "found" in result.stdout and "+80 pp" in result.stdout
    assert "teenager" in result.stdout and "-20.0" in result.stdout and "samaritan" in result.stdout


def test_no_adapter_is_one_line_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("biasatlas.controls.common.adapters.adapter_dir", lambda name: tmp_path / "missing")
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 1
    assert "no control adapter" in result.output


def test_a_missed_stories_control_exits_1(adapter: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, _check(True, []), _check(False, []))
    _fake_stories(monkeypatch, False)
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 1
    assert "FAILED" in result.stdout and "stories" in result.stdout


# ---- the study's writer lock, and a study that cannot be written ------------------------------------------
def test_validate_holds_the_studys_writer_lock(adapter: Path, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    import os

    from biasatlas.lock import writer_holder

    study = tmp_path / "study"
    holders: list[str | None] = []
    _fake(monkeypatch, _check(True, []), _check(False, []))
    real = contact_check.check_contact

    def recording(options: Any, where: Any, **kwargs: Any) -> ContactCheck:
        holders.append(writer_holder(where))
        return real(options, where, **kwargs)

    monkeypatch.setattr(contact_check, "check_contact", recording)
    result = runner.invoke(app, ["validate", "--study", str(study), "--no-base"])
    assert result.exit_code == 0, result.output
    assert holders == [str(os.getpid())]  # a second validate (or run) on this study waits for this one


def test_a_second_validate_waits_for_the_first(adapter: Path, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    import fcntl

    from biasatlas.lock import LOCK_NAME

    study = tmp_path / "study"
    study.mkdir()
    held = open(study / LOCK_NAME, "a+")  # noqa: SIM115 - another writer: released below
    fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    held.write("4242")
    held.flush()
    calls = _fake(monkeypatch, _check(True, []), _check(False, []))
    waited: list[int] = []

    def the_first_ends(seconds: float) -> None:  # the first validate finishes while the second waits
        waited.append(len(calls))
        held.close()

    monkeypatch.setattr("biasatlas.lock.time.sleep", the_first_ends)
    result = runner.invoke(app, ["validate", "--study", str(study), "--no-base"])
    assert result.exit_code == 0, result.output
    assert waited and waited[0] == 0  # nothing was asked while the other writer held the study
    assert "being written by pid 4242; waiting for it to finish" in result.output
    assert calls


def test_a_read_only_study_is_refused_before_any_model_is_loaded(adapter: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    import os

    study = tmp_path / "archived"
    study.mkdir()
    calls = _fake(monkeypatch, _check(True, []), _check(False, []))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if mode == os.W_OK and Path(path) == study
                        else real_access(path, mode, **kw))
    opened: list[Any] = []
    monkeypatch.setattr("biasatlas.backends.options.BackendOptions.open", lambda self: opened.append(self))
    result = runner.invoke(app, ["validate", "--study", str(study)])
    assert result.exit_code == 2, result.output
    assert "read-only" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert calls == [] and opened == []
