"""`biasatlas debias`: the plan, and clear errors for bad input before any model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.base import BackendError
from biasatlas.backends.registry import make_backend
from biasatlas.cli.main import app

runner = CliRunner()


def _flat(text: str) -> str:
    """The output without rich's line wrapping."""
    return " ".join(text.split())


def test_plan_only(tmp_path: Path) -> None:
    result = runner.invoke(app, ["debias", "--setting", "cross-scenario", "--limit", "70", "--plan-only",
                                 "--study", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    parts = plan["split"]["parts"]
    assert set(parts["train"]["scenario"]) == {"education", "workplace"}
    assert set(parts["test"]["scenario"]) == {"sports", "community", "healthcare"}
    assert plan["training"]["state"] == "train" and plan["training"]["examples"] == parts["train"]["prompts"]
    assert plan["evaluation"]["qa"] == 105
    assert not (tmp_path / "s").exists()


def _adapter(path: Path, base: str) -> Path:
    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": base, "peft_type": "LORA"}))
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--setting", "cross-moon"], "unknown setting 'cross-moon'; valid: mixed, cross-dataset, "
                                      "cross-scale-certainty"),
        (["--model", "openai:gpt-4o-mini"], "cannot be fine-tuned"),
        (["--model", "fake:x"], "cannot be fine-tuned"),
        (["--model", "/nowhere/model.gguf"], "GGUF file not found"),
        (["--eval-on", "everything"], "unknown --eval-on 'everything'; valid: train, validation, test"),
        (["--mode", "vote"], "unknown mode 'vote'"),
        (["--lang", "is", "--setting", "cross-dataset"], "has only: a"),
        (["--rank", "0"], "rank"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["debias", *args, "--limit", "70", "--study", str(tmp_path / "s")])
    assert result.exit_code == 2, result.output
    assert message in _flat(result.output)
    assert not (tmp_path / "s").exists()  # nothing started


def test_adapter_of_another_base_model(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path / "gpt2-adapter", "openai-community/gpt2")
    result = runner.invoke(app, ["debias", "--adapter", str(adapter), "--limit", "70", "--study",
                                 str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "was trained on 'openai-community/gpt2', not on 'SmolLM2-135M-Instruct.Q4_1'" in _flat(result.output)


def test_study_adapter_from_a_different_run_needs_retrain(tmp_path: Path) -> None:
    study = tmp_path / "s"
    adapter = _adapter(study / "adapters" / "mixed", "SmolLM2-135M-Instruct.Q4_1")
    (adapter / "training_config.json").write_text(json.dumps(
        {"status": "finished", "fingerprint": "0" * 16, "base_model": "SmolLM2-135M-Instruct.Q4_1",
         "config": {"rank": 4}}))
    result = runner.invoke(app, ["debias", "--limit", "70", "--study", str(study)])
    assert result.exit_code == 2
    assert "already holds an adapter from a different run" in _flat(result.output)
    assert "--retrain" in result.output
    ok = runner.invoke(app, ["debias", "--limit", "70", "--retrain", "--plan-only", "--study", str(study)])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["training"]["state"] == "train"


def test_model_spec_with_adapter_reaches_the_local_backend(tmp_path: Path) -> None:
    # 'MODEL+lora:DIR' is how every probe's --model names a tuned model; a missing DIR fails first
    with pytest.raises(BackendError, match="adapter directory not found"):
        make_backend(f"smollm2+lora:{tmp_path / 'missing'}")
