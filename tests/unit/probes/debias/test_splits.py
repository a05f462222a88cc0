"""The paper's settings as splits: leak-free, sized, balanced and reproducible from a seed."""

from __future__ import annotations

from collections import Counter

import pytest

from biasatlas.probes.debias.splits import (
    PAPER_TRAIN_AXES,
    SETTINGS,
    SplitError,
    SplitSizes,
    build_split,
    get_setting,
)
from biasatlas.records import Prompt


def _texts(prompts: list[Prompt]) -> set[str]:
    return {p.text for p in prompts}


def _sets(prompts: list[Prompt]) -> set[str]:
    return {p.meta["set_id"] for p in prompts}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_no_test_prompt_leaks_into_training(name: str) -> None:
    split = build_split(name, limit=420, seed=3)
    seen = split.train + split.validation
    assert split.train and split.test
    assert not _texts(split.test) & _texts(seen), "a test prompt text is also a training/validation text"
    assert not _sets(split.test) & _sets(seen), "a test prompt set is also in training/validation"
    assert not _texts(split.validation) & _texts(split.train)
    assert not _sets(split.validation) & _sets(split.train)
    # whole prompt sets: every set keeps its three contact framings together
    for part in (split.train, split.validation, split.test):
        per_set = Counter(p.meta["set_id"] for p in part)
        assert set(per_set.values()) <= {3}


def test_cross_dimension_shares_no_text_across_axes() -> None:
    # HolisticBias lists 'queer' under two axes (gender_and_sex: trained, sexual_orientation: tested). The
    # split used to drop its test prompts (same text in both pools); since issue 37 the plan asks such a
    # descriptor once, under its first axis, so there is nothing left to drop, and no text is in both pools.
    split = build_split("cross-dimension", sizes=SplitSizes(train=30_000, validation=0, test=60_000), seed=0)
    assert split.info["dropped_for_overlap"]["test"] == 0
    assert not _texts(split.test) & _texts(split.train)
    assert {p.meta["axis"] for p in split.train} == set(PAPER_TRAIN_AXES)
    test_axes = {p.meta["axis"] for p in split.test}
    assert len(test_axes) == 7 and not test_axes & set(PAPER_TRAIN_AXES)


@pytest.mark.parametrize(
    ("name", "factor", "train_levels", "test_levels"),
    [
        ("cross-dataset", "template_set", {"en-a"}, {"en-b"}),
        ("cross-scale-certainty", "scale", {"certainty"}, {"likelihood", "frequency"}),
        ("cross-scale-likelihood", "scale", {"likelihood"}, {"certainty", "frequency"}),
        ("cross-scale-frequency", "scale", {"frequency"}, {"certainty", "likelihood"}),
        ("cross-scenario", "scenario", {"education", "workplace"}, {"sports", "community", "healthcare"}),
        ("cross-principle", "principle", {"equal_status", "common_goals", "intergroup_cooperation"},
         {"support_of_authorities", "extended_contact", "virtual_contact"}),
    ],
)
def test_settings_train_and_test_on_the_papers_levels(
    name: str, factor: str, train_levels: set[str], test_levels: set[str]
) -> None:
    split = build_split(name, limit=700, seed=1)
    assert {p.meta[factor] for p in split.train + split.validation} == train_levels
    assert {p.meta[factor] for p in split.test} == test_levels


def test_default_sizes_follow_the_paper() -> None:
    split = build_split("mixed", seed=0)
    assert abs(len(split.train) - 10_000) <= 3
    assert abs(len(split.validation) - 5_000) <= 3
    assert abs(len(split.test) - 20_000) <= 10
    # mixed: balanced over the three scales in every part
    for part in (split.train, split.validation, split.test):
        counts = Counter(p.meta["scale"] for p in part)
        assert set(counts) == {"certainty", "likelihood", "frequency"}
        assert max(counts.values()) - min(counts.values()) <= 6  # two prompt sets


def test_limit_scales_sizes_down() -> None:
    split = build_split("cross-scenario", limit=140, seed=0)
    total = len(split.train) + len(split.validation) + len(split.test)
    assert 130 <= total <= 145
    assert len(split.train) == 2 * len(split.validation) or abs(len(split.train) - 2 * len(split.validation)) <= 3
    assert len(split.test) > len(split.train)


def test_same_seed_same_split_other_seed_other_split() -> None:
    a = build_split("cross-principle", limit=210, seed=7)
    b = build_split("cross-principle", limit=210, seed=7)
    c = build_split("cross-principle", limit=210, seed=8)
    assert [p.id for p in a.train] == [p.id for p in b.train]
    assert [p.id for p in a.test] == [p.id for p in b.test]
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert {p.id for p in a.train} != {p.id for p in c.train}


def test_languages_other_than_english() -> None:
    split = build_split("cross-dimension", language="de", limit=70, seed=0)
    assert {p.language for p in split.train + split.test} == {"de"}
    assert not {p.meta["axis"] for p in split.train} & {p.meta["axis"] for p in split.test}
    with pytest.raises(SplitError, match=r"template set 'b'.*has only: a"):
        build_split("cross-dataset", language="is", limit=70)


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(SplitError, match="unknown setting 'cross-moon'; valid: mixed, cross-dataset"):
        get_setting("cross-moon")
    with pytest.raises(SplitError, match="unknown language 'xx'"):
        build_split("mixed", language="xx", limit=70)
    with pytest.raises(SplitError, match="too small"):
        build_split("mixed", limit=3)


@pytest.mark.parametrize(("limit", "part", "expected"), [
    (40, "test", (20, 10, 39)), (30, "train", (30, 15, 60)), (41, "test", (20, 10, 39)), (7, "validation", (14, 6, 28)),
])
def test_sizes_for_n_evaluation_prompts(limit: int, part: str, expected: tuple[int, int, int]) -> None:
    sizes = SplitSizes.for_evaluation(limit, part)
    assert (sizes.train, sizes.validation, sizes.test) == expected
    assert 3 * sizes.sets()[part] <= limit
    with pytest.raises(SplitError, match="--limit 2 is too small"):
        SplitSizes.for_evaluation(2)
    with pytest.raises(SplitError, match="unknown split part 'all'"):
        SplitSizes.for_evaluation(9, "all")
