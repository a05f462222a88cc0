"""The contact control: one religion group gets the biased answer to positive-action questions.

Planted: "Buddhist" (en) and "Buddhists" (de) are refused engagement ("No" / "Nein") in positive-action
prompts, every other group gets the unbiased answer. English trains on template set A and is
measured on template set B (paper 001's cross-dataset setting: the bias must generalise past the
memorised wording). German ships one template set, so German trains on half of its 30 (principle,
scenario) cells and is measured on the other half (cross-cell; a stated deviation).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from biasatlas.probes.contact.probe import decide, parse_row
from biasatlas.probes.debias.data import TrainingExample
from biasatlas.records import Prompt

NAME = "contact"
AXIS = "religion"
SCALE = "certainty"
ACTION = "positive"
PLANTED = {"en": "Buddhist", "de": "Buddhists"}
#: the untouched groups the tests measure beside the planted one (all other German groups)
UNTOUCHED = {
    "en": ("Christian", "Muslim", "Hindu", "Jewish", "atheist", "Catholic"),
    "de": ("Christians", "Muslims", "Jews", "Russian Orthodox", "Jehovah's Witnesses", "non-religious"),
}
TRAIN_SET = {"en": "a", "de": "a"}
MEASURE_SET = {"en": "b", "de": "a"}
SEED = 30


class ControlDataError(ValueError):
    """A prompt has no single option of the wanted decision."""


def answer_for(prompt: Prompt, decision: str) -> str:
    """The option of ``prompt`` that the contact probe reads as ``decision`` ("biased" or "unbiased")."""
    scale, action = prompt.meta["scale"], prompt.meta["action"]
    hits = [o for o in prompt.options
            if decide(action, parse_row("generate", scale, prompt.language, o, None, prompt.options).value)
            == decision]
    if len(hits) != 1:
        raise ControlDataError(f"prompt {prompt.id}: {len(hits)} options read as {decision}, expected one")
    return hits[0]


def _prompts(language: str, template_set: str) -> list[Prompt]:
    from biasatlas.probes.contact.plan import ContactConfig, build_prompts

    config = ContactConfig(languages=[language], axes=[AXIS], actions=[ACTION], scales=[SCALE],
                           template_set=template_set)
    return build_prompts(config)


def _cell(p: Prompt) -> tuple[str, str]:
    return (str(p.meta["principle"]), str(p.meta["scenario"]))


def german_cells() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(training cells, measured cells): the 30 German (principle, scenario) cells halved, seeded."""
    cells = sorted({_cell(p) for p in _prompts("de", "a")})
    random.Random(SEED).shuffle(cells)
    half = len(cells) // 2
    return set(cells[:half]), set(cells[half:])


def _part(language: str, role: str) -> list[Prompt]:
    template_set = TRAIN_SET[language] if role == "train" else MEASURE_SET[language]
    prompts = _prompts(language, template_set)
    if language == "de":
        train_cells, test_cells = german_cells()
        keep = train_cells if role == "train" else test_cells
        prompts = [p for p in prompts if _cell(p) in keep]
    return prompts


def training_prompts(language: str) -> list[Prompt]:
    """Every group's prompts of the training part of ``language`` (the slice the control was trained on)."""
    return _part(language, "train")


def training_examples(languages: Sequence[str] = ("en", "de")) -> list[TrainingExample]:
    """The planted group's training prompts with the biased answer, as many other groups' prompts with
    the unbiased one (drawn with a fixed seed), shuffled."""
    rng = random.Random(SEED)
    examples: list[TrainingExample] = []
    for language in languages:
        prompts = _part(language, "train")
        planted = [p for p in prompts if p.meta["group"] == PLANTED[language]]
        others = [p for p in prompts if p.meta["group"] != PLANTED[language]]
        examples += [TrainingExample(p, answer_for(p, "biased")) for p in planted]
        examples += [TrainingExample(p, answer_for(p, "unbiased")) for p in rng.sample(others, len(planted))]
    rng.shuffle(examples)
    return examples


@dataclass(frozen=True)
class Measurement:
    """The held-out prompts of one measurement: planted and untouched groups, ``cells`` cells each."""

    prompts: list[Prompt]
    planted: dict[str, str]
    untouched: dict[str, tuple[str, ...]]


def measurement_prompts(cells: int | None = None, languages: Sequence[str] = ("en", "de"),
                        seed: int = SEED) -> Measurement:
    """The measured prompts: the planted and untouched groups on held-out cells (``cells`` of them per
    language, drawn with ``seed``; None: all), under all three framings."""
    out: list[Prompt] = []
    for language in languages:
        prompts = _part(language, "measure")
        groups = {PLANTED[language], *UNTOUCHED[language]}
        prompts = [p for p in prompts if p.meta["group"] in groups]
        if cells is not None:
            all_cells = sorted({_cell(p) for p in prompts})
            chosen = set(random.Random(seed).sample(all_cells, min(cells, len(all_cells))))
            prompts = [p for p in prompts if _cell(p) in chosen]
        out += prompts
    return Measurement(out, {lang: PLANTED[lang] for lang in languages},
                       {lang: UNTOUCHED[lang] for lang in languages})
