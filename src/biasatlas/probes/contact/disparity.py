"""Group disparity of the contact probe: which group of an axis gets the biased decision more often.

Family: one model × mode × language × axis; its groups are the axis's groups. Every group is asked the same
*questions*: a template cell × scale × action × framing; in the nine MMHB packs a group's no-contact text does not
change with the contact principle, so the cells that share it are one question (answered once, counted once).
Per group and question: the majority decision of its readable samples (a tie: no decision). Each question
enters the tests (:mod:`biasatlas.stats.disparity`) with the groups that have a decision on it (a group whose
wording its language's slots cannot always take, such as fr "lesbienne", is compared on the questions it was
asked); the P(biased) tests use the questions every group has. The interval of a
group's effect is clustered on the no-contact question its framed questions belong to (the independent unit of
the contact tests). Levels: ``all`` (the three framings pooled: the headline, three times the questions, and the
framing's own effect is the contact tests' question) and each framing on its own (each its own family).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.stats.disparity import (
    binary_groups,
    binary_omnibus,
    continuous_groups,
    continuous_omnibus,
    group_mde,
    step_down,
)

FAMILY = ("model", "mode", "language", "axis")
#: what makes two prompts the same question for two groups
CELL = ("template_set", "template_id", "scale", "action")
LEVELS = ("all", "none", "positive", "negative")
HEADLINE_LEVEL = "all"


def question_rows(group_frame: pd.DataFrame, keys: tuple[str, ...] = ()) -> pd.DataFrame:
    """Per group × question: its decision (majority of the readable samples), mean P(biased) and the question's
    no-contact unit. A question is the first (template cell, framing) of the texts one group is asked alike.

    ``keys``: columns that split the frame into families (each grouping leads with them, so one call answers
    every family as one call per family would, rows ordered by family)."""
    k = list(keys)
    frame = group_frame.copy()
    text = frame["key"] if "key" in frame.columns else frame["messages_json"]
    frame["_text"] = text.astype(str)
    cell = frame[CELL[0]].astype(str)
    for column in CELL[1:]:
        cell = cell + "|" + frame[column].astype(str)
    frame["_cell"] = cell
    frame["_q"] = cell + "|" + frame["contact"].astype(str)
    # per group, the texts shared by several cells are one question, named by the first cell that asks it
    first = frame.groupby([*k, "group", "contact", "_text"])["_q"].transform("min")
    frame["question"] = first
    none = frame[frame["contact"] == "none"].groupby([*k, "group", "_cell"])["question"].first().rename("unit")
    unit = frame[[*k, "group", "_cell"]].merge(none.reset_index(), on=[*k, "group", "_cell"], how="left")["unit"]
    frame["unit"] = unit.set_axis(frame.index).fillna(frame["_cell"])
    answers = frame.drop_duplicates([*k, "group", "question", "_text", "sample_index"])
    readable = answers[answers["biased"].notna()]
    share = readable.groupby([*k, "group", "question"])["biased"].mean()
    decision = (share > 0.5).astype(float).where(share != 0.5)
    p = pd.to_numeric(answers["p_biased"], errors="coerce") if "p_biased" in answers else None
    out = pd.DataFrame({"decision": decision})
    if p is not None and p.notna().any():
        out["p_biased"] = answers.assign(p_biased=p).groupby([*k, "group", "question"])["p_biased"].mean()
    units = frame.groupby([*k, "group", "question"])[["unit", "contact"]].first()
    return out.join(units, how="outer").reset_index()


def _wide(rows: pd.DataFrame, column: str, complete: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """Questions × groups of ``column`` (NaN: the group has no decision on it; ``complete``: only the questions
    every group has), questions of two groups at least, and each question's unit.

    The table is ``rows.pivot(index="question", columns="group")``, built from integer codes with numpy (a pivot
    per family and level is most of the disparity's time in a study of many models)."""
    q_codes, questions = pd.factorize(rows["question"].to_numpy(dtype=object), sort=True)
    g_codes, groups = pd.factorize(rows["group"].to_numpy(dtype=object), sort=True)
    cells = q_codes.astype(np.int64) * max(len(groups), 1) + g_codes
    if (q_codes < 0).any() or (g_codes < 0).any() or len(np.unique(cells)) < len(cells):
        wide = rows.pivot(index="question", columns="group", values=column)  # what the pivot says of odd rows
        units = rows.groupby("question")["unit"].first().reindex(wide.index)
        keep = wide.notna().all(axis=1) if complete else wide.notna().sum(axis=1) >= 2
        return wide[keep], units[keep].astype(str).to_numpy()
    values = np.full((len(questions), len(groups)), np.nan)
    values[q_codes, g_codes] = rows[column].to_numpy(float)
    filled = (~np.isnan(values)).sum(axis=1)
    keep = filled == len(groups) if complete else filled >= 2
    unit = rows["unit"].to_numpy(dtype=object)
    known = np.flatnonzero(pd.notna(unit))  # the first unit of each question (a groupby's first())
    found, first = np.unique(q_codes[known], return_index=True)
    per_question = np.full(len(questions), None, dtype=object)
    per_question[found] = unit[known[first]]
    wide = pd.DataFrame(values[keep], index=pd.Index(questions[keep], name="question"),
                        columns=pd.Index(groups, name="group"))
    return wide, per_question[keep].astype(str)


def _answer_quality(outcomes: pd.DataFrame) -> dict[tuple[Any, ...], dict[str, dict[str, Any]]]:
    """Per family and group: answers, unreadable, refusals (for the answer flags of its row)."""
    none = outcomes["decision"] == "none"
    if "reason" in outcomes:
        refusal = none & outcomes["reason"].fillna("").astype(str).str.lower().str.contains("refus")
    else:
        refusal = pd.Series(False, index=outcomes.index)
    counts = pd.DataFrame({"answers": 1, "unreadable": none.astype(int), "refusals": refusal.astype(int)},
                          index=outcomes.index).groupby([outcomes[c] for c in [*FAMILY, "group"]], sort=True).sum()
    out: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for key, answers, unreadable, refusals in zip(counts.index.tolist(), *(counts[c].tolist() for c in counts),
                                                  strict=True):
        out.setdefault(tuple(key[:-1]), {})[str(key[-1])] = {"answers": answers, "unreadable": unreadable,
                                                             "refusals": refusals}
    return out


def _family_rows(labels: dict[str, Any], rows: pd.DataFrame, level: str, alpha: float,
                 quality: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    part = rows if level == "all" else rows[rows["contact"] == level]
    groups_asked = sorted(part["group"].astype(str).unique())
    out: list[dict[str, Any]] = []
    wide, units = _wide(part, "decision", complete=False)
    wide = wide.loc[:, wide.notna().any()]
    base = {**labels, "level": level, "groups": len(groups_asked)}
    if wide.shape[1] >= 2 and len(wide):
        groups = [str(g) for g in wide.columns]
        table = wide.to_numpy(float)
        omnibus = binary_omnibus(table, seed=0)
        effects = step_down(table, groups, units, alpha, binary_groups)
        mde = group_mde(len(wide), len(groups), float(np.nanmean(table)), alpha)
        common = {**base, "measure": "decision", "questions": len(wide), "units": len(np.unique(units)),
                  "omnibus_test": omnibus.method, "omnibus_statistic": omnibus.statistic, "omnibus_p": omnibus.p,
                  "omnibus_varying": omnibus.varying, "mde": mde}
        for e in effects:
            out.append({**common, "group": e.group, "value": e.value, "others": e.others, "effect": e.effect,
                        "ci_low": e.ci_low, "ci_high": e.ci_high, "statistic": e.statistic, "p": e.p,
                        "min_p": e.min_p, "p_adj": e.p_adj, "n": e.n, "units": e.units,
                        "test": "exact conditional test within questions (the group's biased answers, Poisson-"
                        "binomial null)", **quality.get(e.group, {})})
    if "p_biased" in part.columns:
        wide_p, units_p = _wide(part, "p_biased", complete=True)
        if wide_p.shape[1] >= 2 and len(wide_p):
            groups = [str(g) for g in wide_p.columns]
            omnibus = continuous_omnibus(wide_p.to_numpy(float))
            for e in step_down(wide_p.to_numpy(float), groups, units_p, alpha, continuous_groups):
                out.append({**base, "measure": "P(biased)", "questions": len(wide_p),
                            "omnibus_test": omnibus.method, "omnibus_statistic": omnibus.statistic,
                            "omnibus_p": omnibus.p, "omnibus_varying": omnibus.varying, "group": e.group,
                            "value": e.value, "others": e.others, "effect": e.effect, "ci_low": e.ci_low,
                            "ci_high": e.ci_high, "statistic": e.statistic, "p": e.p, "min_p": e.min_p,
                            "p_adj": e.p_adj, "n": e.n, "units": e.units, "mde": None,
                            "test": "t-test of the mean difference per no-contact question",
                            **quality.get(e.group, {})})
    left_out = sorted(set(groups_asked) - {str(g) for g in wide.columns}) if len(wide) else groups_asked
    for group in left_out:  # a group without a decision on the questions the others share: not tested
        out.append({**base, "measure": "decision", "group": group, "questions": len(wide), "n": 0, "units": 0,
                    "test": "not tested: no decision on the questions the other groups share",
                    **quality.get(group, {})})
    return out


def disparity(outcomes: pd.DataFrame, alpha: float = 0.05, levels: tuple[str, ...] = LEVELS) -> list[dict[str, Any]]:
    """Every family's group rows (see the module): per level and measure, one row per group (``levels``: those
    levels only; the headline's is ``all``)."""
    if outcomes.empty or "group" not in outcomes.columns:
        return []
    rows: list[dict[str, Any]] = []
    quality = _answer_quality(outcomes)
    # one question_rows call for every family (per-family pandas calls dominate a study of many models)
    families = outcomes.dropna(subset=list(FAMILY))
    questions = question_rows(families, FAMILY)
    # plain object columns: the per-family slicing, factorizing and pivots below are many small operations, each
    # several times slower on arrow-backed strings
    questions = questions.astype({c: object for c in questions.columns if questions[c].dtype == "string"
                                  or str(questions[c].dtype) == "str"})
    has_p = "p_biased" in questions.columns
    for key, part in questions.groupby(list(FAMILY), sort=True):
        labels = dict(zip(FAMILY, key, strict=True))
        if part["group"].nunique() < 2:
            continue
        part = part.drop(columns=list(FAMILY)).reset_index(drop=True)
        if has_p and not part["p_biased"].notna().any():  # this family has no probabilities (generate mode)
            part = part.drop(columns="p_biased")
        contacts = set(part["contact"])
        for level in levels:
            if level != "all" and level not in contacts:
                continue
            rows.extend(_family_rows(labels, part, level, alpha, quality.get(tuple(key), {})))
    return rows


def statistics(outcomes: pd.DataFrame, alpha: float = 0.05, levels: tuple[str, ...] = LEVELS) -> list[dict[str, Any]]:
    """The group-disparity statistics rows of ``outcomes`` (as the summary's, for the report's section)."""
    from biasatlas.tidy.disparity import disparity_rows

    return disparity_rows("contact", disparity(outcomes, alpha, levels), alpha, FAMILY)


METHODS = ("Contact: per model × mode × language × axis, the questions (template cell × scale × action × "
           "framing) every group is asked; the group's share of biased decisions minus the other groups' "
           "mean, Newcombe interval on the answers deflated by the design effect of the no-contact questions; "
           "exact conditional test within questions; Holm over the groups of the axis.")


def add_to_section(section: Any, outcomes: pd.DataFrame, alpha: float = 0.05) -> None:
    """The report's group-disparity block (headline sentences, forest plot, table) in the probe's section."""
    from biasatlas.report.disparity_block import add_disparity

    add_disparity(section, statistics(outcomes, alpha), "axis", METHODS, drill="contact")
