"""The answers behind a probe's numbers, as one tidy frame for the report's drill-down table."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from biasatlas.report.cells import cell_text

#: answers longer than this are cut in the page (the study and `biasatlas export` keep them whole)
MAX_SHOWN_CHARS = 2000


def _prompt_text(messages: Any) -> str:
    """The last user message of a stored conversation."""
    try:
        listed = json.loads(messages) if isinstance(messages, str) else messages
        users = [m.get("content", "") for m in listed or [] if isinstance(m, dict) and m.get("role") == "user"]
        return str(users[-1]) if users else ""
    except (TypeError, ValueError):
        return ""


def _answer(text: Any) -> str:
    if isinstance(text, str) and text:
        return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + " […]"
    return ""


def _probabilities(probs: Any) -> str | None:
    """Choice mode: each option's normalised probability ('Ja 0.731 · Nein 0.269'); None in generate mode."""
    if isinstance(probs, dict) and probs:
        return " · ".join(f"{k} {float(v):.3f}" for k, v in probs.items())
    return None


def answers_frame(outcomes: pd.DataFrame, factors: tuple[str, ...], value_column: str | None,
                  model_of: Any = None) -> pd.DataFrame:
    """Model, language, prompt, answer, P(option) (choice mode), parsed value, reason, then the design factors."""
    if outcomes.empty or "model" not in outcomes.columns:
        return pd.DataFrame()
    out = pd.DataFrame(index=outcomes.index)
    out["model"] = model_of(outcomes) if model_of is not None else outcomes["model"].astype(str)
    if "language" in outcomes.columns:
        out["language"] = outcomes["language"].astype(str)
    # the group and the prompt set: a click on a group's row narrows the answers to it (the "Group" column),
    # and one prompt set's framings sit side by side (rows ordered by set, then framing)
    for name in ("group", *factors):
        if name in outcomes.columns and name not in out.columns:
            out[name] = outcomes[name].map(cell_text)
    if "set_id" in outcomes.columns:
        out["prompt_set"] = outcomes["set_id"].map(cell_text)
    if "sample_index" in outcomes.columns and outcomes["sample_index"].nunique() > 1:
        out["sample"] = outcomes["sample_index"]
    if "messages_json" in outcomes.columns:
        out["prompt"] = outcomes["messages_json"].map(_prompt_text)
    texts = outcomes["text"] if "text" in outcomes.columns else pd.Series(None, index=outcomes.index)
    probs = outcomes["option_probs"] if "option_probs" in outcomes.columns else pd.Series(None, index=outcomes.index)
    out["answer"] = [_answer(t) for t in texts]
    shown = [_probabilities(p) for p in probs]
    if any(p is not None for p in shown):  # choice mode in the study: the probabilities the choice came from
        out["P(option)"] = shown
    column = value_column or next((c for c in ("answer", "rating", "value", "decision") if c in outcomes.columns),
                                  None)
    if column and column in outcomes.columns:
        out["parsed"] = outcomes[column]
    if "decision" in outcomes.columns and column != "decision":
        out["decision"] = outcomes["decision"]
    reason = next((c for c in ("reason", "parse_reason") if c in outcomes.columns), None)
    if reason:
        out["reason"] = outcomes[reason]
    if "judge_label" in outcomes.columns and outcomes["judge_label"].notna().any():  # a judge read some answers
        if "reader" in outcomes.columns:
            out["reader"] = outcomes["reader"]
        rules = outcomes["rules_label"] if "rules_label" in outcomes.columns else pd.Series(None, index=outcomes.index)
        # the rules-vs-judge disagreements, one filter away (issue 27): empty where they agree or one did not read
        out["rules vs judge"] = [f"rules: {r} · judge: {j}" if pd.notna(r) and pd.notna(j) and r != j else ""
                                 for r, j in zip(rules, outcomes["judge_label"], strict=True)]
    if "status" in outcomes.columns:
        out["status"] = outcomes["status"]
    # what a reader reads first sits next to each other (the prompt, the answer, what was read from it); the
    # design factors follow, still one filter box each
    first = [c for c in ("model", "language", "prompt", "answer", "P(option)", "parsed", "decision", "reason")
             if c in out.columns]
    out = out[first + [c for c in out.columns if c not in first]]
    if "prompt_set" in out.columns:  # a prompt set's framings one under the other: none, positive, negative
        framing = out["contact"].map(FRAMING_ORDER).fillna(9) if "contact" in out.columns else 0
        keys = [c for c in ("model", "language", "prompt_set") if c in out.columns]
        out = out.assign(_framing=framing).sort_values([*keys, "_framing"], kind="stable").drop(columns="_framing")
    return out.reset_index(drop=True)


#: the order of a prompt set's framings in the answers table
FRAMING_ORDER = {"none": 0, "positive": 1, "negative": 2}
