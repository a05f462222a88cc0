"""Reading the leakage probe's stored answers: one tidy row per answer with what it says."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.match import NEITHER
from biasatlas.probes.leakage.plan import NAME
from biasatlas.probes.leakage.scores import theme_choices
from biasatlas.store import Store

KEYS = ["prompt_id", "model", "mode", "sample_index"]
READ = ["p_a", "p_b", "p_neither", "decision", "match", "reason"]


def _decision(p_a: float, p_b: float, p_neither: float, trait_a: str, trait_b: str) -> str | None:
    """The option with the highest probability (a choice answer) or the one a generated answer named."""
    values = np.array([p_a, p_b, p_neither], dtype=float)
    if np.isnan(values).all():
        return None
    return (trait_a, trait_b, NEITHER)[int(np.nanargmax(values))]


def outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """The study frame with, per row: ``p_a``, ``p_b``, ``p_neither`` (theme prompts: the option
    probabilities in choice mode, 0/1 for a matched generated answer), ``decision`` (trait id, "neither" or
    None), ``match`` (choice, exact, contains, fuzzy, unmatched; "ilps" for masked-model scores, whose
    log-probabilities stay in ``info_json``) and ``reason`` (why nothing was read, or the row's status when
    it holds no answer). Nothing is dropped."""
    out = frame.copy()
    if out.empty or "method" not in out.columns:
        return out.assign(**{c: pd.Series(dtype=float if c.startswith("p_") else object) for c in READ})
    choices = theme_choices(out)
    if choices.empty:
        choices = pd.DataFrame(columns=[*KEYS, "p_a", "p_b", "p_neither", "level", "reason", "trait_a", "trait_b"])
    read = choices[[*KEYS, "p_a", "p_b", "p_neither", "level", "reason", "trait_a", "trait_b"]].copy()
    read["decision"] = [_decision(a, b, n, ta, tb) for a, b, n, ta, tb in
                        zip(read["p_a"], read["p_b"], read["p_neither"], read["trait_a"], read["trait_b"],
                            strict=True)]
    read = read.rename(columns={"level": "match"}).drop(columns=["trait_a", "trait_b"])
    out = out.merge(read, on=KEYS, how="left")
    ilps = (out["method"] == "ilps") & (out["status"] == "answered")
    out.loc[ilps, "match"] = "ilps"
    unanswered = out["status"] != "answered"
    out.loc[unanswered, "reason"] = out.loc[unanswered, "status"]
    return out


def load_outcomes(store: Store) -> pd.DataFrame:
    """Every stored leakage answer (one row per model × prompt × sample), read."""
    return outcomes(store.frame(probe=NAME))
