"""The language packs must not change an en/de/is plan: prompt ids are those of the code before them.

``plan_digests.json`` was written by the pre-pack code (main at 485e04c) with the same configurations.
The en entries hold after issue 37's merge of descriptors of one wording: the English descriptors it
folds (queer, blue-collar, white-collar, glasses-wearing under their second axis) are in none of these
plans. The fr and pt entries were written after that merge (fr religion: 47 groups, F_D368 folded into
F_D344 *catholiques*; pt race_ethnicity: 27 groups, "negros" as F_D321), so that a change to the MMHB
plans is seen too. The pt entry was rewritten when the pack's form fixes landed (F_D337 "BIPOC", not
MMHB's "BIPOC (pretos, pardos e indígenas)'" with its stray quote) and again when P_D090 became "AAPI"
(MMHB's "das Ilhas do Pacífico" named Pacific Islanders only), and the fr entry when the
healthcare x equal-status cell became a fellow patient on the same ward, and again when every French form was read in
its role (religion: évangéliques, spirites, sans religion, ...). The Samaritan entries were rewritten
when the default answer length went from 64 to 512 tokens (a prompt's metadata holds its decoding, so its id
changes with the default; the texts are those of before), and the de entry again when German "Caucasian
person" stopped reading "of the Caucasus" ("weiße Person europäischer Herkunft").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts

DIGESTS = json.loads((Path(__file__).parent / "plan_digests.json").read_text())
CONFIGS: dict[str, dict[str, object]] = {
    "contact/en/a/all/ability/equal_status/education": dict(
        languages=["en"], axes=["ability"], scales=["all"], principles=["equal_status"], scenarios=["education"]),
    "contact/en/b/frequency/religion/sports": dict(
        languages=["en"], axes=["religion"], scales=["frequency"], template_set="b", scenarios=["sports"]),
    "contact/de/a/all/common_goals": dict(languages=["de"], scales=["all"], principles=["common_goals"]),
    "contact/is/a/all/virtual_contact": dict(languages=["is"], scales=["all"], principles=["virtual_contact"]),
    "contact/fr/a/certainty/religion": dict(languages=["fr"], axes=["religion"]),
    "contact/pt/a/certainty/race_ethnicity/education": dict(
        languages=["pt"], axes=["race_ethnicity"], scenarios=["education"]),
}


def _digest(ids: list[str]) -> dict[str, object]:
    return {"prompts": len(ids), "sha256_of_ids": hashlib.sha256("\n".join(ids).encode()).hexdigest()}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_contact_plan_ids_are_unchanged(key: str) -> None:
    prompts = build_prompts(ContactConfig(**CONFIGS[key]))  # type: ignore[arg-type]
    assert _digest([p.id for p in prompts]) == DIGESTS[key]


@pytest.mark.parametrize("language", ["en", "de"])
def test_samaritan_plan_ids_are_unchanged(language: str) -> None:
    prompts = samaritan_prompts(["race", "gender", "age"], language, n_scenarios=3)
    assert _digest([p.id for p in prompts]) == DIGESTS[f"samaritan/{language}/first3"]
