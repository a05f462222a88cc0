"""Samaritan wording of the drafted packs: the question frames, the group phrasings and who "the person" is.

A bystander named with the Man or Woman group's own noun ("une femme enceinte" with the group "une femme")
makes "la femme" of the question ambiguous: the question may ask about the bystander. Group phrasings are
what a native speaker says (no "una persona adolescente"; German "kaukasisch" means "of the Caucasus"),
and the zh control is polite like every group ("一位…"), so a group's prompt differs from the control's in
the group only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from biasatlas.languages import packs_root

DRAFTS = Path(__file__).resolve().parents[3] / "scripts" / "language_drafts"
#: the Man and Woman groups' head nouns, every inflection the situations could use
HEADS = {
    "fr": {"Man": r"hommes?", "Woman": r"femmes?"}, "es": {"Man": r"hombres?", "Woman": r"mujer(es)?"},
    "it": {"Man": r"uom(o|ini)", "Woman": r"donn[ae]"}, "pt": {"Man": r"hom(em|ens)", "Woman": r"mulher(es)?"},
    "hi": {"Man": r"पुरुष", "Woman": r"महिला"}, "id": {"Man": r"laki-laki", "Woman": r"perempuan"},
    "is": {"Man": r"karlm[aö]\w*", "Woman": r"kvenm[aö]\w*"},
    "vi": {"Man": r"đàn ông", "Woman": r"phụ nữ"},
}


def _samaritan(code: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DRAFTS / f"{code}.yaml").read_text(encoding="utf-8"))["samaritan"]
    return data


def _phrasing(code: str, name: str) -> dict[str, str]:
    return next(g for g in _samaritan(code)["groups"] if g["phrasing"] == name)


@pytest.mark.parametrize("code", sorted(HEADS))
def test_no_bystander_shares_the_man_or_woman_groups_noun(code: str) -> None:
    clashes = []
    for group, pattern in HEADS[code].items():
        # the pattern is the group's own noun
        assert re.search(rf"(?<!\w){pattern}(?!\w)", _phrasing(code, group)["definite"], re.IGNORECASE), group
        for sid, item in _samaritan(code)["scenarios"].items():
            text = item["situation"] + " " + item["help"]
            if re.search(rf"(?<!\w){pattern}(?!\w)", text, re.IGNORECASE):
                clashes.append((group, sid))
    assert not clashes


@pytest.mark.parametrize(("code", "calque"), [("fr", "quelle est la chance"), ("es", "qué tan")])
def test_frames_ask_as_the_language_does(code: str, calque: str) -> None:
    assert not [f for f in _samaritan(code)["frames"] if calque in f.casefold()]


@pytest.mark.parametrize(("code", "indefinite"), [
    ("fr", "un·e adolescent·e"), ("es", "un adolescente"), ("it", "un adolescente"), ("pt", "um adolescente")])
def test_a_teenager_is_an_adolescent_not_an_adolescent_person(code: str, indefinite: str) -> None:
    assert _phrasing(code, "Teenager")["indefinite"] == indefinite


def test_german_caucasian_is_not_of_the_caucasus() -> None:
    groups = yaml.safe_load((packs_root().parent / "samaritan" / "groups.yaml").read_text(encoding="utf-8"))
    white = next(g for g in groups["categories"]["race"] if g["group"] == "White")
    forms = {p["phrasing"]: p["de"] for p in white["phrasings"]}
    assert "kaukas" not in forms["Caucasian person"]["indefinite"].casefold()
    assert forms["Caucasian person"]["indefinite"].startswith("eine weiße Person")
    # still its own wording: two phrasings of one group that read alike would ask one question twice
    assert forms["Caucasian person"] != forms["White person"]


def test_zh_control_is_polite_like_every_group() -> None:
    sam = _samaritan("zh")
    assert sam["control"]["indefinite"].startswith("一位") and sam["control"]["definite"].startswith("这位")
    assert all(g["indefinite"].startswith("一位") for g in sam["groups"])
