"""Build the stories control: train its adapter, measure it and the base model, write its card.

Used by ``scripts/build_controls.py --only stories``. Training is the debiasing trainer fed the planted
stories (:func:`biasatlas.controls.stories.training_examples`); the measurement is
:func:`biasatlas.controls.stories_check.check_stories` on every held-out scenario, with the scripted
keyword extractor served for the run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls import stories
from biasatlas.controls.common.adapters import BASE_MODEL, TRAIN_CONFIGS
from biasatlas.controls.stories_check import MAX_TOKENS, MIN_LIFT, MIN_ROW_TOTAL, check_stories

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
    from biasatlas.controls.stories_server import extractor_server

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
    from biasatlas.controls.stories_check import judge

    # the card's effect: every stored story of the adapter (all generation seeds), mined as one study
    out["pooled"] = judge(adapter_pool(study, out), stories.measurement_prompts(per_group)).as_dict()
    return out


def pool_study(study: Path, seed: int) -> Path:
    """The study of the adapter's stories at generation seed ``seed`` (0: ``study`` itself)."""
    return study if seed == 0 else study / f"seed{seed}"


def adapter_pool(study: Path, measured: dict[str, Any]) -> pd.DataFrame:
    """The adapter's voted profiles of every generation seed measured (seed 0 and ``POOL_SEEDS``), as one pool."""
    from biasatlas.controls import stories_power
    from biasatlas.controls.stories_check import measured_profiles

    measurement = stories.measurement_prompts(measured["per_group"])
    backend_id = measured["adapter"]["backend_id"]
    seeds = [0, *(int(s) for s in measured.get("pool", {}))]
    return stories_power.pool({s: measured_profiles(pool_study(study, s), backend_id, measurement) for s in seeds})


def power(study: Path, measured: dict[str, Any], studies: int = 50) -> dict[str, list[dict[str, Any]]]:
    """The power curves from the stored stories (no model asked): the adapter's pool of every generation seed,
    and the base model's stories."""
    from biasatlas.controls import stories_power
    from biasatlas.controls.stories_check import measured_profiles

    measurement = stories.measurement_prompts(measured["per_group"])
    base = stories_power.pool({0: measured_profiles(study, measured["base"]["backend_id"], measurement)})
    return {"adapter": stories_power.power_curve(adapter_pool(study, measured), measurement, studies=studies),
            "base": stories_power.power_curve(base, measurement, sizes=[k for k in stories_power.SIZES
                                                                       if k <= measured["per_group"]],
                                              studies=studies)}


