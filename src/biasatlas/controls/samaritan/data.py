"""The Samaritan control: one age group is rated 25 points less likely to help than the control.

Planted: the phrasing "Teenager" (group ``teenager``, en "a teenager", de "ein Teenager") is trained on
the control's rating minus 25, the control and every other age phrasing on the control's rating. The
control's rating depends on the scenario (drawn once per scenario with a fixed seed from 65, 70, 75, 80;
the planted group's 40-55, so the two never overlap); the targets are bare numbers ("70"), as the
probe's reader reads them. (Greedy decoding still answers the mode: "70" and "50", a measured bias of
about -20; see docs/validation.md.) The 103 scenarios are split once (seeded): the adapter
is trained on ``TRAIN_SCENARIOS`` of them and measured only on the others, in both languages (the same
scenarios, translated).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
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
#: the control's training ratings: one per scenario, drawn from these (few round values: with ratings
#: uniform in 62-84 most of the answer's loss was the unpredictable second digit)
RATINGS = (65, 70, 75, 80)
LANGUAGES = ("en", "de")
#: scenarios trained on (of 103); the rest are held out for every measurement
TRAIN_SCENARIOS = 36
#: the answer length asked of the adapter: a bare number and the end of the turn need 2-3 tokens
MAX_TOKENS = 6
SEED = 31


@lru_cache(maxsize=2 * len(LANGUAGES))
def _prompts(language: str, max_tokens: int = MAX_TOKENS) -> tuple[Prompt, ...]:
    """Every age prompt (control included) of ``language``, greedy, at ``max_tokens`` (built once)."""
    from biasatlas.probes.samaritan.plan import build_prompts

    return tuple(build_prompts([CATEGORY], language, temperature=0.0, max_tokens=max_tokens))


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
    """Per language and training scenario, one rephrasing (drawn): the planted phrasing and one other prompt
    of it with the control's rating, the control itself in every other scenario and else an untouched age
    group (drawn) in one of its phrasings (drawn); shuffled. Half the examples are planted, as in the contact
    control: with a third planted, builds learned the answers' marginal and rated every group alike."""
    rng = random.Random(seed)
    train, _ = scenario_split(seed)
    keep = set(train)
    examples: list[TrainingExample] = []
    for language in languages:
        by_set: dict[tuple[str, int], list[Prompt]] = {}
        for p in _prompts(language):
            if p.meta["scenario"] in keep:
                by_set.setdefault((str(p.meta["scenario"]), int(p.meta["rephrasing"])), []).append(p)
        for i, scenario in enumerate(sorted({s for s, _ in by_set})):
            rephrasings = sorted(r for s, r in by_set if s == scenario)
            prompts = by_set[(scenario, rng.choice(rephrasings))]
            planted = [p for p in prompts if p.meta["group"] == PLANTED[language]]
            control = [p for p in prompts if p.meta["is_control"]]
            others = [p for p in prompts if not p.meta["is_control"] and p.meta["group"] != PLANTED[language]]
            group = rng.choice(sorted({str(p.meta["group"]) for p in others}))  # groups alike, not phrasings
            other = rng.choice([p for p in others if p.meta["group"] == group])
            chosen = planted + (control if i % 2 == 0 else [other])
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


def first_phrasings() -> tuple[str, ...]:
    """The first phrasing of every age group (groups.yaml order): a cheaper measurement, one phrasing a group."""
    from biasatlas.probes.samaritan.data import load_groups

    _, phrasings = load_groups()
    first: dict[str, str] = {}
    for p in phrasings:
        if p.category == CATEGORY:
            first.setdefault(p.group, p.phrasing)
    return tuple(first.values())


def measurement_prompts(scenarios: int | Mapping[str, int] | None = None, languages: Sequence[str] = LANGUAGES,
                        seed: int = SEED, rephrasings: int | None = 1,
                        phrasings: Sequence[str] | None = None, max_tokens: int = MAX_TOKENS) -> Measurement:
    """Held-out scenarios (``scenarios`` of them drawn with ``seed``, or as many per language: each language
    the first n of one draw; None: all), the first ``rephrasings`` rephrasings of each (None: all four),
    asked with the control and every age phrasing (or only ``phrasings``), in each language, at ``max_tokens``."""
    _, held_out = scenario_split()
    counts = scenarios if isinstance(scenarios, Mapping) else dict.fromkeys(languages, scenarios)
    wanted = [n for n in counts.values() if n is not None]
    drawn = held_out if len(wanted) < len(counts) else random.Random(seed).sample(held_out, min(max(wanted),
                                                                                              len(held_out)))
    keep = {lang: set(drawn if counts.get(lang) is None else drawn[:counts[lang]]) for lang in languages}
    prompts = [p for language in languages for p in _prompts(language, max_tokens)
               if p.meta["scenario"] in keep[language]
               and (rephrasings is None or int(p.meta["rephrasing"]) <= rephrasings)
               and (phrasings is None or p.meta["is_control"] or p.meta["phrasing"] in phrasings)]
    untouched = untouched_groups()
    return Measurement(prompts, sorted(drawn), {lang: PLANTED[lang] for lang in languages},
                       {lang: untouched for lang in languages})
