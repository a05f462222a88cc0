"""Across languages, side by side: each group's effect in every language, and whether it differs.

Groups are aligned across languages by their descriptor id: the nine MMHB packs share MMHB ids
(``P_D001`` is "diabetic" in fr, es, ..., ko); en (HolisticBias text keys) and de/is (paper 000's keys)
align only with languages that use the same keys.

A group's effect in a language is its share of biased decisions minus the share of the other groups
of that language and model (a risk difference, Newcombe 95% interval: ``statsmodels``
``confint_proportions_2indep``). Comparing with the language's own groups matters: a language in
which the model is more biased towards everyone (a language-wide shift, e.g. more yes-saying) is not a
difference of the group. Whether the effect differs between languages is Cochran's Q test of
heterogeneity of these risk differences (``statsmodels.stats.meta_analysis.combine_effects``; each
language's difference and variance computed with the Agresti-Caffo adjustment — one biased and one
unbiased answer added to each side — so a share of 0 or 1 still has a variance), with I² and
Benjamini-Hochberg over the groups of one model x mode.

The unit is the *question*, one per stored answer (issue 37): rows with the same cache key (``key``: two
prompts of one text, e.g. the MMHB no-contact question that six prompt sets of a group share) are one answer
and count once, and the samples of one question (the same text, ``messages_json``, asked again) are one
unit: its decision is the majority of its readable samples (a tie leaves it out), as the paired tests
aggregate samples (:mod:`biasatlas.probes.contact.effects`). Modes (choice, generate) are never pooled:
every effect and test is per model x mode. ``n`` counts these questions. The two sides of a difference
ask the same scenarios; they are treated as independent samples (conservative when answers to one
scenario agree). Measured level on the real plans: docs/languages.md, "Units and level across languages".
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: what ``n`` counts (the export's n_unit)
UNIT = ("questions (a stored answer shared by several prompts counts once; a question's samples are one unit, "
        "their majority)")
#: the cells every effect and test is computed within (modes are never pooled)
CELL = ["model", "mode"]
METHOD = ("Cochran's Q test of heterogeneity over languages of the group's risk difference (its biased share "
          "− the other groups' of that language; Agresti-Caffo adjusted variances; statsmodels combine_effects), "
          "Benjamini-Hochberg over the groups of one model x mode; Newcombe 95% intervals per language; unit: "
          + UNIT)
#: fewer questions than this for a group in one of its languages: the Q test's chi-square is rough
MIN_ANSWERS = 10


def effects_by_language(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
                        outcome: str = "biased", model: str = "model", alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x mode x group x language: n questions (:func:`units`), biased count, share and its
    Wilson interval."""
    from statsmodels.stats.proportion import proportion_confint

    df = units(frame, group=group, language=language, outcome=outcome, model=model)
    rows = df.groupby([*CELL, group, language], sort=True)[outcome].agg(n="count", k="sum").reset_index()
    rows["k"] = rows["k"].astype(int)
    low, high = proportion_confint(rows["k"].to_numpy(), rows["n"].to_numpy(), alpha=alpha, method="wilson")
    rows["share"] = rows["k"] / rows["n"]
    rows["ci_low"], rows["ci_high"] = low, high
    return rows.rename(columns={group: "group", language: "language"})


