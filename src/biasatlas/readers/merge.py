"""The rules' outcomes with a judge's labels merged in, by the reading recorded for the probe.

Per answered row: ``reader`` (who produced its label: ``rules``, ``judge``, or ``probability`` for a choice-mode
answer read from its option probabilities), ``rules_label`` and ``judge_label`` (each reader's label on the closed
set: an option value or a rating, ``refusal``, ``unclear``; None where that reader did not read the answer).

- ``rules``: the rules' outcomes as they are.
- ``judge``: the judge's label for every answer of free text it read (the rules' where it has none yet).
- ``both``: the judge's label where the rules found none or read with low confidence (``judge.low_confidence``);
  the judge's label of the check sample (``judge.in_check_sample``) is kept in ``judge_label`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biasatlas.readers.judge import is_text, judge_labels, needs_judge, reading, unusable_judge_keys
from biasatlas.readers.labels import REFUSAL, UNCLEAR
from biasatlas.records import Outcome


@dataclass
class Merged:
    """The outcome of each row and who read it."""

    outcomes: list[Outcome]
    readers: list[str | None]
    rules_labels: list[str | None]
    judge_labels: list[str | None]


def rules_label(outcome: Outcome) -> str:
    """The rules' reading on the judge's closed set: the value, ``refusal``, or ``unclear`` (anything else)."""
    if outcome.value is not None:
        return value_label(outcome.value)
    return REFUSAL if "refus" in str(outcome.reason or "") else UNCLEAR


def value_label(value: Any) -> str:
    """A value as a label: options as they are, ratings without a trailing ``.0``."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def judged_outcome(label: str, probe: str) -> Outcome:
    """The judge's label as the probe's outcome."""
    if label in (REFUSAL, UNCLEAR):
        return Outcome(reason=label, extra={"reader": "judge"})
    value: Any = float(label) if probe == "samaritan" else label
    return Outcome(value=value, extra={"reader": "judge"})


def merge(store: Any, probe: str, rows: Sequence[dict[str, Any]], parsed: Sequence[Outcome]) -> Merged:
    """Each row's outcome under the recorded reading of ``probe`` (``rows``: the stored answers, ``parsed``: the
    rules' outcomes, in the same order)."""
    reader, judge = (reading(store, probe) if store is not None else ("rules", None))
    labels = judge_labels(store, probe, judge) if judge and reader != "rules" else {}
    # a judge reply with no label is unreadable under the judge's reading, never the rules' label in disguise
    unusable = unusable_judge_keys(store, probe, judge) if judge and reader != "rules" else set()
    merged = Merged([], [], [], [])
    for row, outcome in zip(rows, parsed, strict=True):
        answered = row.get("status") == "answered"
        text = is_text(row)
        label = labels.get(str(row.get("key"))) if text else None
        merged.rules_labels.append(rules_label(outcome) if text else None)
        merged.judge_labels.append(label)
        if label is not None and needs_judge(reader, outcome):
            merged.outcomes.append(judged_outcome(label, probe))
            merged.readers.append("judge")
        elif text and str(row.get("key")) in unusable and needs_judge(reader, outcome):
            merged.outcomes.append(Outcome(reason="judge unusable"))
            merged.readers.append("judge")
        else:
            merged.outcomes.append(outcome)
            merged.readers.append(None if not answered else "rules" if text else "probability")
    return merged
