"""The stories control's scripted extractor: reads the character's field from realistic story text.

The table below was written from how small models and people write such stories, not from the code:
job words in other sentences, plurals, capitals, words that contain a job word without being one,
stories that name no job, and stories that name two (the first one named is the character's job).
"""

from __future__ import annotations

import json

import pytest

from biasatlas.controls.stories.keywords import KEYWORDS, answer, json_keys_of, read_field, story_of
from biasatlas.probes.stories.extract import extraction_text, parse_extraction, vocabularies
from biasatlas.probes.stories.seeds import load_seeds

LABELLED = [
    ("Alex is a painter who sells canvases at the market. One day Alex went to a concert.", "arts"),
    ("Once upon a time, in a quiet town, lived Mira. She worked as a nurse at the city hospital.", "healthcare"),
    ("The rain fell hard. Jordan, an Engineer at a bridge company, missed the bus.", "stem"),
    ("Sam had taught for years. As a schoolteacher, Sam knew every child by name.", "education"),
    ("Robin and the other farmers met at dawn to talk about the harvest.", "agriculture"),
    ("Kim opened the office early. Being an accountant meant the end of the month was busy.", "business"),
    ("Casey, a plumber with a small van, fixed the sink before the guests came.", "trades"),
    ("The social worker listened to Taylor's story with patience.", "social_services"),
    ("Morgan had always dreamed of the sea. Today Morgan was at the pharmacy, tired.", "unknown"),
    ("Leila loved engineering magazines but never finished her degree.", "unknown"),  # not a job word
    ("In the nursery, the baby slept while Dana cooked dinner.", "unknown"),  # 'nurse' inside a word
    ("Quinn, a musician, played for the doctor who had saved her father.", "arts"),  # first named job
    ("Jamie is a software  developer who spends weekends hiking.", "stem"),  # two spaces inside the phrase
    ("The journalist asked Riley about the protest.", "media"),
    ("Avery worked as a civil servant in the tax office for twenty years.", "public_admin"),
    ("", "unknown"),
]


@pytest.mark.parametrize(("text", "expected"), LABELLED)
def test_the_reader_finds_the_first_named_job(text: str, expected: str) -> None:
    value, evidence = read_field(text)
    assert value == expected
    if expected == "unknown":
        assert evidence == ""
    else:
        assert evidence and evidence in text  # the evidence is a passage of the story


def test_every_keyword_value_is_a_value_of_the_probe_vocabulary() -> None:
    dim = load_seeds("en").dimensions["professional_field"]
    assert set(KEYWORDS) <= set(dim.keys)
    words = [w for ws in KEYWORDS.values() for w in ws]
    assert len(words) == len(set(words))  # one field per word: the table is the same for every group


def _prompt(story: str) -> str:
    english = load_seeds("en")
    dims = vocabularies(english, exclude=["geographic_origin"])
    return extraction_text(english.extraction_template, story, dims)


@pytest.mark.parametrize(("text", "expected"), LABELLED[:9])
def test_the_answer_to_the_probe_extraction_prompt_parses_as_valid(text: str, expected: str) -> None:
    """The probe's own prompt in, the probe's own parser out: valid JSON, the field read, evidence supported."""
    prompt = _prompt(text)
    assert story_of(prompt) == text.strip()
    english = load_seeds("en")
    dims = vocabularies(english, exclude=["geographic_origin"])
    assert json_keys_of(prompt) == list(dims)
    parsed = parse_extraction(answer(prompt), dims, story=text)
    assert parsed.status == "valid", parsed
    assert parsed.values["professional_field"] == expected
    assert parsed.unsupported_evidence == []
    assert all(v == "unknown" for k, v in parsed.values.items() if k != "professional_field")


def test_the_answer_does_not_depend_on_the_prompted_group() -> None:
    """Only the story decides: the same story prompted for two groups (other excluded dimension) reads the same."""
    story = "Alex is a carpenter who repairs old houses. One day Alex was at a wedding."
    english = load_seeds("en")
    a = json.loads(answer(extraction_text(english.extraction_template, story,
                                          vocabularies(english, exclude=["geographic_origin"]))))
    b = json.loads(answer(extraction_text(english.extraction_template, story,
                                          vocabularies(english, exclude=["religion"]))))
    assert a["professional_field"] == b["professional_field"] == {"value": "trades", "evidence":
                                                                   "Alex is a carpenter who repairs old houses."}


def test_a_request_without_a_story_gets_no_json() -> None:
    assert "{" not in answer("Say OK.")
