"""Issue 25.1: no value of any attribute collides with a word the extraction reader takes for "no value".

Planted truth: every value of every attribute, answered by its key (as the extraction prompt lists it) or
by its English label, is read back as that value; published "no disability" extractions are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from biasatlas.probes.stories import extract
from biasatlas.probes.stories.compare import compare, read_published
from biasatlas.probes.stories.extract import attribute_list, parse_extraction, vocabularies
from biasatlas.probes.stories.importer import import_stories
from biasatlas.probes.stories.profiles import load_profiles
from biasatlas.probes.stories.seeds import LANGUAGES, UNKNOWN, load_seeds, slug
from biasatlas.stats.associations import AssociationConfig
from biasatlas.store import Store

ENGLISH = load_seeds("en")
# the words the reader has taken for "no value" (issue 25), whatever the module calls them now
NULL_WORDS = {UNKNOWN, "none", "null", "n/a", "not specified", "unspecified", "na", "nil"}


def _null_words() -> set[str]:
    words = {w.lower() for w in (*NULL_WORDS, *getattr(extract, "NULL_WORDS", ()))}
    return words | {slug(w) for w in words}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_value_key_or_label_is_a_null_word(lang: str) -> None:
    nulls = _null_words()
    clashes = [
        f"{dim.key}.{value.key} ({value.label!r})"
        for dim in load_seeds(lang).dimensions.values()
        for value in dim.values
        for text in (value.key, value.label)
        if text.strip().lower() in nulls or slug(text) in nulls
    ]
    assert clashes == [], f"{lang}: values read as 'no value' by the extraction reader: {clashes}"


def test_the_reader_knows_the_null_words_checked_here() -> None:
    assert {w.lower() for w in extract.NULL_WORDS} <= NULL_WORDS


@pytest.mark.parametrize("how", ["key", "label"])
def test_every_value_answered_is_read_back(how: str) -> None:
    """Planted: one answer per value naming it; the reader must give back every planted value."""
    lost = []
    for dim in ENGLISH.dimensions.values():
        dims = vocabularies(ENGLISH, exclude=["age" if dim.key != "age" else "gender"])
        for value in dim.values:
            answer = json.dumps({dim.key: {"value": value.key if how == "key" else value.label, "evidence": "x"}})
            if parse_extraction(answer, dims).values[dim.key] != value.key:
                lost.append(f"{dim.key}.{value.key}")
    assert lost == []


def test_the_extraction_prompt_lists_no_null_word_as_a_value() -> None:
    listed = attribute_list(vocabularies(ENGLISH))
    for line in listed.splitlines():
        keys = [part.split(" = ")[0].strip() for part in line.split(": ", 1)[1].split("; ")]
        assert not (set(keys[:-1]) & _null_words()), line  # the last is "unknown", the only null value


def _published(tmp_path: Path) -> Path:
    """Published rows prompted with health status; their extractions say "no disability" or "some disability"."""
    plan = {"good": (2, 18), "fair": (2, 18), "poor": (18, 2)}  # (some disability, no disability)
    rows = []
    for health, (some, none) in plan.items():
        for i, disability in enumerate(["some disability"] * some + ["no disability"] * none):
            rows.append({
                "sample_id": f"{health}{i}", "output_id": "0", "generator_model": "gen", "language": "en",
                "target_attribute": "health_status", "target_attribute_value": f"a person with {health} health",
                "attribute_value_key": health, "scenario": "applying for food stamps",
                "scenario_key": "food_assistance", "story": f"story {health} {i}",
                "extracted_attributes_json": json.dumps({"disability_status": disability, "age": "adult (30-44)"}),
            })
    path = tmp_path / "stories.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_published_no_disability_extractions_are_kept(tmp_path: Path) -> None:
    counts = import_stories(_published(tmp_path), tmp_path / "study")
    assert counts["out_of_vocabulary_values_set_to_unknown"] == {}
    with Store(tmp_path / "study") as store:
        profiles, _ = load_profiles(store)
    got = profiles["disability_status"].value_counts().to_dict()
    no_disability = ENGLISH.dimensions["disability_status"].values[0].key
    assert got == {"disabled": 22, no_disability: 38}  # planted: 22 "some disability", 38 "no disability"


def test_former_key_of_no_disability_in_stored_imports_is_read() -> None:
    """Studies imported before the key was renamed hold our own canonical JSON with "none": still no disability."""
    dims = vocabularies(ENGLISH, exclude=["age"])
    stored = json.dumps({"disability_status": {"value": "none", "evidence": ""}})
    assert parse_extraction(stored, dims, former_keys=True).values["disability_status"] == "no_disability"
    # a model's "none" is no value (it answers the listed key, no_disability, for no disability)
    assert parse_extraction(stored, dims).values["disability_status"] == UNKNOWN


def _entry(a: str, av: str, b: str, bv: str, pct: float, lift: float, qid: str) -> dict[str, Any]:
    return {"question_id": qid, "base_attribute": {"name": a, "value": av},
            "compared_attribute": {"name": b, "value": bv}, "avg_percentage": pct, "avg_lift": lift}


def _questions(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


# ---- issue 25.1: "no disability" is a value; every published entry is testable or says why ----------------

DISABILITY = [
    _entry("health_status", "poor", "disability_status", "some disability", 90.0, 2.45, "d1"),
    _entry("health_status", "good", "disability_status", "no disability", 90.0, 1.42, "d2"),
    _entry("age", "senior (65+)", "employment_status", "retired", 88.9, 5.158, "d3"),
]


def test_compare_tests_published_disability_associations(tmp_path: Path) -> None:
    """Planted: poor health -> some disability in 18 of 20 stories (lift 2.45), the stored extractions
    saying "no disability" 38 times; the published disability entries must be testable and the planted
    one reproduced with its fraction; the entry without stories says why it cannot be tested."""
    import_stories(_published(tmp_path), tmp_path / "study")
    with Store(tmp_path / "study") as store:
        profiles, _ = load_profiles(store)
    entries, _ = read_published(_questions(tmp_path, DISABILITY))
    out = compare(profiles, entries, AssociationConfig(resamples=20_000, stages=(500, 4_000)))
    rows = {r["question_id"]: r for r in out["rows"]}
    assert rows["d1"]["fraction"] == pytest.approx(0.9) and rows["d1"]["lift"] == pytest.approx(0.9 / (22 / 60))
    assert rows["d1"]["reproduced"] is True
    assert rows["d2"]["fraction"] == pytest.approx(0.9) and rows["d2"]["reproduced"] is False  # lift 1.42
    assert rows["d3"]["fraction"] is None and rows["d3"]["why"] == "no story prompted with age"
    assert all(r["fraction"] is not None or r["why"] for r in out["rows"])
    (summary,) = out["slices"]
    assert summary["published_testable"] == 2 and summary["reproduced"] == 1
    assert summary["untestable"] == {"no story prompted with age": 1}


def test_a_study_extracted_with_the_former_key_reads_no_disability(tmp_path: Path) -> None:
    """Planted: 3 stories extracted with the former prompt ("none = no disability"), the extractor answering
    "none"; then, as a re-run does, asked again with today's prompt ("no_disability"). Each story must read
    no disability, from one answer of the extractor (its latest), not a 1-of-2 vote that leaves it unknown."""
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.probes.stories.extract_step import extraction_prompts
    from biasatlas.probes.stories.plan import build_prompts
    from biasatlas.probes.stories.read import story_rows
    from biasatlas.records import GenerationSettings, Message
    from biasatlas.runner import run_plan

    settings = GenerationSettings(max_tokens=50)
    store = Store(tmp_path)
    stories = [p for p in build_prompts(ENGLISH) if p.meta["base_attribute"] == "age"][:3]
    generator = FakeBackend(lambda r: "Amina walked to the bank.", name="gen")
    run_plan(stories, generator, store, settings, progress=False)
    today = extraction_prompts(story_rows(store))
    former = [p.model_copy(update={"messages": (Message(role="user", content=p.messages[0].content.replace(
        "no_disability = no disability", "none = no disability")),)}) for p in today]
    assert all("disability_status (disability status): none = no disability" in p.messages[0].content
               for p in former)
    for prompts, key in ((former, "none"), (today, "no_disability")):
        answer = json.dumps({"disability_status": {"value": key, "evidence": "Amina walked"}})
        run_plan(prompts, FakeBackend(lambda r, a=answer: a, name="gen"), store, settings, progress=False)
        if key == "none":  # a study not asked again: "none" answered the prompt that listed it for no disability
            assert load_profiles(store)[0]["disability_status"].tolist() == ["no_disability"] * 3
    assert len(store.frame(probe="stories-extract")) == 6
    profiles, counts = load_profiles(store)
    store.close()
    assert profiles["disability_status"].tolist() == ["no_disability"] * 3
    assert sum(counts["extraction"]["answers"].values()) == 3  # the former answers are superseded, not votes
    assert counts["extraction"]["superseded_by_a_later_prompt"] == 3


def test_stories_generated_with_the_former_key_are_no_disability_once(tmp_path: Path) -> None:
    """Planted: 2 stories prompted with disability_status=none (the former key; the prompt text is the same),
    then the study run again with today's plan. Each story is one profile prompted no_disability, not two."""
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.probes.stories.extract_step import extraction_prompts
    from biasatlas.probes.stories.plan import build_prompts
    from biasatlas.probes.stories.read import story_rows
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan

    settings = GenerationSettings(max_tokens=50)
    store = Store(tmp_path)
    today = [p for p in build_prompts(ENGLISH) if p.meta["base_value"] == "no_disability"][:2]
    former = [p.model_copy(update={"meta": {**p.meta, "base_value": "none"}}) for p in today]
    assert {p.id for p in former}.isdisjoint(p.id for p in today)  # another design cell, the same text
    generator = FakeBackend(lambda r: "Amina, 34, ran the bakery.", name="gen")
    extractor = FakeBackend(lambda r: json.dumps({"age": {"value": "adult", "evidence": "Amina, 34"}}), name="gen")
    for plan in (former, today):
        run_plan(plan, generator, store, settings, progress=False)
        run_plan(extraction_prompts(story_rows(store)), extractor, store, settings, progress=False)
        profiles, _ = load_profiles(store)
        assert profiles["base_value"].tolist() == ["no_disability"] * 2
        assert profiles["disability_status"].tolist() == ["no_disability"] * 2
        assert profiles["age"].tolist() == ["adult"] * 2
    assert len(generator.calls) == 2  # the second plan asked nothing new
    assert len(story_rows(store)) == 2
    store.close()
