"""`--plan-only` fails on whatever the run would fail on before asking: same check, same line, exit 2 (issue 28).

Each case runs twice, as the run and as ``--plan-only``; both must refuse with the same one-line error.
No model is loaded and no server is contacted (the run refuses before either).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()
NO_KEY = "BIASATLAS_TEST_UNSET_KEY"
BASE = ["--limit", "3", "--no-progress"]

# (case, arguments of `biasatlas run PROBE`, what the one error line says); written from the messages a user
# meets, not from the code's branches
RUN_CASES: list[tuple[str, list[str], str]] = [
    ("unknown model name", ["contact", "--lang", "de", "--axis", "religion", "--model", "smollm3"],
     "unknown model 'smollm3'"),
    ("missing GGUF file", ["contact", "--lang", "de", "--model", "models/nowhere.gguf"],
     "no such GGUF file: models/nowhere.gguf"),
    ("missing API key", ["contact", "--lang", "de", "--model", "openai:gpt-4o-mini", "--base-url",
                         "https://api.openai.com/v1", "--api-key-env", NO_KEY],
     f"no API key: set the environment variable {NO_KEY}"),
    ("bad --http value", ["samaritan", "--lang", "de", "--model", "openai:m", "--base-url", "http://127.0.0.1:9",
                          "--http", "price_prompt=cheap"], "invalid backend option: price_prompt"),
    ("missing adapter", ["contact", "--lang", "de", "--model", "smollm2", "--adapter", "no/such/adapter"],
     "adapter directory not found: no/such/adapter"),
    ("unknown extractor", ["stories", "--lang", "en", "--model", "fake:a", "--extractor", "fake:a,smollm3"],
     "unknown model 'smollm3'"),
]  # (options typer refuses, such as a --base-url without http://, fail alike in both: before either runs)


def _error_line(args: list[str], study: Path) -> str:
    result = runner.invoke(app, ["run", *args, *BASE, "--study", str(study)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(("args", "message"), [c[1:] for c in RUN_CASES], ids=[c[0] for c in RUN_CASES])
def test_plan_only_refuses_what_the_run_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                                               message: str) -> None:
    monkeypatch.delenv(NO_KEY, raising=False)
    monkeypatch.chdir(tmp_path)
    run = _error_line(args, tmp_path / "study")
    plan = _error_line([*args, "--plan-only"], tmp_path / "study")
    assert message in run
    assert plan == run
    assert not (tmp_path / "study").exists()


def test_plan_only_refuses_a_study_path_the_run_cannot_use(tmp_path: Path) -> None:
    study = tmp_path / "a-file"
    study.write_text("not a study")
    line = _error_line(["contact", "--lang", "de", "--model", "fake:a", "--plan-only"], study)
    assert line == _error_line(["contact", "--lang", "de", "--model", "fake:a"], study)
    assert "is a file, not a directory" in line


def test_plan_only_still_plans_what_the_run_can_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--model", "fake:a", "--axis", "religion", *BASE, "--plan-only",
                                 "--study",
                                 str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert '"prompts": 3' in result.stdout
    assert not (tmp_path / "s").exists()


# ---- audit --plan-only ----------------------------------------------------------------------------
def _audit(tmp_path: Path, models: list[dict[str, Any]]) -> Path:
    path = tmp_path / "audit.yaml"
    # 21: one prompt set per group (a smaller --limit warns that groups are left out)
    data = {"models": models, "probes": {"contact": {"languages": ["de"], "axes": ["religion"], "limit": 21}}}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


AUDIT_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("unknown model name", {"name": "Typo", "model": "smollm3"}, "models[1].model: unknown model 'smollm3'"),
    ("missing API key", {"name": "Remote", "model": "openai:gpt-4o-mini", "base_url": "https://api.openai.com/v1",
                         "api_key_env": NO_KEY}, f"models[1].model: no API key: set the environment variable {NO_KEY}"),
]


@pytest.mark.parametrize(("model", "message"), [c[1:] for c in AUDIT_CASES], ids=[c[0] for c in AUDIT_CASES])
def test_audit_plan_only_refuses_what_the_audit_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       model: dict[str, Any], message: str) -> None:
    monkeypatch.delenv(NO_KEY, raising=False)
    path = _audit(tmp_path, [{"name": "Fine", "model": "fake:a"}, model])
    lines = []
    for extra in ([], ["--plan-only"]):
        result = runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "study"), *extra])
        assert result.exit_code == 2, result.output
        lines.append(result.output.strip())
    assert lines[0] == lines[1]
    assert lines[0].startswith(f"error: {path}: {message}")
    assert not (tmp_path / "study").exists()


def test_audit_plan_only_totals_the_priced_models_and_names_the_others(tmp_path: Path) -> None:
    path = _audit(tmp_path, [
        {"name": "Local", "model": "fake:a"},
        {"name": "Paid", "model": "openai:m", "base_url": "http://127.0.0.1:9",
         "http": {"price_prompt": 1.0, "price_completion": 10.0, "check": False}},
    ])
    import json

    result = runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s"), "--plan-only", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    paid = [c["cost_usd"] for c in plan["cells"] if c["model"] == "Paid"]
    assert plan["totals"]["cost_usd"] is None  # not every model's cost is known
    assert plan["totals"]["cost_usd_priced"] == pytest.approx(sum(paid)) and sum(paid) > 0
    assert plan["totals"]["unpriced_models"] == ["Local"]
    assert any(n.startswith("cost: no price given for Local") for n in plan["notes"])
    table = runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s"), "--plan-only"])
    assert table.exit_code == 0, table.output
    # the table fits the terminal: folded into parts, each with its total row
    totals = [line for line in table.stdout.splitlines() if line.strip("│ ").startswith("total")]
    assert any(f"{sum(paid):,.4f} + unpriced" in row for row in totals)
    assert "no price given for Local" in table.stdout
