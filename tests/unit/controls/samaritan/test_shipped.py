"""The shipped Samaritan adapter is the one scripts/build_controls.py trains: same settings, same examples."""

from __future__ import annotations

from biasatlas.controls import CONTROL_PACKAGES
from biasatlas.controls.common.adapters import TRAIN_CONFIGS, adapter_dir
from biasatlas.controls.common.build import read_card, training_manifest
from biasatlas.controls.samaritan import data as samaritan
from biasatlas.probes.debias.adapters import tunable_location
from biasatlas.probes.debias.train import TrainConfig, base_model_name, run_fingerprint


def test_the_shipped_adapter_was_trained_by_the_script_settings_on_the_script_examples() -> None:
    assert "samaritan" in CONTROL_PACKAGES
    manifest = training_manifest(adapter_dir("samaritan"))
    base = base_model_name(tunable_location("smollm2"))
    assert manifest["base_model"] == base and manifest["stored_dtype"] == "float16"
    assert TrainConfig(**manifest["config"]) == TRAIN_CONFIGS["samaritan"]
    recorded = TrainConfig.model_construct(**manifest["config"])
    assert manifest["fingerprint"] == run_fingerprint(recorded, base, samaritan.training_examples())
    assert "/tmp" not in manifest["result"]["adapter_dir"]


def test_the_card_records_the_planted_group_the_split_and_a_found_effect() -> None:
    card = read_card(adapter_dir("samaritan"))
    assert card["planted"]["groups"] == samaritan.PLANTED and card["planted"]["shift"] == -25
    train, held_out = samaritan.scenario_split()
    assert card["trained_on"]["scenarios"] == train and set(card["measured_on"]["scenarios"]) <= set(held_out)
    for language in ("en", "de"):
        found = card["measured_effect"][language]
        assert found["group"] == "teenager" and found["significant"] is True and found["bias"] < -10
