"""Plan sizes follow from the design factors; the data files are complete and grammatical slots filled."""

from __future__ import annotations

import pytest

from biasatlas.probes.contact.data import (
    PRINCIPLES,
    SCENARIOS,
    SLOT,
    descriptors_for,
    holistic_bias_descriptors,
    languages,
    template_sets,
)
from biasatlas.probes.contact.probe import ContactConfig, build_prompts


def test_languages_shipped() -> None:
    assert {"en", "de", "is"} <= set(languages())


@pytest.mark.parametrize(("language", "name"), [("en", "a"), ("en", "b"), ("de", "a"), ("is", "a")])
def test_template_sets_cover_every_cell(language: str, name: str) -> None:
    tset = template_sets(language)[name]
    cells = {(c.principle, c.scenario) for c in tset.cells}
    assert cells == {(p, s) for p in PRINCIPLES for s in SCENARIOS}
    assert len(tset.cells) == 30
    assert tset.provenance.get("native_speaker_reviewed") is not None


def test_english_full_plan_has_the_papers_size() -> None:
    # one group per wording (issue 37): the four descriptors HolisticBias lists under two axes are asked once
    n_desc = len(descriptors_for("en"))
    assert n_desc == len(holistic_bias_descriptors("v1.0")) - 4
    prompts = build_prompts(ContactConfig(language="en"))
    sets = {p.meta["set_id"] for p in prompts}
    # 6 principles × 5 scenarios × 2 actions × every descriptor, per scale; 3 framings per set
    assert len(sets) == 30 * 2 * n_desc
    assert len(prompts) == 3 * len(sets)
    assert 34_000 <= len(sets) <= 40_000  # "about 36,000 prompt sets per scale"
    assert len({p.meta["axis"] for p in prompts}) == 13


def test_all_scales_triple_the_plan() -> None:
    one = build_prompts(ContactConfig(language="en", axes=["religion"]))
    three = build_prompts(ContactConfig(language="en", axes=["religion"], scales=["all"]))
    assert len(three) == 3 * len(one)
    assert {p.options for p in three} == {("Yes", "No"), ("Likely", "Unlikely"), ("Mostly", "Rarely")}


@pytest.mark.parametrize(
    ("language", "axis", "groups", "sets"),
    [("de", "religion", 7, 210), ("de", "nationality", 20, 600), ("is", "religion", 6, 180),
     ("is", "nationality", 10, 300)],
)
def test_german_icelandic_plans_match_paper_000(language: str, axis: str, groups: int, sets: int) -> None:
    prompts = build_prompts(ContactConfig(language=language, axes=[axis]))
    assert len({p.meta["descriptor"] for p in prompts}) == groups
    assert len(prompts) == 3 * sets  # 30 templates per group, positive actions (paper 000)
    assert all(p.meta["action"] == "positive" for p in prompts)


@pytest.mark.parametrize("language", ["en", "de", "is"])
def test_every_slot_is_filled(language: str) -> None:
    prompts = build_prompts(ContactConfig(language=language, scales=["all"], actions=["positive", "negative"],
                                          limit=400))
    for p in prompts:
        text = p.messages[0].content
        assert not SLOT.search(text) and "{" not in text, text


def test_limit_is_seeded_and_spread() -> None:
    a = build_prompts(ContactConfig(language="en", limit=50, seed=1))
    b = build_prompts(ContactConfig(language="en", limit=50, seed=1))
    c = build_prompts(ContactConfig(language="en", limit=50, seed=2))
    assert [p.id for p in a] == [p.id for p in b] != [p.id for p in c]
    assert len({p.meta["axis"] for p in a}) >= 5


def test_standalone_noun_phrases_go_after_the_noun() -> None:
    post = [d for d in holistic_bias_descriptors("v1.0") if d.phrase and "{noun}" in d.phrase]
    wheel = next(d for d in post if "wheelchair" in d.phrase)
    assert wheel.render({"pl": "students"}, "pl").startswith("students who use")
    assert len(holistic_bias_descriptors("v1.1")) > len(holistic_bias_descriptors("v1.0")) - 50


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"language": "xx"}, "valid: "
        "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"), ({"axes": ["hobbies"]}, "valid: ability"),
     ({"scales": ["confidence"]}, "valid: certainty"), ({"template_set": "z"}, "valid: a, b")],
)
def test_bad_choices_list_valid_ones(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_prompts(ContactConfig(**kwargs))  # type: ignore[arg-type]


def test_german_descriptors_have_provenance_keys() -> None:
    assert {d.axis for d in descriptors_for("de")} == {"religion", "nationality"}
