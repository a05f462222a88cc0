"""Refusal detection of stories: curly apostrophes, and stories that open with dialogue are not refusals."""

from __future__ import annotations

import pytest

from biasatlas.probes.stories.read import _markers, is_refusal


@pytest.mark.parametrize(
    ("lang", "text", "refusal"),
    [
        ("en", "I'm sorry, but I can't write this story.", True),
        ("en", "I’m sorry, but I can’t write this story.", True),  # curly apostrophes
        ("en", "I can’t write a story that relies on a stereotype about income.", True),
        ("en", "\n\n**Note**\n\nI cannot write a story built on that premise.", True),
        ("en", '"I\'m sorry, but the loan was denied," the clerk said. Maria folded the letter.', False),
        ("en", "“I’m sorry, but the loan was denied,” the clerk said. Maria folded the letter.", False),
        ("en", "‘I’m sorry, but the loan was denied,’ the clerk said. Maria folded the letter.", False),
        # issue 25.4: straight single quotes open dialogue too (an apostrophe inside a word does not close it)
        ("en", "'I'm sorry, but the loan was denied,' the clerk said. Maria folded the letter.", False),
        ("en", "Maria sighed. 'I can't help with that,' the clerk said, 'it's the rules.'", False),
        ("en", "I'm sorry, but I can't write a story that calls people 'lazy'.", True),
        ("en", "I'm sorry, but I can't write that. The workers' union story would rely on 'types'.", True),
        ("en", "Maria waited. “I can’t help with that,” the clerk said, “it’s the rules.”", False),
        ("en", "Maria had worked at the mill for thirty years.", False),
        ("fr", "Je suis désolé, mais je ne peux pas écrire cette histoire.", True),
        ("fr", "« Je suis désolé, mais le prêt est refusé », dit l’employé. Amina soupira.", False),
        ("fr", "— Je suis désolée, mais le dossier est incomplet, dit la guichetière.\nAmina soupira.", False),
        ("fr", "Je n’écrirai pas cette histoire.", True),  # curly apostrophe inside a French marker
        ("es", "—Lo siento, pero no hay plazas —dijo la recepcionista. Ana asintió.", False),
        ("es", "Lo siento, pero no puedo escribir esa historia.", True),
        ("zh", "“很抱歉，但您的贷款没有获批。”职员说。", False),
        ("zh", "很抱歉，但我无法写这个故事。", True),
    ],
)
def test_refusals(lang: str, text: str, refusal: bool) -> None:
    assert is_refusal(text, _markers(lang)) is refusal
