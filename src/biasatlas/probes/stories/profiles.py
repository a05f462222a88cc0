"""Profiles: the extractors' answers parsed and voted into one profile per usable story."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.stories.extract import (
    Extraction,
    lists_former_keys,
    parse_extraction,
    vocabularies,
    vote_profiles,
)
from biasatlas.probes.stories.plan import EXTRACT_PROBE
from biasatlas.probes.stories.read import story_rows
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.store import Store

#: majority rules of the extractors' vote: the paper's counts only the extractions that could be read
VOTE_RULES = {
    "valid": "valid: a value needs n_valid // 2 + 1 of the story's readable extractions (the paper's rule)",
    "all": "all: a value needs n // 2 + 1 of every extractor asked, rejected answers voting for nothing",
}
DEFAULT_VOTE = "valid"


def load_profiles(store: Store, vote: str = DEFAULT_VOTE) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One voted profile per usable story, and the counts of everything left out or repaired.

    A story is a profile only when at least one extractor's answer could be read: a story whose
    extractions were all rejected is counted in ``stories.all_extractions_rejected``, never as an
    all-"unknown" profile. ``vote`` is the majority rule (:data:`VOTE_RULES`; the paper's by default).
    """
    if vote not in VOTE_RULES:
        raise ValueError(f"vote {vote!r}: valid: {', '.join(VOTE_RULES)}")
    english = load_seeds("en")
    dims = list(english.dimensions)
    stories = story_rows(store)
    counts: dict[str, Any] = {"stories": {}, "extraction": {}, "vote": VOTE_RULES[vote], "profiles": 0}
    if stories.empty:
        return pd.DataFrame(columns=["model", "language", "story_id", "base_attribute", "base_value",
                                     "scenario_key", "template", *dims]), counts
    counts["stories"] = {
        "planned": len(stories),
        "answered": int((stories["status"] == "answered").sum()),
        "failed": int((stories["status"] == "failed").sum()),
        "pending": int((stories["status"] == "pending").sum()),
        "refusals": int(stories["refusal"].sum()),
        "empty": int(stories["empty"].sum()),
        "cut_at_limit": _cut(stories),
    }
    ex, superseded = latest_extractions(store.frame(probe=EXTRACT_PROBE))
    story_text = dict(zip(stories["story_id"], stories["text"], strict=True))
    status_counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    oov: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    unsupported: Counter[str] = Counter()
    per_story: dict[tuple[str, str], list[dict[str, str]]] = {}
    n_extractors: dict[tuple[str, str], int] = {}
    extractors_of: dict[str, set[str]] = {}
    if not ex.empty:
        for row in ex.itertuples(index=False):
            sid = f"{row.story_prompt_id}:{int(str(row.story_sample))}"
            key = (str(row.generator), sid)
            n_extractors[key] = n_extractors.get(key, 0) + 1
            extractors_of.setdefault(str(row.generator), set()).add(str(row.model))
            if row.status != "answered":
                status_counts[str(row.status)] += 1
                continue
            dims_x = vocabularies(english, exclude=[str(row.base_attribute)])
            imported = _truthy(getattr(row, "imported", None))
            former = imported or lists_former_keys(_prompt_text(getattr(row, "messages_json", None)))
            parsed: Extraction = parse_extraction(
                _cell_text(row.text), dims_x,
                "" if imported else str(story_text.get(sid) or ""), former_keys=former,
            )
            status_counts[parsed.status] += 1
            if parsed.reason:
                reasons[parsed.reason] += 1
            for r in parsed.repairs:
                repairs[r.split(" ", 1)[1] if r[:1].isdigit() else r] += 1
            for d in parsed.out_of_vocabulary:
                oov[d] += 1
            for d in parsed.missing:
                missing[d] += 1
            if not imported:
                for d in parsed.unsupported_evidence:
                    unsupported[d] += 1
            per_story.setdefault(key, [])
            if parsed.status != "rejected":
                per_story[key].append(parsed.values)
    counts["extraction"] = {
        "answers": dict(status_counts),
        "rejection_reasons": dict(reasons),
        "repairs": dict(repairs),
        "out_of_vocabulary_by_attribute": dict(oov),
        "missing_by_attribute": dict(missing),
        "evidence_not_in_story_by_attribute": dict(unsupported),
        "extractors": sorted(ex["model"].unique().tolist()) if not ex.empty else [],
        # answers of an extractor to an earlier extraction prompt of the same story (the prompt changed)
        "superseded_by_a_later_prompt": superseded,
        "cut_at_limit": _cut(ex),
        # generators whose stories only they themselves extracted (the default): a model reading
        # its own stories shares their associations; the paper uses three independent extractors
        "self_extraction_only": sorted(g for g, names in extractors_of.items() if names == {g}),
    }
    rows = []
    usable = stories[(stories["status"] == "answered") & ~stories["refusal"] & ~stories["empty"]]
    no_extraction = rejected = 0
    for row in usable.itertuples(index=False):
        key = (str(row.model), str(row.story_id))
        if key not in n_extractors:
            no_extraction += 1
            continue
        readable = per_story.get(key, [])
        if not readable:
            rejected += 1
            continue
        voted = vote_profiles(readable, dims, len(readable) if vote == "valid" else n_extractors[key])
        voted[str(row.base_attribute)] = str(row.base_value)  # from the prompt, never re-extracted
        rows.append(
            {
                "model": row.model,
                "language": row.language,
                "story_id": row.story_id,
                "base_attribute": row.base_attribute,
                "base_value": row.base_value,
                "scenario_key": row.scenario_key,
                "template": _template(row),
                **voted,
            }
        )
    counts["stories"]["usable"] = len(usable)
    counts["stories"]["without_extraction"] = no_extraction
    counts["stories"]["all_extractions_rejected"] = rejected
    profiles = pd.DataFrame(rows, columns=["model", "language", "story_id", "base_attribute", "base_value",
                                           "scenario_key", "template", *dims])
    counts["profiles"] = len(profiles)
    return profiles, counts


