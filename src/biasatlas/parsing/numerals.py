"""Numbers and rating phrasings of the languages text2num does not read, as data (issue 29).

- ``ascii_digits``: every decimal digit (Devanagari "७५", full-width "７５", Arabic-Indic ...) as ASCII.
- ``native_numbers``: number words of ``number_words`` in ``data/parsing/numerals.yaml`` to digits
  ("七十五", "七成" = 70 %, "칠십오", "일흔다섯", "bảy mươi lăm", "tujuh puluh lima", "पचहत्तर"): units, tens
  words and multipliers ("十", "mươi", "puluh", "सौ") read as a sum of products. A run is read only when
  it holds a multiplier or a value of at least 10 ("một", "一", "năm" = five or year alone stay words), and
  in Korean only as a whole word or before a listed ending ("칠십오 퍼센트", "팔십점"; "열심히" stays).
- ``rewrite``: the language's ``rating_rewrites`` (regular expressions and replacements in
  ``data/parsing/words_<code>.yaml``) put its phrasing in the reader's English forms: "70 sur 100" ->
  "70 out of 100", "100 में से 70" / "100分中的70分" / "100점 중 70점" -> "70 out of 100", "entre 60 et
  70" / "60에서 70 사이" -> "between 60 and 70", "70 por ciento" -> "70 percent", "百分之七十" -> "70%".
- ``cue_words`` / ``post_cues`` / ``correction_words``: the language's words that name the rating ("je
  dirais", "我会说", "मेरा अनुमान") before it, after it ("80이라고 하겠습니다", "80 कहूँगा"), or revise it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from biasatlas.parsing.lexicon import data_section
from biasatlas.parsing.text import SCRIPT_DIGIT

# Letters of scripts written without spaces (Han, Hangul): a word of theirs has no \b around it.
JOINED_SCRIPT = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]")
WORD_CHAR = r"\w\u0900-\u097f"  # Devanagari vowel signs are marks, not \w: they stay inside a word


def ascii_digits(text: str) -> str:
    """Every Unicode decimal digit as its ASCII digit ("७५" -> "75", "７５" -> "75")."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in text)


def word_pattern(words: list[str]) -> str:
    """An alternation of ``words`` (longest first), each with word bounds where its script has them."""
    parts = []
    for word in sorted(set(words), key=len, reverse=True):
        body = r"\s+".join(re.escape(w) for w in word.split())
        left = "" if JOINED_SCRIPT.match(word) else rf"(?<![{WORD_CHAR}])"
        right = "" if JOINED_SCRIPT.search(word[-1]) else rf"(?![{WORD_CHAR}])"
        parts.append(f"{left}{body}{right}")
    return "|".join(parts)


def _languages(language: str) -> tuple[str, ...]:
    return ("en", language) if language != "en" else ("en",)


def _lists(section: str, language: str) -> list[Any]:
    table = data_section(section)
    return [entry for lang in _languages(language) for entry in table.get(lang, [])]


@lru_cache(maxsize=64)
def cue_words(language: str) -> tuple[str, str]:
    """(cue words, filler words) of ``language`` as regular-expression alternations ('' if none)."""
    return word_pattern(_lists("rating_cues", language)), word_pattern(_lists("rating_fillers", language))


@lru_cache(maxsize=64)
def own_cue(language: str, base_fillers: str) -> str | None:
    """The language's cue before a rating as an expression ending the text before the number, or None:
    a cue word, then up to 6 filler words ("je dirais environ", "我会说大约"); no \\b (Han, Hangul)."""
    words, fillers = cue_words(language)
    if not words:
        return None
    filler = f"{base_fillers}|{fillers}" if fillers else base_fillers
    return rf"(?:{words})(?:[^\w\n.!?]*(?:{filler})){{0,6}}[^\w\n.!?]*$"


@lru_cache(maxsize=64)
def quantity(language: str, number: str) -> re.Pattern[str] | None:
    """A number with one of the language's units ("80 ans", "80岁", "5 phút", "2 triệu"): not a rating."""
    units = data_section("rating_units").get(language) if language != "en" else None
    return re.compile(rf"(?<![\d.,]){number}\s*(?:{word_pattern(units)})", re.IGNORECASE) if units else None


