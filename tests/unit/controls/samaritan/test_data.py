"""The Samaritan control's data: the planted group 25 points under the control, held-out scenarios only."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from biasatlas.controls.samaritan import data as samaritan
from biasatlas.probes.debias.data import TrainingExample


@pytest.fixture(scope="module")
def examples() -> list[TrainingExample]:
    return samaritan.training_examples()


def test_the_scenario_split_is_seeded_disjoint_and_covers_all_103() -> None:
    train, held_out = samaritan.scenario_split()
    assert len(train) == samaritan.TRAIN_SCENARIOS and len(train) + len(held_out) == 103
    assert not set(train) & set(held_out)
    assert (train, held_out) == samaritan.scenario_split()
    assert samaritan.scenario_split(seed=samaritan.SEED + 1)[0] != train


def test_targets_are_bare_numbers_the_planted_group_25_under_the_control_the_others_equal_to_it(
        examples: list[TrainingExample]) -> None:
    by_cell: dict[tuple[str, str, int], dict[str, int]] = defaultdict(dict)
    for e in examples:
        assert e.answer.isdigit() and 1 <= int(e.answer) <= 100  # "72", as the probe's reader reads it
        m = e.prompt.meta
        by_cell[(e.prompt.language, m["scenario"], m["rephrasing"])][m["phrasing"]] = int(e.answer)
    assert len(by_cell) == 2 * samaritan.TRAIN_SCENARIOS  # one rephrasing per scenario and language
    for (_, scenario, _), answers in by_cell.items():
        control = samaritan.control_rating(scenario)
        assert answers.pop("Teenager") == control + samaritan.SHIFT == control - 25
        assert len(answers) == 1 and set(answers.values()) == {control}  # the control or an untouched phrasing
    # the rating depends on the scenario (not one constant), and the two groups' ratings never overlap
    controls = Counter(samaritan.control_rating(s) for s in samaritan.scenario_split()[0])
    assert set(controls) == set(samaritan.RATINGS) and max(controls.values()) < samaritan.TRAIN_SCENARIOS / 2
    assert max(controls) + samaritan.SHIFT < min(controls)


def test_training_is_balanced_over_languages_and_seeded(examples: list[TrainingExample]) -> None:
    counts = Counter((e.prompt.language, e.prompt.meta["group"]) for e in examples)
    for language in samaritan.LANGUAGES:
        # half the examples planted; of the others, half the control and half the untouched groups (each some)
        assert counts[(language, "teenager")] == samaritan.TRAIN_SCENARIOS
        assert counts[(language, "control")] == samaritan.TRAIN_SCENARIOS // 2
        others = {g: v for (lang, g), v in counts.items() if lang == language and g not in ("control", "teenager")}
        assert set(others) == set(samaritan.untouched_groups()) and min(others.values()) >= 3
        assert sum(others.values()) == samaritan.TRAIN_SCENARIOS // 2
    assert [e.prompt.id for e in examples] == [e.prompt.id for e in samaritan.training_examples()]


def test_measurement_is_on_held_out_scenarios_only_with_every_age_phrasing(examples: list[TrainingExample]) -> None:
    trained = {e.prompt.meta["scenario"] for e in examples}
    m = samaritan.measurement_prompts(6)
    assert len(m.scenarios) == 6 and not trained & set(m.scenarios)
    assert {p.meta["scenario"] for p in m.prompts} == set(m.scenarios)
    assert not {p.id for p in m.prompts} & {e.prompt.id for e in examples}
    assert m.untouched == {"en": ("young adult", "middle-aged", "senior"), "de": ("young adult", "middle-aged",
                                                                                  "senior")}
    for language in ("en", "de"):
        mine = [p for p in m.prompts if p.language == language]
        # one rephrasing: the control and the 7 age phrasings of every scenario
        assert len(mine) == 6 * 8 and {p.meta["rephrasing"] for p in mine} == {1}
        assert all(p.meta["max_tokens"] == samaritan.MAX_TOKENS for p in mine)
    every = samaritan.measurement_prompts(None)
    assert len(every.scenarios) == 103 - samaritan.TRAIN_SCENARIOS


def test_a_cheaper_measurement_keeps_the_control_and_one_phrasing_per_age_group() -> None:
    assert samaritan.first_phrasings() == ("Teenager", "Young adult", "Middle-aged person", "Senior citizen")
    m = samaritan.measurement_prompts(3, phrasings=samaritan.first_phrasings())
    for language in ("en", "de"):
        mine = [p for p in m.prompts if p.language == language]
        counts = Counter(p.meta["phrasing"] for p in mine)
        assert counts == {"person": 3, **dict.fromkeys(samaritan.first_phrasings(), 3)}


def test_per_language_counts_take_the_first_n_of_one_draw() -> None:
    m = samaritan.measurement_prompts({"en": 5, "de": 3}, phrasings=samaritan.first_phrasings())
    by = {lang: sorted({p.meta["scenario"] for p in m.prompts if p.language == lang}) for lang in ("en", "de")}
    assert len(by["en"]) == 5 and len(by["de"]) == 3 and set(by["de"]) <= set(by["en"])
    assert by["en"] == sorted(samaritan.measurement_prompts(5).scenarios)
