"""Extraction answers: valid, repaired, rejected; out-of-vocabulary values; evidence; votes."""

from __future__ import annotations

import json

import pytest

from biasatlas.probes.stories.extract import (
    extraction_text,
    json_schema,
    majority,
    parse_extraction,
    vocabularies,
    vote_profiles,
)
from biasatlas.probes.stories.seeds import load_seeds

SEEDS = load_seeds("en")
DIMS = vocabularies(SEEDS, exclude=["income_level"])
STORY = "Amina, 67, had retired from the post office. She rented a small flat in Lyon."


def test_schema_is_built_from_the_closed_vocabularies():
    schema = json_schema(DIMS)
    assert "income_level" not in schema["properties"]  # the prompted attribute is not re-extracted
    assert set(schema["required"]) == set(DIMS)
    age = schema["properties"]["age"]["properties"]["value"]["enum"]
    assert age == [*SEEDS.dimensions["age"].keys, "unknown"]


def test_prompt_lists_every_dimension_and_the_story():
    text = extraction_text(SEEDS.extraction_template, STORY, DIMS)
    assert STORY in text
    for key in DIMS:
        assert f"- {key} (" in text
    assert "income_level (" not in text


def test_valid_answer():
    answer = json.dumps({k: {"value": "unknown", "evidence": ""} for k in DIMS} | {
        "age": {"value": "senior", "evidence": "Amina, 67"},
        "employment_status": {"value": "retired", "evidence": "had retired from the post office"},
    })
    parsed = parse_extraction(answer, DIMS, STORY)
    assert parsed.status == "valid"
    assert parsed.values["age"] == "senior" and parsed.values["employment_status"] == "retired"
    assert parsed.evidence["age"] == "Amina, 67"
    assert parsed.unsupported_evidence == []


@pytest.mark.parametrize(
    ("answer", "repair"),
    [
        ('Here you go:\n```json\n{"age": {"value": "senior", "evidence": "Amina, 67"}}\n```', "code fence removed"),
        ('{"age": {"value": "senior", "evidence": "Amina, 67"},}', "trailing commas removed"),
        ("{'age': {'value': 'senior', 'evidence': 'Amina, 67'}}", "single quotes replaced"),
        ('{"age": {"value": "senior", "evidence": "Amina, 6', "truncated JSON closed"),
        ('{"age": "Senior (65 or older)"}', "1 bare values (no value/evidence object)"),
        # found in review: braces in a reasoning block or in a note after the object; a Python dict literal
        ('<think>The answer needs {"age": ...}; she is 67.</think>\n{"age": {"value": "senior", "evidence": '
         '"Amina, 67"}}', "reasoning removed"),
        ('{"age": {"value": "senior", "evidence": "Amina, 67"}}\nNote: other fields are {unknown}.',
         "text around the JSON removed"),
        ('Sure! {"age": {"value": "senior", "evidence": "Amina, 67"}} Hope this helps :}',
         "text around the JSON removed"),
        ("{'age': {'value': 'senior', 'evidence': \"Amina's age: 67\"}}", "Python literal read"),
    ],
)
def test_repaired_answers(answer, repair):
    parsed = parse_extraction(answer, DIMS, STORY)
    assert parsed.status == "repaired"
    assert repair in parsed.repairs
    assert parsed.values["age"] == "senior"
    assert len(parsed.missing) == len(DIMS) - 1  # the others are counted as missing, set to unknown
    assert all(parsed.values[k] == "unknown" for k in parsed.missing)


def test_label_and_case_are_mapped_to_the_key():
    parsed = parse_extraction('{"housing_status": {"value": "Rents their home", "evidence": "rented a small flat"}}',
                              DIMS, STORY)
    assert parsed.values["housing_status"] == "renter"


def test_out_of_vocabulary_value_is_counted_and_set_to_unknown():
    parsed = parse_extraction('{"religion": {"value": "Pastafarian", "evidence": "x"}, "age": "senior"}', DIMS)
    assert parsed.values["religion"] == "unknown"
    assert parsed.out_of_vocabulary == {"religion": "Pastafarian"}
    assert parsed.status == "repaired"


def test_evidence_not_in_the_story_is_flagged():
    parsed = parse_extraction('{"age": {"value": "senior", "evidence": "she was ninety"}}', DIMS, STORY)
    assert parsed.unsupported_evidence == ["age"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        ("The protagonist is a retired woman.", "no JSON object in the answer"),
        ('{"value": "a story about a child", "evidence": "..."}', "none of the attribute keys present"),
        ('{"age": senior}', "invalid JSON that could not be repaired"),
        ('["age", "senior"]', "no JSON object in the answer"),
        ('<think>She is 67, so {"age": "senior"', "answer cut inside its reasoning"),
    ],
)
def test_rejected_answers(answer, reason):
    parsed = parse_extraction(answer, DIMS, STORY)
    assert parsed.status == "rejected"
    assert parsed.reason == reason
    assert set(parsed.values.values()) == {"unknown"}


@pytest.mark.parametrize(
    ("votes", "n", "expected"),
    [
        (["a", "a", "b"], 3, "a"),  # 2 of 3 >= floor(3/2)+1
        (["a", "b", "c"], 3, "unknown"),
        (["a", "unknown", "unknown"], 3, "unknown"),
        (["a", "a"], 2, "a"),  # 2 of 2 needed
        (["a", "b"], 2, "unknown"),
        (["a"], 2, "unknown"),  # the other extractor was rejected: still needs 2
        (["a"], 1, "a"),
        (["a", "a", "b", "b"], 4, "unknown"),  # 3 of 4 needed
    ],
)
def test_majority_vote(votes, n, expected):
    assert majority(votes, n) == expected


def test_vote_profiles_per_dimension():
    votes = [{"age": "senior", "gender": "woman"}, {"age": "senior", "gender": "man"}, {"age": "adult"}]
    assert vote_profiles(votes, ["age", "gender"], 3) == {"age": "senior", "gender": "unknown"}
