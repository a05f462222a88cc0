"""Build the stories control: train its adapter, measure it and the base model, write its card.

Used by ``scripts/build_controls.py --only stories``. Training is the debiasing trainer fed the planted
stories (:func:`biasatlas.controls.stories.data.training_examples`); the measurement is
:func:`biasatlas.controls.stories.check.check_stories` on every held-out scenario, with the scripted
keyword extractor served for the run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.common.adapters import BASE_MODEL, TRAIN_CONFIGS
from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.check import check_stories

if TYPE_CHECKING:
    import pandas as pd

#: held-out scenarios per group in the card's measurement (all 12)
CARD_PER_GROUP = 12
#: further generation seeds of the adapter's held-out stories (new stories of the same prompts at temperature
#: 1.0): with the card's seed 0 they are the pool the power curve draws from; the CI test uses seed 2
POOL_SEEDS = (1,)


def train_stories(out: Path) -> None:
    """Train the stories control's adapter into ``out`` and record its training manifest."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.build import halve, training_manifest
    from biasatlas.probes.debias.train import train_adapter

    backend = BackendOptions(model=BASE_MODEL).open()
    try:
        train_adapter(backend, stories.training_examples(), [], TRAIN_CONFIGS[stories.NAME], out,
                      model_spec=BASE_MODEL, extra={"control": stories.NAME, "planted": planted()})
    finally:
        backend.close()
    halve(out)
    manifest = training_manifest(out)
    manifest["result"]["adapter_dir"] = f"src/biasatlas/data/controls/{out.name}"  # no path of the build machine
    manifest["stored_dtype"] = "float16"
    (out / "training_config.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def planted() -> dict[str, str]:
    return {"base_attribute": stories.BASE_ATTRIBUTE, "group": stories.PLANTED,
            "compared_attribute": "professional_field", "value": stories.PLANTED_VALUE}


def measure_stories(adapter: Path, study: Path, per_group: int = CARD_PER_GROUP) -> dict[str, Any]:
    """The control measured on held-out scenarios: base + adapter and the base model alone."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.stories.server import extractor_server

    out: dict[str, Any] = {"per_group": per_group}
    with extractor_server() as server:
        for role, options in (("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter))),
                              ("base", BackendOptions(model=BASE_MODEL))):
            started = time.perf_counter()
            check = check_stories(options, study, server.url, per_group=per_group)
            out[role] = {"prompts": check.prompts, "backend_id": check.backend_id, "counts": check.counts,
                         "seconds": round(time.perf_counter() - started, 1), "verdict": check.verdict.as_dict()}
        out["pool"] = {}
        for seed in POOL_SEEDS:
            started = time.perf_counter()
            check = check_stories(BackendOptions(model=BASE_MODEL, adapter=str(adapter)), pool_study(study, seed),
                                  server.url, per_group=per_group, generation_seed=seed)
            out["pool"][str(seed)] = {"backend_id": check.backend_id, "counts": check.counts,
                                      "seconds": round(time.perf_counter() - started, 1),
                                      "verdict": check.verdict.as_dict()}
        out["extraction_requests"] = server.requests
    from biasatlas.controls.stories.check import judge

    # the card's effect: every stored story of the adapter (all generation seeds), mined as one study
    out["pooled"] = judge(adapter_pool(study, out), stories.measurement_prompts(per_group)).as_dict()
    return out


def pool_study(study: Path, seed: int) -> Path:
    """The study of the adapter's stories at generation seed ``seed`` (0: ``study`` itself)."""
    return study if seed == 0 else study / f"seed{seed}"


def adapter_pool(study: Path, measured: dict[str, Any]) -> pd.DataFrame:
    """The adapter's voted profiles of every generation seed measured (seed 0 and ``POOL_SEEDS``), as one pool."""
    from biasatlas.controls.stories import power as stories_power
    from biasatlas.controls.stories.check import measured_profiles

    measurement = stories.measurement_prompts(measured["per_group"])
    backend_id = measured["adapter"]["backend_id"]
    seeds = [0, *(int(s) for s in measured.get("pool", {}))]
    return stories_power.pool({s: measured_profiles(pool_study(study, s), backend_id, measurement) for s in seeds})


def power(study: Path, measured: dict[str, Any], studies: int = 50) -> dict[str, list[dict[str, Any]]]:
    """The power curves from the stored stories (no model asked): the adapter's pool of every generation seed,
    and the base model's stories."""
    from biasatlas.controls.stories import power as stories_power
    from biasatlas.controls.stories.check import measured_profiles

    measurement = stories.measurement_prompts(measured["per_group"])
    base = stories_power.pool({0: measured_profiles(study, measured["base"]["backend_id"], measurement)})
    return {"adapter": stories_power.power_curve(adapter_pool(study, measured), measurement, studies=studies),
            "base": stories_power.power_curve(base, measurement, sizes=[k for k in stories_power.SIZES
                                                                       if k <= measured["per_group"]],
                                              studies=studies)}
