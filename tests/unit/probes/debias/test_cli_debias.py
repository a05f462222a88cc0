"""`biasatlas debias`: the plan, the shared options, and clear errors before any model is loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import biasatlas.cli.debias as cli_debias
from biasatlas.backends.base import BackendError
from biasatlas.backends.registry import make_backend
from biasatlas.cli.app import app
from biasatlas.probes.debias import pipeline
from biasatlas.probes.debias.splits import PARTS, setting_names

runner = CliRunner()


def _flat(text: str) -> str:
    """The output without rich's line wrapping."""
    return " ".join(text.split())


def _invoke(*args: str) -> Any:
    return runner.invoke(app, ["debias", *args])


def test_cli_lists_the_settings_and_parts_of_the_package() -> None:
    assert list(cli_debias.SETTINGS) == setting_names()
    assert cli_debias.PARTS == PARTS


def test_plan_only(tmp_path: Path) -> None:
    result = _invoke("--setting", "cross-scenario", "--limit", "40", "--plan-only", "--study", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    parts = plan["split"]["parts"]
    assert set(parts["train"]["scenario"]) == {"education", "workplace"}
    assert set(parts["test"]["scenario"]) == {"sports", "community", "healthcare"}
    assert plan["training"]["state"] == "train" and plan["training"]["examples"] == parts["train"]["prompts"]
    assert plan["evaluation"]["qa"] == 105
    # --limit counts evaluation prompts (whole prompt sets); the other parts are in proportion 2 : 1 : 4
    assert plan["prompts"] == plan["evaluation"]["prompts"] == parts["test"]["prompts"] == 39
    assert (parts["train"]["prompts"], parts["validation"]["prompts"]) == (21, 9)
    assert plan["languages"] == {"en": 39}
    assert "None" not in result.stdout
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(("part", "limit"), [("test", 10), ("train", 30), ("validation", 7)])
def test_limit_is_at_most_n_evaluation_prompts(tmp_path: Path, part: str, limit: int) -> None:
    result = _invoke("--setting", "mixed", "--eval-on", part, "--limit", str(limit), "--no-qa", "--plan-only",
                     "--study", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert 0 < plan["evaluation"]["prompts"] <= limit
    assert plan["evaluation"]["prompts"] == plan["split"]["parts"][part]["prompts"] == plan["prompts"]


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
        (["--mode", "vote"], "--mode 'vote': valid: choice, generate"),
        (["--lang", "is", "--setting", "cross-dataset"], "has only: a"),
        (["--lang", "en,de"], "one language per run"),
        (["--lang", "xx"], "--lang 'xx' is not valid for debias; valid: "),
        (["--rank", "0"], "rank"),
        (["--lora-alpha", "0"], "lora_alpha"),
        (["--train-batch-size", "0"], "train_batch_size"),
        (["--limit", "2"], "at least one prompt set"),
        (["--http", "bogus"], "--http"),
        (["--alpha", "2"], "--alpha 2.0: must be between 0 and 1"),
        (["--correction", "magic"], "--correction 'magic': valid: bh"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    limit = [] if "--limit" in args else ["--limit", "40"]
    result = _invoke(*args, *limit, "--study", str(tmp_path / "s"))
    assert result.exit_code == 2, result.output
    assert message in _flat(result.output)
    assert not (tmp_path / "s").exists()  # nothing started


def test_adapter_of_another_base_model(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path / "gpt2-adapter", "openai-community/gpt2")
    result = _invoke("--adapter", str(adapter), "--limit", "40", "--study", str(tmp_path / "s"))
    assert result.exit_code == 2
    assert "was trained on 'openai-community/gpt2', not on 'SmolLM2-135M-Instruct.Q4_1'" in _flat(result.output)


def test_study_adapter_from_a_different_run_needs_retrain(tmp_path: Path) -> None:
    study = tmp_path / "s"
    adapter = _adapter(study / "adapters" / "mixed", "SmolLM2-135M-Instruct.Q4_1")
    (adapter / "training_config.json").write_text(json.dumps(
        {"status": "finished", "fingerprint": "0" * 16, "base_model": "SmolLM2-135M-Instruct.Q4_1",
         "config": {"rank": 4}}))
    result = _invoke("--limit", "40", "--study", str(study))
    assert result.exit_code == 2
    assert "already holds an adapter from a different run" in _flat(result.output)
    assert "--retrain" in result.output
    ok = _invoke("--limit", "40", "--retrain", "--plan-only", "--study", str(study))
    assert ok.exit_code == 0 and json.loads(ok.stdout)["training"]["state"] == "train"


def test_training_and_evaluation_options_reach_their_configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--train-batch-size and --lora-alpha reach TrainConfig and LoRA; --batch-size the evaluation backend."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from biasatlas.probes.debias.train import lora_config

    seen: dict[str, Any] = {}

    def fake_execute(plan: Any, backend: Any, study: Any, **kwargs: Any) -> list[Any]:
        seen.update(plan=plan, backend=backend)
        return []

    monkeypatch.setattr(pipeline, "execute", fake_execute)
    monkeypatch.setattr(cli_debias, "_finish", lambda *a, **k: None)
    result = _invoke("--limit", "12", "--no-qa", "--train-batch-size", "4", "--lora-alpha", "32", "--rank", "4",
                     "--batch-size", "3", "--seed", "5", "--top-layers", "1", "--study", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    train = seen["plan"].train_config
    assert (train.batch_size, train.alpha, train.rank, train.seed, train.top_layers) == (4, 32, 4, 5, 1)
    assert seen["backend"].batch_size == 3 and seen["backend"].adapter is None
    tiny = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                        num_attention_heads=2, num_key_value_heads=1))
    lora = lora_config(train, tiny)
    assert (lora.lora_alpha, lora.r, lora.layers_to_transform) == (32, 4, [1])
    assert lora_config(train.model_copy(update={"alpha": None}), tiny).lora_alpha == 8  # default 2 × rank


def test_model_spec_with_adapter_reaches_the_local_backend(tmp_path: Path) -> None:
    # 'MODEL+lora:DIR' is how every probe's --model names a tuned model; a missing DIR fails first
    with pytest.raises(BackendError, match="adapter directory not found"):
        make_backend(f"smollm2+lora:{tmp_path / 'missing'}")
