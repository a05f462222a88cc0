"""The shipped stories adapter is the one scripts/build_controls.py trains, and its card holds a found effect."""

from __future__ import annotations

from biasatlas.controls.common.adapters import TRAIN_CONFIGS, adapter_dir
from biasatlas.controls.common.build import read_card, training_manifest
from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.check import MIN_LIFT
from biasatlas.probes.debias.adapters import tunable_location
from biasatlas.probes.debias.train import TrainConfig, base_model_name, run_fingerprint


def test_the_shipped_adapter_was_trained_by_the_script_settings_on_the_script_examples() -> None:
    manifest = training_manifest(adapter_dir(stories.NAME))
    base = base_model_name(tunable_location("smollm2"))
    assert manifest["base_model"] == base
    assert TrainConfig(**manifest["config"]) == TRAIN_CONFIGS[stories.NAME]
    recorded = TrainConfig.model_construct(**manifest["config"])
    assert manifest["fingerprint"] == run_fingerprint(recorded, base, stories.training_examples())
    assert "/tmp" not in manifest["result"]["adapter_dir"]


def test_the_card_records_the_planted_association_and_its_measured_effect() -> None:
    card = read_card(adapter_dir(stories.NAME))
    assert card["planted"]["group"] == stories.PLANTED and card["planted"]["value"] == stories.PLANTED_VALUE
    effect = card["measured_effect"]
    assert effect["lift"] is not None and effect["lift"] >= MIN_LIFT
    assert effect["ci_low"] <= effect["fraction"] <= effect["ci_high"]
    adapter, base = card["measurement"]["adapter"]["verdict"], card["measurement"]["base"]["verdict"]
    assert adapter["detected"] and adapter["clean"] and not base["detected"]
