"""The drafted Samaritan packs that carry all 103 scenarios (hi, vi): same ids and topics as English, the person
named exactly once per rephrasing in each form, and (hi) group phrasings that read right before a postposition.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from biasatlas.languages import packs_root

FULL = ("hi", "vi")
EN = packs_root().parent / "samaritan" / "scenarios.en.yaml"


def _load(code: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((packs_root() / code / "samaritan" / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("code", FULL)
def test_every_english_scenario_is_drafted_with_its_id_and_topic(code: str) -> None:
    english = [(s["id"], s["topic"]) for s in yaml.safe_load(EN.read_text(encoding="utf-8"))["scenarios"]]
    drafted = [(s["id"], s["topic"]) for s in _load(code, "scenarios.yaml")["scenarios"]]
    assert len(english) == 103
    assert drafted == english


@pytest.mark.parametrize("code", FULL)
def test_each_rephrasing_names_the_person_once_indefinite_then_once_definite(code: str) -> None:
    for s in _load(code, "scenarios.yaml")["scenarios"]:
        assert len(s["rephrasings"]) == 4, s["id"]
        for text in s["rephrasings"]:
            slots = re.findall(r"\{(\w+)\}", text)
            assert [x.lower() for x in slots] == ["a_person", "the_person"], (s["id"], text)


def test_hindi_phrasings_are_the_same_in_the_direct_and_the_oblique_case() -> None:
    # the situations put a postposition after the person (को, से, का ...): a phrasing like
    # "अधेड़ उम्र का व्यक्ति" would need का -> के there, so indefinite and definite must share one noun phrase
    groups = _load("hi", "groups.yaml")
    for item in [groups["control"], *groups["phrasings"]]:
        indefinite, definite = item["indefinite"], item["definite"]
        assert indefinite.startswith("एक ") and definite.startswith("उस "), item
        assert indefinite.removeprefix("एक ") == definite.removeprefix("उस "), item
