"""One sentence of a yes/no-style answer read: its phrases, negation applied, and what kind of sentence it is.

``read_sentence`` finds the scale's phrases in each clause and turns an option over where a negation
governs it; ``Sentence`` adds what the answer-level rules need: whether the sentence is a question, a
bare answer ("No.", "It depends."), or a statement about other people ("Muslim colleagues are often
excluded at work.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biasatlas.parsing.lexicon import AFFIRMATIVE, BOTH, HEDGE, NEGATIVE, OPPOSITE, TOKEN, Hit, Lexicon

SEGMENT = re.compile(r"[,:()\[\]]|\s-+\s|\s-+$|^-+\s")
# "Selten - ich esse meistens allein.", "Rarely, I usually eat alone.": the answer, then its explanation.
LEAD = re.compile(r"\s-+\s|,\s")
OFF_QUESTION_WORDS = 5  # a statement this long without "I"/"you" is about somebody else


@dataclass(frozen=True)
class Reading:
    """One phrase read in the answer, with its meaning after negation."""

    meaning: str
    matched: str
    negated: bool = False


def _clause_ids(tokens: list[str], covered: set[int], lex: Lexicon) -> list[int]:
    ids, current = [], 0
    for i, token in enumerate(tokens):
        if i not in covered and i > 0 and token in lex.clause_words:
            current += 1
        ids.append(current)
    return ids


class _Segment:
    """One clause-separated piece of a sentence, its tokens and phrase hits."""

    def __init__(self, text: str, lex: Lexicon) -> None:
        self.lex = lex
        self.tokens = TOKEN.findall(text)
        self.hits = lex.match(self.tokens)
        self.covered = {i for h in self.hits for i in range(h.start, h.end)}
        self.clause = _clause_ids(self.tokens, self.covered, lex)
        self.used: set[int] = set()

    def in_clause(self, i: int, j: int) -> bool:
        return 0 <= j < len(self.tokens) and self.clause[i] == self.clause[j]

    def at_edge(self, hit: Hit) -> bool:
        """Nothing but fillers or other phrases before it in its clause, or nothing but negation after."""
        before = [j for j in range(hit.start) if self.in_clause(hit.start, j)]
        after = [j for j in range(hit.end, len(self.tokens)) if self.in_clause(hit.start, j)]
        return all(j in self.covered or self.tokens[j] in self.lex.fillers for j in before) or all(
            self.lex.is_negator(self.tokens[j]) or self.tokens[j] in self.lex.fillers for j in after
        )

    def clause_word(self, hit: Hit) -> str:
        """The first word of the phrase's clause."""
        return self.tokens[self.clause.index(self.clause[hit.start])]

    def intensifies(self, hit: Hit) -> bool:
        """An adverb right before an option word intensifies it: "definitely no", "eindeutig nein"."""
        return any(h.start == hit.end and h.phrase.meaning != HEDGE for h in self.hits)

    def negator_before(self, hit: Hit) -> int | None:
        """A negator up to two words before the phrase ("not very likely", "ekki mjög líklegt")."""
        for j in range(hit.start - 1, hit.start - 4, -1):
            if not self.in_clause(hit.start, j) or j in self.covered:
                return None
            if self.lex.is_negator(self.tokens[j]):
                return j
        return None

    def negator_after(self, hit: Hit) -> int | None:
        """A negator right after the phrase that ends its clause ("likely not", "auðvitað ekki")."""
        for j in (hit.end, hit.end + 1):
            if not self.in_clause(hit.start, j) or j in self.covered:
                return None
            rest = sum(1 for k in range(j + 1, len(self.tokens)) if self.in_clause(hit.start, k))
            if self.lex.is_negator(self.tokens[j]) and rest <= 2:
                return j
        return None

    def raising_negation(self) -> int | None:
        """Where "I don't think" / "ich glaube nicht" / "ég held ekki" negates the rest of the sentence."""
        for i, token in enumerate(self.tokens[:-1]):
            after = self.tokens[i + 1]
            if (self.lex.is_negator(token) and after in self.lex.neg_raising) or (
                token in self.lex.neg_raising and self.lex.is_negator(after)
            ):
                return i + 1
        return None


def _idioms(sentence: str, lex: Lexicon) -> tuple[str, list[Reading]]:
    """Sentence-level idioms ("I see no reason not to") read whole and blanked out of the sentence."""
    readings = []
    for pattern, meaning in lex.patterns:
        for m in pattern.finditer(sentence):
            readings.append(Reading(meaning, m.group(0)))
            sentence = sentence[: m.start()] + " " * (m.end() - m.start()) + sentence[m.end() :]
    return sentence, readings


def _self(text: str, lex: Lexicon) -> bool:
    return any(t in lex.self_words for t in TOKEN.findall(text))


def pure(text: str, lex: Lexicon) -> bool:
    """Every word of ``text`` is part of a phrase or a filler: "Yes.", "Well, mostly", "Nei, nei"."""
    seg = _Segment(text, lex)
    return bool(seg.hits) and all(i in seg.covered or t in lex.fillers for i, t in enumerate(seg.tokens))


