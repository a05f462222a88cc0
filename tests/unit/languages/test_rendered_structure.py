"""Structural checks over every rendered contact prompt of every MMHB pack (every prompt, not a sample).

No unfilled slot, no slash alternatives, no doubled head noun, every group's rendered form one of the
pack's forms for that descriptor (after the pack's form fixes), one descriptor per wording in a slot,
and the forms that named another group (or insulted one) gone.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import cache

import pytest

from biasatlas.datafiles import data_root
from biasatlas.languages.forms import read_form_fixes
from biasatlas.probes.contact.data import descriptors_for
from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.records import Prompt

MMHB_PACKS = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
DOUBLED = re.compile(r"(?<!\w)(\w{3,})\s+\1(?!\w)", re.IGNORECASE)
DOUBLED_STEM = re.compile(r"(?<!\w)(\w{4,}?)s?\s+\1s?(?!\w)", re.IGNORECASE)
#: reduplication that is the word itself, not a doubled noun (vi "hoe hoe đỏ": reddish)
REDUPLICATION = {"vi": {"hoe hoe"}}
#: person nouns a form must not start with: after the slot's own noun they are a second head noun
#: (fr "étudiants personnes cis", id "teman kuliah orang Filipina")
HEAD_NOUNS = {"fr": ("personne", "personnes"), "es": ("persona", "personas"), "it": ("persona", "persone"),
              "pt": ("pessoa", "pessoas"), "id": ("orang",)}
#: forms that named another group, or insulted one, in MMHB (language, id, form)
WRONG_GROUP = [("es", "P_D039", "obesas"), ("es", "P_D038", "obesa"), ("ko", "F_D018", "멍청한"),
               ("hi", "F_D015", "विक्षिप्त"), ("id", "F_D394", "normal"), ("pt", "F_D216", "velas"),
               ("zh", "F_D334", "白人的"), ("es", "F_D313", "nativas de Alaska"),
               # core axes read in their role (2026-12-02): the opposite group, another group, a wrong sense
               ("es", "F_D013", "neurotípicas"), ("es", "F_D032", "minusválidas"), ("es", "P_D067", "binarias"),
               ("es", "F_D235", "con disconformidad de género"), ("es", "P_D081", "Indoamericanas"),
               ("es", "F_D288", "indias"), ("pt", "F_D238", "mulheres cisgêneros"),
               ("pt", "P_D081", "índio americanas"),
               ("pt", "P_D090", "das Ilhas do Pacífico"), ("pt", "P_D079", "mexicanas"), ("pt", "F_D376", "espíritas"),
               ("pt", "F_D010", "deficientes"), ("vi", "F_D244", "đàn ông"), ("vi", "P_D078", "đàn bà"),
               ("vi", "P_D069", "nữ giới"), ("vi", "F_D322", "người Tây Ban Nha"), ("zh", "F_D248", "男生"),
               ("zh", "F_D381", "一神教"), ("zh", "F_D376", "宗教的"), ("zh", "F_D358", "为例工会教派"),
               ("ko", "F_D023", "사시"), ("ko", "F_D245", "무성의"), ("ko", "F_D384", "성적 끌림이 없는"),
               ("ko", "F_D376", "정신적인"), ("fr", "F_D279", "américaines de Chine"),
               ("es", "F_D128", "muy bajo"), ("es", "F_D130", "muy bajo"), ("fr", "F_D397", "influentes"),
               ("vi", "F_D188", "công chức"), ("zh", "F_D229", "郊区"), ("zh", "P_D031", "欲火中烧的"),
               ("ko", "F_D230", "국가의"), ("es", "F_D163", "son hogar")]


@cache
def rendered(language: str) -> tuple[Prompt, ...]:
    return tuple(build_prompts(ContactConfig(languages=[language])))


@pytest.fixture(autouse=True, scope="module")
def _free_the_plans() -> Iterator[None]:
    """Drop the rendered plans after this module: kept for the rest of a worker's session, their millions of
    objects made every later garbage collection of that worker slow (the unit suite ran 4x slower)."""
    yield
    rendered.cache_clear()
    gc.collect()


def _form(prompt: Prompt) -> str:
    return str(prompt.meta["descriptor_form"])


@pytest.mark.slow
@pytest.mark.parametrize("language", MMHB_PACKS)
def test_every_prompt_is_whole(language: str) -> None:
    bad = defaultdict(list)
    allowed = REDUPLICATION.get(language, set())
    for prompt in rendered(language):
        text = prompt.text
        if "{" in text or "}" in text:
            bad["unfilled slot"].append(text)
        if "/" in _form(prompt):
            bad["slash alternatives"].append(_form(prompt))
        if _form(prompt).split(" ")[0].lower() in HEAD_NOUNS.get(language, ()):
            bad["a person noun heading the form"].append(_form(prompt))
        for pattern in (DOUBLED, DOUBLED_STEM):
            match = pattern.search(text)
            if match and match.group(0).lower() not in allowed:
                bad["doubled head noun"].append(f"{match.group(0)} ({prompt.meta['descriptor']})")
    assert not bad, {k: sorted(set(v))[:10] for k, v in bad.items()}


@pytest.mark.slow
@pytest.mark.parametrize("language", MMHB_PACKS)
def test_every_group_is_named_by_one_of_its_forms_and_no_two_groups_share_a_wording(language: str) -> None:
    forms = {d.key: {f.text for f in d.mmhb.forms} | {f.text for m in d.merged if m.mmhb for f in m.mmhb.forms}
             for d in descriptors_for(language) if d.mmhb is not None}
    wording: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for prompt in rendered(language):
        key = str(prompt.meta["descriptor"])
        assert _form(prompt) in forms[key], (key, _form(prompt))
        wording[(str(prompt.meta["axis"]), str(prompt.meta["template_id"]), _form(prompt))].add(key)
    shared = {k: v for k, v in wording.items() if len(v) > 1}
    assert not shared, list(shared.items())[:5]


@pytest.mark.parametrize(("language", "key", "form"), WRONG_GROUP)
def test_a_form_that_names_another_group_is_gone(language: str, key: str, form: str) -> None:
    descriptor = {d.key: d for d in descriptors_for(language)}.get(key)
    if descriptor is None:  # left out of the language
        assert key in read_form_fixes(data_root() / "languages" / language).omit
        return
    assert descriptor.mmhb is not None
    assert form not in {f.text for f in descriptor.mmhb.forms}


def test_every_form_fix_says_why_and_is_used() -> None:
    for language in MMHB_PACKS:
        fixes = read_form_fixes(data_root() / "languages" / language)
        keys = {d.key for d in descriptors_for(language)} | {m.key for d in descriptors_for(language)
                                                              for m in d.merged}
        assert set(fixes.forms) <= keys, (language, set(fixes.forms) - keys)
        assert all(fixes.reasons[k] for k in fixes.forms)
        assert not set(fixes.omit) & keys, language
