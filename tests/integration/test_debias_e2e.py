"""Social Contact Debiasing end to end on the real embedded model (SmolLM2-135M, CPU), through the CLI.

A tiny LoRA run (30 training prompts, 3 epochs at lr 5e-3, the top 8 layers) must lower the biased rate on
its own training prompts; the summary pairs the answers and reports McNemar tests; the adapter
is saved in the study with its training config and loads back through the normal backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

pytestmark = pytest.mark.slow

runner = CliRunner()


def test_tiny_lora_run_moves_the_biased_rate_on_its_training_prompts(tmp_path: Path) -> None:
    study = tmp_path / "study"
    # --limit counts evaluation prompts: 30 training prompts (10 sets) evaluated (validation 15, test 60)
    args = ["debias", "--model", "smollm2", "--setting", "mixed", "--limit", "30", "--epochs", "3",
            "--lr", "5e-3", "--top-layers", "8", "--eval-on", "train", "--no-qa", "--study", str(study)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output

    adapter = study / "adapters" / "mixed"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == "SmolLM2-135M-Instruct.Q4_1"
    manifest = json.loads((adapter / "training_config.json").read_text())
    assert manifest["status"] == "finished" and manifest["examples"]["train"] == 30
    assert manifest["result"]["examples_per_s"] > 0
    assert not (adapter / "checkpoints").exists()

    out = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert out.exit_code == 0, out.output
    comp = json.loads(out.stdout)["debias"]["contact"][0]
    assert (comp["setting"], comp["part"], comp["prompts"]) == ("mixed", "train", 30)
    assert comp["after_model"].startswith(comp["before_model"] + "+lora:")
    overall = comp["tables"]["overall"]
    before = sum(r["before_biased"] for r in overall)
    after = sum(r["after_biased"] for r in overall)
    assert before >= 5, f"the base model must be biased on some training prompts ({before}/30)"
    assert after < before, f"tuning did not lower the biased count on its own prompts: {before} -> {after}"
    print(f"biased on the training prompts: {before}/30 before, {after}/30 after tuning")
    for row in overall:
        assert row["n_pairs"] == 10 and "McNemar exact" in row["test"]
        assert row["p"] is not None and 0 <= row["p_adj"] <= 1

    html = re.sub(r"<[^>]+>", "", (study / "report.html").read_text())  # citations are links
    assert "Social Contact Debiasing" in html and "By scale and contact (Raj et al., 2024, Table 4)" in html

    # the same command again would reuse the finished adapter (and the stored answers)
    plan = runner.invoke(app, [*args, "--plan-only"])
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.stdout)["training"]["state"] == "reuse"
