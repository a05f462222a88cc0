"""The shipped contact adapter is the one scripts/build_controls.py trains: same settings, same examples."""

from __future__ import annotations

from biasatlas.controls.common.adapters import TRAIN_CONFIGS, adapter_dir
from biasatlas.controls.common.build import read_card, training_manifest
from biasatlas.controls.contact import data as contact
from biasatlas.probes.debias.adapters import tunable_location
from biasatlas.probes.debias.train import TrainConfig, base_model_name, run_fingerprint


def test_the_shipped_adapter_was_trained_by_the_script_settings_on_the_script_examples() -> None:
    manifest = training_manifest(adapter_dir("contact"))
    base = base_model_name(tunable_location("smollm2"))
    assert manifest["base_model"] == base
    assert TrainConfig(**manifest["config"]) == TRAIN_CONFIGS["contact"]
    # the fingerprint hashes the settings as recorded (the shipped run recorded "epochs": 1, an int, for
    # the registry's 1.0) and the exact training examples, in order
    recorded = TrainConfig.model_construct(**manifest["config"])
    assert manifest["fingerprint"] == run_fingerprint(recorded, base, contact.training_examples())
    assert "/tmp" not in manifest["result"]["adapter_dir"]


def test_the_card_records_the_planted_groups_and_their_measured_effect() -> None:
    card = read_card(adapter_dir("contact"))
    assert card["planted"]["groups"] == contact.PLANTED
    for language in ("en", "de"):
        found = card["measured_effect"][language]
        assert found["group"] == contact.PLANTED[language] and found["significant"] and found["effect"] > 0.5


def test_the_shipped_debiased_control_was_trained_on_the_scripts_debiasing_data() -> None:
    from biasatlas.backends.local.identity import adapter_digest
    from biasatlas.controls.contact import scd as contact_scd
    from biasatlas.records import stable_hash

    out = adapter_dir(contact_scd.NAME)
    manifest = training_manifest(out)
    base = base_model_name(tunable_location("smollm2"))
    recorded = TrainConfig.model_construct(**manifest["config"])
    assert TrainConfig(**manifest["config"]) == contact_scd.TRAIN_CONFIG
    run = run_fingerprint(recorded, base, contact_scd.scd_examples())
    # trained from the shipped contact control, exactly as it is now
    control = adapter_digest(str(adapter_dir("contact")))
    assert manifest["fingerprint"] == stable_hash({"run": run, "init_adapter": control}, length=16)
    assert manifest["result"]["adapter_dir"] == "src/biasatlas/data/controls/contact-scd"
    card = read_card(out)
    assert all(r["reduced"] for r in card["measured"]["reductions"])