@lru_cache(maxsize=64)
def case_words(language: str) -> re.Pattern[str] | None:
    """Words that tie a value to one case ("for a man", "si es mujer", "हो तो"), English's and the language's."""
    words = _lists("rating_cases", language)
    return re.compile(word_pattern(words), re.IGNORECASE) if words else None


@lru_cache(maxsize=64)
def post_cues(language: str) -> re.Pattern[str] | None:
    """What names the number before it as the rating ("이라고 하겠습니다", "कहूँगा"), or None."""
    found = [p for lang in _languages(language) if lang != "en" for p in data_section("rating_post_cues").get(lang, [])]
    return re.compile(r"^\s*(?:" + "|".join(f"(?:{p})" for p in found) + ")", re.IGNORECASE) if found else None


@lru_cache(maxsize=64)
def correction_words(language: str) -> re.Pattern[str] | None:
    """The language's self-correction markers and retraction words ("en fait", "non", "其实", "不对")."""
    if language == "en":
        return None
    found = [p for p in data_section("corrections").get(language, [])]
    found += [word_pattern([w]) for w in data_section("retractions").get(language, [])]
    return re.compile("|".join(f"(?:{p})" for p in found), re.IGNORECASE) if found else None


@lru_cache(maxsize=64)
def _rewrites(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    rules = data_section("rating_rewrites").get(language, []) if language != "en" else []
    return tuple((re.compile(pattern, re.IGNORECASE), replacement) for pattern, replacement in rules)


def rewrite(text: str, language: str) -> str:
    """``text`` with the language's rating phrasings in the reader's English forms."""
    for pattern, replacement in _rewrites(language):
        text = pattern.sub(replacement, text)
    return SCRIPT_DIGIT.sub(" ", text)  # "大约80%": the number stands apart again


class _Numbers:
    """One language's number words: units, multipliers, "teen" words and where a run may stand."""

    def __init__(self, spec: dict[str, Any]) -> None:
        norm = lambda word: unicodedata.normalize("NFC", str(word))  # noqa: E731 - one-line key clean-up
        self.units = {norm(k): int(v) for k, v in (spec.get("units") or {}).items()}
        self.multipliers = {norm(k): int(v) for k, v in (spec.get("multipliers") or {}).items()}
        self.teens = {norm(k): int(v) for k, v in (spec.get("teens") or {}).items()}
        self.percent = {norm(k) for k in spec.get("percent_multipliers") or []}
        self.leading_only = {norm(k) for k in spec.get("leading_only") or []}
        # Vietnamese "bảy lăm" (75), "hai mốt" (21): a digit word then one of these is tens and units
        self.after_digit = {norm(k) for k in spec.get("after_digit") or []}
        self.joined = bool(spec.get("joined"))
        # rewrites before reading ("七八十" = 70-80 -> "七十-八十"): a spoken range of two tens
        self.ranges = [(re.compile(p, re.IGNORECASE), r) for p, r in spec.get("ranges") or []]
        # "tujuh dari 10", "10 में से सात": a lone small word beside a ratio word and a number is a number
        ratio = [norm(w) for w in spec.get("ratio_words") or []]
        words = word_pattern(ratio) if ratio else "(?!)"
        self.ratio_after = re.compile(rf"\s*(?:{words})\s*\d", re.IGNORECASE)
        self.ratio_before = re.compile(rf"\d\s*(?:{words})\s*$", re.IGNORECASE)
        self.has_ratio = bool(ratio)
        endings = [norm(e) for e in spec.get("endings") or []]
        vocab = sorted({*self.units, *self.multipliers, *self.teens}, key=len, reverse=True)
        alternation = "|".join(re.escape(w) for w in vocab)
        if self.joined:  # a run of number words written together ("七十五", "일흔다섯")
            self.run = re.compile(f"(?:{alternation})+", re.IGNORECASE)
        else:  # words separated by blanks or hyphens ("tujuh puluh lima", "bảy mươi lăm")
            word = rf"(?<![{WORD_CHAR}])(?:{alternation})(?![{WORD_CHAR}])"
            self.run = re.compile(rf"{word}(?:[\s-]+{word})*", re.IGNORECASE)
        self.token = re.compile(alternation)
        ending = "|".join(map(re.escape, endings))
        self.hangul_end = re.compile(rf"(?:{ending})?(?![\uac00-\ud7a3])") if endings else None

    def value(self, words: list[str]) -> tuple[int, bool, bool] | None:
        """The number ``words`` make, whether it is a percentage and whether it is surely a number (a
        multiplier or a value of at least 10: "một", "一" alone are words as often); None for no number."""
        if not words or any(w not in self.units and w not in self.multipliers and w not in self.teens for w in words):
            return None
        total = small = last_multiplier = 0
        strong = percent = False
        previous: str | None = None
        for word in words:
            if word in self.teens:  # "dua belas" = 12
                small, strong = (small or 1) + self.teens[word], True
            elif word in self.multipliers:
                if last_multiplier and self.multipliers[word] >= last_multiplier:
                    return None  # "七十八十", "bảy mươi tám mươi": two numbers, not one
                last_multiplier = self.multipliers[word]
                total += (small or 1) * self.multipliers[word]
                small, strong = 0, True
                percent = percent or word in self.percent
            else:
                unit = self.units[word]
                if word in self.leading_only and previous is not None:
                    return None
                if small and 0 < small < 10 and not total and word in self.after_digit:
                    small, strong = small * 10 + unit, True  # "bảy lăm" = 75
                    previous = word
                    continue
                if small and not (small % 10 == 0 and unit < 10):  # "五 五" is two numbers, "일흔 다섯" one
                    return None
                small += unit
                strong = strong or unit >= 10
            previous = word
        if len(words) == 1 and words[0] in self.multipliers:  # "十分" = very, "百" alone
            return None
        return total + small, percent, strong


@lru_cache(maxsize=16)
def _numbers(language: str) -> _Numbers | None:
    spec = data_section("number_words").get(language)
    return _Numbers(spec) if isinstance(spec, dict) else None


def native_numbers(text: str, language: str) -> str:
    """``text`` with the language's number words as digits (unchanged for languages without a table)."""
    numbers = _numbers(language)
    if numbers is None:
        return text
    text = unicodedata.normalize("NFC", text)
    for pattern, replacement in numbers.ranges:
        text = pattern.sub(replacement, text)
    text = _convert(text, numbers, weak=False)
    return _convert(text, numbers, weak=True) if numbers.has_ratio else text


def _convert(text: str, numbers: _Numbers, weak: bool) -> str:
    """Runs surely numbers as digits; ``weak``: lone small words beside a ratio word and a number instead
    ("tujuh dari 10", "10 में से सात")."""
    out: list[str] = []
    last = 0
    for m in numbers.run.finditer(text):
        if numbers.joined and numbers.hangul_end is not None:
            if m.start() and re.match(r"[\uac00-\ud7a3]", text[m.start() - 1]):
                continue  # inside a Korean word
            if not numbers.hangul_end.match(text, m.end()):
                continue
        run = m.group(0).lower()
        read = numbers.value(numbers.token.findall(run) if numbers.joined else re.split(r"[\s-]+", run))
        if read is None and not numbers.joined and "-" in run:  # "सत्तर-अस्सी" (70-80): each side alone
            parts = [numbers.value(re.split(r"\s+", side.strip())) for side in run.split("-")]
            if all(p is not None and p[2] for p in parts):
                out.append(text[last : m.start()])
                out.append(" " + " - ".join(f"{p[0]}{'%' if p[1] else ''}" for p in parts if p) + " ")
                last = m.end()
            continue
        if read is None or read[2] == weak:
            continue
        if weak and not (numbers.ratio_after.match(text, m.end()) or numbers.ratio_before.search(text[: m.start()])):
            continue
        out.append(text[last : m.start()])
        out.append(f" {read[0]}{'%' if read[1] else ''} ")
        last = m.end()
    out.append(text[last:])
    return "".join(out)