def read_sentence(sentence: str, lex: Lexicon) -> list[Reading]:
    """The options, hedges and both-option words of one sentence, negation applied."""
    sentence, readings = _idioms(sentence, lex)
    lead = LEAD.split(sentence, maxsplit=1)
    # after a comma only an explanation about the respondent ("Rarely, I usually eat alone."), not a
    # second answer ("Somewhat likely, somewhat unlikely")
    explains = len(lead) == 2 and (" -" in sentence[len(lead[0]) : len(lead[0]) + 3] or _self(lead[1], lex))
    if explains and pure(lead[0], lex):
        first = read_sentence(lead[0], lex)
        if len({r.meaning for r in first}) == 1 and first[0].meaning in OPPOSITE:
            return readings + first  # the explanation after the dash is not a second answer
    raised = False
    for piece in SEGMENT.split(sentence):
        seg = _Segment(piece, lex)
        raise_at = seg.raising_negation()
        for hit in seg.hits:
            meaning = hit.phrase.meaning
            if meaning in (HEDGE, BOTH):
                readings.append(Reading(meaning, hit.text))
                continue
            if hit.phrase.edge_only and (not seg.at_edge(hit) or seg.intensifies(hit)):
                continue
            before, after = seg.negator_before(hit), seg.negator_after(hit)
            seg.used.update(j for j in (before, after) if j is not None)
            negated_before = before is not None or raised or (raise_at is not None and hit.start > raise_at)
            negated = negated_before != (after is not None)
            if seg.clause_word(hit) in lex.concessive and any(r.meaning in OPPOSITE for r in readings):
                continue  # "Mostly, though not always", "Yes, although some might say no": a qualifier
            readings.append(Reading(OPPOSITE[meaning] if negated else meaning, hit.text, negated))
        for j, token in enumerate(seg.tokens):
            if token in lex.dual_negators and j not in seg.used and j not in seg.covered:
                readings.append(Reading(NEGATIVE, token))  # "Kaum.", "Varla.", "hardly ever"
        raised = raised or raise_at is not None
    return readings


@dataclass(frozen=True)
class Sentence:
    """A sentence of the answer, read, with the facts the answer-level rules use."""

    text: str
    readings: tuple[Reading, ...]
    question: bool
    unit: bool  # a bare answer: "No.", "It depends.", "Mostly, yes."
    off: bool  # a statement about others holding an option: answers another question
    answer_like: bool  # about others, with a negation or another scale's option word but no option

    @property
    def options(self) -> set[str]:
        found = {r.meaning for r in self.readings if r.meaning in OPPOSITE}
        return {AFFIRMATIVE, NEGATIVE} if any(r.meaning == BOTH for r in self.readings) else found


def _at_edge(seg: _Segment, lex: Lexicon) -> bool:
    """An option phrase opens or closes the sentence ("Mostly not, to be honest.", "... wohl eher selten.")."""
    options = [h for h in seg.hits if h.phrase.meaning in OPPOSITE]
    if seg.tokens and seg.tokens[0] in lex.dual_negators:  # "Kaum jemals, um ehrlich zu sein."
        return True
    if not options:
        return False
    skip = lex.fillers | {"so", "also", "því", "svo"}
    opens = all(
        i in seg.covered or seg.tokens[i] in skip or lex.is_negator(seg.tokens[i]) for i in range(options[0].start)
    )
    closes = all(
        i in seg.covered or seg.tokens[i] in lex.fillers or lex.is_negator(seg.tokens[i])
        for i in range(options[-1].end, len(seg.tokens))
    )
    return opens or closes


def _about_the_action(seg: _Segment, lex: Lexicon) -> bool:
    """"That would rarely happen.", "Das kommt eher selten vor.": the action asked about, not other people."""
    options = [h for h in seg.hits if h.phrase.meaning in OPPOSITE]
    if not options or not seg.tokens or seg.tokens[0] not in lex.impersonal:
        return False
    return not any(t in lex.complementizers for t in seg.tokens[options[0].end :])


def make_sentence(text: str, lex: Lexicon) -> Sentence:
    """Read ``text`` (one sentence, lower case) and classify it."""
    readings = read_sentence(text, lex)
    question = text.rstrip().endswith("?")
    if question:  # the prompt echoed ("Likely? I doubt it."): only a rhetorical answer counts ("Why not?")
        readings = [r for r in readings if tuple(TOKEN.findall(r.matched)) in lex.rhetorical]
    tokens = TOKEN.findall(text)
    seg = _Segment(text, lex)
    loose = [t for i, t in enumerate(tokens) if i not in seg.covered and t not in lex.fillers]
    unit = not question and bool(readings) and len(tokens) <= 5 and len(loose) <= 2
    has_option = any(r.meaning in OPPOSITE for r in readings)
    about_others = (
        lex.knows_self and len(tokens) >= OFF_QUESTION_WORDS and not any(t in lex.self_words for t in tokens)
    )
    answered = any(pure(piece, lex) for piece in SEGMENT.split(text)) or _at_edge(seg, lex)  # "..., so yes."
    answered = answered or _about_the_action(seg, lex)
    off = not question and has_option and about_others and not answered
    # "Many people do not invite them.", "Jewish families are often treated with suspicion." (to a yes/no
    # question): the words of an answer, about somebody else
    answer_like = not question and about_others and any(lex.is_negator(t) or t in lex.answer_words for t in tokens)
    return Sentence(text, tuple(readings), question, unit, off, answer_like)
