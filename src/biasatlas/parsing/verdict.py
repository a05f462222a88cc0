"""The precision rule of the yes/no-style reader: commit to an option only where the answer decides it.

The word rules of ``answers.py`` find the option an answer most likely means; this module decides whether
that reading is safe to keep (docs/readers.md, "Precision first"). A reading is kept

- with confidence "high" when it is an explicit verdict: a short answer ("No.", "**Unlikely**", "Yes,
  because ...") whose explanation neither hedges, refuses nor names the other option, or a labelled final
  verdict ("Final answer: Yes", "So: **Yes**", "所以最终答案是：可能", a short last line) that no later
  sentence contradicts;
- with confidence "medium" for any other reading, unless the answer hedges, refuses, names both options
  in its statements, or stops mid-sentence (reasoning cut before its verdict).

An answer that stopped at the token limit (``cut=True``) is read only from a verdict complete before the
cut: an option word that is the answer's last word could have gone on ("likely ... to fail"), and without
an explicit verdict the reasoning was cut before it; both are ``Outcome(None, "cut")``.
"""

from __future__ import annotations

import itertools
import re

from biasatlas.parsing.lexicon import AFFIRMATIVE, NEGATIVE, OPPOSITE, TOKEN, Lexicon
from biasatlas.parsing.sentences import SEGMENT, make_sentence, pure, read_sentence
from biasatlas.records import Outcome

HIGH, MEDIUM = "high", "medium"
# Rules of answers.py whose reading is an explicit verdict.
EXPLICIT = frozenset({"final answer", "self-correction", "last line"})
SHORT_WORDS = 4  # an answer this short is a short answer as a whole ("Yes, I would.")
# the end of a finished answer: a sentence mark, a closing bracket or quote, an emoji or symbol
FINISHED = re.compile(r"[.!?;:)\]»\"'…。！？」』*_`~\u2000-\u2bff\U0001f000-\U0001faff]\s*$")
# the first clause of the answer: up to a sentence end, a comma, a colon, a dash or a line break
SENTENCE_END = re.compile(r"(?<=[.!?;\n])\s+|\s-+\s")
HEAD = re.compile(r"^[^\n.!?;,:()\[\]]*?(?=[.!?;,:()\[\]\n]|\s-+\s|$)")


def _cut(outcome: Outcome | None = None) -> Outcome:
    extra = dict(outcome.extra) if outcome is not None else {}
    return Outcome(reason="cut", extra=extra | {"cut": "verdict"})


def _statements(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if TOKEN.search(s)]


def _read(text: str, lex: Lexicon) -> set[str]:
    """The options the statements of ``text`` name (questions and statements about others aside)."""
    found: set[str] = set()
    for sentence in (make_sentence(s, lex) for s in re.split(r"(?<=[.!?;\n])\s+", text) if TOKEN.search(s)):
        if not sentence.question and not sentence.off:
            found |= sentence.options
    return found


def head(norm: str, lex: Lexicon) -> tuple[str | None, int]:
    """The option of the answer's first clause when that clause is nothing but an option ("No", "**Yes**",
    "Mostly not") and not a question ("Likely? I doubt it."), and where the clause ends; (None, 0) otherwise."""
    match = HEAD.match(norm)
    if match is None or not match.group(0).strip() or norm[match.end() : match.end() + 1] == "?":
        return None, 0
    if not pure(match.group(0), lex):
        return None, 0
    options = {r.meaning for r in read_sentence(match.group(0), lex)}
    if len(options) != 1 or not options <= set(OPPOSITE):
        return None, 0
    # "Okay, so the user asks ...", "Certo, a pergunta é ...", "好的，...": an assent idiom before a comma
    # opens reasoning; only the option word itself, or an idiom ending its sentence, is a short answer
    idiom = all(h.phrase.edge_only for h in lex.match(TOKEN.findall(match.group(0))))
    if idiom and norm[match.end() : match.end() + 1] == ",":
        return None, 0
    return options.pop(), match.end()


def _answers(statement: str, value: str, lex: Lexicon) -> bool:
    """``statement`` answers ``value`` by itself: nothing but the option ("Ja."), or the option opening a
    condition ("no, if they're not")."""
    statement = _without_conjunctions(statement, lex)
    first, end = head(statement, lex)
    if first != value:
        return False
    following = TOKEN.findall(statement[end:])
    return not following or following[0] in lex.conditionals


def _without_conjunctions(statement: str, lex: Lexicon) -> str:
    """``statement`` without the "and", "but", "also" that open it ("Und nein." is "nein")."""
    while True:
        statement = statement.lstrip(" ,.…-")
        first = TOKEN.match(statement)
        if first is None or first.group(0) not in lex.conjunctions:
            return statement
        statement = statement[first.end() :]


