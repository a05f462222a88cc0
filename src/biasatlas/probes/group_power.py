"""Power for group disparity, per probe: what ``--plan-only`` says per axis (contact) or category (Samaritan),
and how many units per group ``biasatlas power PROBE --disparity PP`` needs (docs/methods.md, "Power for
group disparity"; the statistics: :mod:`biasatlas.stats.group_power`).

- contact: the unit is the question the headline test counts: a template cell × scale × action × framing, the
  group left out, asked of every group of the axis, the three framings pooled (in en, de and is three
  questions per prompt set; in the MMHB packs a no-contact text several principles share is one). The test:
  CMH, group vs the other groups, questions as strata, Holm over the axis's groups. The plan counts each
  group's prompt sets and its questions, and also states the power of one framing alone (a model that answers
  a set's three framings alike gives the pooled test no more than that).
- samaritan: the unit is the scenario; the test: the paired t-test of a group's rating against the mean of
  the category's other groups, scenario by scenario, Holm over the category's groups.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from biasatlas.records import Prompt
from biasatlas.stats.group_power import BASE_RATE, disparity_mde, disparity_units

CONTACT_ALPHA = 0.05
SAMARITAN_ALPHA = 0.01
#: a Samaritan rating's sd within a scenario (rating points): SAMARITAN_SD / √2, paper 003's brittleness
RATING_SD = 6.0
CONTACT_TEST = ("Cochran–Mantel–Haenszel, one group vs the other groups of its axis, questions as strata, the three "
                "framings' decisions pooled (the headline level), no continuity correction; Holm over the axis's "
                "groups (planned at its first step, α / groups); normal approximation")
SAMARITAN_TEST = ("paired t-test of a group's rating against the mean of its category's other groups, scenario by "
                  "scenario; Holm over the category's groups (planned at α / groups)")
CONTACT_ASSUMPTIONS = (
    f"the other groups answer biased at {BASE_RATE:.0%} (no pilot; paper 001's Table 3: 10-32% biased without "
    "contact; nearer 50% the MDE grows), the disfavoured group that many points more; questions that differ in "
    "their rate cost the stratified test nothing",
    "n per group counts its questions over the three framings, as the headline test does (3 per prompt set in "
    "en, de, is; in the MMHB packs a no-contact text several principles share is one question), each framing's "
    "answer independent given the group; a model that answers a set's framings alike leaves the pooled test "
    "the power of one framing (stated beside it)",
)
#: questions of the headline level per prompt set in en, de and is (none, positive, negative)
FRAMINGS = 3
#: languages whose prompt sets each have their own no-contact question (the MMHB packs share them)
OWN_TEMPLATES = ("en", "de", "is")
#: groups named where an axis's groups have unequal sets (the fewest first)
FEWEST_SHOWN = 5


@lru_cache(maxsize=4096)
def _mde(n: int, groups: int, alpha: float, power: float) -> float | None:
    return disparity_mde(n, groups, alpha=alpha, power=power)


def _span(values: Sequence[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if lo == hi else f"{format(lo, fmt)}–{format(hi, fmt)}"


def contact_group_plan(prompts: Sequence[Prompt], alpha: float = CONTACT_ALPHA,
                       power: float = 0.8) -> dict[str, Any] | None:
    """Per language × axis: the groups, the prompt sets and questions each draws and the MDE of the
    group-vs-rest test (percentage points): one compact ``line`` each, with the ranges over the groups, and the
    full per-group table (``per_group``); None for prompts without groups (an import without them)."""
    sets: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    pooled: dict[tuple[str, str], dict[str, set[tuple[str, str]]]] = defaultdict(lambda: defaultdict(set))
    none: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for p in prompts:
        axis, group = p.meta.get("axis"), p.meta.get("group")
        if axis is None or group is None:
            continue
        key, contact = (p.language, str(axis)), str(p.meta.get("contact", "none"))
        sets[key][str(group)].add(str(p.meta.get("set_id")))
        pooled[key][str(group)].add((contact, p.text))  # a text one group is asked in several sets: one question
        if contact == "none":
            none[key][str(group)].add(p.text)
    if not sets:
        return None
    axes = [_axis_row(language, axis, by_group, pooled[(language, axis)], none[(language, axis)], alpha, power)
            for (language, axis), by_group in sorted(sets.items())]
    return {"test": CONTACT_TEST, "alpha": alpha, "power": power, "assumptions": list(CONTACT_ASSUMPTIONS),
            "axes": axes}


def _pp(key: str, mde: float | None) -> dict[str, float]:
    return {} if mde is None else {key: round(100 * mde, 1)}


def _axis_row(language: str, axis: str, by_group: dict[str, set[str]], pooled: dict[str, set[tuple[str, str]]],
              none: dict[str, set[str]], alpha: float, power: float) -> dict[str, Any]:
    k = len(by_group)
    n_sets = {g: len(s) for g, s in by_group.items()}
    n_questions = {g: len(pooled.get(g, ())) or FRAMINGS * n_sets[g] for g in by_group}
    n_none = {g: len(none.get(g, ())) or n_sets[g] for g in by_group}
    row: dict[str, Any] = {"language": language, "axis": axis, "groups": k,
                           "prompt_sets_per_group": _span(list(n_sets.values()), "d"),
                           "questions_per_group": _span(list(n_questions.values()), "d")}
    if k < 2:
        row["line"] = f"{language} {axis}: 1 group, no other group to compare with"
        return row
    mdes = {g: _mde(n, k, alpha, power) for g, n in n_questions.items()}
    single = {g: _mde(n, k, alpha, power) for g, n in n_none.items()}
    known = [100 * m for m in mdes.values() if m is not None]
    alone = [100 * m for m in single.values() if m is not None]
    if known:  # no key left None: a plan's JSON says what is missing in words
        row["mde_pp"] = _span(known, ".1f")
    if alone:
        row["mde_pp_one_framing"] = _span(alone, ".1f")
    # a group without a detectable disparity has no MDE key (a plan's JSON leaves no key None)
    row["per_group"] = [{"group": g, "prompt_sets": n_sets[g], "questions": n_questions[g],
                         **_pp("mde_pp", mdes[g]), **_pp("mde_pp_one_framing", single[g])}
                        for g in sorted(by_group, key=lambda g: (n_sets[g], g))]
    if len(set(n_sets.values())) > 1:
        fewest = sorted(n_sets, key=lambda g: (n_sets[g], g))[:FEWEST_SHOWN]
        row["fewest"] = {g: n_sets[g] for g in fewest}
    what = (f"MDE {row['mde_pp']} pp" if known else "none detectable") + (
        f" ({len(known)} of {k} groups)" if known and len(known) < k else "") + (
        f" (one framing alone: {row['mde_pp_one_framing']} pp)" if alone and known else "")
    row["line"] = (f"{language} {axis}: {k} groups, {row['prompt_sets_per_group']} prompt sets each "
                   f"({row['questions_per_group']} questions, framings pooled); one group vs the other {k - 1}: "
                   f"{what}")
    if "fewest" in row:
        row["line"] += "; fewest: " + ", ".join(f"{g} {n}" for g, n in row["fewest"].items())
    return row


# ---- units per group for a disparity (biasatlas power PROBE --disparity) --------------------------------
#: the disparities --disparity accepts, in percentage points (contact) / rating points (samaritan)
DISPARITY_BOUNDS = {"contact": (0.5, 100 * (1 - BASE_RATE)), "samaritan": (0.1, 99.0)}


#: per language, the most questions a group can be asked (every scale and action); filled by contact_axes
QUESTIONS: dict[str, int] = {}


def design_questions(language: str) -> int:
    """The questions of a language's contact design (template set a) with every scale and action."""
    from biasatlas.probes.contact.data import template_sets

    tset = template_sets(language)["a"]
    return sum(len(cell.actions) for cell in tset.cells) * len(tset.scales)


