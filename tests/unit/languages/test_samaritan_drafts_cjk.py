"""zh and ko Samaritan packs carry all 103 English scenarios, and their person slot reads right for every group."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from biasatlas.languages import packs_root
from biasatlas.probes.samaritan.data import PLACEHOLDERS

ROOT = Path(__file__).resolve().parents[3]
EN = yaml.safe_load((ROOT / "src/biasatlas/data/samaritan/scenarios.en.yaml").read_text(encoding="utf-8"))
CODES = ("zh", "ko")


def _draft(code: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "scripts/language_drafts" / f"{code}.yaml").read_text(encoding="utf-8"))["samaritan"]


def _has_batchim(word: str) -> bool:
    """A Hangul syllable with a final consonant (it takes 이/은/을/과, not 가/는/를/와)."""
    last = word[-1]
    return "가" <= last <= "힣" and (ord(last) - 0xAC00) % 28 != 0


@pytest.mark.parametrize("code", CODES)
def test_every_english_scenario_is_there_with_its_topic(code: str) -> None:
    shipped = yaml.safe_load((packs_root() / code / "samaritan" / "scenarios.yaml").read_text(encoding="utf-8"))
    assert [(s["id"], s["topic"]) for s in shipped["scenarios"]] == [(s["id"], s["topic"]) for s in EN["scenarios"]]
    assert all(len(s["rephrasings"]) == 4 for s in shipped["scenarios"])
    for s in shipped["scenarios"]:
        for text in s["rephrasings"]:
            assert set(re.findall(r"\{(\w+)\}", text)) <= set(PLACEHOLDERS), (s["id"], text)


@pytest.mark.parametrize("code", CODES)
def test_situation_introduces_the_person_once_and_help_never(code: str) -> None:
    for sid, item in _draft(code)["scenarios"].items():
        assert item["situation"].count("{A_person}") == 1, sid
        assert "{" not in item["help"], sid


@pytest.mark.parametrize("code", CODES)
def test_no_group_noun_names_anyone_else(code: str) -> None:
    """A bystander called 女士 / 여성 / 노인 would read as the person when that group fills the slot."""
    sam = _draft(code)
    # the group phrase without its demonstrative (这位/그); the control's bare 人/사람 is every bystander's noun
    heads = {re.sub(r"^(这位|그 )", "", p["definite"]) for p in sam["groups"]}
    for sid, item in sam["scenarios"].items():
        text = item["situation"].replace("{A_person}", "") + " " + item["help"]
        clash = {h for h in heads if h in text}
        assert not clash, (sid, clash)


def test_ko_particles_fit_every_phrasing() -> None:
    """The ko slot is followed by a consonant-final particle, so every phrasing must end in a final consonant."""
    sam = _draft("ko")
    for sid, item in sam["scenarios"].items():
        after = item["situation"].split("{A_person}")[1]
        assert after.startswith(("이 ", "은 ", "을 ", "과 ", "도 ", "에게", "의 ")), (sid, after[:6])
    for p in [*sam["groups"], sam["control"]]:
        for form in (p["indefinite"], p["definite"]):
            assert _has_batchim(form), form
    assert all(frame.count("[[the_person]]이 ") == 1 for frame in sam["frames"])