def last_word_is_option(norm: str, lex: Lexicon) -> bool:
    """The answer ends on an option phrase with no mark after it: at a cut it could have gone on."""
    if FINISHED.search(norm):
        return False
    tail = TOKEN.findall(norm)[-lex.longest :]
    return any(h.end == len(tail) and h.phrase.meaning in OPPOSITE for h in lex.match(tail))


def undoing(rest: str, value: str, lex: Lexicon) -> str | None:
    """Why the text after a short answer takes it back: it cannot decide ("Ja, das ist eine schwierige
    Frage ..."), refuses, or answers the other option too ("Yes, if they're qualified; no, if they're not.",
    "Nein - Moment, ich habe die Frage falsch gelesen. Ja."); None where it only explains."""
    if lex.is_undecided(rest):
        return "hedge"
    if lex.is_refusal(rest):
        return "refusal"
    if any(_answers(s, OPPOSITE[value], lex) for s in _statements(rest)):
        return "both options"
    if value == NEGATIVE and _rhetorical(rest, lex):
        return "both options"
    return None


def conditional_both(norm: str, lex: Lexicon, value: str) -> bool:
    """The other option said under a condition: "Sì se sono competenti, no se non lo sono", "Yes for the
    project, but no if it means ..." ("Yes, if they're qualified." alone is a yes)."""
    spans = list(TOKEN.finditer(norm))
    tokens = [m.group(0) for m in spans]
    hits = lex.match(tokens)
    qualifiers = lex.concessive - lex.turns  # "mostly, though rarely if I'm busy" only qualifies

    def condition(at: int) -> bool:  # "si tienen": a condition; "Non... si, en fait": the option "si"
        return (at < len(tokens) and tokens[at] in lex.conditionals
                and norm[spans[at].end() : spans[at].end() + 1] not in (",", ".", "!", "?", ";", "…"))

    def otherwise(at: int) -> bool:  # "..., sonst nein", "否则否"
        return any(tuple(tokens[max(0, at - len(alt)) : at]) == alt for alt in lex.alternatives)

    def qualified(at: int) -> bool:
        return bool(set(tokens[max(0, at - 2) : at]) & qualifiers)

    conditioned = {h.phrase.meaning for h in hits if (condition(h.end) or otherwise(h.start)) and not qualified(h.start)
                   }
    return OPPOSITE[value] in conditioned


def joined_both(norm: str, lex: Lexicon) -> bool:
    """The two options joined by "and"/"also" ("是和否都有道理", "Có và không đều đúng", "经常，但也很少"), the
    second closing its clause or followed by "both" ("Yes and no one would blame you" is a yes)."""
    spans = list(TOKEN.finditer(norm))
    tokens = [m.group(0) for m in spans]
    hits = [h for h in lex.match(tokens) if h.phrase.meaning in OPPOSITE]
    for first, second in itertools.pairwise(hits):
        between = set(tokens[first.end : second.start])
        if first.phrase.meaning == second.phrase.meaning or not between & lex.coordinators:
            continue
        if not between <= lex.coordinators | lex.turns | lex.fillers:
            continue
        closes = second.end == len(tokens) or norm[spans[second.end - 1].end() :][:1] in (",", ".", "!", ";", "…")
        if closes or tokens[second.end] in lex.both_words:
            return True
    return False


def denied_doubt(norm: str, lex: Lexicon) -> bool:
    """"Nein, natürlich würde ich ...", "Non mais évidemment que ...", "No, claro que ...": a "no" that denies
    a doubt, followed at once by an un-negated assent ("Nein, natürlich nicht." agrees with itself)."""
    tokens = TOKEN.findall(norm)
    hits = lex.match(tokens[: 2 * lex.longest + 2])
    if len(hits) < 2 or hits[0].start != 0 or hits[0].phrase.meaning != NEGATIVE:
        return False
    between = tokens[hits[0].end : hits[1].start]
    if hits[1].phrase.meaning != AFFIRMATIVE or not all(t in lex.turns or t in lex.fillers for t in between):
        return False
    clause = SEGMENT.split(norm[norm.find(tokens[hits[1].start]) :], maxsplit=1)[0]
    return not any(lex.is_negator(t) for t in TOKEN.findall(clause))


def _rhetorical(text: str, lex: Lexicon) -> bool:
    """A negated question ("Why wouldn't I?", "Warum denn nicht?", "为什么不呢？"): the "no" before it is
    rhetorical ("No, of course I'd work with them! Why not?")."""
    questions = re.findall(r"[^.!?\n]*\?", text)
    return any(lex.is_negator(t) for q in questions for t in TOKEN.findall(q))