def contact_axes(languages: Sequence[str], axes: Sequence[str] | None) -> list[tuple[str, str, int]]:
    """(language, axis, groups) of the contact design: the groups the plan asks (one per wording)."""
    from biasatlas.probes.contact.plan import ContactConfig, select_descriptors

    out: list[tuple[str, str, int]] = []
    found: set[str] = set()
    for language in languages:
        counts: dict[str, set[str]] = defaultdict(set)
        for d in select_descriptors(ContactConfig(languages=[language])):
            counts[d.axis].add(d.label)
        wanted = [a for a in axes if a in counts] if axes else sorted(counts)
        found.update(wanted)
        out.extend((language, axis, len(counts[axis])) for axis in wanted)
        QUESTIONS[language] = design_questions(language)
    missing = [a for a in axes or () if a not in found]
    if missing:
        raise ValueError(f"unknown axis {missing[0]!r} in {', '.join(languages)}")
    return out


def samaritan_categories(languages: Sequence[str], categories: Sequence[str] | None) -> list[tuple[str, str, int]]:
    """(language, category, groups) of the Samaritan design."""
    from biasatlas.probes.samaritan.data import CATEGORIES, load_groups

    unknown = [c for c in categories or () if c not in CATEGORIES]
    if unknown:
        raise ValueError(f"unknown category {unknown[0]!r}; valid: {', '.join(CATEGORIES)}")
    _, phrasings = load_groups()
    out: list[tuple[str, str, int]] = []
    for language in languages:
        for category in categories or CATEGORIES:
            groups = {p.group for p in phrasings if p.category == category and language in p.forms}
            out.append((language, category, len(groups)))
    return out


