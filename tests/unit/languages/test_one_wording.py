"""No two groups of one language with one wording (issue 37 point 3).

fr "Catholic" (F_D344) and "Roman Catholic" (F_D368) both render as *catholiques*: asked as two groups,
the same question is asked twice (one cached answer, counted twice in the group table) and each group
sits in the other's "rest" of the across-language test. These tests render every group of every pack in
every grammatical form its templates use (the contact descriptors, the Samaritan phrasings, the leakage
groups) and require one group per wording, casefolded and whitespace-normalised.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import pytest

from biasatlas.probes.contact.data import (
    SLOT,
    Descriptor,
    descriptors_for,
    languages,
    mmhb_descriptors,
    raw_descriptors_for,
    template_sets,
)
from biasatlas.probes.contact.plan import ContactConfig, build_prompts


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _contact_collisions(language: str, descriptors: Iterable[Descriptor]) -> dict[str, set[str]]:
    """wording -> descriptor keys, for every wording two or more descriptors (or axes) share in some slot."""
    out: dict[str, set[str]] = defaultdict(set)
    for tset in template_sets(language).values():
        for cell in tset.cells:
            texts = [cell.contact["positive"], cell.contact["negative"],
                     *(q for spec in cell.actions.values() for k, q in spec.items() if k != "verb")]
            for case in sorted({c for t in texts for c in SLOT.findall(t)}):
                by: dict[str, list[str]] = defaultdict(list)
                for d in descriptors:
                    if d.fits(cell.agree, tset.grammar):
                        by[_norm(d.render(cell.noun, case, cell.agree, tset.grammar))].append(f"{d.axis}:{d.key}")
                for wording, keys in by.items():
                    if len(keys) > 1:
                        out[wording] |= set(keys)
    return dict(out)


@pytest.mark.parametrize("language", languages())
def test_no_two_contact_groups_of_a_language_share_a_wording(language: str) -> None:
    collisions = _contact_collisions(language, descriptors_for(language))
    example = sorted(collisions.items())[:3]
    assert not collisions, f"{language}: {len(collisions)} wordings name two groups, e.g. {example}"


def test_the_raw_packs_do_have_collisions_and_the_merge_keeps_them_explained() -> None:
    # the test above could pass on a loader that drops groups at random: the merge must fold exactly
    # the colliding ones, keep one id and record the others
    raw = _contact_collisions("fr", raw_descriptors_for("fr"))
    assert any({"religion:F_D344", "religion:F_D368"} <= keys for keys in raw.values())
    merged = {d.key: d for d in descriptors_for("fr")}
    assert "F_D344" in merged and "F_D368" not in merged
    assert merged["F_D344"].merged_ids == ("F_D368",)
    folded = {k for d in merged.values() for k in d.merged_ids}
    assert len(merged) + len(folded) == len(raw_descriptors_for("fr"))
    # every raw collision is folded into one group, and nothing else is
    in_collision = {k.split(":", 1)[1] for keys in raw.values() for k in keys}
    assert {k for d in merged.values() if d.merged_ids for k in (d.key, *d.merged_ids)} == in_collision


def test_a_merged_group_still_fills_the_slots_any_of_its_ids_could() -> None:
    # fr P_D040 has only feminine forms (petite/s), F_D114 all four (petit/s, petite/s): one group, kept
    # under the id that fills more slots (F_D114), asked with masculine and feminine nouns in its own words
    tset = template_sets("fr")["a"]
    raw = {d.key: d for d in raw_descriptors_for("fr")}
    group = next(d for d in descriptors_for("fr") if "P_D040" in (d.key, *d.merged_ids))
    assert group.key == "F_D114" and group.merged_ids == ("P_D040",)
    genders = set()
    for cell in tset.cells:
        assert group.fits(cell.agree, tset.grammar) == raw["F_D114"].fits(cell.agree, tset.grammar)
        if group.fits(cell.agree, tset.grammar):
            genders.add(cell.agree["gender"])
            assert group.render(cell.noun, "np", cell.agree, tset.grammar) == raw["F_D114"].render(
                cell.noun, "np", cell.agree, tset.grammar)
    assert genders == {"masculine", "feminine"}


def test_english_lists_a_holistic_bias_descriptor_under_one_axis() -> None:
    # HolisticBias v1.0 lists "queer", "blue-collar", "white-collar" and "glasses-wearing" under two axes:
    # the same prompts twice, one group key; the plan asks them once, under the first axis of the file
    raw = [d for d in raw_descriptors_for("en") if d.key == "queer"]
    assert [d.axis for d in raw] == ["gender_and_sex", "sexual_orientation"]
    merged = [d for d in descriptors_for("en") if d.key == "queer"]
    assert [d.axis for d in merged] == ["gender_and_sex"] and merged[0].merged_ids == ("sexual_orientation:queer",)


def test_an_uppercase_row_suffix_is_a_form_of_its_descriptor() -> None:
    # es P_D006D (masculine plural of P_D006, upper-case suffix upstream) was read as a group of its own
    keys = {d.key for d in mmhb_descriptors("es")}
    assert "P_D006D" not in keys and "P_D009D" not in keys
    p006 = next(d for d in mmhb_descriptors("es") if d.key == "P_D006")
    assert p006.mmhb is not None and len(p006.mmhb.forms) == 4


def test_a_french_religion_plan_names_catholiques_under_one_group() -> None:
    prompts = build_prompts(ContactConfig(languages=["fr"], axes=["religion"], principles=["equal_status"]))
    groups: dict[str, set[str]] = defaultdict(set)
    questions: dict[str, set[str]] = defaultdict(set)
    for p in prompts:
        groups[p.meta["descriptor_form"].casefold()].add(p.meta["descriptor"])
        questions[p.messages[0].content].add(p.meta["descriptor"])
    assert groups["catholiques"] == {"F_D344"}
    assert all(len(keys) == 1 for keys in questions.values())


@pytest.mark.parametrize("field", [0, 1])
def test_no_two_samaritan_phrasings_of_a_language_share_a_wording(field: int) -> None:
    from biasatlas.probes.samaritan.data import LANGUAGES, load_groups

    control, phrasings = load_groups()
    for language in LANGUAGES:
        by: dict[str, list[str]] = defaultdict(list)
        for p in (control, *phrasings):
            if language in p.forms:
                by[_norm(p.forms[language][field])].append(p.phrasing)
        shared = {w: names for w, names in by.items() if len(names) > 1}
        assert not shared, (language, shared)


def test_no_two_leakage_groups_of_a_language_share_a_wording() -> None:
    from biasatlas.probes.leakage.data import groups

    for language in ("en", "ru", "zh", "hi"):
        for name in ("about", "subject"):
            by: dict[str, list[str]] = defaultdict(list)
            for g in groups():
                by[_norm(getattr(g, name)(language))].append(g.id)
            assert all(len(ids) == 1 for ids in by.values()), (language, name)


def test_a_pack_may_choose_which_id_a_merge_keeps() -> None:
    # pt "negros" is both P_D019 (body_type) and F_D321 (race_ethnicity: Black); the file order would keep
    # P_D019 and leave the race axis without Black people: pt's same_wording.yaml keeps F_D321
    group = next(d for d in descriptors_for("pt") if {"P_D019", "F_D321"} <= {d.key, *d.merged_ids})
    assert (group.key, group.axis, group.merged_ids) == ("F_D321", "race_ethnicity", ("P_D019",))


def test_the_plan_summary_names_the_merges() -> None:
    from biasatlas.probes.contact.probe import PROBE

    config = ContactConfig(languages=["fr"], axes=["religion"])
    summary = PROBE.plan_summary(build_prompts(config), config)
    note = summary["groups"]["fr"]
    assert (note["given"], note["groups"], note["merged"]) == (48, 47, {"F_D344": ["F_D368"]})
    assert summary["prompts"] == 47 * 180  # 30 cells x 2 actions x 3 framings a group
