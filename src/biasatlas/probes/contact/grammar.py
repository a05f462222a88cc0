"""Word-level checks for imported contact datasets: answer words, the scale, and descriptors in case slots.

Published sheets put a ``[descriptor]`` placeholder into a sentence; the descriptor list is one form per
group. Where the slot needs another grammatical form than the descriptor has, the prompt is wrong in a
way a reader sees at once ("mit Studierenden Muslime" for "Muslimen"; Icelandic "nemum sem frá Póllandi",
a relative clause without its verb, for "sem eru frá Póllandi"). We do not rewrite the dataset's text;
we warn, naming the descriptor, the slot and the form it most likely needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PLACEHOLDER = "[descriptor]"

#: option-word pairs that make a question a likelihood or a frequency question (both words must appear)
SCALE_WORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "likelihood": (("likely", "unlikely"), ("wahrscheinlich", "unwahrscheinlich"), ("líklegt", "ólíklegt")),
    "frequency": (("mostly", "rarely"), ("meistens", "selten"), ("oftast", "sjaldan")),
}

# German prepositions that govern the dative (two-way prepositions left out: their case depends on the verb)
GERMAN_DATIVE = frozenset({"mit", "bei", "von", "vom", "zu", "zum", "zur", "aus", "nach", "seit", "gegenüber",
                           "außer", "samt", "nebst"})
GERMAN_OTHER_CASE = frozenset({"für", "gegen", "ohne", "um", "durch", "wegen", "trotz", "während"})
GERMAN_PHRASE_START = GERMAN_DATIVE | GERMAN_OTHER_CASE | {"die", "der", "den", "dem", "des", "das"}
# Icelandic verbs a "sem ..." descriptor may start with (a relative clause needs its verb)
ICELANDIC_VERBS = frozenset({"eru", "er", "voru", "var", "séu", "sé", "aðhyllast", "aðhyllist", "koma", "kemur",
                             "komu", "búa", "býr", "bjuggu", "tilheyra", "tilheyrir", "hafa", "hefur", "játa",
                             "játar", "iðka", "iðkar", "eiga", "á", "tala", "talar", "trúa", "trúir", "fylgja",
                             "fylgir", "starfa", "starfar"})


class ContactImportWarning(UserWarning):
    """An imported prompt is probably ungrammatical (a descriptor in a slot needing another form)."""


def has_word(text: str, word: str) -> bool:
    """``word`` occurs in ``text`` as a whole word (case-insensitive; "nei" is not in "neikvæða")."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE) is not None


def names_options(text: str, options: Iterable[str]) -> bool:
    """True when ``text`` already names every answer option as a whole word (its own answer instruction)."""
    return all(has_word(text, option) for option in options)


def infer_scale(text: str) -> str:
    """certainty / likelihood / frequency: a scale's two option words must both appear as whole words.

    One of them alone is ordinary vocabulary ("Ich treffe selten ..."), not an answer instruction.
    """
    for scale, pairs in SCALE_WORDS.items():
        if any(has_word(text, a) and has_word(text, b) for a, b in pairs):
            return scale
    return "certainty"


def _words_before(text: str, start: int, count: int = 3) -> list[str]:
    """Up to ``count`` words before position ``start`` in the same clause, nearest first."""
    clause = re.split(r"[.,;:!?]", text[:start])[-1]
    return re.findall(r"\w+(?:-\w+)*", clause)[::-1][:count]


def slot_problem(template: str, descriptor: str, language: str) -> str | None:
    """What is wrong with ``descriptor`` in a slot of the template, with the likely form; None when it fits."""
    for match in re.finditer(re.escape(PLACEHOLDER), template):
        problem = _problem_at(_words_before(template, match.start()), descriptor, language)
        if problem:
            return problem
    return None


def _problem_at(before: list[str], descriptor: str, language: str) -> str | None:
    words = descriptor.split()
    lower = [w.lower() for w in before]
    if not words:
        return None
    if language == "de":
        case = next((w for w in lower if w in GERMAN_DATIVE | GERMAN_OTHER_CASE), None)
        if case not in GERMAN_DATIVE or words[0].lower() in GERMAN_PHRASE_START:
            return None
        head: list[str] = []
        for word in words:  # the noun phrase up to a following phrase ("Zeugen Jehovas", "Christen aus ...")
            if word.lower() in GERMAN_PHRASE_START:
                break
            head.append(word)
        wrong = [w for w in head if w.lower().endswith("e")]
        if not wrong:
            return None
        fixed = " ".join(w + "n" if w in wrong else w for w in words)
        context = " ".join(reversed(before[: lower.index(case) + 1]))
        return (f"'{context} {descriptor}': '{before[lower.index(case)]}' takes the dative, and a German dative "
                f"plural ends in -n ('{fixed}')")
    if language == "is" and lower and lower[0] == "sem" and words[0].lower() not in ICELANDIC_VERBS:
        context = " ".join(reversed(before[:2]))
        return f"'{context} {descriptor}' has no verb: a relative clause needs one (e.g. 'sem eru {descriptor}')"
    return None


def slot_warnings(rows: Iterable[tuple[int, str]], descriptors: Iterable[str], language: str) -> list[str]:
    """One line per descriptor whose form does not fit its slots: the first problem, and the rows it affects."""
    rows = list(rows)
    lines = []
    for descriptor in descriptors:
        found = [(line, problem) for line, text in rows if (problem := slot_problem(text, descriptor, language))]
        if found:
            lines_at = ", ".join(str(line) for line, _ in found[:5]) + (" ..." if len(found) > 5 else "")
            lines.append(f"descriptor '{descriptor}' in {len(found)} row(s) ({lines_at}): {found[0][1]}")
    return lines
