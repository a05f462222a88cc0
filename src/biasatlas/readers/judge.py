"""A judge model reads answers: which ones, asking it, its labels, and the reading recorded for a probe.

The judge's answers are model answers: asked through the runner, so each is stored in the study before it is
used and cached under the judge's identity (a rerun asks nothing twice). Its prompts are stored under the probe
name ``PROBE.judge`` (``contact.judge``), which no probe analyses; each prompt's meta names the answer it reads
(``answer_key``). The judge answers in choice mode: the label with the highest probability; where a label is the start
of another (samaritan's "6" and "63") no probability of a label without its end can tell them apart, so the judge
generates its label (greedy). A generated label, or one from a backend that falls back to generating (an HTTP server
without log-probabilities), counts only when its whole text is one label of the set (stripped, case ignored):
nothing is read out of free text.

Each judge step records a run of ``PROBE.judge`` whose config holds the reading (``reader``: rules, judge, both)
and the judge (``judge``: its backend id); the latest such run says how the probe's answers are read.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from biasatlas.readers.labels import judge_prompt, label_set, question_text
from biasatlas.records import GenerationSettings, Outcome

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.base import Backend
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store

# The rules' own choice among their readings that we trust less (parsing/answers.py's rule names): an option found
# only by reading every sentence together, only on a short last line, or a bare negation; for ratings a range read
# as its midpoint. ``extra["confidence"] == "low"`` marks it too, where a reader says so itself.
LOW_CONFIDENCE_RULES = frozenset({"whole answer", "last line", "bare negation"})
LOW_CONFIDENCE_KINDS = frozenset({"range", "range_percent"})


def judge_probe(probe: str) -> str:
    """The probe name a judge's prompts for ``probe`` are stored under."""
    return f"{probe}.judge"


def rules_outcome(probe: str, row: dict[str, Any]) -> Outcome:
    """What the rule reader (or, in choice mode, the option probabilities) read in one stored answer."""
    if probe == "contact":
        from biasatlas.parsing.answers import parse_row

        return parse_row(row["mode"], row["scale"], row["language"], row["text"], row["option_probs"],
                         tuple(row["options"]), cut=row.get("finish_reason") == "length", action=row.get("action"))
    if probe == "samaritan":
        from biasatlas.parsing.numbers import RatingParser

        # a cut answer's trailing number is no reading, so the judge is asked (as the analysis reads it)
        return RatingParser(row["language"]).parse(row["text"], cut=row.get("finish_reason") == "length")
    raise ValueError(f"no judge for probe {probe!r}")


def is_text(row: dict[str, Any]) -> bool:
    """An answered row whose label comes from free text (not from option probabilities)."""
    probs = row.get("option_probs")
    return row.get("status") == "answered" and isinstance(row.get("text"), str) and not (
        row.get("mode") == "choice" and isinstance(probs, dict) and probs)


def low_confidence(outcome: Outcome) -> bool:
    """Unreadable, or read by a rule we trust less (see ``LOW_CONFIDENCE_RULES``)."""
    extra = outcome.extra
    return (outcome.value is None or extra.get("confidence") == "low" or extra.get("rule") in LOW_CONFIDENCE_RULES
            or extra.get("kind") in LOW_CONFIDENCE_KINDS)


def needs_judge(reader: str, outcome: Outcome) -> bool:
    """Whether the judge's label replaces the rules' for an answer of free text under ``reader``."""
    return reader == "judge" or (reader == "both" and low_confidence(outcome))


#: under ``both``, the judge also reads about this share of the answers the rules read confidently, as a check:
#: their labels stay the rules', and rules-vs-judge agreement is measured on them too (without them the rules'
#: label of every judged answer would be "unclear", and kappa no measure at all)
CHECK_SHARE = 10  # one answer in ten


def in_check_sample(key: str) -> bool:
    """Whether an answer (by its cache key) is in the seeded check sample: the same answers on every rerun."""
    return int(hashlib.sha256(f"judge-check:{key}".encode()).hexdigest()[:8], 16) % CHECK_SHARE == 0


def asks_judge(reader: str, outcome: Outcome, key: str) -> bool:
    """Whether the judge reads an answer of free text under ``reader`` (to use its label, or as a check)."""
    return needs_judge(reader, outcome) or (reader == "both" and in_check_sample(key))


def judge_prompts(frame: pd.DataFrame, probe: str, reader: str) -> list[Any]:
    """The judge's prompts for the answers of ``frame`` (a ``store.frame(probe)``) it reads under ``reader``."""
    if reader == "rules" or frame.empty:
        return []
    prompts = []
    for record in frame.to_dict("records"):
        row = {str(k): v for k, v in record.items()}
        if not is_text(row) or not asks_judge(reader, rules_outcome(probe, row), str(row["key"])):
            continue
        labels = label_set(probe, row["language"], tuple(row["options"]))
        meta = {"for_probe": probe, "answer_key": row["key"]}
        prompts.append(judge_prompt(probe, row["language"], question_text(row["messages_json"]), row["text"],
                                    labels, meta))
    return prompts


