"""Prompt planning of the contact probe: its configuration and the prompt sets of the design.

A prompt set asks one question (scale × scenario × principle × action × group) under no, positive
and negative contact framing: three prompts sharing a ``set_id``. The plan of several languages is
the union of each language's plan. ``limit`` counts prompts and draws whole prompt sets: by default the
same sets, on the same questions, for every group of the selected axes (:mod:`biasatlas.probes.contact.balance`);
with ``balance_groups`` off, stratified over language × scale × scenario × principle × action
(:func:`biasatlas.probes.base.limit_prompts`). A plan without ``limit`` is the whole design either way.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from pydantic import Field, field_validator, model_validator

from biasatlas.probes.base import PaperDesign, ProbeConfig, limit_prompts
from biasatlas.probes.contact.data import (
    ACTIONS,
    CONTACTS,
    HB_VERSIONS,
    NAME,
    PRINCIPLES,
    SCALES,
    SCENARIOS,
    Cell,
    ContactDataError,
    Descriptor,
    TemplateSet,
    descriptors_for,
    fill,
    languages,
    template_sets,
)
from biasatlas.records import Message, Prompt, stable_hash

DEFAULT_LANGUAGE = "en"
IMPORT_FORMATS = ("raj", "rows")
IMPORT_ROW_ORDERS = ("principle-major", "scenario-major")
IMPORT_SUFFIXES = ("paper", "biasatlas")
#: design factors of ``Prompt.meta`` shown in a plan and kept in the outcomes frame
FACTORS = ("language", "scale", "contact", "action", "scenario", "principle", "axis", "template_set")


class ContactConfig(ProbeConfig):
    """What part of the contact design to ask (or which published dataset to import).

    ``limit`` counts prompts: whole prompt sets of three, as many as fit (one set below 3).
    """

    #: deprecated: one language; sets ``languages`` to ``[language]`` (kept for older callers)
    language: str | None = Field(default=None, exclude=True)
    axes: list[str] | None = None
    scales: list[str] = Field(default_factory=lambda: ["certainty"])
    actions: list[str] | None = None  # default: both for English, positive for de/is (paper 000)
    scenarios: list[str] | None = None
    principles: list[str] | None = None
    template_set: str = "a"
    hb_version: str = "v1.0"
    #: ``limit`` draws the same prompt sets, on the same questions, for every group of the selected axes (the
    #: group-vs-rest tests pair groups by question); False: the stratified draw of earlier versions
    balance_groups: bool = True
    #: a published dataset to import instead of our templates, its descriptor list and format
    templates: Path | None = None
    descriptors: Path | None = None
    import_format: str | None = None
    #: how a 3-rows-per-template sheet of 30 templates orders its cells; the answer instruction of imports
    import_row_order: str = "principle-major"
    import_suffix: str = "paper"
    #: ``paper``: the prompts as the paper asked them (system prompt, instruction; :mod:`.design` sets the rest)
    design: PaperDesign = None

    @model_validator(mode="after")
    def _language_alias(self) -> ContactConfig:
        if self.language is not None:
            if self.languages is not None and self.languages != [self.language]:
                raise ValueError(f"language {self.language!r} contradicts languages {self.languages}; give one")
            self.languages = [self.language]
        return self

    @field_validator("scales")
    @classmethod
    def _scales(cls, v: list[str]) -> list[str]:
        return _check(v, SCALES, "scale")

    @field_validator("scenarios")
    @classmethod
    def _scenarios(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check(v, SCENARIOS, "scenario")

    @field_validator("principles")
    @classmethod
    def _principles(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check(v, PRINCIPLES, "principle")

    @field_validator("actions")
    @classmethod
    def _actions(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _check(v, ACTIONS, "action")

    @field_validator("hb_version")
    @classmethod
    def _hb(cls, v: str) -> str:
        return _check([v], HB_VERSIONS, "HolisticBias version")[0]

    @field_validator("import_format")
    @classmethod
    def _format(cls, v: str | None) -> str | None:
        return None if v is None else _check([v], IMPORT_FORMATS, "import format")[0]

    @field_validator("import_row_order")
    @classmethod
    def _row_order(cls, v: str) -> str:
        return _check([v], IMPORT_ROW_ORDERS, "row order")[0]

    @field_validator("design")
    @classmethod
    def _design(cls, v: str | None) -> str | None:
        from biasatlas.probes.contact.design import DESIGNS

        return None if v is None else _check([v], DESIGNS, "design")[0]

    @field_validator("import_suffix")
    @classmethod
    def _suffix(cls, v: str) -> str:
        return _check([v], IMPORT_SUFFIXES, "answer suffix")[0]


def _check(values: list[str], valid: Sequence[str], what: str) -> list[str]:
    expanded = list(valid) if values == ["all"] else values
    bad = [v for v in expanded if v not in valid]
    if bad:
        raise ValueError(f"unknown {what} {bad[0]!r}; valid: {', '.join(valid)}")
    return expanded


def default_actions(language: str) -> list[str]:
    """Both actions for English and the language packs that draft both; positive only for de/is (paper 000)."""
    if language == "en":
        return list(ACTIONS)
    from biasatlas.languages import LanguagePackError, pack

    try:
        return [a for a in pack(language).default_actions if a in ACTIONS] or ["positive"]
    except LanguagePackError:
        return ["positive"]


def config_languages(config: ContactConfig) -> list[str]:
    """The configured languages (English if none is given)."""
    return list(config.languages or [DEFAULT_LANGUAGE])


class SetSpec(NamedTuple):
    """One prompt set of the design, before its three prompts are written."""

    language: str
    tset: TemplateSet
    scale: str
    cell: Cell
    action: str
    descriptor: Descriptor


def cell_of(prompt: Prompt) -> Hashable:
    """The design cell of a prompt, the stratum of the ``limit`` draw."""
    meta = prompt.meta
    return (prompt.language, meta.get("scale"), meta.get("scenario"), meta.get("principle"), meta.get("action"))


def set_of(prompt: Prompt) -> Hashable:
    """The prompt set a prompt belongs to (the unit the ``limit`` draw keeps whole)."""
    return prompt.meta["set_id"]


def _spec_cell(spec: SetSpec) -> Hashable:
    return (spec.language, spec.scale, spec.cell.scenario, spec.cell.principle, spec.action)


# ---- plan -----------------------------------------------------------------------------------
def select_descriptors(config: ContactConfig, language: str | None = None) -> list[Descriptor]:
    """The descriptors of the chosen axes; unknown axes are an error listing the valid ones."""
    language = language or config_languages(config)[0]
    descriptors = list(descriptors_for(language, config.hb_version))
    valid_axes = sorted({d.axis for d in descriptors})
    if config.axes:
        bad = [a for a in config.axes if a not in valid_axes]
        if bad:
            raise ValueError(f"unknown axis {bad[0]!r} for language {language!r}; valid: {', '.join(valid_axes)}")
        descriptors = [d for d in descriptors if d.axis in config.axes]
    return descriptors


def compose(contact_sentence: str | None, question: str, instruction: str) -> str:
    """The user message: contact framing (if any), the question, the answer instruction."""
    body = f"{contact_sentence} {question}" if contact_sentence else question
    return f"{body}\n{instruction}"


def _language_specs(config: ContactConfig, language: str) -> list[SetSpec]:
    """Every prompt set of one language, in plan order (scale, cell, action, descriptor)."""
    if language not in languages():
        raise ValueError(f"unknown language {language!r}; valid: {', '.join(languages())}")
    sets = template_sets(language)
    if config.template_set not in sets:
        raise ValueError(f"unknown template set {config.template_set!r} for {language}; valid: {', '.join(sets)}")
    tset = sets[config.template_set]
    missing = [s for s in config.scales if s not in tset.scales]
    if missing:
        raise ValueError(f"template set {tset.path.name} has no {missing[0]} scale")
    actions = config.actions or default_actions(language)
    descriptors = select_descriptors(config, language)
    specs: list[SetSpec] = []
    for scale in config.scales:
        for cell in tset.cells:
            if config.scenarios and cell.scenario not in config.scenarios:
                continue
            if config.principles and cell.principle not in config.principles:
                continue
            for action in actions:
                if action not in cell.actions:
                    raise ContactDataError(f"{tset.path}: cell {cell.id} has no {action} action")
                specs.extend(SetSpec(language, tset, scale, cell, action, d) for d in descriptors
                             if d.fits(cell.agree, tset.grammar))
    return specs


def set_specs(config: ContactConfig) -> list[SetSpec]:
    """Every prompt set of the design: the union over the configured languages (``limit`` not applied)."""
    return [spec for language in config_languages(config) for spec in _language_specs(config, language)]


def set_prompts(spec: SetSpec, hb_version: str) -> list[Prompt]:
    """The three prompts (none / positive / negative contact) of one prompt set."""
    language, tset, scale, cell, action, d = spec
    instruction = tset.scales[scale]["instruction"]
    question = fill(cell.actions[action][scale], d, cell.noun, cell.agree, tset.grammar)
    meta_base: dict[str, Any] = {
        "scale": scale,
        "action": action,
        "verb": cell.actions[action].get("verb"),
        "scenario": cell.scenario,
        "principle": cell.principle,
        "axis": d.axis,
        "bucket": d.bucket,
        "descriptor": d.key,
        "group": d.label,
        "template_set": f"{language}-{tset.name}",
        "template_id": cell.id,
        "source": "biasatlas",
    }
    if language == "en":
        meta_base["hb_version"] = hb_version
    form = d.form(cell.agree, tset.grammar)
    if form is not None:  # MMHB packs only: en/de/is prompt sets (and their set ids) stay as they were
        meta_base["descriptor_form"] = form.text
        meta_base["descriptor_source"] = "mmhb"
    set_id = stable_hash(meta_base, length=16)
    prompts = []
    for contact in CONTACTS:
        sentence = None if contact == "none" else fill(cell.contact[contact], d, cell.noun, cell.agree, tset.grammar)
        prompts.append(
            Prompt(
                probe=NAME,
                language=language,
                messages=(Message(role="user", content=compose(sentence, question, instruction)),),
                options=tuple(tset.scales[scale]["options"]),
                meta={**meta_base, "contact": contact, "set_id": set_id},
            )
        )
    return prompts


def limit_specs(specs: Sequence[SetSpec], limit: int | None, seed: int, *, balance: bool = True) -> list[SetSpec]:
    """The prompt sets a ``limit`` keeps of the plan, drawn before any prompt is written.

    ``balance`` (the default, from one set per group up): the same sets for every group of the selected axes,
    on the same questions (:func:`biasatlas.probes.contact.balance.balanced_specs`). Otherwise, or below one set
    per group, the sets :func:`limit_prompts` keeps of the written plan: each set stands in for its three
    prompts, with its design cell and an index as the unit (a test checks that); one warning then names the
    groups it leaves out or gives fewer sets. Writing only the drawn sets keeps a small run of the English plan
    fast.
    """
    from biasatlas.probes.contact.balance import balanced_specs, warn_unequal

    if limit is None or limit >= 3 * len(specs):
        return list(specs)
    balanced = balanced_specs(specs, limit, seed) if balance else None
    if balanced is not None:
        return balanced
    stand_ins = [(i, _spec_cell(spec)) for i, spec in enumerate(specs) for _ in CONTACTS]
    kept = limit_prompts(
        cast("Sequence[Prompt]", stand_ins),  # limit_prompts reads items only through cell and unit
        limit,
        seed,
        cell=lambda item: cast("tuple[int, Hashable]", item)[1],
        unit=lambda item: cast("tuple[int, Hashable]", item)[0],
        language=lambda item: cast("tuple[int, tuple[str, ...]]", item)[1][0],
    )
    chosen = sorted({cast("tuple[int, Hashable]", item)[0] for item in kept})
    drawn = [specs[i] for i in chosen]
    warn_unequal(specs, drawn, limit, balance)  # once, naming the groups left out or under the most sets
    return drawn


def build_prompts(config: ContactConfig) -> list[Prompt]:
    """Every prompt of the design, prompt sets of none / positive / negative; ``limit`` applied."""
    specs = limit_specs(set_specs(config), config.limit, config.seed, balance=config.balance_groups)
    prompts = [p for spec in specs for p in set_prompts(spec, config.hb_version)]
    if config.design is not None:  # the papers' system prompt and instruction
        from biasatlas.probes.contact.design import dress

        return dress(prompts)
    return prompts


def limit_imported(prompts: Sequence[Prompt], limit: int | None, seed: int) -> list[Prompt]:
    """``limit`` on an imported dataset's prompts: the same draw of whole prompt sets."""
    return limit_prompts(prompts, limit, seed, cell=cell_of, unit=set_of)


def draw_prompt_sets(config: ContactConfig, n_sets: int) -> list[Prompt]:
    """``n_sets`` prompt sets drawn uniformly (``random.Random(config.seed).sample``), in plan order.

    Not stratified, and ``config.limit`` is ignored: the draw the probe's ``limit`` made before it
    counted prompts, kept for callers that need exactly that many sets (the debiasing splits).
    """
    specs = set_specs(config)
    if n_sets < len(specs):
        chosen = sorted(random.Random(config.seed).sample(range(len(specs)), n_sets))
        specs = [specs[i] for i in chosen]
    return [p for spec in specs for p in set_prompts(spec, config.hb_version)]
