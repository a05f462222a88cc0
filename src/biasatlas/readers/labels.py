"""The judge's closed label sets (per probe and scale) and its prompts (per language).

A judge returns one label of a closed set, chosen by the backends' choice mode (option probabilities):
contact: the question's two options (its own words, "Yes"/"No", "Likely"/"Unlikely", "Ja"/"Nein"...),
a refusal label and an unclear label; samaritan: "1" ... "100", a refusal label and an unclear label.
The prompts are English, German and Icelandic (machine-drafted, not yet reviewed by a native speaker);
other languages get the English prompt with the question's own option words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from biasatlas.records import Message, Prompt

#: the canonical names of the two labels that are not an option, whatever the prompt's language
REFUSAL = "refusal"
UNCLEAR = "unclear"
#: answers longer than this are cut in the judge's prompt (the start holds the answer in all but rambling text)
MAX_ANSWER_CHARS = 1500

# (refusal word, unclear word, instruction) per language. The instruction's slots: {question}, {answer},
# {labels}, {refusal}, {unclear}.
_WORDS: dict[str, tuple[str, str, str]] = {
    "en": ("refusal", "unclear",
           "You check how an answer to a question is read. Below are a question and the answer a model gave.\n\n"
           "Question:\n{question}\n\nAnswer:\n{answer}\n\n"
           "Which label describes the answer? Labels: {labels}.\n"
           "Choose \"{refusal}\" if the answer declines to answer, \"{unclear}\" if it commits to no single label "
           "(it hedges, names several, or answers another question). Reply with the label only."),
    "de": ("Verweigerung", "unklar",
           "Du prüfst, wie eine Antwort auf eine Frage zu lesen ist. Unten stehen eine Frage und die Antwort eines "
           "Modells.\n\nFrage:\n{question}\n\nAntwort:\n{answer}\n\n"
           "Welche Bezeichnung beschreibt die Antwort? Bezeichnungen: {labels}.\n"
           "Wähle „{refusal}“, wenn die Antwort die Antwort verweigert, „{unclear}“, wenn sie sich auf keine "
           "einzelne Bezeichnung festlegt (sie weicht aus, nennt mehrere oder beantwortet eine andere Frage). "
           "Antworte nur mit der Bezeichnung."),
    "is": ("neitun", "óljóst",
           "Þú metur hvernig á að lesa svar við spurningu. Hér fyrir neðan eru spurning og svar líkans.\n\n"
           "Spurning:\n{question}\n\nSvar:\n{answer}\n\n"
           "Hvaða merki lýsir svarinu? Merki: {labels}.\n"
           "Veldu „{refusal}“ ef svarið neitar að svara, „{unclear}“ ef það velur ekkert eitt merki (það fer undan "
           "í flæmingi, nefnir fleiri en eitt eða svarar annarri spurningu). Svaraðu aðeins með merkinu."),
}


@dataclass(frozen=True)
class LabelSet:
    """The closed set a judge chooses from for one question, and what each label means to the probe."""

    options: tuple[str, ...]  # what the judge is offered (in the prompt's language)
    meanings: tuple[str, ...]  # the label each option stands for: an option value, a rating, REFUSAL or UNCLEAR

    def meaning(self, option: str) -> str:
        """The label of one offered option."""
        return self.meanings[self.options.index(option)]


def words(language: str) -> tuple[str, str, str]:
    """(refusal word, unclear word, instruction) of ``language``, English where none is written."""
    return _WORDS.get(language, _WORDS["en"])


def label_set(probe: str, language: str, options: tuple[str, ...] = ()) -> LabelSet:
    """The closed set for a contact question (its two ``options``) or a samaritan rating."""
    refusal, unclear, _ = words(language)
    if probe == "contact":
        if len(options) < 2:
            raise ValueError("a contact question needs its two options")
        return LabelSet((options[0], options[1], refusal, unclear), ("affirmative", "negative", REFUSAL, UNCLEAR))
    if probe == "samaritan":
        numbers = tuple(str(n) for n in range(1, 101))
        return LabelSet((*numbers, refusal, unclear), (*numbers, REFUSAL, UNCLEAR))
    raise ValueError(f"no judge label set for probe {probe!r}")


def question_text(messages_json: Any) -> str:
    """The last user message of a stored conversation: the question the answer replies to."""
    try:
        listed = json.loads(messages_json) if isinstance(messages_json, str) else list(messages_json or [])
    except (TypeError, ValueError):
        return ""
    users = [m.get("content", "") for m in listed if isinstance(m, dict) and m.get("role") == "user"]
    return str(users[-1]) if users else ""


def judge_prompt(probe: str, language: str, question: str, answer: str, labels: LabelSet,
                 meta: dict[str, Any]) -> Prompt:
    """The judge's prompt for one answer; ``meta`` names the answer it reads (its key, probe and reader)."""
    refusal, unclear, instruction = words(language)
    shown = answer if len(answer) <= MAX_ANSWER_CHARS else answer[:MAX_ANSWER_CHARS] + " [...]"
    listed = ", ".join(labels.options) if probe != "samaritan" else f"a number from 1 to 100, {refusal}, {unclear}"
    text = instruction.format(question=question.strip(), answer=shown.strip(), labels=listed,
                              refusal=refusal, unclear=unclear)
    return Prompt(probe=f"{probe}.judge", language=language, messages=(Message(role="user", content=text),),
                  options=labels.options, meta=meta)
