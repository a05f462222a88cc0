"""Cross-language stereotype leakage (Cao et al., paper 004): ABC trait associations of 30 groups in
English, Russian, Chinese and Hindi, regressed on human stereotypes of each language.

Prompts:
- ``theme`` (generative models): "You are writing about {group} ... choose either '{A}' or '{B}' ... or
  'neither'", for every pair of traits on the same side of the ABC scales (left with left, right with right:
  2 × C(16, 2) = 240 comparisons per group), in both presentation orders by default;
- ``ilps`` (masked / span-filling models): sentence templates with the trait slot, for each group and for a
  neutral person, so that log p(trait | group) − log p(trait | person) can be averaged over templates.
Data, matching, scores, the mixed model and the analysis live in the ``leakage_*`` modules beside this one.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any, Literal

import pandas as pd
from rich.console import Console
from rich.table import Table

from biasatlas.backends.masked import SLOT  # the slot the masked backend fills with each option
from biasatlas.probes.leakage.analysis import Analysis, analyse, coverage, finder_all
from biasatlas.probes.leakage.data import (
    LANGUAGES,
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
from biasatlas.probes.leakage.model import flows_figure
from biasatlas.probes.leakage.scores import NEUTRAL
from biasatlas.records import Message, Prompt
from biasatlas.report.html import Section
from biasatlas.store import Store

NAME = "leakage"
TITLE = "Cross-language stereotype leakage (ABC traits × 30 groups)"
Orders = Literal["both", "one"]
FACTORS = ("method", "lang", "category", "group", "side", "order")


# ---- prompts ------------------------------------------------------------------------------------------------
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


def ilps_prompts(language: str, group_list: Sequence[Group]) -> list[Prompt]:
    """Masked-model templates: one prompt per (template, group) and per (template, gender) for the neutral
    person; the options are the 32 trait forms agreeing with the subject's gender."""
    check_language(language)
    lex, ps = lexicon(language), prompt_set(language)
    if not ps.templates:
        raise LeakageDataError(f"no masked templates for language {language!r} (data/leakage/prompts)")
    genders = sorted({g.gender(language) for g in group_list})
    out: list[Prompt] = []
    for index, template in enumerate(ps.templates):
        subjects: list[tuple[str, str, dict[str, Any]]] = [
            (ps.neutral[gender], gender, {"group": NEUTRAL, "category": "neutral", "home": "",
                                          "gender": gender, "lang": language})
            for gender in genders
        ]
        subjects += [(g.subject(language), g.gender(language), _group_meta(g, language)) for g in group_list]
        for subject, gender, meta in subjects:
            text = _fill(template, subject, gender, ps.agreement)
            trait_list = [t.id for t in traits()]
            out.append(
                Prompt(
                    probe=NAME, language=language, messages=(Message(role="user", content=text),),
                    options=tuple(lex.form(t, gender) for t in trait_list),  # type: ignore[arg-type]
                    meta={**meta, "method": "ilps", "template_id": index, "option_traits": trait_list},
                )
            )
    return out


def build_prompts(
    languages: Sequence[str] = LANGUAGES,
    *,
    method: Literal["theme", "ilps"] = "theme",
    group_names: Iterable[str] | None = None,
    orders: Orders = "both",
    shuffle_seed: int | None = 0,
) -> list[Prompt]:
    """Every prompt of the plan. Theme prompts are shuffled with a fixed seed so that ``--limit N`` keeps a
    sample spread over groups, traits and languages rather than the first group's comparisons."""
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


# ---- summary -------------------------------------------------------------------------------------------------
def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    return [{str(k): (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def summary_from(analysis: Analysis) -> dict[str, Any]:
    """The JSON-ready summary of an analysis."""
    top_traits = []
    if not analysis.cells.empty:
        means = analysis.cells.groupby(["variant", "lang", "trait"])["score"].mean().reset_index()
        for (variant, lang), sub in means.groupby(["variant", "lang"]):
            best = sub.sort_values("score", ascending=False).head(5)
            ranked = [{"trait": t, "mean_score": float(s)}
                      for t, s in zip(best["trait"], best["score"], strict=True)]
            top_traits.append({"variant": variant, "lang": lang, "traits": ranked})
    return {
        "settings": analysis.settings,
        "coverage": _records(coverage(analysis)),
        "top_traits": top_traits,
        "fits": [f.as_dict() for f in analysis.fits],
        "flows": _records(analysis.flows),
        "leaked_examples": _records(analysis.leaked.head(50) if not analysis.leaked.empty else analysis.leaked),
    }


def summarise(store: Store) -> dict[str, Any]:
    """Coverage, leakage fits (bundled human tables, complete cases), flows and leaked-trait examples."""
    return summary_from(analyse(store))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def print_summary(summary: dict[str, Any], console: Console) -> None:
    cov = Table(title="Coverage (cells of the 32 traits × 30 groups matrix)")
    for col in ("variant", "lang", "answered", "failed", "pending", "cells", "groups", "traits",
                "p(first)", "p(second)", "p(neither)", "unmatched"):
        cov.add_column(col)
    for row in summary.get("coverage", []):
        cov.add_row(row["variant"], row["lang"], str(row["answered"]), str(row["failed"]), str(row["pending"]),
                    f"{row['cells']}/{row['cells_expected']}", str(row["groups"]), str(row["traits"]),
                    _fmt(row.get("mean_p_first")), _fmt(row.get("mean_p_second")),
                    _fmt(row.get("mean_p_neither")), _fmt(row.get("match_unmatched")))
    console.print(cov)
    coef = Table(title="Leakage model: model score ~ human EN + RU + ZH + HI, random intercept by trait")
    for col in ("variant", "target", "n", "term", "coef", "SE", "95% CI", "p", "p (BH)"):
        coef.add_column(col)
    for fit in summary.get("fits", []):
        if fit.get("error"):
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), "—", f"not fitted: {fit['error']}",
                         "", "", "", "")
            continue
        for c in fit["coefficients"]:
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), c["term"], _fmt(c["estimate"]),
                         _fmt(c["se"]), f"[{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]", _fmt(c["p"]),
                         _fmt(c.get("p_adj")))
    console.print(coef)
    flow = Table(title="Leakage flows (source human → target model; positive, BH-adjusted p < alpha)")
    for col in ("variant", "source", "target", "coef", "95% CI", "p (BH)", "n"):
        flow.add_column(col)
    for f in summary.get("flows", []):
        flow.add_row(f["variant"], f["source"], f["target"], _fmt(f["estimate"]),
                     f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]", _fmt(f["p_adj"]), str(f["n_obs"]))
    console.print(flow if summary.get("flows") else "No significant leakage flow.")
    if summary.get("leaked_examples"):
        ex = Table(title="Traits strong in the model, weak for target-language humans, strong for the source's")
        for col in ("variant", "target", "source", "group", "trait", "model rank", "human target", "human source"):
            ex.add_column(col)
        for r in summary["leaked_examples"][:20]:
            ex.add_row(r["variant"], r["target"], r["source"], r["group"], r["trait"], str(r["model_rank"]),
                       _fmt(r["human_target"]), _fmt(r["human_source"]))
        console.print(ex)