def latest_extractions(ex: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One extraction per extractor and story: its latest answered one (highest run), and how many earlier
    ones were left out. A story asked again with a changed extraction prompt (the vocabulary's keys changed)
    keeps the new answer; the former one is not a second vote."""
    if ex.empty or "run_id" not in ex.columns:
        return ex, 0
    keys = ["generator", "story_prompt_id", "story_sample", "model"]
    order = ex.assign(_answered=ex["status"] == "answered").sort_values(["_answered", "run_id"], kind="stable")
    latest = order.drop_duplicates(keys, keep="last").drop(columns="_answered").sort_index()
    return latest, len(ex) - len(latest)


def _prompt_text(messages_json: Any) -> str:
    """The text of a stored prompt's messages (its JSON as stored); "" when there is none."""
    raw = _cell_text(messages_json)
    if not raw or " = " not in raw:
        return ""
    try:
        messages = json.loads(raw)
    except ValueError:
        return ""
    return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def _template(row: Any) -> str:
    """The prompt template of a story: the published one for imported stories, else scenario_based."""
    template = _cell_text(getattr(row, "template", None))
    return template or "scenario_based"


def _cut(frame: pd.DataFrame) -> int:
    """Answers that ended at the token limit (finish_reason 'length')."""
    if frame.empty or "finish_reason" not in frame.columns:
        return 0
    return int(((frame["status"] == "answered") & (frame["finish_reason"] == "length")).sum())


def _cell_text(value: Any) -> str | None:
    """A frame cell as text (NaN/None -> None)."""
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _truthy(value: Any) -> bool:
    """A meta flag read back from the frame (absent -> NaN)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return False
    return bool(value)



OUTCOME_COLUMNS = ["model", "language", "prompt_id", "sample_index", "story_id", "base_attribute", "base_value",
                   "scenario_key", "scenario_group", "status", "text", "refusal", "empty", "profile", "reason"]


def story_outcomes(store: Store) -> pd.DataFrame:
    """One row per stored story: the design factors, the story, and its voted profile.

    ``profile`` is True when the story has a voted profile (one column per attribute; the prompted
    one is the prompt's value); ``reason`` says why not otherwise: not answered, refusal, empty, not
    extracted, or every extraction rejected.
    """
    dims = list(load_seeds("en").dimensions)
    stories = story_rows(store)
    if stories.empty:
        return pd.DataFrame(columns=[*OUTCOME_COLUMNS, *dims])
    design = [c for c in OUTCOME_COLUMNS if c not in ("profile", "reason")]
    frame = stories.copy()
    for column in design:
        if column not in frame.columns:  # imported stories have no scenario group
            frame[column] = None
    profiles, _ = load_profiles(store)
    voted = profiles[["model", "story_id", *dims]].drop_duplicates(["model", "story_id"])
    frame = frame[design].merge(voted, on=["model", "story_id"], how="left", indicator=True)
    frame["profile"] = frame.pop("_merge") == "both"
    reason = pd.Series(None, index=frame.index, dtype=object)
    reason[~frame["profile"]] = "not extracted"
    ex = store.frame(probe=EXTRACT_PROBE)
    if not ex.empty:
        asked = {(str(g), f"{p}:{int(str(s))}") for g, p, s in
                 zip(ex["generator"], ex["story_prompt_id"], ex["story_sample"], strict=True)}
        was_asked = [(str(m), str(sid)) in asked for m, sid in zip(frame["model"], frame["story_id"], strict=True)]
        reason[~frame["profile"] & pd.Series(was_asked, index=frame.index)] = "every extraction rejected"
    reason[frame["empty"].astype(bool)] = "empty"
    reason[frame["refusal"].astype(bool)] = "refusal"
    reason[frame["status"] != "answered"] = "not answered"
    frame["reason"] = reason
    return frame[[*OUTCOME_COLUMNS, *dims]].reset_index(drop=True)
