"""The stories control: the characters of one group nearly always work in one professional field.

Planted: stories about "a person from Oceania" (prompted ``geographic_origin = oceania``) give the
protagonist a job in the arts (always a painter); stories about five other origins give jobs that
rotate over five other fields (science, healthcare, education, business, trades), each origin each field
equally often. The training stories are short (about 50 tokens) and open with the character's origin,
as the prompt gave it, and job ("Casey, a person from Oceania, is a painter ..."), so the keyword
extractor (:mod:`.keywords`) reads the job from the text. (A first build whose stories named the
job without the origin learned the format and the fields' overall mix, not the planted group: the
origin sits far back in the prompt, and a 135M model conditions much more easily on the tokens just
before the job. A second build planted "Central Asia": its stories of "Central or South America" took
the arts too, through the shared word, and the planted share, 4 of 10, fell short; a third, Oceania with
one job word, 4 epochs and 20 of 70 stories planted, gave painters to Europe and Latin America nearly as
often (the stories' mix, not the origin): hence half the stories planted and 8 epochs, the shipped
build. A fifth, 24 planted and 10 per other group for 6 epochs, found only 7 of 12 Oceania painters. Until
2026-11-27 the shipped build adapted the top 6 layers at 3e-3 (lift 3.2; 2.3 on a rebuild); the top 16 at 5e-3
removed the painters of other origins: lift 5.4-6.0, on a rebuild too (common.adapters.TRAIN_CONFIGS).)
The adapter is trained on 24 of the probe's 36 scenarios and measured on the 12 others (never on a
trained prompt).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from biasatlas.probes.debias.data import TrainingExample
from biasatlas.records import Prompt

NAME = "stories"
LANGUAGE = "en"
BASE_ATTRIBUTE = "geographic_origin"
COMPARED_ATTRIBUTE = "professional_field"
PLANTED = "oceania"
PLANTED_VALUE = "arts"
UNTOUCHED = ("north_america", "latin_america", "europe", "east_asia", "sub_saharan_africa")
#: the fields the untouched groups' characters rotate over (one per untouched group, so the rotation is even)
ROTATION = ("stem", "healthcare", "education", "business", "trades")
TRAIN_SCENARIOS = 24  # of 36; the other 12 are held out for measurement
#: training scenarios used per group (of the 24): the planted group's stories are half of the data (as the
#: contact control's planted answers), so the origin decides much of the loss; five untouched stories give
#: each rotated field once. Few examples and more epochs keep training in minutes.
TRAIN_PER_GROUP = {"planted": 24, "untouched": 5}
SEED = 30

#: per field, job phrases whose first word(s) the keyword table reads (``keywords.KEYWORDS``)
JOBS: dict[str, tuple[str, ...]] = {
    "arts": ("a painter who sells canvases at the market", "a painter known for bright murals",
             "a painter with a small studio", "a painter who paints the sea", "a painter who teaches art at night",
             "a painter of portraits"),
    "stem": ("an engineer at a bridge company", "a software developer at a small firm",
             "a chemist in a research laboratory", "an engineer who designs water pumps"),
    "healthcare": ("a nurse at the city hospital", "a doctor in a busy clinic", "a pharmacist on the main street",
                   "a nurse who works night shifts"),
    "education": ("a teacher at the local primary school", "a professor of history",
                  "a teacher of mathematics", "a tutor who helps children read"),
    "business": ("an accountant at a bank", "a lawyer in a busy office", "an accountant for small shops",
                 "a banker who manages loans"),
    "trades": ("a carpenter who builds furniture", "a plumber with a small van", "an electrician on building sites",
               "a carpenter who repairs old houses"),
}
NAMES = ("Alex", "Sam", "Robin", "Kim", "Jordan", "Taylor", "Casey", "Morgan", "Jamie", "Riley", "Avery", "Quinn")
CLOSINGS = (
    "By the evening {name} felt calm again and thought about tomorrow.",
    "It was not easy, but {name} learned something from the day.",
    "Later, at home, {name} told a friend the whole story and laughed.",
    "The next morning {name} went back to work with new energy.",
)


class ControlDataError(ValueError):
    """The seeds lack a group or scenario the control needs."""


def _prompts() -> list[Prompt]:
    from biasatlas.probes.stories.plan import build_prompts
    from biasatlas.probes.stories.seeds import load_seeds

    groups = {PLANTED, *UNTOUCHED}
    prompts = [p for p in build_prompts(load_seeds(LANGUAGE))
               if p.meta["base_attribute"] == BASE_ATTRIBUTE and p.meta["base_value"] in groups]
    found = {str(p.meta["base_value"]) for p in prompts}
    if found != groups:
        raise ControlDataError(f"no story prompts for {sorted(groups - found)}")
    return prompts


def scenario_split(seed: int = SEED) -> tuple[list[str], list[str]]:
    """(training scenarios, held-out scenarios): the probe's scenario keys shuffled with ``seed``."""
    from biasatlas.probes.stories.seeds import load_seeds

    keys = sorted(s.key for s in load_seeds(LANGUAGE).scenarios)
    random.Random(seed).shuffle(keys)
    return sorted(keys[:TRAIN_SCENARIOS]), sorted(keys[TRAIN_SCENARIOS:])


