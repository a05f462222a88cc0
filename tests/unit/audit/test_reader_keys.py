"""An audit file's ``reader`` and ``judge_model`` (as ``--reader`` and ``--judge-model``), and the Python API's:
checked before anything is asked, the judge with its own server options, the reading recorded in the study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from biasatlas.audit.spec import AuditError, load_audit
from biasatlas.cli.main import app
from biasatlas.readers.judge import judge_probe, reading
from biasatlas.store import Store

runner = CliRunner()
PROBES = {"contact": {"languages": ["en"], "axes": ["religion"], "limit": 6, "mode": "generate"}}


def _write(tmp_path: Path, **top: Any) -> Path:
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump({"models": [{"name": "A", "model": "fake:a"}], "probes": PROBES, **top}),
                    encoding="utf-8")
    return path


def test_the_reader_and_its_judge_are_read(tmp_path: Path) -> None:
    audit = load_audit(_write(tmp_path, reader="both", judge_model="fake:judge"))
    assert audit.reader == "both" and audit.judge is not None and audit.judge.options.model == "fake:judge"
    assert not audit.notes
    assert load_audit(_write(tmp_path)).reader is None  # none given: the study keeps its recorded reading


def test_the_judge_has_its_own_server_options(tmp_path: Path) -> None:
    judge = {"model": "openai:gpt-4o-mini", "base_url": "https://api.example.org/v1", "api_key_env": "JUDGE_KEY",
             "http": {"timeout": 30}}
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump({
        "models": [{"name": "Local", "model": "openai:m", "base_url": "http://127.0.0.1:8000/v1"}],
        "probes": PROBES, "reader": "judge", "judge_model": judge}), encoding="utf-8")
    audit = load_audit(path)
    assert audit.judge is not None
    assert audit.judge.options.base_url == "https://api.example.org/v1"
    assert audit.judge.options.api_key_env == "JUDGE_KEY" and audit.judge.options.http == ["timeout=30"]


@pytest.mark.parametrize(("top", "message"), [
    ({"reader": "jury"}, r"reader: unknown reader 'jury'; valid: rules, judge, both"),
    ({"reader": "both"}, r"judge_model: missing: reader: both needs"),
    ({"reader": "rules", "judge_model": "fake:j"}, r"judge_model: is used by reader: judge or reader: both only"),
    ({"judge_model": "fake:j"}, r"judge_model: is used by"),
    ({"reader": "judge", "judge_model": {"name": "J", "model": "fake:j"}}, r"judge_model\.name: the judge has no"),
    ({"reader": "judge", "judge_model": {"model": "fake:j", "colour": 1}}, r"judge_model\.colour: unknown model"),
])
def test_a_wrong_reader_is_one_line_naming_its_key(tmp_path: Path, top: dict[str, Any], message: str) -> None:
    with pytest.raises(AuditError, match=message):
        load_audit(_write(tmp_path, **top))


def test_a_judge_needs_a_probe_it_can_read(tmp_path: Path) -> None:
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump({"models": ["fake:a"], "probes": {"leakage": {"languages": ["en"]}},
                                    "reader": "both", "judge_model": "fake:j"}), encoding="utf-8")
    with pytest.raises(AuditError, match="a judge reads the answers of contact, samaritan"):
        load_audit(path)


def test_a_judge_that_is_a_model_under_test_gets_a_note(tmp_path: Path) -> None:
    audit = load_audit(_write(tmp_path, reader="both", judge_model="fake:a"))
    assert audit.notes and "a model under test" in audit.notes[0] and "models[0]" in audit.notes[0]


def test_an_unusable_judge_stops_the_audit_before_anything_is_asked(tmp_path: Path) -> None:
    study = tmp_path / "study"
    path = _write(tmp_path, reader="both", judge_model=str(tmp_path / "missing.gguf"))
    result = runner.invoke(app, ["audit", str(path), "--study", str(study), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert "judge_model.model" in " ".join(result.output.split()) and "Traceback" not in result.output
    assert not (study / "biasatlas.db").exists()  # nothing was asked


def test_the_audit_records_the_reading_and_asks_the_judge(tmp_path: Path) -> None:
    study = tmp_path / "study"
    path = _write(tmp_path, reader="both", judge_model="fake:judge")
    result = runner.invoke(app, ["audit", str(path), "--study", str(study), "--no-progress"])
    assert result.exit_code == 0, result.output
    with Store(study, readonly=True) as store:
        assert reading(store, "contact") == ("both", "fake:judge")
        runs = store.runs()
        assert (runs["probe"] == judge_probe("contact")).any()


def test_the_api_takes_the_reader(tmp_path: Path) -> None:
    from biasatlas import api

    study = tmp_path / "study"
    with pytest.raises(ValueError, match="needs judge_model"):
        api.run("contact", study=study, model="fake:a", reader="judge", languages=["en"], limit=3)
    with pytest.raises(ValueError, match="reads its answers its own way"):
        api.run("leakage", study=study, model="fake:a", reader="both", judge_model="fake:j")
    steps = api.run("contact", study=study, model="fake:a", reader="both", judge_model={"model": "fake:judge"},
                    languages=["en"], axes=["religion"], limit=6, mode="generate")
    assert len(steps) == 2
    with Store(study, readonly=True) as store:
        assert reading(store, "contact") == ("both", "fake:judge")