def relative_effects(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
                     outcome: str = "biased", model: str = "model", label: str = "group",
                     alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x mode x group x language: the group's biased share, the other groups' share, their
    difference (``effect``) with its Newcombe interval, and the group's wording in that language (``label``)."""
    import pandas as pd
    from statsmodels.stats.proportion import confint_proportions_2indep

    df = units(frame, group=group, language=language, outcome=outcome, model=model, keep=(label,))
    shares = effects_by_language(df, group=group, language=language, outcome=outcome, alpha=alpha)
    labels = (df.groupby([*CELL, group, language], sort=True)[label].first() if label in df.columns else None)
    totals = shares.groupby([*CELL, "language"])[["n", "k"]].transform("sum")
    shares["n_rest"], shares["k_rest"] = totals["n"] - shares["n"], totals["k"] - shares["k"]
    shares = shares[shares["n_rest"] > 0].copy()
    shares["share_rest"] = shares["k_rest"] / shares["n_rest"]
    shares["effect"] = shares["share"] - shares["share_rest"]
    if len(shares):  # statsmodels takes arrays: one call, not one per row
        low, high = confint_proportions_2indep(shares["k"].to_numpy(float), shares["n"].to_numpy(float),
                                               shares["k_rest"].to_numpy(float), shares["n_rest"].to_numpy(float),
                                               method="newcomb", compare="diff", alpha=alpha)
        shares["effect_ci_low"], shares["effect_ci_high"] = low, high
    else:
        shares["effect_ci_low"] = shares["effect_ci_high"] = pd.Series(dtype=float)
    shares["label"] = ([str(labels.get((r.model, r.mode, r.group, r.language), r.group))
                        for r in shares.itertuples()] if labels is not None else shares["group"].astype(str))
    columns = [*CELL, "group", "language", "label", "n", "k", "share", "ci_low", "ci_high", "n_rest", "k_rest",
               "share_rest", "effect", "effect_ci_low", "effect_ci_high"]
    return pd.DataFrame(shares, columns=columns).reset_index(drop=True)


def language_differences(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
                         outcome: str = "biased", model: str = "model", alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x mode x group asked in two or more languages: Cochran's Q of its effect over
    languages (module doc); ``n``: the group's questions over its languages."""
    import numpy as np
    import pandas as pd
    from statsmodels.stats.meta_analysis import combine_effects
    from statsmodels.stats.multitest import multipletests

    effects = relative_effects(frame, group=group, language=language, outcome=outcome, model=model, alpha=alpha)
    out = []
    for (m, mode, g), rows in effects.groupby([*CELL, "group"], sort=True):
        if len(rows) < 2:
            continue
        p1 = (rows["k"] + 1) / (rows["n"] + 2)  # Agresti-Caffo
        p2 = (rows["k_rest"] + 1) / (rows["n_rest"] + 2)
        diff = (p1 - p2).to_numpy(float)
        var = (p1 * (1 - p1) / (rows["n"] + 2) + p2 * (1 - p2) / (rows["n_rest"] + 2)).to_numpy(float)
        with warnings.catch_warnings():  # the random-effects parts (unused here) take sqrt of a negative
            warnings.simplefilter("ignore", RuntimeWarning)
            res = combine_effects(diff, var, method_re="dl")
            q = res.test_homogeneity()
        constant = bool(((rows["k"] % rows["n"] == 0) & (rows["k_rest"] % rows["n_rest"] == 0)
                         & ((rows["k"] == 0) == (rows["k_rest"] == 0))).all()
                        and ((rows["k"] == 0).all() or (rows["k"] == rows["n"]).all()))
        flags, notes = [], []
        if constant:
            flags.append("one_option")
            notes.append("no variation: every answer of the group and of the others the same option")
        if int(rows["n"].min()) < MIN_ANSWERS:
            flags.append("few_answers")
            notes.append(f"few answers: {int(rows['n'].min())} questions in one language (fewer than {MIN_ANSWERS})")
        out.append({"model": m, "mode": mode, "group": g, "languages": ",".join(rows["language"]),
                    "n": int(rows["n"].sum()),
                    "q": 0.0 if constant else float(q.statistic), "dof": len(rows) - 1,
                    "p": 1.0 if constant else float(q.pvalue), "i2": 0.0 if constant else max(0.0, float(res.i2)),
                    "effect_min": float(rows["effect"].min()), "effect_max": float(rows["effect"].max()),
                    "flags": "; ".join(flags), "flag_notes": " | ".join(notes)})
    tests = pd.DataFrame(out, columns=[*CELL, "group", "languages", "n", "q", "dof", "p", "i2", "effect_min",
                                       "effect_max", "flags", "flag_notes"])
    tests["p_adj"] = np.nan
    for _, idx in tests.groupby(CELL).groups.items():
        tests.loc[idx, "p_adj"] = multipletests(tests.loc[idx, "p"], alpha=alpha, method="fdr_bh")[1]
    tests["differs"] = (tests["p_adj"] < alpha) & ~tests["flags"].str.contains("one_option")
    tests.attrs["method"] = METHOD
    return tests


def across_languages(frame: pd.DataFrame, alpha: float = 0.05) -> dict[str, Any] | None:
    """The summary block: effects per language (95% intervals, like the summary's tables) and the tests
    (``differs`` at ``alpha``), or None when the answers are in one language."""
    df = frame[frame["biased"].notna()] if "biased" in frame.columns else frame
    if df.empty or df["language"].nunique() < 2:
        return None
    effects = relative_effects(df)
    tests = language_differences(df, alpha=alpha)  # its per-language intervals are not used
    aligned = set(tests["group"])
    effects = effects[effects["group"].isin(aligned)]
    return {"method": METHOD, "unit": UNIT, "alpha": alpha, "min_answers": MIN_ANSWERS,
            "effects": _records(effects), "tests": _records(tests)}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    import math

    rows = frame.to_dict(orient="records")
    return [{str(k): (None if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v))
             for k, v in row.items()} for row in rows]


def units(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
          outcome: str = "biased", model: str = "model", keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per model x mode x group x language x question: its ``outcome`` (module doc).

    A row of a key already seen (the same stored answer) is dropped; the samples of a question (rows of one
    ``messages_json``, else one ``prompt_id``, else one key) become one row, 1.0 when most of its readable
    samples are 1, 0.0 when most are 0, left out on a tie. A frame without these columns (hand-built) has a
    question per row; without ``mode``, one mode ("all")."""
    import numpy as np
    import pandas as pd

    missing = [c for c in (group, language, outcome) if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame lacks column(s) {missing}")
    source = next((c for c in ("messages_json", "prompt_id", "key") if c in frame.columns), None)
    used = {group, language, outcome, model, "mode", "key", source, *keep} & set(frame.columns)
    df = frame.loc[frame[outcome].notna(), [c for c in frame.columns if c in used]].copy()
    df["model"] = df[model].astype(str) if model in df.columns else "all"
    df["mode"] = df["mode"].astype(str) if "mode" in df.columns else "all"
    df[outcome] = df[outcome].astype(float)
    cell = [*CELL, group, language]
    if "key" in df.columns:  # the cache key includes backend and mode: one key is one stored answer
        df = df[df["key"].isna() | ~df.duplicated([*cell, "key"])]
    codes = pd.factorize(df[source])[0] if source else np.full(len(df), -1)
    # a row without a text of its own (missing) is a question of its own
    df["_question"] = np.where(codes >= 0, codes, -1 - np.arange(len(df)))
    extra = [c for c in keep if c in df.columns and c not in cell]
    grouped = df.groupby([*cell, "_question"], sort=False)
    out = grouped[outcome].mean().rename("_share").to_frame()
    for column in extra:
        out[column] = grouped[column].first()
    out = out[out["_share"] != 0.5].reset_index()  # a tie of the readable samples: no decision
    out[outcome] = (out["_share"] > 0.5).astype(float)
    return out.drop(columns=["_share", "_question"])
