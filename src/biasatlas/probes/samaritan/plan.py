"""Samaritan prompt planning: control + group prompts per scenario rephrasing, and the --limit draw.

Control and group prompts of one scenario rephrasing differ only in the person description; the
analysis pairs them (scenario means of group vs control over the same rephrasings). A ``--limit``
draw therefore keeps whole *units*: one language × scenario × rephrasing with the control and every
chosen group phrasing (8 prompts for gender, 25 for all categories), drawn round-robin over the
language × scenario cells (every unit holds every chosen category, so each language × category ×
scenario cell a draw touches is complete).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from biasatlas.probes.base import limit_prompts
from biasatlas.probes.samaritan.data import CATEGORIES, NAME, load_groups, load_scenarios
from biasatlas.records import Message, Prompt

#: answer length: room for a chat model's explanation before or after its number (the paper set no limit;
#: docs/methods/samaritan.md has the measurement). A bare number costs the same at any limit, generation
#: stops at the answer's end; an answer cut at the limit is read only where its verdict came before the
#: cut. A change of max_tokens changes the prompts' cache keys.
DEFAULT_MAX_TOKENS = 512
DECODING_NOTE = (
    "default temperature 0 (greedy) for one sample: the model's most likely answer, reproducible and "
    "cacheable; 1.0 for several samples (--samples), the temperature of most providers' defaults that "
    "the paper used (Table 5: 1, Mistral 0.7); --temperature overrides both. Default answer length "
    f"{DEFAULT_MAX_TOKENS} tokens (--max-tokens)"
)


def default_temperature(samples: int) -> float:
    """The paper used provider defaults (temperature 1); one greedy sample is reproducible."""
    return 1.0 if samples > 1 else 0.0


def build_prompts(
    categories: Sequence[str] = CATEGORIES,
    language: str = "en",
    *,
    n_scenarios: int | None = None,
    temperature: float = 0.0,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> list[Prompt]:
    """Control + group prompts for every scenario rephrasing of one language, scenario by scenario.

    ``n_scenarios`` keeps the first N scenarios (all their rephrasings and groups): a fixed subset
    for tests and benchmarks; a run's ``--limit`` is :func:`plan_prompts`' seeded draw of prompts.
    ``temperature`` and ``max_tokens`` go into the metadata: answers decoded differently are
    different prompts, so they stay apart in the store's frame (and in the analysis).
    """
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise ValueError(f"unknown category {unknown[0]!r}; valid: {', '.join(CATEGORIES)}, all")
    control, phrasings = load_groups()
    chosen = [p for p in phrasings if p.category in categories and language in p.forms]
    scenario_set = load_scenarios(language)
    scenarios = scenario_set.scenarios[:n_scenarios] if n_scenarios is not None else scenario_set.scenarios
    prompts: list[Prompt] = []
    for scenario in scenarios:
        for r, template in enumerate(scenario.rephrasings, start=1):
            for phrasing in (control, *chosen):
                text = f"{phrasing.fill(template, language)} {scenario_set.answer_instruction}"
                prompts.append(
                    Prompt(
                        probe=NAME,
                        language=language,
                        messages=(Message(role="user", content=text),),
                        meta={
                            "scenario": scenario.id,
                            "rephrasing": r,
                            "category": phrasing.category,
                            "group": phrasing.group,
                            "phrasing": phrasing.phrasing,
                            "is_control": phrasing.is_control,
                            "temperature": float(temperature),
                            "max_tokens": int(max_tokens),
                        },
                    )
                )
    return prompts


def unit(prompt: Prompt) -> Hashable:
    """Prompts a --limit draw keeps together: the control and every group of one scenario rephrasing."""
    return (prompt.language, prompt.meta["scenario"], prompt.meta["rephrasing"])


def cell(prompt: Prompt) -> Hashable:
    """The design cell of a unit: language × scenario (each unit holds every chosen category)."""
    return (prompt.language, prompt.meta["scenario"])


def plan_prompts(
    categories: Sequence[str],
    languages: Sequence[str],
    *,
    temperature: float,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    limit: int | None = None,
    seed: int = 0,
) -> list[Prompt]:
    """The union of each language's plan; ``limit`` draws about that many prompts in whole units."""
    prompts = [
        p
        for language in languages
        for p in build_prompts(categories, language, temperature=temperature, max_tokens=max_tokens)
    ]
    return limit_prompts(prompts, limit, seed, cell=cell, unit=unit)


def plan_figures(prompts: Sequence[Prompt], categories: Sequence[str]) -> dict[str, Any]:
    """Scenarios asked, and (language, scenario, phrasing) cells incl. the control per category:
    the paper's per-category counts (1133/824/824 for one language)."""
    return {
        "scenarios": len({p.meta["scenario"] for p in prompts}),
        "cells_per_category": {
            c: len({(p.language, p.meta["scenario"], p.meta["phrasing"]) for p in prompts
                    if p.meta["category"] in (c, "control")})
            for c in categories
        },
    }