def _unfinished(norm: str, lex: Lexicon) -> bool:
    """Reasoning that stops mid-sentence: no end mark, and more than one clause."""
    clauses = [c for c in re.split(r"[.!?;,:\n]|\s-+\s", norm) if TOKEN.search(c)]
    return not FINISHED.search(norm) and len(clauses) > 1 and not last_word_is_option(norm, lex)


def decide(outcome: Outcome, norm: str, lex: Lexicon, *, cut: bool, after_verdict: str, labelled: bool = False,
           full: str = "") -> Outcome:
    """``outcome`` of the word rules, kept with its confidence or replaced by Outcome(None, reason).

    ``norm`` is the normalised, lower-case answer without its refusals (``full``: with them);
    ``after_verdict`` the text after the sentence of the labelled verdict the word rules read ("" where
    there is none); ``labelled``: that verdict follows a label with a colon or is short.
    """
    full = full or norm
    if outcome.value is None:
        return _cut(outcome) if cut and outcome.reason != "refusal" else outcome
    value = str(outcome.value)
    if cut and last_word_is_option(norm, lex):
        return _cut()
    rule = outcome.extra.get("rule")
    if conditional_both(norm, lex, value):
        return _none("both options")
    if value == NEGATIVE and denied_doubt(norm, lex):
        return _none("both options")
    if rule in EXPLICIT and not (rule == "last line" and _unfinished(norm, lex)):
        # at the cut only a finished verdict counts: labelled ("Final answer: No.") or short ("The answer is
        # no."), and closed before the cut; "The answer could be yes, considering that" is reasoning
        if cut and (rule == "last line" or (rule == "final answer" and not (labelled and after_verdict.strip()))):
            return _cut()
        if rule == "final answer" and (OPPOSITE[value] in _read(after_verdict, lex) or lex.is_undecided(after_verdict)):
            return _none("contradictory")  # "Final answer: Yes. Then again, no."
        if rule == "self-correction" and lex.is_undecided(full):  # "No... I mean, who's to say?"
            return _none("hedge")
        return _with(outcome, HIGH)
    if lex.is_undecided(full):  # "Mostly... I don't know, it's really hard to say."
        return _none("hedge")
    if joined_both(norm, lex):  # after the labelled verdicts: "Between likely and unlikely, I choose likely."
        return _none("both options")
    first, end = head(norm, lex)
    if cut and first == value and norm[end : end + 1] not in (".", "!", "\n"):
        return _cut()  # "Yes, if" at the cut: only a short answer closed by its sentence end is complete
    if first == value or (first is None and len(TOKEN.findall(norm)) <= SHORT_WORDS and not cut):
        why = undoing(norm[end:], value, lex) if first else None
        return _none(why) if why else _with(outcome, HIGH)
    if first is not None:  # the first clause names the other option: a changed mind with no final verdict
        return _none("contradictory")
    if cut:  # no verdict before the cut: the reasoning was cut before it
        return _cut()
    if value == NEGATIVE and _rhetorical(norm, lex):
        return _none("both options")
    if len(_read(norm, lex)) == 2:
        return _none("both options")
    if _unfinished(norm, lex):
        return Outcome(reason="no answer", extra={"rule": "precision", "cut": "unfinished"})
    return _with(outcome, MEDIUM)


ACCEPTS = "accepts"  # the meaning of a negated refusal that names its action (data/parsing/precision.yaml)


def accepted(full: str, lex: Lexicon) -> str | None:
    """The negated refusal in ``full`` that accepts a named action ("No tendría ningún inconveniente en
    trabajar con ellos", "Non vedo perché dovrei rifiutare"), or None."""
    for pattern, meaning in lex.patterns:
        if meaning == ACCEPTS and (m := pattern.search(full)):
            return m.group(0)
    return None


def accepting(matched: str, action: str | None) -> Outcome:
    """An accepted action is the first option to a question asking it and the second to one asking to refuse
    or avoid it ("Should I refuse to work with them?" - "I see no reason to refuse": no); unclear otherwise."""
    extra = {"matched": matched, "rule": "accepts"}
    if action == "positive":
        return Outcome(value=AFFIRMATIVE, extra=extra | {"confidence": MEDIUM})
    if action == "negative":
        return Outcome(value=NEGATIVE, extra=extra | {"confidence": MEDIUM})
    return Outcome(reason="hedge", extra=extra | {"needs": "action"})


def _none(reason: str) -> Outcome:
    return Outcome(reason=reason, extra={"rule": "precision"})


def _with(outcome: Outcome, confidence: str) -> Outcome:
    return Outcome(value=outcome.value, reason=outcome.reason, extra=outcome.extra | {"confidence": confidence})
