"""Tables of the contact probe, from its outcomes frame (pure functions); the paired tests are in ``effects``."""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.contact.adherence import adherence_table
from biasatlas.probes.contact.effects import contact_tests
from biasatlas.probes.contact.read import MOVE_THRESHOLD
from biasatlas.stats.proportions import bounded_mean_interval, mean_interval, rate_table

__all__ = [
    "BASE", "DECISIONS", "TABLES", "acquiescence_table", "adherence_table", "all_tables", "contact_tests",
    "decision_table", "direction_table", "framing_agreement_table", "probability_direction_table",
    "probability_table", "reasons_table", "records",
]

DECISIONS = ("unbiased", "biased", "none")
BASE = ["model", "mode", "language"]

# The tables of the papers: name -> grouping columns (after model, mode, language).
TABLES: dict[str, list[str]] = {
    "by_contact": ["scale", "contact"],  # 001 Table 3 (000's Tables 1-4, per dimension: paper_tables)
    "by_group": ["axis", "group"],  # per model (000's Tables 5-8 pool the models: paper_tables)
    "by_scenario": ["axis", "scenario"],  # per model (000's Tables 9-12: paper_tables)
    "by_axis_scenario": ["axis", "scenario", "contact"],  # 001 Figure 3 (per contact)
    "by_principle": ["principle", "contact"],
    "by_axis_contact": ["axis", "contact"],
    "by_contact_action": ["scale", "contact", "action"],  # action polarity: yes-saying shows here
}


