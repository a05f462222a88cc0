"""The rating rules of issue 27 (biasatlas.parsing.rating_rules) on their own."""

from __future__ import annotations

from dataclasses import dataclass

from biasatlas.parsing.rating_rules import DECADES, LEGEND, RETRACTED, complement, corrected


@dataclass(frozen=True)
class Value:
    value: float
    start: int
    end: int


def values(text: str, *numbers: str) -> list[Value]:
    found, at = [], 0
    for number in numbers:
        start = text.index(number, at)
        found.append(Value(float(number), start, start + len(number)))
        at = start + len(number)
    return found


def test_legend_is_the_scale() -> None:
    assert LEGEND.search("45 (1 = not at all, 100 = certain)").group(0).startswith("(1")
    assert LEGEND.search("(1 = nie, 100 = immer): 70").group(0) == "(1 = nie, 100 = immer)"
    assert LEGEND.search("I'd say 45, maybe 100.") is None


def test_retracted_value() -> None:
    assert RETRACTED.search("I said 70, but 60 is more realistic").group(1) == "70"
    assert RETRACTED.search("Ich habe 70 gesagt, aber 60").group(2) == "70"


def test_correction_takes_the_later_value() -> None:
    text = "55 - no, let's say 50."
    assert corrected(text, values(text, "55", "50")) == values(text, "55", "50")[1]
    plain = "55 and 50 are both plausible."
    assert corrected(plain, values(plain, "55", "50")) is None


def test_complement_is_not_the_rating() -> None:
    text = "help: 70 out of 100; ignore: 30 out of 100"
    assert complement(text, values(text, "70", "30")).value == 70
    text = "Ignorieren: 30, helfen: 70"
    assert complement(text, values(text, "30", "70")).value == 70
    both = "Either 30 or 70."
    assert complement(both, values(both, "30", "70")) is None


def test_decades_of_the_scale() -> None:
    m = DECADES.search("likely in the 70s or 80s")
    assert m is not None and (m.group(1), m.group(2)) == ("70", "80")
    assert DECADES.search("a man in his 70s") is None
