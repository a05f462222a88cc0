"""From stored answers to model association matrices (32 traits × 30 groups per model and language).

- ``theme`` prompts (generative models): each answer gives, for its comparison of trait A with trait B, the
  probability that the model picks A, B or "neither" — the normalised option probabilities in ``choice``
  mode, the share of matched samples in ``generate`` mode (unmatched samples are counted, not scored). A
  trait's score for a group is the mean over all its comparisons (both presentation orders pooled).
- ``ilps`` prompts (masked / span-filling models): the increased log-probability score
  log p(trait | group template) − log p(trait | neutral template), averaged over the templates.
"""

from __future__ import annotations

import json
from typing import Any, cast

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.data import NEUTRAL, group_ids, trait_ids
from biasatlas.probes.leakage.match import NEITHER, match_answer

CELL_COLUMNS = ["model", "mode", "method", "variant", "lang", "group", "trait", "score", "n"]


def variant_label(model: str, method: str, mode: str) -> str:
    """One name for a model measured one way: ``local:X [theme/choice]``."""
    return f"{model} [{method}/{mode}]" if method == "theme" else f"{model} [{method}]"


def _answered(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """The answered rows of one method (none when the frame holds no leakage answers at all)."""
    if frame.empty or "method" not in frame.columns:
        return frame.iloc[0:0]
    return frame[(frame["status"] == "answered") & (frame["method"] == method)]


def theme_choices(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per answered theme request: p(A), p(B), p(neither), and how a generated answer matched."""
    rows = _answered(frame, "theme")
    records: list[dict[str, Any]] = []
    for row in cast(list[dict[str, Any]], rows.to_dict(orient="records")):
        base = {
            "model": row["model"], "mode": row["mode"], "lang": row["language"], "group": row["group"],
            "category": row["category"], "trait_a": row["trait_a"], "trait_b": row["trait_b"],
            "order": row["order"], "prompt_id": row["prompt_id"], "sample_index": row["sample_index"],
        }
        if row["mode"] == "choice":
            probs: dict[str, float] = row["option_probs"] or {}
            values = [float(probs.get(o, np.nan)) for o in tuple(row["options"])]
            records.append({**base, "p_a": values[0], "p_b": values[1], "p_neither": values[2],
                            "level": "choice", "reason": None, "text": row["text"]})
            continue
        match = match_answer(row["text"], (row["trait_a"], row["trait_b"], NEITHER), row["language"])
        hit = {row["trait_a"]: "p_a", row["trait_b"]: "p_b", NEITHER: "p_neither"}
        scores = {"p_a": 0.0, "p_b": 0.0, "p_neither": 0.0}
        if match.choice is None:
            scores = {k: np.nan for k in scores}
        else:
            scores[hit[match.choice]] = 1.0
        records.append({**base, **scores, "level": match.level, "reason": match.reason, "text": row["text"]})
    return pd.DataFrame.from_records(records)


def theme_cells(choices: pd.DataFrame) -> pd.DataFrame:
    """Trait × group scores from :func:`theme_choices`: mean over samples per prompt, then over comparisons."""
    if choices.empty:
        return pd.DataFrame(columns=CELL_COLUMNS)
    keys = ["model", "mode", "lang", "group", "trait_a", "trait_b", "order", "prompt_id"]
    per_prompt = choices.groupby(keys, dropna=False)[["p_a", "p_b"]].mean().reset_index()
    cols = ["model", "mode", "lang", "group", "trait", "score"]
    long = pd.concat(
        [
            per_prompt.rename(columns={"trait_a": "trait", "p_a": "score"})[cols],
            per_prompt.rename(columns={"trait_b": "trait", "p_b": "score"})[cols],
        ],
        ignore_index=True,
    ).dropna(subset=["score"])
    cells = long.groupby(["model", "mode", "lang", "group", "trait"]).agg(score=("score", "mean"), n=("score", "size"))
    cells = cells.reset_index()
    cells["method"] = "theme"
    cells["variant"] = [variant_label(m, "theme", d) for m, d in zip(cells["model"], cells["mode"], strict=True)]
    return cells[CELL_COLUMNS]


def ilps_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Increased log-probability scores per trait × group, averaged over templates."""
    rows = _answered(frame, "ilps")
    if rows.empty:
        return pd.DataFrame(columns=CELL_COLUMNS)
    records: list[dict[str, Any]] = []
    for row in cast(list[dict[str, Any]], rows.to_dict(orient="records")):
        info = json.loads(row["info_json"] or "{}")
        logps = info.get("option_logprobs") or {}
        for trait, form in zip(row["option_traits"], row["options"], strict=True):
            if form in logps:
                records.append({"model": row["model"], "lang": row["language"], "group": row["group"],
                                "gender": row["gender"], "template_id": row["template_id"],
                                "trait": trait, "logp": float(logps[form])})
    lp = pd.DataFrame.from_records(records)
    if lp.empty:
        return pd.DataFrame(columns=CELL_COLUMNS)
    neutral = lp[lp["group"] == NEUTRAL].rename(columns={"logp": "logp_neutral"}).drop(columns="group")
    grouped = lp[lp["group"] != NEUTRAL].merge(neutral, on=["model", "lang", "gender", "template_id", "trait"])
    grouped["ilps"] = grouped["logp"] - grouped["logp_neutral"]
    cells = grouped.groupby(["model", "lang", "group", "trait"]).agg(score=("ilps", "mean"), n=("ilps", "size"))
    cells = cells.reset_index()
    cells["mode"] = "choice"
    cells["method"] = "ilps"
    cells["variant"] = [variant_label(m, "ilps", "choice") for m in cells["model"]]
    return cells[CELL_COLUMNS]


def association_cells(frame: pd.DataFrame, choices: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every trait × group score the study's leakage answers give, for every model variant and language
    (``choices``: :func:`theme_choices` of ``frame`` when already computed)."""
    parts = [theme_cells(theme_choices(frame) if choices is None else choices), ilps_cells(frame)]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=CELL_COLUMNS)
    return pd.concat(parts, ignore_index=True)


def matrix(cells: pd.DataFrame, variant: str, lang: str) -> pd.DataFrame:
    """The 32 × 30 matrix (traits × groups) of one variant and language; NaN where nothing was measured."""
    sub = cells[(cells["variant"] == variant) & (cells["lang"] == lang)]
    wide = sub.pivot_table(index="trait", columns="group", values="score", aggfunc="mean")
    return wide.reindex(index=list(trait_ids()), columns=list(group_ids())).astype(float)
