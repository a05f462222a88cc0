"""From stored answers to model association matrices (32 traits × 30 groups per model and language).

- ``theme`` prompts (generative models): each answer gives, for its comparison of trait A with trait B, the
  probability that the model picks A, B or "neither" — the normalised option probabilities in ``choice``
  mode, the share of matched samples in ``generate`` mode (unmatched samples are counted, not scored). A
  trait's score for a group is the mean over all its comparisons (both presentation orders pooled).
- ``ilps`` prompts (masked / span-filling models): the increased log-probability score
  log p(trait | group template) − log p(trait | neutral template), averaged over the templates. For a masked
  model each log p is a pseudo-log-likelihood (the option's tokens masked in turn), so the score is a
  PLL-ILPS, not the sensitivity test (SeT) paper 004 used for mBERT; for a span model (mT5) it is the span's
  log-probability, as in the paper.
"""

from __future__ import annotations

import json
from typing import Any, cast

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.data import NEUTRAL, group_ids, trait_ids
from biasatlas.probes.leakage.match import NEITHER, match_answer

PLL_ILPS = "ILPS on pseudo-log-likelihoods (PLL-ILPS)"
CELL_COLUMNS = ["model", "mode", "method", "variant", "lang", "group", "trait", "score", "n"]


def variant_label(model: str, method: str, mode: str) -> str:
    """One name for a model measured one way: ``local:X [theme/choice]``; a masked model's ILPS is computed
    from pseudo-log-likelihoods and says so (``masked:X [ilps-pll]``), a span model's is ``span:X [ilps]``."""
    if method == "theme":
        return f"{model} [{method}/{mode}]"
    return f"{model} [ilps-pll]" if model.startswith("masked:") else f"{model} [{method}]"


def measure(variant: str) -> str:
    """What a variant's association scores are, in words (printed beside every table that shows them)."""
    if variant.endswith("[ilps-pll]"):
        return (f"{PLL_ILPS}: log p(trait | group) - log p(trait | neutral), each a pseudo-log-likelihood "
                "(tokens masked in turn); not the sensitivity test (SeT) paper 004 used for mBERT")
    if variant.endswith("[ilps]"):
        return "ILPS: log p(trait | group) - log p(trait | neutral), span log-probabilities (paper 004's mT5 measure)"
    if variant.endswith("[theme/generate]"):
        return "theme choice: share of sampled answers naming the trait (paper 004's GPT-3.5 measure)"
    return "theme choice: normalised probability of the trait among (A, B, neither)"


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
        agreement = row.get("agreement")  # the baseline a group is compared with (older studies: gender)
        if not isinstance(agreement, str):
            agreement = row["gender"]
        for trait, form in zip(row["option_traits"], row["options"], strict=True):
            if form in logps:
                records.append({"model": row["model"], "lang": row["language"], "group": row["group"],
                                "agreement": agreement, "template_id": row["template_id"],
                                "trait": trait, "logp": float(logps[form])})
    lp = pd.DataFrame.from_records(records)
    if lp.empty:
        return pd.DataFrame(columns=CELL_COLUMNS)
    neutral = lp[lp["group"] == NEUTRAL].rename(columns={"logp": "logp_neutral"}).drop(columns="group")
    grouped = lp[lp["group"] != NEUTRAL].merge(neutral, on=["model", "lang", "agreement", "template_id", "trait"])
    grouped["ilps"] = grouped["logp"] - grouped["logp_neutral"]
    cells = grouped.groupby(["model", "lang", "group", "trait"]).agg(score=("ilps", "mean"), n=("ilps", "size"))
    cells = cells.reset_index()
    cells["mode"] = "choice"
    cells["method"] = "ilps"
    cells["variant"] = [variant_label(str(m), "ilps", "choice") for m in cells["model"]]
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