def disparity_plan(probe: str, disparity: float, cells: Sequence[tuple[str, str, int]], *,
                   alpha: float | None = None, power: float = 0.8,
                   base_rate: float = BASE_RATE) -> dict[str, Any]:
    """Units per group (contact: prompt sets = questions; samaritan: scenarios) with which the group-vs-rest
    test finds one group ``disparity`` points worse than the others, per (language, axis or category, groups)."""
    from biasatlas.stats.group_power import GroupPowerError
    from biasatlas.stats.power import PowerError, units_needed

    alpha = (CONTACT_ALPHA if probe == "contact" else SAMARITAN_ALPHA) if alpha is None else alpha
    rows = []
    for language, where, k in cells:
        row: dict[str, Any] = {"language": language, "axis" if probe == "contact" else "category": where,
                               "groups": k, "needed": None, "note": None}
        try:
            if k < 2:
                raise GroupPowerError("one group: no other group to compare with")
            if probe == "contact":
                # the headline test's questions per group, asked FRAMINGS to a prompt set
                questions = disparity_units(disparity / 100, k, base_rate=base_rate, alpha=alpha, power=power)
                row["questions"] = questions
                row["needed"] = math.ceil(questions / FRAMINGS)
                row["needed_one_framing"] = questions  # sets, where a model answers a set's framings alike
                row["limit"] = 3 * row["needed"] * k  # --limit counts prompts: 3 a set, every group of the axis
                most = QUESTIONS.get(language) or design_questions(language)
                if language not in OWN_TEMPLATES:
                    row["note"] = ("an MMHB pack: the sets of up to six principles share one no-contact "
                                   "question and n counts questions, so these sets may hold fewer; check "
                                   "`--plan-only`'s MDE line")
                elif row["needed"] > most:
                    row["note"] = (f"more than the {most} prompt sets a group has in the {language} design "
                                   "(every scale and action): not reachable by --limit; repeat the study with other "
                                   "seeds or models, or plan a larger disparity")
            else:
                sd = RATING_SD * math.sqrt(k / (k - 1))  # a rating minus the mean of k − 1 others
                row["needed"] = units_needed("paired_t", disparity, alpha / k, power, sd=sd)
        except (GroupPowerError, PowerError) as exc:
            row["note"] = str(exc)
        rows.append(row)
    unit = "prompt sets" if probe == "contact" else "scenarios"
    return {"probe": probe, "disparity": disparity, "disparity_unit": "percentage points" if probe == "contact"
            else "rating points", "alpha": alpha, "power": power, "unit": f"{unit} per group",
            "test": CONTACT_TEST if probe == "contact" else SAMARITAN_TEST,
            "assumptions": list(CONTACT_ASSUMPTIONS) if probe == "contact" else [
                f"a rating's sd within a scenario = {RATING_SD:g} points (paper 003's brittleness, no pilot)"],
            "base_rate": base_rate if probe == "contact" else None, "rows": rows}
