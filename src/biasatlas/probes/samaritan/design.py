"""``--design paper`` for the Samaritan probe: what Fagan et al. ("The Biased Samaritan") fixed.

English, every category (race, gender, age) with every phrasing of the paper's Table 4 and the control, all
103 scenarios × 4 rephrasings, one answer per prompt at temperature 1 (the providers' default the paper
used, Table 5), and the paper's significance rule (paired t-test, α 0.01, uncorrected) as the study's
analysis default. What it cannot set: a control asked within each category (ours is asked once per
rephrasing and shared), and a number of answer tokens (the paper set none: ours stays 512).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.samaritan.data import CATEGORIES
from biasatlas.records import Prompt

PAPER = "Fagan et al. (The Biased Samaritan)"
#: §4.2: prompts per model and category, i.e. (scenario, phrasing) cells with the control: 103 × 11 / 8 / 8
PAPER_CELLS = {"race": 1_133, "gender": 824, "age": 824}
#: what the design sets, and the option each value comes from
_VALUES: dict[str, tuple[str, Any]] = {
    "languages": ("--lang", ["en"]),
    "categories": ("--category", list(CATEGORIES)),
    "temperature": ("--temperature", 1.0),
    "alpha": ("--alpha", 0.01),
    "correction": ("--correction", "none"),
}
#: the embedded model's pace on this machine's CPU (docs/performance.md: 96 Samaritan prompts in 780 s of run,
#: greedy, at most 512 tokens: its answers reason before the number); not measured on a GPU
PACE = (780 / 96, None, "the embedded model (SmolLM2-135M) at 8.1 s a Samaritan prompt on this machine's "
        "shared 2-core CPU (measured; its answers reason before the number); not measured on a GPU")


def apply(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The config values with the paper's design set, and one line per value; a value given otherwise is refused."""
    out = dict(values)
    said = [f"the paper: {PAPER}"]
    for name, (option, value) in _VALUES.items():
        given = values.get(name)
        if name == "categories" and given is not None:
            given = list(CATEGORIES) if given in ("all", ["all"]) else given
            given = given.split(",") if isinstance(given, str) else given
        if given is not None and (sorted(given) != sorted(value) if isinstance(value, list) else given != value):
            shown = ",".join(given) if isinstance(given, list) else given
            raise ProbeConfigError(f"--design paper: {option} {shown} differs from the paper's design "
                                   f"({','.join(value) if isinstance(value, list) else value}); leave {option} "
                                   "out, or run without --design")
        out[name] = value
        said.append(f"{option} {','.join(value) if isinstance(value, list) else value}")
    said[-2:] = ["significance as the paper's: paired t-test at --alpha 0.01, --correction none"]
    said.append("control: asked once per rephrasing and shared by the categories (the paper asked it within each)")
    return out, said


def design_counts() -> tuple[dict[str, int], int]:
    """The whole English design, counted from its data without writing a prompt: (scenario, phrasing) cells with
    the control per category (the plan's ``cells_per_category``), and the prompts (cells × rephrasings)."""
    from biasatlas.probes.samaritan.data import load_groups, load_scenarios

    _, phrasings = load_groups()
    scenarios = load_scenarios("en").scenarios
    english = [p for p in phrasings if "en" in p.forms]
    cells = {c: len(scenarios) * (1 + sum(p.category == c for p in english)) for c in CATEGORIES}
    prompts = sum(len(s.rephrasings) for s in scenarios) * (1 + len(english))
    return cells, prompts


def plan_block(config: Any, prompts: Sequence[Prompt], samples: int, max_tokens: int) -> dict[str, Any]:
    """The ``design`` entry of ``--plan-only``: the paper's counts beside ours, what cannot be matched, cost, time."""
    from biasatlas.probes.contact.design import cost_and_time
    _, said = apply({})
    cells, design = design_counts()
    block: dict[str, Any] = {
        "name": "paper", "paper": PAPER, "set": said, "limited": config.limit is not None,
        "cells_per_category": {c: {"ours": cells.get(c, 0), "paper": n} for c, n in PAPER_CELLS.items()},
        "design_prompts": design, "asked_prompts": len(prompts),
        "why": "the paper counts (scenario, phrasing) cells with the control; each cell is asked in the 4 "
               "rephrasings (103 × 4 × (24 phrasings + the control) = 10,300 prompts a model)",
        "not_as_in_the_paper": [
            "the control is asked once per scenario rephrasing and shared by race, gender and age; the paper's "
            "Tables 6-8 give a control score per category (asked within each). Our store keeps one answer per "
            "text and decoding, so three askings of one text are one answer: each category's table shows the "
            "same control",
            "decoding: temperature 1 for every model (the paper used each provider's default: 1, Mistral 0.7; top_p "
            "0.95-1); answers of at most 512 tokens (the paper set no limit)",
            "the scenarios and rephrasings are ours (the paper's 412 human-written prompts are not published)",
            "Latino (§4.1) has no phrasing in Table 4 and is left out, as in the paper's tables",
        ],
    }
    block.update(cost_and_time(prompts, samples, "generate", max_tokens, pace=PACE))
    return block
