"""The story analysis: refusal rate, distributions of extracted values, association mining, language sets."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from biasatlas.probes.stories import harm as stories_harm
from biasatlas.probes.stories.profiles import load_profiles
from biasatlas.probes.stories.seeds import UNKNOWN, load_seeds
from biasatlas.stats.associations import AssociationConfig, AssociationResult, jaccard_matrix, mine_associations
from biasatlas.stats.proportions import wilson_interval
from biasatlas.store import Store

#: the table-level correction (the paper's); cells are always corrected with Benjamini-Yekutieli
CORRECTION = "bh"
CORRECTION_RULE = (
    "the stories analysis corrects each prompted attribute's tables with Benjamini-Hochberg (the paper's; "
    "the sequential Monte Carlo is built to reach BH decisions) and each table's cells with Benjamini-Yekutieli"
)


def correction_error(correction: str | None) -> str | None:
    """The one-line error for a --correction the analysis cannot apply; None when it can (bh or unset)."""
    if correction is None or correction == CORRECTION:
        return None
    return f"--correction {correction!r}: {CORRECTION_RULE}; valid: {CORRECTION}"


def associations(
    profiles: pd.DataFrame, per_language: bool = False, config: AssociationConfig | None = None
) -> AssociationResult:
    """The two-step association analysis, per model (and per language)."""
    dims = list(load_seeds("en").dimensions)
    by = ("model", "language") if per_language else ("model",)
    return mine_associations(profiles, dims, by=by, config=config)


def distributions(profiles: pd.DataFrame) -> pd.DataFrame:
    """Share of each extracted value per model × language × attribute (prompted attribute excluded)."""
    dims = list(load_seeds("en").dimensions)
    parts = []
    for dim in dims:
        sub = profiles[profiles["base_attribute"] != dim]
        if sub.empty:
            continue
        counts = sub.groupby(["model", "language", dim]).size().rename("count").reset_index()
        counts = counts.rename(columns={dim: "value"})
        counts["attribute"] = dim
        totals = counts.groupby(["model", "language"])["count"].transform("sum")
        counts["n"] = totals
        counts["share"] = counts["count"] / totals
        parts.append(counts)
    if not parts:
        return pd.DataFrame(columns=["model", "language", "attribute", "value", "count", "n", "share"])
    out = pd.concat(parts, ignore_index=True)
    return out[["model", "language", "attribute", "value", "count", "n", "share"]]


def association_records(result: AssociationResult, limit: int | None = None) -> list[dict[str, Any]]:
    """The associations as JSON-ready records (the first ``limit`` if given)."""
    frame = result.associations if limit is None else result.associations.head(limit)
    return json.loads(frame.to_json(orient="records"))


def language_sets(result: AssociationResult) -> dict[str, set[tuple[str, ...]]]:
    """Per language, the associations (A, a, B, b) that hold there for at least one model."""
    cells = result.cells
    if cells.empty or "language" not in cells.columns:
        return {}
    held = cells[cells["association"]]
    return {
        str(lang): {tuple(map(str, k)) for k in g[["base_attribute", "base_value", "compared_attribute",
                                                   "compared_value"]].itertuples(index=False)}
        for lang, g in held.groupby("language")
    }


def summarise(
    store: Store,
    config: AssociationConfig | None = None,
    groups: dict[str, dict[str, list[str]]] | None = None,
    correction: str | None = None,
) -> dict[str, Any]:
    """Counts, refusal rate (Wilson CI), association tables globally and per language.

    ``correction`` other than ``bh`` is not applied (see :data:`CORRECTION_RULE`): the summary says so.
    """
    profiles, counts = load_profiles(store)
    out: dict[str, Any] = {"counts": counts}
    if correction_error(correction):
        out["correction_note"] = f"--correction {correction} not applied: {CORRECTION_RULE}"
    answered = counts.get("stories", {}).get("answered", 0)
    if answered:
        refusals = counts["stories"]["refusals"]
        lo, hi = wilson_interval(refusals, answered)
        out["refusal_rate"] = {"n": answered, "refusals": refusals, "rate": refusals / answered,
                               "ci95": [lo, hi], "method": "Wilson score interval"}
    if profiles.empty:
        out["associations"] = []
        return out
    unknown = {
        dim: float((profiles.loc[profiles["base_attribute"] != dim, dim] == UNKNOWN).mean())
        for dim in load_seeds("en").dimensions
        if (profiles["base_attribute"] != dim).any()
    }
    out["unknown_rate_by_attribute"] = unknown
    config = config or AssociationConfig()
    glob = associations(profiles, False, config)
    out["method"] = method_text(config)
    out["tables"] = table_counts(glob)
    out["associations"] = association_records(glob)
    if profiles["language"].nunique() > 1:
        per = associations(profiles, True, config)
        out["per_language"] = {"tables": table_counts(per), "associations": association_records(per)}
        sets = language_sets(per)
        if sets:
            out["per_language"]["jaccard"] = jaccard_matrix(sets).round(4).to_dict()
        labels = harm_labels_for(store)
        if len(labels):
            out["per_language"]["specificity"] = stories_harm.language_specificity(per.associations, labels, groups)
    harm = stories_harm.summarise_harm(store)
    if harm:
        out["harm"] = harm
    return out


def harm_labels_for(store: Store) -> pd.Series:
    """Harmful/benign per association: human ratings when the study has them, else LLM judges."""
    human = stories_harm.human_ratings(store.dir)
    if not human.empty:
        return stories_harm.harm_labels(human)
    llm, _ = stories_harm.llm_ratings(store)
    return stories_harm.harm_labels(llm)


def table_counts(result: AssociationResult) -> dict[str, Any]:
    """How many tables were tested, found significant and kept; cells and associations found."""
    t = result.tables
    if t.empty:
        return {"tested": 0}
    return {
        "tested": len(t),
        "significant_bh": int(t["significant"].sum()),
        "kept_medium_or_large": int(t["kept"].sum()),
        "p_methods": t["p_method"].value_counts().to_dict(),
        "significant_cells_by": len(result.cells),
        "associations_lift_ge_min": len(result.associations),
        "slices": result.slices,
        "stories": result.n_stories,
    }


def method_text(config: AssociationConfig) -> str:
    """The methods paragraph of the analysis with these settings."""
    return (
        "Per generator model (and per language): contingency tables of the prompted attribute A against "
        "each extracted attribute B, unknown/other values and rows with fewer than "
        f"{config.min_row_total} stories removed; Fisher-Freeman-Halton exact test (scipy Monte Carlo, "
        f"seed {config.seed}, {config.resamples:,} resamples; strategy '{config.strategy}': asymptotic "
        "chi-square screen and sequential Monte Carlo that stops once the BH decision is certain), "
        f"Benjamini-Hochberg across B for each A at alpha {config.alpha}; bias-corrected Cramér's V "
        f"(Bergsma), tables with effect {'/'.join(config.effects)} kept; one-sided Fisher test per cell, "
        f"Benjamini-Yekutieli across the table's cells, lift >= {config.min_lift}."
    )