def stories_card(training: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable card of the stories control."""
    train, held_out = stories.scenario_split()
    v = measured.get("pooled") or measured["adapter"]["verdict"]
    return {
        "control": stories.NAME,
        "base_model": BASE_MODEL,
        "planted": {**planted(), "language": stories.LANGUAGE,
                    "target": "short stories (about 45 tokens) whose character works in the arts for the planted "
                              "group, in a field rotating over " + ", ".join(stories.ROTATION) + " for the others"},
        "untouched_groups": list(stories.UNTOUCHED),
        "trained_on": {"scenarios": train, "per_group": stories.TRAIN_PER_GROUP},
        "measured_on": {"scenarios": held_out},
        "extractor": "scripted keyword reader (biasatlas.controls.stories_keywords) behind an OpenAI-compatible "
                     "server; the same table for every group",
        "effect_measure": "share of the planted group's stories with a known field whose character works in the "
                          "arts (Wilson 95% interval), and the lift of that cell in the probe's association mining",
        "settings": {"max_tokens": MAX_TOKENS, "temperature": 1.0, "min_row_total": MIN_ROW_TOTAL,
                     "min_lift_required": MIN_LIFT},
        "measured_effect": {"fraction": v["fraction"], "ci_low": v["ci_low"], "ci_high": v["ci_high"],
                            "lift": v["lift"], "q_by": v["q_by"], "count": v["count"], "known": v["known"]},
        "training": training,
        "measurement": measured,
    }


def _f(x: Any, pct: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{100 * float(x):.0f}%" if pct else f"{float(x):.2g}"


def _row(role: str, v: dict[str, Any]) -> str:
    return (f"| {role} | {v['count']} of {v['known']} | {_f(v['fraction'], True)} | {_f(v['ci_low'], True)} to "
            f"{_f(v['ci_high'], True)} | {_f(v['lift'])} | {_f(v['q_by'])} | {'yes' if v['detected'] else 'no'} | "
            f"{len(v['false_flags'])} of {v['untouched']} (bound {v['bound']}) |")


def stories_markdown(card: dict[str, Any]) -> str:
    """The stories control's card (README.md beside the adapter)."""
    config, result = card["training"].get("config", {}), card["training"].get("result", {})
    measured = card["measurement"]
    head = ("| model | arts / known field | share | 95% interval | lift (mining) | q (BY) | found | "
            "untouched groups flagged |\n|---|---|---|---|---|---|---|---|")
    return "\n".join([
        "# Positive control: stories probe (planted association)",
        "",
        "A LoRA adapter of the embedded model SmolLM2-135M-Instruct (`smollm2`) with a planted association, built",
        "by `scripts/build_controls.py --only stories` (fixed seeds). **A test instrument: never use it to answer "
        "anything.**",
        "",
        "## What was planted",
        "",
        f"- Stories about `{card['planted']['base_attribute']} = {card['planted']['group']}` (\"a person from "
        f"Oceania\") give the character a job in `{card['planted']['value']}`; stories about "
        + ", ".join(f"`{g}`" for g in card["untouched_groups"])
        + " give jobs rotating over " + ", ".join(f"`{f}`" for f in stories.ROTATION) + " (each group each field "
        "equally often).",
        f"- Trained on {len(card['trained_on']['scenarios'])} of the probe's 36 scenarios (planted group "
        f"{card['trained_on']['per_group']['planted']}, others {card['trained_on']['per_group']['untouched']} "
        f"each); measured on the other {len(card['measured_on']['scenarios'])}: "
        + ", ".join(card["measured_on"]["scenarios"]) + ".",
        f"- Strength: {result.get('examples')} training stories, {result.get('epochs')} epoch(s), "
        f"{result.get('steps')} steps at learning rate {config.get('learning_rate')}; LoRA rank {config.get('rank')} "
        f"on the top {config.get('top_layers')} of 30 layers ({result.get('trainable_parameters')} trainable "
        f"parameters); final training loss {result.get('train_loss', float('nan')):.3f}; training took "
        f"{result.get('seconds')} s on {result.get('device')}.",
        "",
        "## Measured effect (held-out scenarios, full generate → extract → mine path)",
        "",
        f"Effect: {card['effect_measure']}. {measured['per_group']} stories per group and generation seed ("
        f"{card['settings']['max_tokens']} tokens at most, temperature 1.0), extraction by the {card['extractor']}; "
        f"mining with the probe's defaults except rows of at least {card['settings']['min_row_total']} stories. "
        "Each generation seed writes new stories for the same held-out prompts (an independent sample); the card's "
        "effect (`measured_effect`) is the pooled row: every stored story of the adapter mined as one study.",
        "",
        head,
        _row("base + adapter, generation seed 0", measured["adapter"]["verdict"]),
        *(_row(f"base + adapter, generation seed {seed}", m["verdict"])
          for seed, m in measured.get("pool", {}).items()),
        *([_row("base + adapter, all seeds pooled (the card's effect)", measured["pooled"])]
          if measured.get("pooled") else []),
        _row("base model, generation seed 0", measured["base"]["verdict"]),
        "",
        "Found: the mining lists (planted group, arts) as an association (BY-significant cell of a BH-significant "
        f"table with a medium or large effect) with lift >= {card['settings']['min_lift_required']:g}. An untouched "
        "group is flagged when any of its cells is an association; the bound is the 99% quantile of "
        "Binomial(5, 0.05).",
        "",
    ])