def distinct_answers(frame: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """One row per stored answer within each group of ``cols``: prompt sets sharing a text (its ``key``) share
    one answer, which counts once (issue 37: the MMHB packs' no-contact questions)."""
    if "key" not in frame.columns:
        return frame
    return frame.drop_duplicates(subset=[*cols, "key"])


def decision_table(outcomes: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """n (distinct answers), counts, % and Wilson 95% intervals of unbiased / biased / none per group."""
    cols = [c for c in BASE + by if c in outcomes.columns]
    return rate_table(distinct_answers(outcomes, cols), cols, "decision", DECISIONS)


def all_tables(outcomes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: decision_table(outcomes, by) for name, by in TABLES.items()}


def reasons_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Why answers could not be scored (refusal, hedge, both options, no answer), with counts."""
    none = outcomes[outcomes["decision"] == "none"]
    if none.empty:
        return pd.DataFrame(columns=[*BASE, "reason", "count"])
    return none.groupby([*BASE, "reason"], dropna=False).size().reset_index(name="count")


def acquiescence_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Yes-saying: the share of readable answers that are the affirmative option, with Wilson intervals.

    Per model × mode × language × scale, pooled over the framings (contact "all") and per framing.
    With both actions asked, a model that always says "Yes"/"Likely" is 100% acquiescent while it
    scores about 50% biased pooled (paper 001, Table 3); ``actions`` lists the actions behind a row.
    """
    rows = outcomes[outcomes["affirmative"].notna()]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(yes_no=rows["affirmative"].map({1.0: "affirmative", 0.0: "negative"}))
    both = pd.concat([rows.assign(contact="all"), rows], ignore_index=True)
    keys = [*BASE, "scale", "contact"]
    table = rate_table(both, keys, "yes_no", ("affirmative", "negative"))
    actions = both.groupby(keys, sort=True)["action"].agg(lambda a: ", ".join(sorted(set(map(str, a)))))
    return table.merge(actions.rename("actions").reset_index(), on=keys, how="left")


def framing_agreement_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Framing agreement (our per-prompt measure, not paper 001's): the share of framed answers whose
    decision agrees with the framing (positive contact: unbiased; negative contact: biased).

    Per model × mode × language × scale, for positive and negative contact and both pooled ("both"),
    over the answers with a decision (column ``ch`` of the outcomes); Wilson 95% intervals. ``unscored``
    counts framed prompts without one. It does not compare with the no-contact answer: under positive
    framing it is the share unbiased, so a model that never changes its decision and always engages
    scores 100%. Paper 001's adherence (Table 3) is :func:`adherence_table`.
    """
    framed = outcomes[outcomes["contact"] != "none"]
    if framed.empty:
        return pd.DataFrame()
    framed = pd.concat([framed, framed.assign(contact="both")], ignore_index=True)
    keys = [*BASE, "scale", "contact"]
    scored = framed[framed["ch"].notna()]
    if scored.empty:
        return pd.DataFrame()
    scored = scored.assign(follows=scored["ch"].map({1.0: "follows", 0.0: "against"}))
    table = rate_table(scored, keys, "follows", ("follows", "against"))
    unscored = framed[framed["ch"].isna()].groupby(keys, sort=True).size().rename("unscored").reset_index()
    table = table.merge(unscored, on=keys, how="left")
    table["unscored"] = table["unscored"].fillna(0).astype(int)
    return table


def _mean_rows(frame: pd.DataFrame, keys: list[str], column: str, name: str, *,
               probability: bool = False) -> pd.DataFrame:
    """Per group of ``keys``: n, the mean of ``column`` and its t 95% interval (for a probability: Wilson's
    where the t interval leaves [0, 1], ``ci_method`` saying which)."""
    out = []
    for key, group in frame.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        values = group[column].to_numpy(float)
        mean, low, high, method = bounded_mean_interval(values) if probability else (*mean_interval(values), "t")
        row: dict[str, Any] = {**dict(zip(keys, key, strict=True)), "n": len(group), name: mean, "ci_low": low,
                               "ci_high": high}
        if probability:
            row["ci_method"] = method
        out.append(row)
    return pd.DataFrame(out)


def probability_table(outcomes: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean P(biased option) per group with a t 95% interval over prompts (choice mode only).

    P(biased) is the normalised probability of the option the paper scores as biased: "No" for a
    positive action, "Yes" for a negative one. A prompt's samples are averaged first.
    """
    values = pd.to_numeric(outcomes["p_biased"], errors="coerce")
    rows = outcomes.assign(p_biased=values)[values.notna()]
    if rows.empty:
        return pd.DataFrame()
    keys = [c for c in BASE + by if c in rows.columns]
    per_prompt = rows.groupby([*keys, "prompt_id"], sort=True, dropna=False)["p_biased"].mean().reset_index()
    return _mean_rows(per_prompt, keys, "p_biased", "mean", probability=True)


def direction_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Share of framed prompts whose decision moved toward the contact framing (vs no contact).

    Per model × scale × contact: toward (biased -> unbiased under positive contact, unbiased -> biased
    under negative), same, away, undetermined (either answer without a decision).
    """
    rows = outcomes[outcomes["contact"] != "none"]
    if rows.empty:
        return pd.DataFrame()
    return rate_table(rows, [*BASE, "scale", "contact"], "moved", ("toward", "same", "away", "undetermined"))


def probability_direction_table(outcomes: pd.DataFrame, threshold: float = MOVE_THRESHOLD) -> pd.DataFrame:
    """The change in P(unbiased) toward the framing, per model × scale × contact (choice mode only).

    Per prompt set (samples averaged): the change versus the no-contact prompt, signed so that a move
    the way the framing pushes is positive. Mean change with a t 95% interval over prompt sets, and the
    % of sets that moved toward (change >= ``threshold``), stayed within it (same) or moved away.
    """
    change = pd.to_numeric(outcomes["p_change"], errors="coerce")
    rows = outcomes.assign(p_change=change)[(outcomes["contact"] != "none") & change.notna()]
    if rows.empty:
        return pd.DataFrame()
    keys = [*BASE, "scale", "contact"]
    per_set = rows.groupby([*keys, "set_id"], sort=True)["p_change"].mean().reset_index()
    table = _mean_rows(per_set, keys, "p_change", "mean_change")
    shares = []
    for _, group in per_set.groupby(keys, sort=True):
        moved = group["p_change"].to_numpy(float)
        shares.append({"toward_pct": 100 * float((moved >= threshold).mean()),
                       "same_pct": 100 * float((abs(moved) < threshold).mean()),
                       "away_pct": 100 * float((moved <= -threshold).mean())})
    table = pd.concat([table, pd.DataFrame(shares)], axis=1)
    table["threshold"] = threshold
    return table


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows (NaN -> None)."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{str(k): v for k, v in r.items()} for r in clean.to_dict(orient="records")]
