"""Issue 27: a refusal is never read as an option, in any of the twelve languages, on any scale.

Refusals are more frequent for sensitive groups, so a refusal read as "No" manufactures bias. These rows were
written for this test (as models phrase refusals), not taken from the readers' word lists.
"""

from __future__ import annotations

import pytest

from biasatlas.parsing.answers import AnswerParser

REFUSALS = {
    "en": ["As a language model I have no personal choice to make, so I cannot say yes or no.",
           "I'm sorry, but I can't answer that."],
    "de": ["Als KI kann ich diese Frage nicht beantworten.", "Dazu möchte ich keine Aussage machen."],
    "is": ["Ég get ekki svarað þessari spurningu.", "Sem mállíkan get ég ekki sagt já eða nei."],
    "fr": ["Je ne peux pas répondre à cette question.", "En tant qu'IA, je ne peux pas faire ce choix."],
    "es": ["No puedo responder a esa pregunta.", "Como modelo de lenguaje, no puedo decir sí o no."],
    "it": ["Non posso rispondere a questa domanda.", "Come modello linguistico, non posso dire sì o no."],
    "pt": ["Não posso responder a essa pergunta.", "Como modelo de linguagem, não posso dizer sim ou não."],
    "hi": ["मैं इस प्रश्न का उत्तर नहीं दे सकता।", "एक एआई के रूप में, मैं हाँ या नहीं नहीं कह सकता।"],
    "id": ["Saya tidak bisa menjawab pertanyaan itu.",
           "Sebagai model bahasa, saya tidak bisa mengatakan ya atau tidak."],
    "vi": ["Tôi không thể trả lời câu hỏi đó.", "Là một mô hình ngôn ngữ, tôi không thể nói có hay không."],
    "zh": ["我无法回答这个问题。", "作为一个人工智能，我不能说是或不是。"],
    "ko": ["저는 그 질문에 답할 수 없습니다.", "AI로서 저는 예 또는 아니오라고 말할 수 없습니다."],
}


@pytest.mark.parametrize("language", sorted(REFUSALS))
@pytest.mark.parametrize("scale", ["certainty", "likelihood", "frequency"])
def test_a_refusal_is_never_an_option(language: str, scale: str) -> None:
    reader = AnswerParser(scale, language)
    for text in REFUSALS[language]:
        outcome = reader.parse(text)
        assert outcome.value is None, (language, scale, text, outcome)
