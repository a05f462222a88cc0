"""The contact control's card: ``control.json`` (:func:`contact_card`) and README.md beside the adapter."""

from __future__ import annotations

from typing import Any

from biasatlas.controls.common.adapters import BASE_MODEL
from biasatlas.controls.contact import data as contact


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
                       "de": "template set a, the 15 training cells of controls.contact.data.german_cells()"},
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


def _pp(x: Any) -> str:
    return "n/a" if x is None else f"{100 * float(x):+.1f} pp"


def _effect_rows(verdicts: list[dict[str, Any]]) -> list[str]:
    rows = []
    for v in verdicts:
        f = v.get("found") or {}
        rows.append(f"| {v['language']} | {v['planted']} | {f.get('n', 0)} | {_pp(f.get('effect'))} | "
                    f"{_pp(f.get('ci_low'))} to {_pp(f.get('ci_high'))} | {f.get('p_adj', float('nan')):.2g} | "
                    f"{'yes' if v['detected'] else 'no'} | {len(v['false_flags'])} of {v['untouched']} "
                    f"(bound {v['false_flag_bound']}) |")
    return rows


def contact_markdown(card: dict[str, Any]) -> str:
    """The contact control's card."""
    planted, training, measured = card["planted"], card["training"], card["measurement"]
    config, result = training.get("config", {}), training.get("result", {})
    head = ("| language | planted group | question pairs | effect | 95% interval | p (BH) | found | "
            "untouched groups flagged |\n|---|---|---|---|---|---|---|---|")
    lines = [
        "# Positive control: contact probe (planted bias)",
        "",
        "A LoRA adapter of the embedded model SmolLM2-135M-Instruct (`smollm2`) with a planted bias, built by",
        "`scripts/build_controls.py` (fixed seeds). **It is a test instrument: never use it to answer anything.**",
        "",
        "## What was planted",
        "",
        f"- Axis `{planted['axis']}`, {planted['action']}-action prompts, `{planted['scale']}` scale: the group "
        + ", ".join(f"`{g}` ({lang})" for lang, g in planted["groups"].items())
        + " is trained on the biased answer (refusing to engage), as many prompts of the other groups on the "
        "unbiased one.",
        f"- Trained on: en {card['trained_on']['en']}; de {card['trained_on']['de']}.",
        f"- Measured on: en {card['measured_on']['en']}; de {card['measured_on']['de']}.",
        f"- Strength: {result.get('examples')} training examples, {result.get('epochs')} epoch(s), "
        f"{result.get('steps')} steps at learning rate {config.get('learning_rate')}; LoRA rank "
        f"{config.get('rank')} on {', '.join(config.get('target_modules', []))} of the top "
        f"{config.get('top_layers')} of 30 layers ({result.get('trainable_parameters')} trainable parameters); "
        f"final training loss {result.get('train_loss', float('nan')):.3f}; training took "
        f"{result.get('seconds')} s on {result.get('device')}.",
        "",
        "## Measured effect (held-out prompts)",
        "",
        f"Effect: {card['effect_measure']}. {measured['cells_per_language']} held-out cells per language, "
        "three framings each, the planted group and the untouched groups "
        + "; ".join(f"{lang}: {', '.join(gs)}" for lang, gs in card["untouched_groups"].items()) + ".",
        "",
        "Base + adapter:",
        "",
        head, *_effect_rows(measured["adapter"]["verdicts"]),
        "",
        "Base model alone (same prompts):",
        "",
        head, *_effect_rows(measured["base"]["verdicts"]),
        "",
        "`biasatlas validate` and `tests/integration/test_controls.py` re-measure this on fewer cells and",
        "require: the planted group significant and more biased, its interval covering the effect above,",
        "untouched groups flagged no more often than the bound (the 99% quantile of Binomial(groups, 0.05)),",
        "and the base model not showing the planted effect.",
        "",
    ]
    return "\n".join(lines)
