"""The leakage probe's prompts, and the ``--limit`` draw.

- ``theme`` (generative models): "You are writing about {group} ... choose either '{A}' or '{B}' ... or
  'neither'", for every pair of traits on the same side of the ABC scales (left with left, right with right:
  2 × C(16, 2) = 240 comparisons per group), in both presentation orders by default;
- ``ilps`` (masked / span-filling models): sentence templates with the trait slot, for each group and for one
  neutral subject, so that log p(trait | group) − log p(trait | neutral) can be averaged over templates (a
  masked model's log p is a pseudo-log-likelihood: PLL-ILPS, not the paper's SeT).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Sequence
from itertools import combinations
from typing import Any, Literal

from biasatlas.backends.masked import SLOT  # the slot the masked backend fills with each option
from biasatlas.probes.base import limit_prompts
from biasatlas.probes.leakage.data import (
    LANGUAGES,
    NEUTRAL,
    Group,
    LeakageDataError,
    Trait,
    check_language,
    group_by_id,
    groups,
    lexicon,
    prompt_set,
    traits,
)
from biasatlas.records import Message, Prompt

NAME = "leakage"
TITLE = "Cross-language stereotype leakage (ABC traits × 30 groups)"
Orders = Literal["both", "one"]
Method = Literal["theme", "ilps"]
MASKED_PREFIXES = ("masked:", "span:")


def method_for_model(spec: str) -> Method:
    """``ilps`` for masked and span-filling models (``masked:`` / ``span:`` specs), else ``theme``."""
    return "ilps" if spec.startswith(MASKED_PREFIXES) else "theme"


def comparisons(orders: Orders = "both") -> list[tuple[Trait, Trait, str]]:
    """(trait shown first, trait shown second, order) for every same-side trait pair."""
    out: list[tuple[Trait, Trait, str]] = []
    for side in ("left", "right"):
        same_side = [t for t in traits() if t.side == side]
        for a, b in combinations(same_side, 2):
            out.append((a, b, "ab"))
            if orders == "both":
                out.append((b, a, "ba"))
    return out


def select_groups(names: Iterable[str] | None) -> list[Group]:
    """The groups named (all 30 by default); an unknown name is an error listing the valid ids."""
    if not names:
        return list(groups())
    by_id = group_by_id()
    lowered = {g.casefold(): g for g in by_id}
    out: list[Group] = []
    for name in names:
        key = lowered.get(name.strip().casefold())
        if key is None:
            raise LeakageDataError(f"unknown group {name!r}; valid: {', '.join(by_id)}")
        out.append(by_id[key])
    return out


def _group_meta(group: Group, language: str) -> dict[str, Any]:
    return {"group": group.id, "category": group.category, "home": group.home or "",
            "gender": group.gender(language), "lang": language}


def theme_prompts(language: str, group_list: Sequence[Group], orders: Orders = "both") -> list[Prompt]:
    """The forced-choice theme prompts of one language."""
    check_language(language)
    lex, ps = lexicon(language), prompt_set(language)
    out: list[Prompt] = []
    for group in group_list:
        gender = group.gender(language)
        for first, second, order in comparisons(orders):
            form_a, form_b = lex.form(first.id, gender), lex.form(second.id, gender)
            user = ps.user.format(group=group.about(language), trait1=form_a, trait2=form_b,
                                  neither=lex.neither_form)
            messages = (Message(role="system", content=ps.system), Message(role="user", content=user))
            out.append(
                Prompt(
                    probe=NAME, language=language, messages=messages,
                    options=(form_a, form_b, lex.neither_form),
                    meta={**_group_meta(group, language), "method": "theme",
                          "trait_a": first.id, "trait_b": second.id, "pair_a": first.pair, "pair_b": second.pair,
                          "dimension_a": first.dimension, "dimension_b": second.dimension,
                          "side": first.side, "order": order,
                          "comparison": " | ".join(sorted((first.id, second.id)))},
                )
            )
    return out


def _fill(template: str, subject: str, gender: str, agreement: dict[str, dict[str, str]]) -> str:
    words = {k: v[gender] for k, v in agreement.items()}
    capital = subject[:1].upper() + subject[1:]
    return template.format(Subject=capital, subject=subject, trait=SLOT, **words)


def _masked_subjects(language: str, group_list: Sequence[Group]) -> list[tuple[str, str, list[str], dict[str, Any]]]:
    """(subject, agreement class, option forms, meta) of every masked prompt's subject: one neutral subject per
    agreement class first, then the groups. Plural templates have one class (``pl``) for every group."""
    lex, ps = lexicon(language), prompt_set(language)
    trait_list = [t.id for t in traits()]
    neutral_meta = {"group": NEUTRAL, "category": "neutral", "home": "", "lang": language}
    if ps.number == "plural":
        forms = [lex.plural_form(t) for t in trait_list]
        out = [(ps.neutral["m"], "pl", forms, {**neutral_meta, "gender": None})]
        return out + [(g.subject_plural(language), "pl", forms, _group_meta(g, language)) for g in group_list]
    genders = sorted({g.gender(language) for g in group_list})
    out = [(ps.neutral[gender], gender, [lex.form(t, gender) for t in trait_list],
            {**neutral_meta, "gender": gender}) for gender in genders]
    return out + [(g.subject(language), g.gender(language), [lex.form(t, g.gender(language)) for t in trait_list],
                   _group_meta(g, language)) for g in group_list]


def ilps_prompts(language: str, group_list: Sequence[Group]) -> list[Prompt]:
    """Masked-model templates: one prompt per (template, group) and per (template, agreement class) for the
    neutral subject; the options are the 32 trait forms agreeing with the subject (the same words for a group
    and its baseline). ``agreement`` (meta) names the baseline a group is compared with."""
    check_language(language)
    ps = prompt_set(language)
    if not ps.templates:
        raise LeakageDataError(f"no masked templates for language {language!r} (data/leakage/prompts)")
    subjects = _masked_subjects(language, group_list)
    trait_list = [t.id for t in traits()]
    out: list[Prompt] = []
    for index, template in enumerate(ps.templates):
        for subject, agreement, forms, meta in subjects:
            words = "m" if agreement == "pl" else agreement
            text = _fill(template, subject, words, ps.agreement)
            out.append(
                Prompt(
                    probe=NAME, language=language, messages=(Message(role="user", content=text),),
                    options=tuple(forms),
                    meta={**meta, "method": "ilps", "template_id": index, "agreement": agreement,
                          "subject": subject, "option_traits": trait_list},
                )
            )
    return out


def build_prompts(
    languages: Sequence[str] = LANGUAGES,
    *,
    method: Method = "theme",
    group_names: Iterable[str] | None = None,
    orders: Orders = "both",
    shuffle_seed: int | None = 0,
) -> list[Prompt]:
    """Every prompt of the plan: the union of each language's prompts. Theme prompts are shuffled with a fixed
    seed, so that a run stopped early holds a sample spread over groups, traits and languages."""
    group_list = select_groups(group_names)
    prompts: list[Prompt] = []
    for language in languages:
        check_language(language)
        if method == "theme":
            prompts.extend(theme_prompts(language, group_list, orders))
        else:
            prompts.extend(ilps_prompts(language, group_list))
    if method == "theme" and shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(prompts)
    return prompts


# ---- --limit -------------------------------------------------------------------------------------------------
def _cell(prompt: Prompt) -> Hashable:
    """The stratum within a language: the trait comparison (theme), the agreement class (ilps)."""
    if prompt.meta["method"] == "theme":
        return prompt.meta["comparison"]
    return prompt.meta["agreement"]


def _unit(prompt: Prompt) -> Hashable:
    """What the scores pair: both presentation orders of one comparison for one group (a trait's score pools
    them, so a position preference cancels); one template for one agreement class with its neutral baseline
    (ilps)."""
    meta = prompt.meta
    if meta["method"] == "theme":
        return (prompt.language, meta["group"], meta["comparison"])
    return (prompt.language, meta["template_id"], meta["agreement"])


def limit_plan(prompts: Sequence[Prompt], limit: int | None, seed: int) -> list[Prompt]:
    """About ``limit`` prompts, split evenly over the languages (in a seeded order, each language taking
    its share of what is left), drawn within a language by :func:`limit_prompts` over the trait comparisons
    (theme) or genders (ilps), whole units kept. The plan's order is kept."""
    if limit is None or limit >= len(prompts):
        return list(prompts)
    by_language: dict[str, list[Prompt]] = {}
    for p in prompts:
        by_language.setdefault(p.language, []).append(p)
    order = sorted(by_language)
    random.Random(seed).shuffle(order)
    chosen: set[int] = set()  # id() of the drawn prompt objects (hashing 57,600 prompts' content is slow)
    for index, language in enumerate(order):
        budget = limit - len(chosen)
        if budget <= 0:
            break
        share = math.ceil(budget / (len(order) - index))
        drawn = limit_prompts(by_language[language], share, seed, cell=_cell, unit=_unit)
        if chosen and len(chosen) + len(drawn) > limit:
            continue  # this language's smallest unit does not fit any more
        chosen.update(id(p) for p in drawn)
    return [p for p in prompts if id(p) in chosen]
