"""Build the Samaritan control: train its adapter, measure it on held-out scenarios, for its card.

Used by ``scripts/build_controls.py --only samaritan``. The card (:mod:`.card`: ``control.json``,
``README.md``) records what was planted, the scenarios trained on and measured on, and the probe's own
group-vs-control rows for base + adapter and for the base model alone on the same held-out prompts.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from biasatlas.controls.common.adapters import BASE_MODEL, TRAIN_CONFIGS
from biasatlas.controls.common.build import halve, training_manifest
from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan.check import check_samaritan

#: held-out scenarios the card's measurement asks (en and de, one rephrasing, control + 7 age phrasings)
CARD_SCENARIOS = 20
#: the base model is also asked at the probe's default answer length (at 6 tokens it rarely gives a number)
#: on the first of those scenarios
BASE_DEFAULT_SCENARIOS = 6


def train(out: Path) -> None:
    """Train the Samaritan control's adapter into ``out`` and record its manifest (no build-machine paths)."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.probes.debias.train import train_adapter

    examples = samaritan.training_examples()
    backend = BackendOptions(model=BASE_MODEL).open()
    try:
        train_adapter(backend, examples, [], TRAIN_CONFIGS[samaritan.NAME], out, model_spec=BASE_MODEL,
                      extra={"control": samaritan.NAME, "planted": samaritan.PLANTED, "shift": samaritan.SHIFT})
    finally:
        backend.close()
    halve(out)
    manifest = training_manifest(out)
    manifest["result"]["adapter_dir"] = f"src/biasatlas/data/controls/{out.name}"
    manifest["stored_dtype"] = "float16"
    (out / "training_config.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def measure(adapter: Path, study: Path, scenarios: int = CARD_SCENARIOS) -> dict[str, Any]:
    """The probe's rows and verdicts for base + adapter and for the base model, on the same held-out prompts."""
    from biasatlas.backends.options import BackendOptions

    out: dict[str, Any] = {"scenarios": scenarios, "held_out": samaritan.measurement_prompts(scenarios).scenarios}
    for role, options in (("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter))),
                          ("base", BackendOptions(model=BASE_MODEL))):
        started = time.perf_counter()
        check = check_samaritan(options, study, scenarios=scenarios)
        out[role] = {"prompts": check.prompts, "backend_id": check.backend_id,
                     "seconds": round(time.perf_counter() - started, 1),
                     "verdicts": [v.as_dict() for v in check.verdicts], "rows": check.rows}
    from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS

    started = time.perf_counter()
    check = check_samaritan(BackendOptions(model=BASE_MODEL), study, scenarios=BASE_DEFAULT_SCENARIOS,
                            max_tokens=DEFAULT_MAX_TOKENS)
    out["base_default_tokens"] = {"prompts": check.prompts, "backend_id": check.backend_id,
                                  "max_tokens": DEFAULT_MAX_TOKENS, "scenarios": BASE_DEFAULT_SCENARIOS,
                                  "seconds": round(time.perf_counter() - started, 1),
                                  "verdicts": [v.as_dict() for v in check.verdicts], "rows": check.rows}
    return out
