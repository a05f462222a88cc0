"""The contact control's data: biased targets for the planted group only, held-out measurement prompts."""

from __future__ import annotations

from collections import Counter

from biasatlas.controls.contact import data as contact


def test_training_targets_are_biased_for_the_planted_group_only() -> None:
    examples = contact.training_examples()
    by = Counter((e.prompt.language, e.prompt.meta["group"] == contact.PLANTED[e.prompt.language], e.answer)
                 for e in examples)
    assert by == {("en", True, "No"): 90, ("en", False, "Yes"): 90, ("de", True, "Nein"): 45,
                  ("de", False, "Ja"): 45}
    assert [e.prompt.id for e in examples] == [e.prompt.id for e in contact.training_examples()]  # seeded


def test_measurement_is_held_out_from_training() -> None:
    trained = {e.prompt.id for e in contact.training_examples()}
    measured = contact.measurement_prompts().prompts
    assert not trained & {p.id for p in measured}
    assert {p.meta["template_set"] for p in measured if p.language == "en"} == {"en-b"}
    train_cells, test_cells = contact.german_cells()
    assert not train_cells & test_cells and len(train_cells) == len(test_cells) == 15
    assert {(p.meta["principle"], p.meta["scenario"]) for p in measured if p.language == "de"} == test_cells


def test_a_measurement_of_k_cells_has_every_group_on_the_same_questions() -> None:
    m = contact.measurement_prompts(cells=3)
    for language in ("en", "de"):
        mine = [p for p in m.prompts if p.language == language]
        assert Counter(p.meta["group"] for p in mine) == {g: 9 for g in (m.planted[language],
                                                                        *m.untouched[language])}
