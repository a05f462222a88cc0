"""The judge's closed label sets (per probe and scale) and its prompts (per language).

A judge returns one label of a closed set, chosen by the backends' choice mode (option probabilities):
contact: the question's two options (its own words, "Yes"/"No", "Likely"/"Unlikely", "Ja"/"Nein"...),
a refusal label and an unclear label; samaritan: "1" ... "100", a refusal label and an unclear label.
The prompts are data files, one per language of the language packs (``data/readers/judge/LANG.yaml``), each
with its provenance: English written by the team, the others machine-drafted (German and Icelandic not yet
reviewed by a native speaker, the other nine not validated). An answer is judged with the prompt of its own
language; a language without one gets the English prompt with the question's own option words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from biasatlas.records import Message, Prompt

#: the canonical names of the two labels that are not an option, whatever the prompt's language
REFUSAL = "refusal"
UNCLEAR = "unclear"
#: answers longer than this are cut in the judge's prompt (the start holds the answer in all but rambling text)
MAX_ANSWER_CHARS = 1500

#: the judge's prompts, one data file per language (``LANG.yaml``: its label words, instruction and provenance)
PROMPTS_DIR = Path(str(resources.files("biasatlas") / "data" / "readers" / "judge"))
SLOTS = ("{question}", "{answer}", "{labels}", "{refusal}", "{unclear}")
FIELDS = ("language", "provenance", "refusal", "unclear", "instruction")


@lru_cache(maxsize=1)
def prompts() -> dict[str, dict[str, str]]:
    """Every language's prompt file, checked: its fields, and the instruction's slots."""
    from biasatlas.datafiles import DataFileError, load_yaml

    found: dict[str, dict[str, str]] = {}
    for path in sorted(PROMPTS_DIR.glob("*.yaml")):
        data = load_yaml(path)
        if not isinstance(data, dict) or any(not isinstance(data.get(k), str) or not data[k].strip()
                                             for k in FIELDS):
            raise DataFileError(f"{path}: a judge prompt needs the texts {', '.join(FIELDS)}")
        missing = [slot for slot in SLOTS if slot not in data["instruction"]]
        if missing:
            raise DataFileError(f"{path}: the instruction lacks the slot(s) {', '.join(missing)}")
        found[data["language"]] = {k: str(data[k]) for k in FIELDS}
    if "en" not in found:
        raise DataFileError(f"{PROMPTS_DIR}: no English judge prompt (en.yaml), the fallback of every language")
    return found


def prompt_provenance(language: str) -> str:
    """Who wrote the judge's prompt of ``language`` (the English one's where it has none)."""
    table = prompts()
    return table.get(language, table["en"])["provenance"]


@dataclass(frozen=True)
class LabelSet:
    """The closed set a judge chooses from for one question, and what each label means to the probe."""

    options: tuple[str, ...]  # what the judge is offered (in the prompt's language)
    meanings: tuple[str, ...]  # the label each option stands for: an option value, a rating, REFUSAL or UNCLEAR

    def meaning(self, option: str) -> str:
        """The label of one offered option."""
        return self.meanings[self.options.index(option)]


def words(language: str) -> tuple[str, str, str]:
    """(refusal word, unclear word, instruction) of ``language`` (the answer's), English where none is written."""
    table = prompts()
    entry = table.get(language, table["en"])
    return entry["refusal"], entry["unclear"], entry["instruction"]


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
