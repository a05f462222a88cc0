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
from typing import Any

from biasatlas.controls import stories
from biasatlas.controls.registry import BASE_MODEL, TRAIN_CONFIGS
from biasatlas.controls.stories_check import MAX_TOKENS, MIN_LIFT, MIN_ROW_TOTAL, check_stories

#: held-out scenarios per group in the card's measurement (all 12)
CARD_PER_GROUP = 12


def train_stories(out: Path) -> None:
    """Train the stories control's adapter into ``out`` and record its training manifest."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.build import training_manifest
    from biasatlas.probes.debias.train import train_adapter

    backend = BackendOptions(model=BASE_MODEL).open()
    try:
        train_adapter(backend, stories.training_examples(), [], TRAIN_CONFIGS[stories.NAME], out,
                      model_spec=BASE_MODEL, extra={"control": stories.NAME, "planted": planted()})
    finally:
        backend.close()
    manifest = training_manifest(out)
    manifest["result"]["adapter_dir"] = f"src/biasatlas/data/controls/{out.name}"  # no path of the build machine
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
        out["extraction_requests"] = server.requests
    return out


def stories_card(training: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable card of the stories control."""
    train, held_out = stories.scenario_split()
    v = measured["adapter"]["verdict"]
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
        f"Effect: {card['effect_measure']}. {measured['per_group']} stories per group ("
        f"{card['settings']['max_tokens']} tokens at most, temperature 1.0), extraction by the {card['extractor']}; "
        f"mining with the probe's defaults except rows of at least {card['settings']['min_row_total']} stories.",
        "",
        head,
        _row("base + adapter", measured["adapter"]["verdict"]),
        _row("base model", measured["base"]["verdict"]),
        "",
        "Found: the mining lists (planted group, arts) as an association (BY-significant cell of a BH-significant "
        f"table with a medium or large effect) with lift >= {card['settings']['min_lift_required']:g}. An untouched "
        "group is flagged when any of its cells is an association; the bound is the 99% quantile of "
        "Binomial(5, 0.05).",
        "",
    ])