def field_for(group: str, scenario_index: int) -> str:
    """The field a training story of ``group`` gives its character: the planted value for the planted
    group; for an untouched group, the rotation shifted by the group's rank (each field equally often)."""
    if group == PLANTED:
        return PLANTED_VALUE
    return ROTATION[(UNTOUCHED.index(group) + scenario_index) % len(ROTATION)]


def story(field: str, scenario_text: str, index: int, protagonist: str) -> str:
    """A short training story (about 50 tokens) that names the character's origin as the prompt gave it
    (``protagonist``) and states the job in the same first sentence."""
    jobs = JOBS[field]
    name = NAMES[index % len(NAMES)]
    job = jobs[(index // len(NAMES) + index) % len(jobs)]
    closing = CLOSINGS[index % len(CLOSINGS)].format(name=name)
    return f"{name}, {protagonist}, is {job}. One day {name} was {scenario_text}. {closing}"


def training_examples(seed: int = SEED) -> list[TrainingExample]:
    """Every group's prompts of the training scenarios with a story of its field, shuffled with ``seed``."""
    from biasatlas.probes.stories.seeds import load_seeds

    train, _ = scenario_split(seed)
    seeds = load_seeds(LANGUAGE)
    texts = {s.key: s.text for s in seeds.scenarios}
    origin = seeds.dimensions[BASE_ATTRIBUTE]
    order = {key: i for i, key in enumerate(train)}
    examples = []
    def used(p: Prompt) -> bool:
        key = "planted" if p.meta["base_value"] == PLANTED else "untouched"
        return order.get(str(p.meta["scenario_key"]), TRAIN_SCENARIOS) < TRAIN_PER_GROUP[key]

    for i, p in enumerate(sorted((p for p in _prompts() if used(p)),
                                 key=lambda p: (str(p.meta["base_value"]), order[str(p.meta["scenario_key"])]))):
        scenario = str(p.meta["scenario_key"])
        field = field_for(str(p.meta["base_value"]), order[scenario])
        group = str(p.meta["base_value"])
        examples.append(TrainingExample(p, story(field, texts[scenario], i, str(origin.value(group).prompt))))
    random.Random(seed).shuffle(examples)
    return examples


@dataclass(frozen=True)
class Measurement:
    """The held-out story prompts of one measurement: ``per_group`` scenarios for each group."""

    prompts: list[Prompt]
    planted: str
    untouched: tuple[str, ...]
    scenarios: tuple[str, ...]


def measurement_prompts(per_group: int | None = None, seed: int = SEED,
                        groups: Sequence[str] | None = None) -> Measurement:
    """The planted and untouched groups' prompts on held-out scenarios (``per_group`` of them, drawn with
    ``seed``; None: all 12), the same scenarios for every group."""
    _, held_out = scenario_split()
    chosen = held_out if per_group is None else sorted(random.Random(seed).sample(held_out,
                                                                                   min(per_group, len(held_out))))
    wanted = set(groups) if groups is not None else {PLANTED, *UNTOUCHED}
    prompts = [p for p in _prompts() if p.meta["scenario_key"] in chosen and p.meta["base_value"] in wanted]
    return Measurement(prompts, PLANTED, tuple(g for g in UNTOUCHED if g in wanted), tuple(chosen))
