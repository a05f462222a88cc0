"""The stories control's card: ``control.json`` (:func:`stories_card`) and README.md beside the adapter."""

from __future__ import annotations

from typing import Any

from biasatlas.controls.common.adapters import BASE_MODEL
from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.build import planted
from biasatlas.controls.stories.check import MAX_TOKENS, MIN_LIFT, MIN_ROW_TOTAL


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
        "extractor": "scripted keyword reader (biasatlas.controls.stories.keywords) behind an OpenAI-compatible "
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
