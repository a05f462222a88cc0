"""Samaritan plan: sizes as in the paper, pairing, metadata, data files."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from biasatlas.probes.samaritan import data, plan

# Paper section 4.2: prompts per model = 103 scenarios × (Table 4 phrasings + control); each of
# them is asked in 4 rephrasings (412 prompts per phrasing).
PAPER_CELLS = {"race": 1133, "gender": 824, "age": 824}
PHRASINGS = {"race": 10, "gender": 7, "age": 7}


@pytest.mark.parametrize("category", ["race", "gender", "age"])
def test_plan_size_matches_the_paper(category: str) -> None:
    prompts = plan.build_prompts([category])
    control = [p for p in prompts if p.meta["is_control"]]
    groups = [p for p in prompts if not p.meta["is_control"]]
    assert len(control) == 412
    assert len(groups) == 412 * PHRASINGS[category]
    cells = {(p.meta["scenario"], p.meta["phrasing"]) for p in prompts}
    assert len(cells) == PAPER_CELLS[category]
    assert len(prompts) == 4 * PAPER_CELLS[category]


def test_all_categories_share_one_control() -> None:
    prompts = plan.build_prompts(data.CATEGORIES)
    assert len(prompts) == 412 * (10 + 7 + 7) + 412
    assert sum(p.meta["is_control"] for p in prompts) == 412
    assert len({p.id for p in prompts}) == len(prompts)


def test_groups_and_phrasings_follow_table_4() -> None:
    control, phrasings = data.load_groups()
    assert control.forms["en"] == ("a person", "the person")
    by_group: dict[tuple[str, str], list[str]] = {}
    for p in phrasings:
        by_group.setdefault((p.category, p.group), []).append(p.phrasing)
    assert by_group[("race", "White")] == ["White person", "Caucasian person"]
    assert by_group[("gender", "non-binary")] == ["Gender queer individual", "Non-binary individual", "Enby"]
    assert by_group[("age", "senior")] == ["Senior citizen", "Elderly person", "Geriatric"]
    assert Counter(c for c, _ in by_group) == {"race": 5, "gender": 3, "age": 4}
    for p in phrasings:
        assert {"en", "de"} <= set(p.forms), p


@pytest.mark.parametrize("language", ["en", "de"])
def test_control_and_group_prompts_differ_only_in_the_description(language: str) -> None:
    prompts = plan.build_prompts(["gender"], language, n_scenarios=3)
    control, phrasings = data.load_groups()
    by_cell: dict[tuple[str, int], dict[str, str]] = {}
    for p in prompts:
        by_cell.setdefault((p.meta["scenario"], p.meta["rephrasing"]), {})[p.meta["phrasing"]] = p.text
    assert len(by_cell) == 3 * 4
    man = next(p for p in phrasings if p.phrasing == "Man")
    for texts in by_cell.values():
        assert set(texts) == {"person", "Man", "Male individual", "Woman", "Female individual",
                              "Gender queer individual", "Non-binary individual", "Enby"}
        # Putting the control's noun phrases in place of the man's gives back the control prompt.
        indef_m, def_m = man.forms[language]
        indef_c, def_c = control.forms[language]
        swapped = texts["Man"]
        for old, new in ((indef_m, indef_c), (def_m, def_c)):
            swapped = swapped.replace(old, new).replace(old[:1].upper() + old[1:], new[:1].upper() + new[1:])
        assert swapped == texts["person"]


def test_meta_has_every_design_factor() -> None:
    prompt = plan.build_prompts(["race"], n_scenarios=1, temperature=1.0)[1]
    assert prompt.meta == {
        "scenario": "s001", "rephrasing": 1, "category": "race", "group": "White",
        "phrasing": "White person", "is_control": False, "temperature": 1.0, "max_tokens": 512,
    }
    assert prompt.probe == "samaritan"
    assert prompt.text.endswith("Answer with a number from 1 to 100.")


def test_n_scenarios_keeps_the_first_scenarios_whole() -> None:
    prompts = plan.build_prompts(["age"], n_scenarios=2)
    assert {p.meta["scenario"] for p in prompts} == {"s001", "s002"}
    assert len(prompts) == 2 * 4 * 8


def test_unknown_category_and_language_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown category"):
        plan.build_prompts(["religion"])
    with pytest.raises(data.SamaritanDataError):
        data.load_scenarios("xx")


@pytest.mark.parametrize("language", ["en", "de"])
def test_scenario_files(language: str) -> None:
    scenario_set = data.load_scenarios(language)
    assert len(scenario_set.scenarios) == 103
    assert [s.id for s in scenario_set.scenarios] == [f"s{i:03d}" for i in range(1, 104)]
    assert scenario_set.provenance["native_speaker_reviewed"] is False
    assert "AI assistant" in scenario_set.provenance["written_by"]
    for s in scenario_set.scenarios:
        assert len(s.rephrasings) == 4 and len(set(s.rephrasings)) == 4
        for r in s.rephrasings:
            names = set(re.findall(r"\{(\w+)\}", r))
            assert names and names <= set(data.PLACEHOLDERS), (s.id, r)
            assert "100" in r, (s.id, r)  # every rephrasing asks for the 1-100 rating
            # a sentence never starts with a lower-case placeholder
            assert not re.search(r'(^|[.?!]\s)\{(a|the)_person\}', r), (s.id, r)


def test_german_uses_the_person_in_the_nominative_only() -> None:
    # After a preposition the person would be dative/accusative ("mit einem Mann", "für einen
    # Mann"), which the one nominative form per phrasing cannot express.
    governing = re.compile(
        r"\b(mit|von|vor|für|an|bei|zu|nach|hinter|neben|gegen|ohne|um|über|unter|auf|durch"
        r"|gegenüber|außer)\s+\{(a|the)_person\}",
        re.IGNORECASE,
    )
    for s in data.load_scenarios("de").scenarios:
        for r in s.rephrasings:
            assert not governing.search(r), (s.id, r)


def test_cli_constants_match_the_probe() -> None:
    from biasatlas.cli import common, run_samaritan
    from biasatlas.probes.samaritan.probe import PROBE
    from biasatlas.stats.multitest import METHODS

    assert run_samaritan.CATEGORIES == data.CATEGORIES
    assert PROBE.languages == data.LANGUAGES
    assert set(common.CORRECTIONS) == set(METHODS)


def test_every_language_asks_for_a_number_from_1_to_100() -> None:
    """Every pack's prompts end with its instruction naming the answer format and the scale's two ends."""
    for language in ("en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko"):
        instruction = data.load_scenarios(language).answer_instruction
        assert "1" in instruction and "100" in instruction, (language, instruction)
        prompts = plan.build_prompts(["gender"], language, n_scenarios=1)
        assert prompts and all(p.text.endswith(instruction) for p in prompts), language
