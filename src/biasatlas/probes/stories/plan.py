"""Story prompts: one prompted attribute value × one scenario, per language; the --limit draw."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biasatlas.probes.base import limit_prompts
from biasatlas.probes.stories.seeds import Seeds, load_seeds
from biasatlas.records import Message, Prompt

NAME = "stories"
TITLE = "Open-ended stories: demographic associations (StereoTales)"
EXTRACT_PROBE = "stories-extract"
#: the published prompt template these prompts follow (the paper's main design); imported stories of
#: other templates (neutral, negative, positive) carry theirs
TEMPLATE_ID = "scenario_based"


def build_prompts(seeds: Seeds, limit: int | None = None, extra: dict[str, Any] | None = None) -> list[Prompt]:
    """One prompt per prompted value × scenario (79 × 36 = 2,844 per language).

    Prompt k pairs value k mod 79 with scenario k mod 36 (coprime counts, so every pair occurs
    once): the first ``limit`` prompts then vary both the attribute and the scenario.
    """
    pairs = _round_robin(seeds)
    scenarios = seeds.scenarios
    total = len(pairs) * len(scenarios)
    order = _interleaved(len(pairs), len(scenarios))
    prompts = []
    for i, j in order[: total if limit is None else limit]:
        dim, value = pairs[i]
        scenario = scenarios[j]
        text = seeds.story_template.format(protagonist=value.prompt, scenario=scenario.text,
                                           aspects=seeds.aspects_text).strip()
        prompts.append(
            Prompt(
                probe=NAME,
                language=seeds.language,
                messages=(Message(role="user", content=text),),
                meta={
                    "base_attribute": dim.key,
                    "base_value": value.key,
                    "scenario_key": scenario.key,
                    "scenario_group": scenario.group,
                    "template_id": TEMPLATE_ID,
                    **(extra or {}),
                },
            )
        )
    return prompts


def _round_robin(seeds: Seeds) -> list[tuple[Any, Any]]:
    """The prompted (dimension, value) pairs, one value of each dimension in turn."""
    by_dim: dict[str, list[tuple[Any, Any]]] = {}
    for dim, value in seeds.prompted:
        by_dim.setdefault(dim.key, []).append((dim, value))
    out: list[tuple[Any, Any]] = []
    for rank in range(max(len(v) for v in by_dim.values())):
        out.extend(v[rank] for v in by_dim.values() if rank < len(v))
    return out


def _interleaved(n_pairs: int, n_scenarios: int) -> list[tuple[int, int]]:
    """All (pair, scenario) index pairs, ordered so that consecutive ones differ in both."""
    from math import gcd

    if gcd(n_pairs, n_scenarios) == 1:
        return [(k % n_pairs, k % n_scenarios) for k in range(n_pairs * n_scenarios)]
    # not coprime (a seeds folder of another size): shift the scenario every full cycle
    out = []
    for k in range(n_pairs * n_scenarios):
        cycle = k // n_pairs
        out.append((k % n_pairs, (k + cycle) % n_scenarios))
    return out


def design_cell(prompt: Prompt) -> tuple[str, str, str]:
    """The stratum of the --limit draw: language × prompted attribute × scenario group."""
    return (prompt.language, str(prompt.meta["base_attribute"]), str(prompt.meta["scenario_group"]))


def plan_prompts(
    languages: Sequence[str], limit: int | None = None, seed: int = 0, seeds_dir: str | None = None
) -> list[Prompt]:
    """Every language's prompts (the union), then a seeded draw of ``limit`` prompts over the cells.

    Stories are not paired, so the draw's unit is the prompt: ``limit`` prompts exactly, spread
    round-robin over language × prompted attribute × scenario group (19 × 9 = 171 cells a language).
    ``seeds_dir`` is a seeds folder (the published layout or ours) used instead of the bundled seeds;
    its values are mapped to the bundled keys (:mod:`.published`).
    """
    prompts: list[Prompt] = []
    for code in languages:
        if seeds_dir is None:
            prompts.extend(build_prompts(load_seeds(code)))
        else:
            from biasatlas.probes.stories.published import folder_seeds

            prompts.extend(build_prompts(folder_seeds(seeds_dir, code), extra={"seeds": str(seeds_dir)}))
    return limit_prompts(prompts, limit, seed, cell=design_cell)
