"""Build a control: train its adapter (the debiasing trainer, fed biased targets), measure it, write its card.

Used by ``scripts/build_controls.py``. Training runs on the loaded embedded model and saves the
adapter into the package (``data/controls/<name>/``); the measurement asks the held-out prompts of
base + adapter and of the base model alone through the probe, into a study directory, and the card
(``control.json`` for code, ``README.md`` for people) records what was planted and what was found.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from biasatlas.controls import contact
from biasatlas.controls.contact_check import check_contact
from biasatlas.controls.registry import BASE_MODEL, TRAIN_CONFIGS

CARD_JSON = "control.json"
CARD_MD = "README.md"
#: held-out cells per language of the measurement written into the card
CARD_CELLS = 4


def train_contact(out: Path) -> None:
    """Train the contact control's adapter into ``out`` (its manifest: ``training_manifest(out)``)."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.probes.debias.train import train_adapter

    examples = contact.training_examples()
    backend = BackendOptions(model=BASE_MODEL).open()
    try:
        train_adapter(backend, examples, [], TRAIN_CONFIGS["contact"], out, model_spec=BASE_MODEL,
                      extra={"control": contact.NAME, "planted": contact.PLANTED})
    finally:
        backend.close()
    manifest = training_manifest(out)
    manifest["result"]["adapter_dir"] = f"src/biasatlas/data/controls/{out.name}"  # no path of the build machine
    (out / "training_config.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def training_manifest(out: Path) -> dict[str, Any]:
    """What the trainer recorded about the adapter in ``out``: settings, result, loss history."""
    from biasatlas.probes.debias.train import read_manifest

    manifest = read_manifest(out)
    if manifest is None or manifest.get("status") != "finished":
        raise FileNotFoundError(f"{out} holds no finished adapter")
    return manifest


def measure_contact(adapter: Path, study: Path, cells: int = CARD_CELLS) -> dict[str, Any]:
    """The contact control measured on held-out cells: adapter and base model, per language."""
    from biasatlas.backends.options import BackendOptions

    out: dict[str, Any] = {"cells_per_language": cells}
    for role, options in (("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter))),
                          ("base", BackendOptions(model=BASE_MODEL))):
        started = time.perf_counter()
        check = check_contact(options, study, cells=cells)
        out[role] = {"prompts": check.prompts, "backend_id": check.backend_id,
                     "seconds": round(time.perf_counter() - started, 1),
                     "verdicts": [v.as_dict() for v in check.verdicts],
                     "findings": [f.as_dict() for f in check.findings]}
    return out


def contact_card(training: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable card of the contact control."""
    effects = {v["language"]: v["found"] for v in measured["adapter"]["verdicts"]}
    return {
        "control": contact.NAME,
        "base_model": BASE_MODEL,
        "planted": {"axis": contact.AXIS, "groups": contact.PLANTED, "action": contact.ACTION,
                    "scale": contact.SCALE, "direction": "more biased",
                    "target": "the biased option for the planted group, the unbiased one for the others"},
        "trained_on": {"en": "template set a (all 30 cells)",
                       "de": "template set a, the 15 training cells of controls.contact.german_cells()"},
        "measured_on": {"en": "template set b (held-out wording)",
                        "de": "template set a, the 15 other cells (held-out cells)"},
        "untouched_groups": {k: list(v) for k, v in contact.UNTOUCHED.items()},
        "effect_measure": "share of biased answers: planted group − mean of the other measured groups, "
                          "paired by question (cell × framing); paired t interval, 95% (a single point when "
                          "every question pair differs by the same amount)",
        "measured_effect": effects,
        "training": training,
        "measurement": measured,
    }


def halve(out: Path) -> None:
    """Store the adapter's weights as float16 (5.2 MB of float32 for the top 16 layers at rank 8; the repository
    takes < 3 MB an adapter). peft casts them back to the model's float32 on loading; the card measures the
    stored weights."""
    from safetensors.torch import load_file, save_file

    weights = out / "adapter_model.safetensors"
    save_file({k: v.half().contiguous() for k, v in load_file(str(weights)).items()}, str(weights),
              metadata={"format": "pt"})


def write_card(directory: Path, card: dict[str, Any], markdown: str) -> None:
    (directory / CARD_JSON).write_text(json.dumps(card, indent=2, ensure_ascii=False, default=str) + "\n",
                                       encoding="utf-8")
    (directory / CARD_MD).write_text(markdown, encoding="utf-8")


def read_card(directory: Path) -> dict[str, Any]:
    """A control's ``control.json``."""
    return dict(json.loads((directory / CARD_JSON).read_text(encoding="utf-8")))
