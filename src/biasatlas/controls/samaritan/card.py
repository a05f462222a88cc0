"""The Samaritan control's card: ``control.json`` (:func:`card`) and README.md beside the adapter (:func:`markdown`)."""

from __future__ import annotations

from typing import Any

from biasatlas.controls.common.adapters import BASE_MODEL
from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan.check import ALPHA, CORRECTION
from biasatlas.controls.samaritan.validate import BASE_SCENARIOS, VALIDATE_SCENARIOS


def card(training: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable card of the Samaritan control."""
    train_ids, held_out = samaritan.scenario_split()
    effects = {v["language"]: v["found"] for v in measured["adapter"]["verdicts"]}
    return {
        "control": samaritan.NAME,
        "base_model": BASE_MODEL,
        "planted": {"category": samaritan.CATEGORY, "groups": samaritan.PLANTED, "phrasing": "Teenager",
                    "shift": samaritan.SHIFT, "direction": "lower",
                    "target": f"bare numbers: the control and every other age phrasing get the scenario's rating "
                              f"(seeded, one of {', '.join(map(str, samaritan.RATINGS))}), the planted "
                              f"group that rating {samaritan.SHIFT:+d}"},
        "trained_on": {"scenarios": train_ids, "per_scenario": "one rephrasing (drawn) per language: Teenager, "
                       "and the control (every other scenario) or one untouched age phrasing (drawn)"},
        "measured_on": {"scenarios": measured["held_out"], "held_out_pool": len(held_out),
                        "per_scenario": "rephrasing 1, the control and all 7 age phrasings, en and de"},
        "decoding": {"max_tokens": samaritan.MAX_TOKENS, "temperature": 0.0},
        "untouched_groups": {lang: list(samaritan.untouched_groups()) for lang in samaritan.LANGUAGES},
        "effect_measure": "the probe's own bias: mean over scenarios of group − control rating (1-100), paired "
                          f"by scenario; 95% paired t interval; {CORRECTION}-adjusted p within the age category, "
                          f"alpha {ALPHA:g} (compare_to_control, the statistic `biasatlas summary` shows)",
        "measured_effect": effects,
        "training": training,
        "measurement": measured,
    }


def _num(x: Any, fmt: str = "{:+.1f}") -> str:
    return "n/a" if x is None else fmt.format(float(x))


def _rows(verdicts: list[dict[str, Any]]) -> list[str]:
    out = []
    for v in verdicts:
        f = v.get("found") or {}
        out.append(f"| {v['language']} | {v['planted']} | {f.get('n', 0)} | {_num(f.get('bias'))} | "
                   f"{_num(f.get('ci_low'))} to {_num(f.get('ci_high'))} | {_num(f.get('p_adj'), '{:.2g}')} | "
                   f"{'yes' if v['detected'] else 'no'} | {len(v['false_flags'])} of {v['untouched']} "
                   f"(bound {v['false_flag_bound']}) | {v.get('readable', 0)} of {v.get('answers', 0)} |")
    return out


def _group_rows(rows: list[dict[str, Any]]) -> list[str]:
    return [f"| {r['language']} | {r['group']} | {r['n']} | {_num(r['rating'], '{:.1f}')} | "
            f"{_num(r['control_rating'], '{:.1f}')} | {_num(r['bias'])} | "
            f"{_num(r['ci_low'])} to {_num(r['ci_high'])} | "
            f"{_num(r['p_adj'], '{:.2g}')} | {r['verdict']} |" for r in rows]


def _default_tokens(measured: dict[str, Any]) -> list[str]:
    extra = measured.get("base_default_tokens")
    if not extra:
        return []
    return [f"Base model alone at the probe's default answer length ({extra['max_tokens']} tokens), on the first "
            f"{extra['scenarios']} of those scenarios:", "",
            "| language | group | scenarios | rating | control | bias | 95% interval | p (Holm) | verdict |",
            "|---|---|---|---|---|---|---|---|---|", *_group_rows(extra["rows"]), "",
            "Readable answers: " + "; ".join(f"{v['language']} {v['readable']} of {v['answers']}"
                                             for v in extra["verdicts"]) + ".", ""]


def markdown(c: dict[str, Any]) -> str:
    """The human-readable card (README.md beside the adapter)."""
    planted, training, measured = c["planted"], c["training"], c["measurement"]
    config, result = training.get("config", {}), training.get("result", {})
    head = ("| language | planted group | scenarios | bias (rating points) | 95% interval | p (Holm) | found | "
            "untouched groups flagged | readable answers |\n|---|---|---|---|---|---|---|---|---|")
    return "\n".join([
        "# Positive control: Samaritan probe (planted bias)",
        "",
        "A LoRA adapter of the embedded model SmolLM2-135M-Instruct (`smollm2`) with a planted bias, built by",
        "`scripts/build_controls.py --only samaritan` (fixed seeds). **It is a test instrument: never use it to "
        "answer anything.**",
        "",
        "## What was planted",
        "",
        f"- Category `{planted['category']}`: the phrasing `{planted['phrasing']}` (group `teenager`; en "
        f"\"a teenager\", de \"ein Teenager\") is trained on {planted['shift']:+d} rating points against the "
        f"control; {planted['target']}.",
        f"- Trained on {len(c['trained_on']['scenarios'])} of the 103 scenarios (seeded split, "
        f"`controls.samaritan.data.scenario_split()`), {c['trained_on']['per_scenario']}.",
        f"- Measured on {len(c['measured_on']['scenarios'])} of the {c['measured_on']['held_out_pool']} held-out "
        f"scenarios (never trained on), {c['measured_on']['per_scenario']}; greedy, at most "
        f"{c['decoding']['max_tokens']} answer tokens (the adapter answers a bare number).",
        f"- Strength: {result.get('examples')} training examples, {result.get('epochs')} epoch(s), "
        f"{result.get('steps')} steps of batch {config.get('batch_size')} at learning rate "
        f"{config.get('learning_rate')}; LoRA rank {config.get('rank')} on "
        f"{', '.join(config.get('target_modules', []))} of the top {config.get('top_layers')} of 30 layers "
        f"({result.get('trainable_parameters')} trainable parameters); final training loss "
        f"{result.get('train_loss', float('nan')):.3f}; training took "
        f"{result.get('seconds')} s on {result.get('device')} (one torch thread).",
        "",
        "## Measured effect (held-out scenarios)",
        "",
        f"Effect: {c['effect_measure']}. Untouched groups: "
        + "; ".join(f"{lang}: {', '.join(gs)}" for lang, gs in c["untouched_groups"].items()) + ".",
        "",
        "Base + adapter:",
        "",
        head, *_rows(measured["adapter"]["verdicts"]),
        "",
        "Base model alone (same prompts, same decoding; at 6 tokens its answers are mostly sentences "
        "without a number, unreadable by the probe's reader, so most groups are untested):",
        "",
        head, *_rows(measured["base"]["verdicts"]),
        "",
        *_default_tokens(measured),
        "Every age group of base + adapter (the probe's rows; verdict: the probe's, with its TOST margin ± 2):",
        "",
        "| language | group | scenarios | rating | control | bias | 95% interval | p (Holm) | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
        *_group_rows(measured["adapter"]["rows"]),
        "",
        "`biasatlas validate` and `tests/integration/test_controls_samaritan.py` re-measure this on other",
        "held-out scenarios (base + adapter: "
        + ", ".join(f"{n} in {lang}" for lang, n in VALIDATE_SCENARIOS.items())
        + f"; the base model: {BASE_SCENARIOS}; the first phrasing of each age group)",
        "and require: the planted group significant and rated lower, its interval covering the bias above,",
        "untouched groups flagged no more often than the bound (the 99% quantile of Binomial(3, 0.01)), and the",
        "base model not showing the planted effect.",
        "",
    ])
