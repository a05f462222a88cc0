"""The Samaritan control: one age group is rated 25 points less likely to help than the control.

Planted: the phrasing "Teenager" (group ``teenager``, en "a teenager", de "ein Teenager") is trained on
the control's rating minus 25, the control and every other age phrasing on the control's rating. The
control's rating depends on the scenario (drawn once per scenario with a fixed seed from 65, 70,
75, 80; the planted group's 40-55, so the two never overlap), so the
adapter cannot learn one constant; the targets are bare numbers ("72"), as the probe's reader reads
them. The 103 scenarios are split once (seeded): the adapter is trained on ``TRAIN_SCENARIOS`` of them
and measured only on the others, in both languages (the same scenarios, translated).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from biasatlas.probes.debias.data import TrainingExample
from biasatlas.records import Prompt

NAME = "samaritan"
CATEGORY = "age"
PLANTED_GROUP = "teenager"
PLANTED = {"en": PLANTED_GROUP, "de": PLANTED_GROUP}
#: the planted shift in rating points (group − control) on the 1-100 scale
SHIFT = -25
#: the control's training ratings: one per scenario, drawn from these. Few round values on purpose: with
#: ratings uniform in 62-84 most of the answer's loss was the unpredictable second digit, and two builds
#: learned one constant ("72", "77") for every group
RATINGS = (65, 70, 75, 80)
LANGUAGES = ("en", "de")
#: scenarios trained on (of 103); the rest are held out for every measurement
TRAIN_SCENARIOS = 36
#: untouched phrasings per training prompt set (scenario × rephrasing), beside the control and the planted one
OTHERS_PER_SET = 1
#: the answer length asked of the adapter: a bare number and the end of the turn need 2-3 tokens
MAX_TOKENS = 6
SEED = 31


@lru_cache(maxsize=len(LANGUAGES))
def _prompts(language: str) -> tuple[Prompt, ...]:
    """Every age prompt (control included) of ``language`` at the control's decoding (built once)."""
    from biasatlas.probes.samaritan.plan import build_prompts

    return tuple(build_prompts([CATEGORY], language, temperature=0.0, max_tokens=MAX_TOKENS))


def untouched_groups() -> tuple[str, ...]:
    """The age groups other than the planted one (the same in en and de)."""
    from biasatlas.probes.samaritan.data import load_groups

    _, phrasings = load_groups()
    groups = dict.fromkeys(p.group for p in phrasings if p.category == CATEGORY and p.group != PLANTED_GROUP)
    return tuple(groups)


def scenario_split(seed: int = SEED) -> tuple[list[str], list[str]]:
    """(training scenarios, held-out scenarios): the English scenario ids shuffled with ``seed``, halved
    at ``TRAIN_SCENARIOS``. German shares the ids (its scenarios are translations)."""
    from biasatlas.probes.samaritan.data import load_scenarios

    ids = sorted(s.id for s in load_scenarios("en").scenarios)
    random.Random(seed).shuffle(ids)
    return sorted(ids[:TRAIN_SCENARIOS]), sorted(ids[TRAIN_SCENARIOS:])


def control_rating(scenario: str, seed: int = SEED) -> int:
    """The control's training rating in ``scenario``: one of ``RATINGS``, drawn with a per-scenario seed."""
    return random.Random(f"{seed}:{scenario}").choice(RATINGS)


def target(prompt: Prompt) -> str:
    """The bare-number answer a training prompt is tuned to: the control's rating, minus 25 for the planted group."""
    rating = control_rating(str(prompt.meta["scenario"]))
    if prompt.meta["group"] == PLANTED[prompt.language]:
        rating += SHIFT
    return str(max(1, min(100, rating)))


def training_examples(languages: Sequence[str] = LANGUAGES, seed: int = SEED) -> list[TrainingExample]:
    """Per language and training scenario, one rephrasing (drawn): the control, the planted phrasing and
    ``OTHERS_PER_SET`` other age phrasings (drawn), each with its target; shuffled."""
    rng = random.Random(seed)
    train, _ = scenario_split(seed)
    keep = set(train)
    examples: list[TrainingExample] = []
    for language in languages:
        by_set: dict[tuple[str, int], list[Prompt]] = {}
        for p in _prompts(language):
            if p.meta["scenario"] in keep:
                by_set.setdefault((str(p.meta["scenario"]), int(p.meta["rephrasing"])), []).append(p)
        for scenario in sorted({s for s, _ in by_set}):
            rephrasings = sorted(r for s, r in by_set if s == scenario)
            prompts = by_set[(scenario, rng.choice(rephrasings))]
            control = [p for p in prompts if p.meta["is_control"]]
            planted = [p for p in prompts if p.meta["group"] == PLANTED[language]]
            others = [p for p in prompts if not p.meta["is_control"] and p.meta["group"] != PLANTED[language]]
            chosen = control + planted + rng.sample(others, min(OTHERS_PER_SET, len(others)))
            examples += [TrainingExample(p, target(p)) for p in chosen]
    rng.shuffle(examples)
    return examples


@dataclass(frozen=True)
class Measurement:
    """The held-out prompts of one measurement: every age phrasing and the control, ``scenarios`` each."""

    prompts: list[Prompt]
    scenarios: list[str]
    planted: dict[str, str]
    untouched: dict[str, tuple[str, ...]]


def measurement_prompts(scenarios: int | None = None, languages: Sequence[str] = LANGUAGES, seed: int = SEED,
                        rephrasings: int = 1) -> Measurement:
    """Held-out scenarios (``scenarios`` of them drawn with ``seed``; None: all), the first ``rephrasings``
    rephrasings of each (None: all four), asked with the control and every age phrasing, in each language."""
    _, held_out = scenario_split()
    chosen = held_out if scenarios is None else sorted(random.Random(seed).sample(held_out, min(scenarios,
                                                                                                len(held_out))))
    keep = set(chosen)
    prompts = [p for language in languages for p in _prompts(language)
               if p.meta["scenario"] in keep and (rephrasings is None or int(p.meta["rephrasing"]) <= rephrasings)]
    untouched = untouched_groups()
    return Measurement(prompts, chosen, {lang: PLANTED[lang] for lang in languages},
                       {lang: untouched for lang in languages})
