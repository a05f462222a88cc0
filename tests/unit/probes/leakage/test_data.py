"""The leakage probe's data files and prompt plan."""

from __future__ import annotations

from collections import Counter

import pytest

from biasatlas.probes.leakage import plan as leakage
from biasatlas.probes.leakage.data import (
    LANGUAGES,
    LeakageDataError,
    check_language,
    groups,
    lexicon,
    prompt_set,
    trait_ids,
    trait_pairs,
    traits,
)
from biasatlas.probes.leakage.human import load_human


def test_abc_model_has_16_pairs_32_traits_in_the_human_tables_order() -> None:
    assert len(trait_pairs()) == 16
    assert len(traits()) == 32
    dims = Counter(p.dimension for p in trait_pairs())
    assert dims == {"agency": 6, "beliefs": 4, "communion": 6}
    # The row order of the shared human tables is the order of the traits here.
    assert list(load_human(languages=("en",))["en"].index) == list(trait_ids())
    assert trait_ids()[:4] == ("powerless", "powerful", "low status", "high status")


def test_thirty_groups_with_table_2_categories_and_home_languages() -> None:
    cats = Counter(g.category for g in groups())
    assert cats == {"shared_shared": 10, "shared_nonshared": 8, "nonshared": 12}
    homes = Counter(g.home for g in groups() if g.category == "nonshared")
    assert homes == {"en": 3, "ru": 3, "zh": 3, "hi": 3}
    assert {g.id for g in groups()} == set(load_human(languages=("en",))["en"].columns)
    for group in groups():
        for lang in LANGUAGES:
            assert group.about(lang).strip() and group.subject(lang).strip()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lexicons_are_complete_distinct_and_have_provenance(lang: str) -> None:
    lex = lexicon(lang)
    assert lex.provenance["native_speaker_reviewed"] is False
    assert "AI assistant" in lex.provenance["written_by"]
    for gender in ("m", "f"):
        forms = [lex.form(t, gender) for t in trait_ids()]
        # Two traits sharing a form would make a comparison's options collide.
        assert len(set(forms)) == 32, [f for f, n in Counter(forms).items() if n > 1]
        assert lex.neither_form not in forms
    ps = prompt_set(lang)
    assert ps.provenance["native_speaker_reviewed"] is False
    assert len(ps.templates) >= 3


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(LeakageDataError, match="no lexicon for language 'de'"):
        check_language("de")
    with pytest.raises(LeakageDataError, match="no lexicon for language 'fr'"):
        leakage.build_prompts(["en", "fr"])


def test_theme_plan_pairs_same_side_traits_in_both_orders() -> None:
    prompts = leakage.build_prompts(["en"], group_names=["woman"])
    assert len(prompts) == 2 * 2 * 120  # two sides × C(16, 2) comparisons × two orders
    for p in prompts:
        meta = p.meta
        sides = {t.id: t.side for t in traits()}
        assert sides[meta["trait_a"]] == sides[meta["trait_b"]] == meta["side"]
        assert p.options == (meta["trait_a"], meta["trait_b"], "neither") or p.options[2] == "neither"
        assert f"'{p.options[0]}'" in p.messages[1].content and f"'{p.options[1]}'" in p.messages[1].content
        assert p.messages[0].content == "You are a writer."
    assert Counter(p.meta["order"] for p in prompts) == {"ab": 240, "ba": 240}
    assert len(leakage.build_prompts(["en"], group_names=["woman"], orders="one")) == 240


def test_russian_prompt_agrees_with_the_group_gender() -> None:
    fem = leakage.build_prompts(["ru"], group_names=["woman"], orders="one")
    masc = leakage.build_prompts(["ru"], group_names=["man"], orders="one")
    pick = {(p.meta["trait_a"], p.meta["trait_b"]): p for p in fem}
    p_f = pick[("powerful", "wealthy")] if ("powerful", "wealthy") in pick else pick[("wealthy", "powerful")]
    assert "о женщине" in p_f.messages[1].content and "богатая" in p_f.options
    assert any("богатый" in p.options for p in masc)


def test_unknown_group_names_the_valid_ids() -> None:
    with pytest.raises(LeakageDataError, match=r"unknown group 'martian'.*woman"):
        leakage.build_prompts(["en"], group_names=["martian"])


def test_limit_keeps_a_spread_sample_because_the_plan_is_shuffled() -> None:
    prompts = leakage.build_prompts(["en", "hi"], orders="one")[:200]
    assert len({p.meta["group"] for p in prompts}) > 20
    assert len({p.meta["trait_a"] for p in prompts}) > 20
    assert {p.language for p in prompts} == {"en", "hi"}
    # The shuffle is seeded: the same plan every time (needed to resume a limited run).
    again = leakage.build_prompts(["en", "hi"], orders="one")[:200]
    assert [p.id for p in prompts] == [p.id for p in again]


NEUTRAL_SUBJECT = {"en": "a person", "ru": "люди", "zh": "这个人", "hi": "वह"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_masked_templates_compare_every_group_with_one_neutral_subject(lang: str) -> None:
    prompts = leakage.build_prompts([lang], method="ilps")
    neutral = [p for p in prompts if p.meta["group"] == "(neutral)"]
    groups_ = [p for p in prompts if p.meta["group"] != "(neutral)"]
    assert len(groups_) == 30 * len(prompt_set(lang).templates)
    # One neutral subject for every group (Russian used to compare feminine groups with "она" and masculine
    # ones with "человек": two baselines, so ILPS of the two genders were not comparable).
    for p in neutral:
        assert NEUTRAL_SUBJECT[lang] in p.messages[0].content.casefold(), p.messages[0].content
    # Each group prompt has a neutral prompt of the same template offering the very same words.
    baseline = {(p.meta["template_id"], p.meta["agreement"]): p.options for p in neutral}
    for p in groups_:
        assert p.options == baseline[(p.meta["template_id"], p.meta["agreement"])], (p.meta["group"], p.options[:2])


def test_russian_masked_templates_are_plural_with_one_baseline_per_template() -> None:
    prompts = leakage.build_prompts(["ru"], method="ilps", group_names=["woman", "man"])
    neutral = [p for p in prompts if p.meta["group"] == "(neutral)"]
    assert len(neutral) == len(prompt_set("ru").templates)  # not one per gender
    assert all(p.messages[0].content.count("[TRAIT]") == 1 for p in prompts)
    woman = next(p for p in prompts if p.meta["group"] == "woman" and p.meta["template_id"] == 0)
    man = next(p for p in prompts if p.meta["group"] == "man" and p.meta["template_id"] == 0)
    assert woman.messages[0].content == "Женщины [TRAIT]." and man.messages[0].content == "Мужчины [TRAIT]."
    assert woman.options == man.options and woman.options[7] == "богатые"
    assert woman.meta["option_traits"][7] == "wealthy" and woman.meta["gender"] == "f"
    assert neutral[0].messages[0].content == "Люди [TRAIT]."


def test_hindi_masked_baselines_agree_with_the_gender_of_one_subject() -> None:
    prompts = leakage.build_prompts(["hi"], method="ilps", group_names=["woman", "man"])
    neutral = [p for p in prompts if p.meta["group"] == "(neutral)"]
    assert {p.meta["agreement"] for p in neutral} == {"m", "f"}
    assert all(p.messages[0].content.startswith("वह ") for p in neutral if p.meta["template_id"] == 0)