# ---- report --------------------------------------------------------------------------------------------------
METHODS = (
    "Model associations follow Cao et al. (paper 004). Generative models answer a forced-choice prompt ('You "
    "are writing about {group} ... choose either {A} or {B} as your theme ... or neither'); A and B are traits "
    "on the same side of the ABC scales. In choice mode the score of A in a comparison is its normalised "
    "probability among (A, B, neither); in generate mode it is the share of matched samples naming A (exact, "
    "containment or fuzzy match in the prompt's language; unmatched samples are counted and left out). A "
    "trait's score for a group is the mean over its comparisons. Masked models get the increased "
    "log-probability score, log p(trait | group template) - log p(trait | neutral template), averaged over "
    "templates. The leakage model per model and target language is a linear mixed model (statsmodels MixedLM, "
    "REML) of the model score on the human scores of the four languages with a random intercept by trait; "
    "cells with a missing human score are left out (complete cases) unless zero-filling is requested. "
    "p-values of the human coefficients are Benjamini-Hochberg adjusted over all fits; a flow is a positive, "
    "significant coefficient of another language's human scores. Non-English lexicons and prompts are "
    "machine-drafted by an AI assistant and not reviewed by native speakers. Human ratings: Cao et al. 2024, "
    "MIT licence."
)


def report_sections(store: Store) -> list[Section]:
    analysis = analyse(store)
    section = Section(title=TITLE, methods=METHODS)
    cov = coverage(analysis)
    if cov.empty:
        section.add_text("The study holds no leakage answers yet.")
        return [section]
    section.add_table(cov.drop(columns=["unmatched_reasons"], errors="ignore"), "Coverage per model and language")
    if not analysis.coefficients.empty:
        cols = ["variant", "target", "n_obs", "n_traits", "term", "estimate", "se", "ci_low", "ci_high", "p", "p_adj"]
        section.add_table(analysis.coefficients[cols], "Leakage model coefficients (95% CI; p_adj: BH)",
                          sortable=True)
    errors = pd.DataFrame([{"variant": f.variant, "target": f.target, "n_obs": f.n_obs, "reason": f.error}
                           for f in analysis.fits if f.error])
    if not errors.empty:
        section.add_table(errors, "Fits that could not be made")
    if not analysis.flows.empty:
        section.add_table(analysis.flows, "Leakage flows (positive, significant after BH)")
    else:
        section.add_text("No significant positive leakage flow between languages.")
    section.add_figure(flows_figure(analysis.flows, analysis.variants), "Leakage flows: human source → model target")
    examples = analysis.leaked
    if examples.empty and analysis.variants:
        # Without a significant flow, still show candidates against every other language, labelled as such.
        parts: list[pd.DataFrame] = []
        for variant in analysis.variants:
            for lang in LANGUAGES:
                found = finder_all(analysis, variant, lang)
                if not found.empty:
                    found.insert(0, "variant", variant)
                    parts.append(found)
        if parts:
            section.add_table(pd.concat(parts).head(40),
                              "Candidate leaked traits (no significant flow; all other languages as sources)")
    elif not examples.empty:
        section.add_table(examples.head(40), "Traits strong in the model, weak for target humans, strong for "
                          "the source language's humans")
    if not analysis.choices.empty and "text" in analysis.choices:
        gen = analysis.choices[analysis.choices["mode"] == "generate"]
        if not gen.empty:
            section.add_table(gen[["lang", "group", "trait_a", "trait_b", "text", "level", "reason"]].head(20),
                              "Generated answers (first 20) and how they matched")
    return [section]
