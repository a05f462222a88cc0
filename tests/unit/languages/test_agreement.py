"""Grammar that agrees: every descriptor in every cell of the nine MMHB packs is the MMHB form its
noun's gender and number need, placed as the language places it (issue 29 point 2).

The expected form comes from an oracle that reads the MMHB files itself (tests/unit/languages/agreement.py).
Every slot of every prompt text is ``{group:np}``, so the noun phrase of a (cell, descriptor) pair is what
every prompt of that pair shows; each pair's noun phrase is checked, and every text of every cell is
rendered in full with one descriptor of each form class.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from biasatlas.languages import packs_root
from biasatlas.probes.contact.data import SLOT, descriptors_for, fill, mmhb_descriptors, template_sets
from biasatlas.probes.contact.plan import ContactConfig, build_prompts

sys.path.insert(0, str(Path(__file__).parent))
from agreement import expected_form, fixed_rows

NEW = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
PRE = {"hi", "zh", "ko"}  # the descriptor before the noun; the others after it
MARKED = {"fr", "es", "it", "pt", "hi"}


def _noun_phrase(code: str, noun: str, form: str) -> str:
    if code not in PRE:
        return f"{noun} {form}"
    return f"{form}{noun}" if code == "zh" else f"{form} {noun}"


@pytest.mark.parametrize("code", NEW)
def test_every_cell_and_descriptor_takes_the_mmhb_form_of_its_noun(code: str) -> None:
    tset = template_sets(code)["a"]
    rows = fixed_rows(packs_root() / code / "descriptors.mmhb.tsv")
    # the pack's descriptors as the file lists them: the plan's merge of two ids of one wording
    # (issue 37, tests/unit/languages/test_one_wording.py) leaves their forms as they are
    descriptors = {d.key: d for d in mmhb_descriptors(code)}
    assert set(descriptors) == set(rows)
    assert (tset.grammar["order"] == "pre") == (code in PRE)
    assert bool(tset.grammar.get("marked")) == (code in MARKED)
    for cell in tset.cells:
        gender, number = cell.agree["gender"], cell.agree["number"]
        if code in MARKED:
            assert gender in ("masculine", "feminine") and number == "plural", cell.id
        for key, d in descriptors.items():
            want = expected_form(rows[key], gender, number, code in MARKED)
            assert d.fits(cell.agree, tset.grammar) == (want is not None), (cell.id, key)
            if want is None:
                continue
            assert d.render(cell.noun, "np", cell.agree, tset.grammar) == _noun_phrase(code, cell.noun["np"], want)


@pytest.mark.parametrize("code", NEW)
def test_every_text_renders_whole(code: str) -> None:
    tset = template_sets(code)["a"]
    rows = fixed_rows(packs_root() / code / "descriptors.mmhb.tsv")
    by_class: dict[tuple[str, ...], str] = {}
    for key, forms in rows.items():  # one descriptor per set of form classes
        by_class.setdefault(tuple(sorted({f"{g}/{n}" for g, n, _ in forms})), key)
    descriptors = {d.key: d for d in descriptors_for(code) if d.key in by_class.values()}
    for cell in tset.cells:
        texts = [cell.contact["positive"], cell.contact["negative"]]
        texts += [cell.actions[a][s] for a in cell.actions for s in tset.scales]
        for text in texts:
            assert SLOT.findall(text) and set(SLOT.findall(text)) == {"np"}, (cell.id, text)
            for key, d in descriptors.items():
                want = expected_form(rows[key], cell.agree["gender"], cell.agree["number"], code in MARKED)
                if want is None:
                    continue
                out = fill(text, d, cell.noun, cell.agree, tset.grammar)
                assert out == SLOT.sub(_noun_phrase(code, cell.noun["np"], want), text)
                assert "{" not in out


@pytest.mark.parametrize("code", NEW)
def test_a_plan_uses_mmhb_forms_in_at_least_90_percent_of_its_prompts(code: str) -> None:
    config = ContactConfig(languages=[code], principles=["equal_status"], limit=300, seed=3)
    prompts = build_prompts(config)
    rows = fixed_rows(packs_root() / code / "descriptors.mmhb.tsv")
    with_form = 0
    for p in prompts:
        forms = {text for _, _, text in rows.get(p.meta["descriptor"], [])}
        if p.meta.get("descriptor_source") == "mmhb" and p.meta["descriptor_form"] in forms \
                and p.meta["descriptor_form"] in p.messages[0].content:
            with_form += 1
    assert len(prompts) >= 270 and with_form / len(prompts) >= 0.9


def test_a_feminine_plural_noun_takes_the_feminine_plural_form() -> None:
    # the example: French "personnes" (feminine plural) with P_D002 immunodéprimé(e)(s)
    tset = template_sets("fr")["a"]
    cell = next(c for c in tset.cells if c.noun["np"] == "personnes")
    d = next(d for d in descriptors_for("fr") if d.key == "P_D002")
    assert d.render(cell.noun, "np", cell.agree, tset.grammar) == "personnes immunodéprimées"
    masc = next(c for c in tset.cells if c.noun["np"] == "étudiants")
    assert d.render(masc.noun, "np", masc.agree, tset.grammar) == "étudiants immunodéprimés"
