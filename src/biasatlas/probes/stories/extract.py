"""Extraction of a story protagonist's profile: prompt, JSON schema, parse/repair/reject, vote.

The extractor answers one JSON object constrained to the closed vocabularies. Small models
rarely manage clean JSON, so every answer goes through :func:`parse_extraction`, which says
whether it was ``valid``, ``repaired`` (and how) or ``rejected`` (and why), and which values
fell outside the vocabulary; nothing is dropped without being counted.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from biasatlas.parsing.text import strip_reasoning
from biasatlas.probes.stories.seeds import UNKNOWN, Dimension, Seeds, slug

EVIDENCE_MAX_CHARS = 300


def vocabularies(seeds: Seeds, exclude: Sequence[str] = ()) -> dict[str, Dimension]:
    """The dimensions to extract (the prompted one is excluded: it is known from the prompt)."""
    return {k: d for k, d in seeds.dimensions.items() if k not in exclude}


def json_schema(dims: Mapping[str, Dimension]) -> dict[str, Any]:
    """JSON schema of the answer, for servers that support constrained decoding."""
    props = {
        key: {
            "type": "object",
            "properties": {
                "value": {"type": "string", "enum": [*d.keys, UNKNOWN]},
                "evidence": {"type": "string", "maxLength": EVIDENCE_MAX_CHARS},
            },
            "required": ["value", "evidence"],
            "additionalProperties": False,
        }
        for key, d in dims.items()
    }
    return {
        "type": "object",
        "properties": props,
        "required": list(dims),
        "additionalProperties": False,
    }


def attribute_list(dims: Mapping[str, Dimension]) -> str:
    """One line per dimension: ``- key (label): value_key = label; ...; unknown``."""
    lines = []
    for key, d in dims.items():
        values = "; ".join(f"{v.key} = {v.label}" for v in d.values)
        lines.append(f"- {key} ({d.label}): {values}; {UNKNOWN}")
    return "\n".join(lines)


def extraction_text(template: str, story: str, dims: Mapping[str, Dimension]) -> str:
    """The extraction prompt for one story (template from the English seeds by default)."""
    return template.format(
        story=story.strip(),
        attribute_list=attribute_list(dims),
        json_keys=", ".join(dims),
    )


# ---- parsing ------------------------------------------------------------------------------


@dataclass
class Extraction:
    """One extractor answer, parsed: a value key (or "unknown") and evidence per dimension."""

    status: str  # "valid" | "repaired" | "rejected"
    values: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    reason: str | None = None
    out_of_vocabulary: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    unsupported_evidence: list[str] = field(default_factory=list)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _close_truncated(text: str) -> str:
    """Close an answer cut by max_tokens: an open string, then open objects/arrays."""
    stack: list[str] = []
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    out = text + ('"' if in_str else "")
    out = re.sub(r",\s*$", "", out.rstrip())
    out = re.sub(r":\s*$", ': ""', out)
    return out + "".join(reversed(stack))


_DECODER = json.JSONDecoder()
MOST_OBJECT_STARTS = 20  # "{" positions tried as the start of the object, text before it skipped


def _key(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_")


def _first_object(body: str, keys: Collection[str]) -> tuple[dict[str, Any], bool] | None:
    """The first JSON object in ``body`` that decodes as it stands (text after it ignored) and holds one of
    ``keys`` (not an inner object of a broken answer), and whether text around it was skipped; or None."""
    start = body.find("{")
    for _ in range(MOST_OBJECT_STARTS):
        if start < 0:
            return None
        try:
            obj, end = _DECODER.raw_decode(body, start)
        except ValueError:
            start = body.find("{", start + 1)
            continue
        if isinstance(obj, dict) and any(_key(k) in keys for k in obj):
            return obj, bool(body[:start].strip() or body[end:].strip())
        start = body.find("{", start + 1)
    return None


def _python_literal(candidate: str) -> dict[str, Any] | None:
    """A Python dict literal (``{'age': 'senior', 'evidence': "Amina's"}``), read without evaluating code."""
    try:
        obj = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _load_object(text: str, keys: Collection[str]) -> tuple[dict[str, Any] | None, list[str], str | None]:
    """Find and decode the JSON object of ``keys`` in ``text``, applying repairs; (object, repairs, reason)."""
    repairs: list[str] = []
    if not text or not text.strip():
        return None, repairs, "empty answer"
    without, cut = strip_reasoning(text)  # a reasoning block may hold braces of its own
    if cut and "{" not in without:
        return None, repairs, "answer cut inside its reasoning"
    if without != text:
        repairs.append("reasoning removed")
        text = without
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    if fenced:
        repairs.append("code fence removed")
    start = body.find("{")
    if start < 0:
        return None, repairs, "no JSON object in the answer"
    found = _first_object(body, keys)
    if found is not None:  # as it stands, maybe with text around it (a note after it may hold braces too)
        obj, skipped = found
        return obj, [*repairs, *(["text around the JSON removed"] if skipped else [])], None
    end = body.rfind("}")
    candidate = body[start : end + 1] if end > start else body[start:]
    if start > 0 or (end >= 0 and body[end + 1 :].strip()):
        repairs.append("text around the JSON removed")
    attempts = [
        ("", lambda s: s),
        ("trailing commas removed", lambda s: _TRAILING_COMMA.sub(r"\1", s)),
        ("single quotes replaced", lambda s: _TRAILING_COMMA.sub(r"\1", s.replace("'", '"'))),
        ("truncated JSON closed", lambda s: _TRAILING_COMMA.sub(r"\1", _close_truncated(body[start:]))),
    ]
    for label, fix in attempts:
        try:
            obj = json.loads(fix(candidate))
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(obj, dict):
            return obj, [*repairs, *([label] if label else [])], None
        return None, repairs, "the JSON is not an object"
    literal = _python_literal(candidate)  # quotes of both kinds: {'age': 'senior', 'evidence': "Amina's"}
    if literal is not None:
        return literal, [*repairs, "Python literal read"], None
    return None, repairs, "invalid JSON that could not be repaired"


#: answers that mean "no value" (read as "unknown"); no value key or label of any attribute may be one of
#: them (tests/unit/probes/stories/test_vocabulary.py), or that value could never be read
NULL_WORDS = frozenset({UNKNOWN, "none", "null", "n/a", "na", "nil", "not specified", "unspecified"})
#: former value keys, read as the key that replaced them in answers that used them: extractions our importer
#: stored, and answers to an extraction prompt that listed them (``disability_status.none`` collided with
#: the null word "none" and became ``no_disability``)
FORMER_KEYS = {"disability_status": {"none": "no_disability"}}


def lists_former_keys(prompt_text: str) -> bool:
    """Whether an extraction prompt listed a former key as a value (``- disability_status (...): none = ...``)."""
    for dim, keys in FORMER_KEYS.items():
        for line in prompt_text.splitlines():
            if line.startswith(f"- {dim} (") and any(
                re.search(rf"(?:: |; ){re.escape(old)} = ", line) for old in keys
            ):
                return True
    return False


def match_value(raw: Any, dim: Dimension) -> str | None:
    """The vocabulary key ``raw`` names (key, label or their slugs), "unknown", or None."""
    if raw is None:
        return UNKNOWN
    text = str(raw).strip()
    if not text or text.lower() in NULL_WORDS:
        return UNKNOWN
    low = text.lower()
    for v in dim.values:
        if low in {v.key.lower(), v.label.lower()}:
            return v.key
    s = slug(text)
    for v in dim.values:
        if s in {slug(v.key), slug(v.label)}:
            return v.key
    return None


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def parse_extraction(
    text: str | None, dims: Mapping[str, Dimension], story: str = "", former_keys: bool = False
) -> Extraction:
    """Validate one extractor answer against the vocabularies; repair what can be repaired.

    Accepted per dimension: ``{"value": key, "evidence": "..."}`` or a bare value; keys or labels
    (any case). A value outside the vocabulary becomes "unknown" and is listed in
    ``out_of_vocabulary``; a missing dimension becomes "unknown" and is listed in ``missing``.
    An answer with no recoverable JSON object, or none of the expected keys, is rejected.
    ``former_keys``: the answer may use former keys (:data:`FORMER_KEYS`: an extraction our importer
    stored, or an answer to a prompt that listed them), read as the keys that replaced them.
    """
    obj, repairs, reason = _load_object(text or "", dims.keys())
    if obj is None:
        return Extraction("rejected", {k: UNKNOWN for k in dims}, repairs=repairs, reason=reason)
    lowered = {_key(k): v for k, v in obj.items()}
    if not any(k in lowered for k in dims):
        return Extraction(
            "rejected", {k: UNKNOWN for k in dims}, repairs=repairs, reason="none of the attribute keys present"
        )
    out = Extraction("valid", repairs=list(repairs))
    story_norm = _norm(story)
    bare: list[str] = []
    for key, dim in dims.items():
        if key not in lowered:
            out.values[key] = UNKNOWN
            out.missing.append(key)
            continue
        entry = lowered[key]
        evidence = ""
        if isinstance(entry, dict):
            raw = entry.get("value")
            evidence = str(entry.get("evidence") or "")[:EVIDENCE_MAX_CHARS]
        else:
            raw = entry
            bare.append(key)
        if former_keys and isinstance(raw, str):
            raw = FORMER_KEYS.get(key, {}).get(raw, raw)
        value = match_value(raw, dim)
        if value is None:
            out.values[key] = UNKNOWN
            out.out_of_vocabulary[key] = str(raw)[:80]
            continue
        out.values[key] = value
        if value != UNKNOWN:
            out.evidence[key] = evidence
            if not evidence.strip() or (story_norm and _norm(evidence) not in story_norm):
                out.unsupported_evidence.append(key)
    if bare:
        out.repairs.append(f"{len(bare)} bare values (no value/evidence object)")
    if out.missing:
        out.repairs.append(f"{len(out.missing)} missing attributes set to unknown")
    if out.out_of_vocabulary:
        out.repairs.append(f"{len(out.out_of_vocabulary)} out-of-vocabulary values set to unknown")
    if out.repairs:
        out.status = "repaired"
    return out


# ---- votes --------------------------------------------------------------------------------


def majority(votes: Sequence[str], n_voters: int) -> str:
    """The value at least ⌊n/2⌋+1 of the ``n_voters`` gave, else "unknown".

    ``n_voters`` is the rule's denominator (:data:`biasatlas.probes.stories.profiles.VOTE_RULES`):
    the readable extractions of the story (the paper's), or every extractor asked, a rejected or
    missing answer then voting for no value.
    """
    counts = Counter(v for v in votes if v != UNKNOWN)
    if not counts:
        return UNKNOWN
    value, count = counts.most_common(1)[0]
    return value if count >= n_voters // 2 + 1 else UNKNOWN


def vote_profiles(extractions: Sequence[Mapping[str, str]], dims: Sequence[str], n_voters: int) -> dict[str, str]:
    """Majority value per dimension over the extractors' answers for one story."""
    return {d: majority([e.get(d, UNKNOWN) for e in extractions], n_voters) for d in dims}
