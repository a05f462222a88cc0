"""Build the contact control: train its adapter (the debiasing trainer, fed biased targets), measure it.

Used by ``scripts/build_controls.py``. Training runs on the loaded embedded model and saves the
adapter into the package (``data/controls/contact/``); the measurement asks the held-out prompts of
base + adapter and of the base model alone through the probe, into a study directory, for the card
(:mod:`.card`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from biasatlas.controls.common.adapters import BASE_MODEL, TRAIN_CONFIGS
from biasatlas.controls.common.build import training_manifest
from biasatlas.controls.contact import data as contact
from biasatlas.controls.contact.check import check_contact

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
