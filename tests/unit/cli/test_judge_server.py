"""The judge of `run PROBE --reader judge|both` has its own server options (--judge-base-url, --judge-api-key-env,
--judge-http, --judge-concurrency), never the answering model's, as an audit file's ``judge_model`` mapping has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biasatlas.backends.options import BackendOptions
from biasatlas.cli.main import app

runner = CliRunner()
ANSWERING = ["--model", "fake:a", "--base-url", "http://answering.example:8000/v1", "--api-key-env", "ANSWER_KEY",
             "--http", "timeout=7", "--concurrency", "9"]
RUN = ["run", "contact", "--lang", "en", "--axis", "religion", "--limit", "3", "--mode", "generate",
       "--no-progress"]


def _text(result: Any) -> str:
    """The output as one line (a usage error's panel wraps it)."""
    return " ".join(result.output.replace("│", " ").split())


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[BackendOptions | None]:
    """The judge options the judge step is opened with (the step itself is not run)."""
    seen: list[BackendOptions | None] = []

    def capture(probe: str, study: Any, reader: Any, judge: BackendOptions | None, **_: Any) -> None:
        seen.append(judge)

    monkeypatch.setattr("biasatlas.reading_step.run_reading", capture)
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-value")
    return seen


def test_the_judge_gets_its_own_server_key_and_http_settings(tmp_path: Path,
                                                              judged: list[BackendOptions | None]) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), *ANSWERING, "--reader", "judge",
                                 "--judge-model", "openai:gpt-4o-mini", "--judge-base-url", "http://judge.example/v1",
                                 "--judge-api-key-env", "JUDGE_KEY", "--judge-http", "timeout=30",
                                 "--judge-concurrency", "3"])
    assert result.exit_code == 0, result.output
    [judge] = judged
    assert judge is not None
    assert judge.model == "openai:gpt-4o-mini"
    assert judge.base_url == "http://judge.example/v1"
    assert judge.api_key_env == "JUDGE_KEY"
    assert judge.http == ["timeout=30"]
    assert judge.concurrency == 3
    assert "sk-judge-secret-value" not in result.output


def test_an_openai_judge_without_its_own_url_never_inherits_the_answering_server(
        tmp_path: Path, judged: list[BackendOptions | None], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), *ANSWERING, "--reader", "judge",
                                 "--judge-model", "openai:gpt-4o-mini"])
    assert result.exit_code == 0, result.output
    [judge] = judged
    assert judge is not None
    assert judge.base_url is None and not judge.endpoints  # the provider's default, $OPENAI_BASE_URL or OpenAI's
    assert judge.api_key_env == "OPENAI_API_KEY" and judge.http == [] and judge.concurrency is None
    # said, not silent: the user who gave --base-url learns where the judge is asked
    notes = [line for line in result.output.splitlines() if "--judge-base-url" in line]
    assert len(notes) == 1 and "api.openai.com" in notes[0]
    assert "answering.example" not in notes[0]


@pytest.mark.parametrize("judge", ["fake:judge", "smollm2"])
def test_a_server_less_judge_takes_none_of_the_answering_options(
        tmp_path: Path, judged: list[BackendOptions | None], judge: str) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), *ANSWERING, "--reader", "both",
                                 "--judge-model", judge])
    if judge == "smollm2" and result.exit_code != 0:  # no local extra here: the judge check says so first
        assert "judge" in result.output.lower()
        return
    assert result.exit_code == 0, result.output
    assert judged == [BackendOptions(model=judge)]
    assert "--judge-base-url" not in result.output


@pytest.mark.parametrize(("args", "words"), [
    (["--judge-base-url", "http://judge.example/v1"], "--judge-base-url"),
    (["--judge-api-key-env", "JUDGE_KEY"], "--judge-api-key-env"),
    (["--judge-http", "timeout=3"], "--judge-http"),
    (["--judge-concurrency", "2"], "--judge-concurrency"),
])
def test_judge_server_options_need_a_judge(tmp_path: Path, args: list[str], words: str) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "fake:a", *args])
    assert result.exit_code == 2
    assert words in _text(result) and "is the judge's" in _text(result)


@pytest.mark.parametrize("args", [["--judge-base-url", "http://judge.example/v1"], ["--judge-http", "timeout=3"]])
def test_a_server_less_judge_refuses_server_options(tmp_path: Path, args: list[str]) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "fake:a", "--reader", "judge",
                                 "--judge-model", "fake:judge", *args])
    assert result.exit_code == 2
    assert "not served over HTTP" in _text(result)


@pytest.mark.parametrize(("args", "words"), [
    (["--judge-http", "nosuch=1"], "nosuch"),
    (["--judge-concurrency", "0"], "--judge-concurrency"),
    (["--judge-base-url", "ftp://user:hunter2@judge.example/v1"], "--judge-base-url"),
])
def test_judge_server_options_are_checked(tmp_path: Path, args: list[str], words: str) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "fake:a", "--reader", "judge",
                                 "--judge-model", "openai:j", *args])
    assert result.exit_code == 2
    assert words in _text(result) and "No such option" not in _text(result)
    assert "hunter2" not in result.output


def test_judging_with_the_model_under_test_is_one_warning_line(tmp_path: Path,
                                                               judged: list[BackendOptions | None]) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "fake:a", "--reader", "both",
                                 "--judge-model", "fake:a"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "reads its own answers" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning:")


def test_the_same_openai_model_on_another_server_is_no_self_judge(tmp_path: Path,
                                                                  judged: list[BackendOptions | None]) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "openai:m", "--base-url",
                                 "http://a.example/v1", "--plan-only", "--reader", "judge", "--judge-model",
                                 "openai:m", "--judge-base-url", "http://b.example/v1", "--judge-api-key-env",
                                 "JUDGE_KEY"])
    assert result.exit_code == 0, result.output
    assert "reads its own answers" not in result.output


def test_the_same_openai_server_is_a_self_judge(tmp_path: Path, judged: list[BackendOptions | None]) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--model", "openai:m", "--base-url",
                                 "http://a.example/v1", "--plan-only", "--reader", "judge", "--judge-model",
                                 "openai:m", "--judge-base-url", "http://a.example/v1/", "--judge-api-key-env",
                                 "JUDGE_KEY"])
    assert result.exit_code == 0, result.output
    assert sum("reads its own answers" in line for line in result.output.splitlines()) == 1


def test_an_audit_judge_is_noted_as_a_model_under_test_the_same_way(tmp_path: Path) -> None:
    from biasatlas.audit.spec import load_audit

    path = tmp_path / "audit.yaml"
    path.write_text("models:\n  - {model: 'openai:m', base_url: 'http://a.example/v1', name: m}\n"
                    "probes: {contact: {}}\nreader: both\n"
                    "judge_model: {model: 'openai:m', base_url: 'http://a.example/v1/'}\n")
    audit = load_audit(path)
    assert sum("reads its own answers" in note for note in audit.notes) == 1
    path.write_text("models:\n  - {model: 'openai:m', base_url: 'http://a.example/v1', name: m}\n"
                    "probes: {contact: {}}\nreader: both\njudge_model: 'openai:gpt-4o-mini'\n")
    audit = load_audit(path)
    assert audit.judge is not None and audit.judge.options.base_url is None
    assert not any("reads its own answers" in note for note in audit.notes)
    assert sum("--judge-base-url" in note or "base_url" in note for note in audit.notes) == 1