#: how the judge is asked where its labels cannot be chosen by probability: greedy, a label's length at most
GENERATE_LABEL = GenerationSettings(mode="generate", max_tokens=16, temperature=0.0)


def judge_settings(option_sets: Sequence[tuple[str, ...]]) -> GenerationSettings:
    """Choice mode, unless a label is the start of another (samaritan's "6" and "63"): a tokenizer that splits
    numbers into digits starts both with "6", so neither its first token nor a label's score without its end
    (P("6") >= P("63")) tells them apart; the judge then generates its label, read whole."""
    from biasatlas.backends.http.choice import starts_another

    if any(starts_another(options) is not None for options in option_sets):
        return GENERATE_LABEL
    return GenerationSettings(mode="choice")


def run_judge(store: Store, probe: str, backend: Backend, reader: str, *, progress: bool = False) -> RunTotals:
    """Ask ``backend`` to read the answers ``reader`` gives it (those not yet read by it), and record the reading."""
    from biasatlas.runner import run_plan

    config = {"reader": reader, "judge": backend.id, "for_probe": probe}
    prompts = judge_prompts(store.frame(probe=probe), probe, reader)
    if prompts:
        settings = judge_settings(sorted({p.options for p in prompts}))
        return run_plan(prompts, backend, store, settings, config=config, progress=progress)
    return record_reading(store, probe, reader, backend.id)


def record_reading(store: Store, probe: str, reader: str, judge: str | None) -> RunTotals:
    """Record the reading of ``probe`` (a run of its judge probe that asks nothing): rules only, or a judge's."""
    from biasatlas import __version__
    from biasatlas.runner import RunTotals

    config = {"reader": reader, "judge": judge, "for_probe": probe}
    run_id = store.start_run(judge_probe(probe), judge or "rules", config, __version__, planned=0)
    totals = RunTotals(run_id=run_id, status="done")
    store.finish_run(run_id, "done", totals.as_dict())
    return totals


def reading(store: Store, probe: str) -> tuple[str, str | None]:
    """(reader, judge id) recorded for ``probe`` by its latest judge run; ("rules", None) when none was made."""
    row = store.conn.execute("SELECT config_json FROM runs WHERE probe = ? ORDER BY run_id DESC LIMIT 1",
                             (judge_probe(probe),)).fetchone()
    if row is None:
        return "rules", None
    config = json.loads(row[0] or "{}")
    return str(config.get("reader") or "rules"), config.get("judge")


def judge_label(option_probs: Any, text: Any, options: tuple[str, ...]) -> str | None:
    """The option the judge chose: the most probable one; without probabilities, a text that is exactly one."""
    if isinstance(option_probs, dict) and option_probs:
        scores = [(float(option_probs.get(o, float("-inf"))), -i, o) for i, o in enumerate(options)]
        return max(scores)[2]
    if isinstance(text, str):
        wanted = _bare_label(text)
        found = [o for o in options if o.casefold() == wanted]
        return found[0] if len(found) == 1 else None
    return None


#: what may surround a label in a chat judge's reply: markdown, quotes, a "Label:" prefix, a closing mark
_WRAPPING = re.compile(r"^(?:label|answer|antwort|réponse|respuesta|risposta|resposta)\s*:\s*", re.IGNORECASE)


def _bare_label(text: str) -> str:
    """A judge's free-text reply without its wrapping ("**Unclear**", "`No`", "Label: No."), case-folded."""
    bare = text.strip().strip("*_`#>\"'“”„«» \t\n")
    bare = _WRAPPING.sub("", bare).strip("*_`\"'“”„«» ")
    return bare.rstrip(".!").strip().casefold()


def unusable_judge_keys(store: Store, probe: str, judge: str) -> set[str]:
    """Answer keys whose stored judge reply (by ``judge``) gives no label: a refusal, garbage, another language."""
    frame = store.frame(probe=judge_probe(probe))
    if frame.empty:
        return set()
    ids = frame["model_id"] if "model_id" in frame.columns else frame["model"]
    frame = frame[(ids == judge) & (frame["status"] == "answered")]
    return {str(row["answer_key"]) for row in frame.to_dict("records")
            if judge_label(row["option_probs"], row["text"], tuple(row["options"])) is None}


def judge_labels(store: Store, probe: str, judge: str) -> dict[str, str]:
    """Answer key -> the label (its meaning: an option value, a rating, refusal, unclear) ``judge`` gave."""
    frame = store.frame(probe=judge_probe(probe))
    if frame.empty:
        return {}
    ids = frame["model_id"] if "model_id" in frame.columns else frame["model"]  # the id, not a display name
    frame = frame[(ids == judge) & (frame["status"] == "answered")]
    labels: dict[str, str] = {}
    for row in frame.to_dict("records"):
        options = tuple(row["options"])
        chosen = judge_label(row["option_probs"], row["text"], options)
        if chosen is None:
            continue
        meaning = label_set(probe, row["language"], options[:2]).meaning(chosen) if probe == "contact" else (
            label_set(probe, row["language"]).meaning(chosen))
        labels[str(row["answer_key"])] = meaning
    return labels
