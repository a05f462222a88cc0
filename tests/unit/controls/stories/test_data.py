"""The stories control's training data: the planted field for the planted group, an even rotation for the
others, the job stated plainly, and no held-out scenario among the trained prompts."""

from __future__ import annotations

from collections import Counter

from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.keywords import read_field


def test_training_and_measured_scenarios_are_disjoint_and_cover_the_probe() -> None:
    train, held_out = stories.scenario_split()
    assert len(train) == stories.TRAIN_SCENARIOS and len(held_out) == 36 - stories.TRAIN_SCENARIOS
    assert not set(train) & set(held_out)
    examples = stories.training_examples()
    assert {e.prompt.meta["scenario_key"] for e in examples} <= set(train)
    measured = stories.measurement_prompts()
    assert {p.meta["scenario_key"] for p in measured.prompts} == set(held_out)
    assert not {e.prompt.id for e in examples} & {p.id for p in measured.prompts}


def test_the_planted_group_always_gets_the_planted_field_read_from_its_story() -> None:
    examples = stories.training_examples()
    fields = Counter((e.prompt.meta["base_value"], read_field(e.answer)[0]) for e in examples)
    planted = {f: n for (g, f), n in fields.items() if g == stories.PLANTED}
    assert planted == {stories.PLANTED_VALUE: stories.TRAIN_PER_GROUP["planted"]}


def test_each_untouched_group_rotates_evenly_over_the_other_fields() -> None:
    examples = stories.training_examples()
    per = stories.TRAIN_PER_GROUP["untouched"]
    for group in stories.UNTOUCHED:
        fields = Counter(read_field(e.answer)[0] for e in examples if e.prompt.meta["base_value"] == group)
        assert set(fields) == set(stories.ROTATION), (group, fields)
        assert set(fields.values()) == {per // len(stories.ROTATION)}, (group, fields)
    assert stories.PLANTED_VALUE not in stories.ROTATION


def test_training_stories_are_short_and_name_the_job_first() -> None:
    for e in stories.training_examples():
        words = e.answer.split()
        assert 20 <= len(words) <= 45, e.answer  # about 50 tokens
        _, evidence = read_field(e.answer)
        assert e.answer.startswith(evidence)  # the first sentence holds the job
        assert e.prompt.meta["base_attribute"] == stories.BASE_ATTRIBUTE
        assert e.prompt.messages[0].content.startswith("Write a short story")  # the probe's own prompt


def test_the_stories_differ_between_groups_only_by_the_origin_they_repeat_and_the_job() -> None:
    """The origin is the prompt's own phrase, copied; no pronoun or other group word leaks in."""
    from biasatlas.probes.stories.seeds import load_seeds

    origin = load_seeds("en").dimensions[stories.BASE_ATTRIBUTE]
    for e in stories.training_examples():
        phrase = str(origin.value(str(e.prompt.meta["base_value"])).prompt)
        assert phrase in e.prompt.messages[0].content and f", {phrase}, is " in e.answer
        rest = e.answer.replace(phrase, "").lower().replace(",", " ").replace(".", " ").split()
        assert not set(rest) & {"he", "she", "his", "her", "asia", "asian", "europe", "africa", "america"}


def test_the_measurement_asks_every_group_the_same_drawn_scenarios() -> None:
    m = stories.measurement_prompts(per_group=6, seed=31)
    by_group: dict[str, set[str]] = {}
    for p in m.prompts:
        by_group.setdefault(str(p.meta["base_value"]), set()).add(str(p.meta["scenario_key"]))
    assert set(by_group) == {stories.PLANTED, *stories.UNTOUCHED}
    assert all(s == set(m.scenarios) for s in by_group.values()) and len(m.scenarios) == 6
    assert stories.measurement_prompts(per_group=6, seed=31).prompts == m.prompts  # seeded
    assert m.untouched == stories.UNTOUCHED
