"""Multilingual reading of fixed-option answers (Yes/No, Likely/Unlikely, Mostly/Rarely...).

An answer is read as the affirmative option (the scale's first), the negative option, or None with a
reason: "refusal", "hedge", "both options" or "no answer". How (docs/readers.md has the details):

1. Reasoning blocks (``<think>...</think>``) are dropped, markdown, quotes and curly apostrophes
   normalised. An answer cut inside its reasoning is "no answer" (``extra["cut"]``).
2. Each sentence is split into clauses; the phrases of the scale's lexicon (``data/parsing/
   lexicon.yaml``: option words, intensified forms, idioms such as "of course", "auf keinen Fall",
   "alls ekki") are found, and a negation before ("not very likely", "ekki líklegt") or after
   ("likely not", "natürlich nicht", "auðvitað ekki") turns an option into the other one.
3. The answer is, first that applies: what follows the last "answer:"/"the answer is"/"Antwort:"/
   "svarið er" cue; the first sentence; a short last line; every sentence of the answer together. Both
   options at once are "both options" (or "refusal" where the model also refuses).
4. Otherwise a refusal, a hedge ("it depends", "vielleicht", "kannski"), a short bare negation
   ("Not really.", "Eher nicht.", "Ég held ekki.") read as the negative option, or "no answer".

English words are read in every language: a model may answer a German prompt in English.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biasatlas.parsing.lexicon import (
    AFFIRMATIVE,
    BOTH,
    HEDGE,
    NEGATIVE,
    OPPOSITE,
    TOKEN,
    Hit,
    Lexicon,
    lexicon,
)
from biasatlas.parsing.text import normalise, strip_reasoning
from biasatlas.records import Outcome

__all__ = ["AFFIRMATIVE", "NEGATIVE", "AnswerParser", "choose_by_probability"]

SENTENCE = re.compile(r"[^\n]*?(?:[.!?;]+(?=\s|$)|\n|$)")
SEGMENT = re.compile(r"[,:()\[\]]|\s-+\s|\s-+$|^-+\s")
# "Answer: No", "the answer is no", "Meine Antwort lautet: Nein", "Svarið er því: Já".
CUE = re.compile(
    r"\b(?:answer|antwort|svar|svarið|conclusion|fazit|niðurstaðan?)\b"
    r"(?:\s+(?:is|would\s+be|ist|lautet|wäre|er|væri)(?:\s+(?:því|therefore|thus|also|simply|clearly|hier))?"
    r"\s*:?|\s*:)",
)
BARE_NEGATION_WORDS = 5  # "I would not.", "Eher nicht.", "Nicht wirklich." - no longer
LAST_LINE_WORDS = 4  # a final line this short is the answer after reasoning


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


def read_sentence(sentence: str, lex: Lexicon) -> list[Reading]:
    """The options, hedges and both-option words of one sentence, negation applied."""
    readings: list[Reading] = []
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
            if negated and seg.clause_word(hit) in lex.concessive and any(r.meaning in OPPOSITE for r in readings):
                continue  # "Mostly, though not always": a qualifier, not a second answer
            readings.append(Reading(OPPOSITE[meaning] if negated else meaning, hit.text, negated))
        for j, token in enumerate(seg.tokens):
            if token in lex.dual_negators and j not in seg.used and j not in seg.covered:
                readings.append(Reading(NEGATIVE, token))  # "Kaum.", "Varla.", "hardly ever"
        raised = raised or raise_at is not None
    return readings


def _sentences(text: str) -> list[str]:
    """The sentences (and lines) of ``text`` that hold a word, each with its end mark."""
    return [s for s in (m.group(0).strip() for m in SENTENCE.finditer(text)) if TOKEN.search(s)]


def _options(readings: list[Reading]) -> set[str]:
    found = {r.meaning for r in readings if r.meaning in OPPOSITE}
    return {AFFIRMATIVE, NEGATIVE} if any(r.meaning == BOTH for r in readings) else found


@dataclass(frozen=True)
class AnswerParser:
    """Reads answers for one scale in one language (English words are always accepted)."""

    scale: str
    language: str

    def __post_init__(self) -> None:
        lexicon(self.scale, self.language)  # fails early on an unknown scale

    def parse(self, text: str | None) -> Outcome:
        """Return Outcome(value="affirmative"|"negative") or Outcome(None, reason)."""
        if text is None or not text.strip():
            return Outcome(reason="no answer")
        lex = lexicon(self.scale, self.language)
        body, cut = strip_reasoning(text)
        norm = normalise(body).lower()
        sentences = _sentences(norm)
        by_sentence = [read_sentence(s, lex) for s in sentences]
        statements = [i for i, sentence in enumerate(sentences) if not sentence.endswith("?")]
        candidates: list[tuple[str, list[Reading]]] = []
        cues = list(CUE.finditer(norm))
        if cues:
            rest = _sentences(norm[cues[-1].end() :])
            candidates.append(("final answer", read_sentence(rest[0], lex) if rest else []))
        if statements:  # a question is the prompt echoed ("Likely or unlikely that I ...?"), not the answer
            candidates.append(("first sentence", by_sentence[statements[0]]))
        if len(sentences) > 1 and len(TOKEN.findall(sentences[-1])) <= LAST_LINE_WORDS:
            candidates.append(("last line", by_sentence[-1]))
        candidates.append(("whole answer", [r for i in statements for r in by_sentence[i]]))
        candidates.append(("whole answer", [r for rs in by_sentence for r in rs]))
        both = False
        for rule, readings in candidates:
            options = _options(readings)
            if len(options) == 1:
                value = options.pop()
                first = next(r for r in readings if r.meaning == value)
                extra = {"matched": first.matched, "rule": rule} | ({"negated": True} if first.negated else {})
                return Outcome(value=value, extra=extra)
            both = both or len(options) == 2
        refused = lex.is_refusal(norm)
        if refused or both:
            return Outcome(reason="refusal" if refused else "both options")
        if any(r.meaning == HEDGE for rs in by_sentence for r in rs):
            return Outcome(reason="hedge")
        if statements and self._bare_negation(sentences[statements[0]], lex):
            return Outcome(value=NEGATIVE, extra={"matched": sentences[statements[0]], "rule": "bare negation"})
        return Outcome(reason="no answer", extra={"cut": "reasoning"} if cut else {})

    @staticmethod
    def _bare_negation(sentence: str, lex: Lexicon) -> bool:
        """A short first sentence that only negates: "Not really.", "I would not.", "Eiginlega ekki."."""
        tokens = TOKEN.findall(sentence)
        return len(tokens) <= BARE_NEGATION_WORDS and any(lex.is_negator(t) for t in tokens)


def choose_by_probability(option_probs: dict[str, float] | None, options: tuple[str, ...]) -> Outcome:
    """Choice mode: the affirmative option (options[0]) wins when it is the more probable one."""
    if not option_probs or len(options) < 2:
        return Outcome(reason="no answer")
    p_yes = option_probs.get(options[0], 0.0)
    p_no = option_probs.get(options[1], 0.0)
    if p_yes == p_no:
        return Outcome(reason="both options", extra={"p_affirmative": p_yes})
    value = AFFIRMATIVE if p_yes > p_no else NEGATIVE
    return Outcome(value=value, extra={"p_affirmative": p_yes / (p_yes + p_no) if p_yes + p_no else 0.5})
