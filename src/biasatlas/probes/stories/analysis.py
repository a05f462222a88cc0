"""The story analysis: refusal rate, distributions of extracted values, association mining, language sets."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.stories import harm as stories_harm
from biasatlas.probes.stories.profiles import DEFAULT_VOTE, load_profiles
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
    by: tuple[str, ...] = ("model", "language") if per_language else ("model",)
    separate: tuple[str, ...] = ()
    if "template" in profiles.columns and profiles["template"].nunique() > 1:
        # stories of other prompt templates (imported with --all-templates) are separate slices
        by, separate = (*by, "template"), ("template",)
    return mine_associations(profiles, dims, by=by, config=config, separate=separate)


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


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-ready records at full precision: Python numbers (a p of 6.88e-14 stays 6.88e-14;
    pandas' ``to_json`` rounds to 10 decimals and wrote 0.0), NaN as None, lists kept."""
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _plain(value: Any) -> Any:
    """A cell as a plain JSON value (numpy scalars to Python, NaN to None)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    return value


def association_records(result: AssociationResult, limit: int | None = None) -> list[dict[str, Any]]:
    """The associations as JSON-ready records (the first ``limit`` if given), at full precision."""
    frame = result.associations if limit is None else result.associations.head(limit)
    return json_records(frame)


PER_MODEL_COLUMNS = ["model", "language", "template", "base_attribute", "base_value", "compared_attribute",
                     "compared_value", "count", "row_total", "fraction", "expected", "lift", "p", "q_by",
                     "cramers_v", "effect"]


def per_model_records(result: AssociationResult) -> list[dict[str, Any]]:
    """Every association in every slice (model, and language when per language) with its own figures."""
    frame = result.per_slice
    if frame.empty:
        return []
    frame = frame[[c for c in PER_MODEL_COLUMNS if c in frame.columns]]
    return json_records(frame)


def empty_reason(result: AssociationResult | None, counts: dict[str, Any], config: AssociationConfig) -> str:
    """Why there is no association: the first step of the procedure that left nothing."""
    st = counts.get("stories", {})
    if not st.get("planned"):
        return "no stories in the study"
    if result is None or not result.n_stories:
        left = [f"{st.get('answered', 0)} answered stories"]
        for key, text in (("refusals", "refusals"), ("empty", "empty"),
                          ("without_extraction", "not extracted yet"),
                          ("all_extractions_rejected", "extracted stories had every extraction rejected")):
            if st.get(key):
                left.append(f"{st[key]} {text}")
        return "no story with a usable profile: " + ", ".join(left)
    t = result.tables
    if t.empty:
        return (f"no contingency table: every prompted value has fewer than {config.min_row_total} stories with a "
                f"known compared value, or fewer than 2 values remain ({result.n_stories} profiles)")
    if not t["significant"].any():
        return (f"{len(t)} tables tested, none significant after Benjamini-Hochberg at alpha {config.alpha} "
                f"({result.n_stories} profiles)")
    if not t["kept"].any():
        return f"{int(t['significant'].sum())} significant tables, none with a {'/'.join(config.effects)} effect"
    if result.cells.empty:
        return "no cell of a kept table significant after Benjamini-Yekutieli"
    return f"no significant cell with lift >= {config.min_lift}"


SELF_EXTRACTION_WARNING = (
    "{models}: stories extracted only by their own generator (the default); a model reading its own "
    "stories shares their associations: the paper uses three independent extractors (--extractor a,b,c)"
)


def warnings_of(counts: dict[str, Any]) -> list[str]:
    """Warnings about the profiles: self-extraction and answers cut at the token limit."""
    out = []
    ex = counts.get("extraction", {})
    if ex.get("self_extraction_only"):
        out.append(SELF_EXTRACTION_WARNING.format(models=", ".join(ex["self_extraction_only"])))
    st = counts.get("stories", {})
    if st.get("cut_at_limit"):
        out.append(f"{st['cut_at_limit']} of {st.get('answered', 0)} stories hit the token limit (raise --max-tokens)")
    if ex.get("cut_at_limit"):
        out.append(f"{ex['cut_at_limit']} extraction answers hit the token limit (raise --extract-max-tokens)")
    return out


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
    vote: str = DEFAULT_VOTE,
) -> dict[str, Any]:
    """Counts, refusal rate (Wilson CI), association tables globally and per language.

    ``correction`` other than ``bh`` is not applied (see :data:`CORRECTION_RULE`): the summary says so.
    """
    profiles, counts = load_profiles(store, vote=vote)
    out: dict[str, Any] = {"counts": counts}
    warnings = warnings_of(counts)
    if warnings:
        out["warnings"] = warnings
    if correction_error(correction):
        out["correction_note"] = f"--correction {correction} not applied: {CORRECTION_RULE}"
    answered = counts.get("stories", {}).get("answered", 0)
    if answered:
        refusals = counts["stories"]["refusals"]
        lo, hi = wilson_interval(refusals, answered)
        out["refusal_rate"] = {"n": answered, "refusals": refusals, "rate": refusals / answered,
                               "ci95": [lo, hi], "method": "Wilson score interval"}
    config = config or AssociationConfig()
    if profiles.empty:
        out["associations"] = []
        out["per_model"] = []
        out["empty_reason"] = empty_reason(None, counts, config)
        return out
    unknown = {
        dim: float((profiles.loc[profiles["base_attribute"] != dim, dim] == UNKNOWN).mean())
        for dim in load_seeds("en").dimensions
        if (profiles["base_attribute"] != dim).any()
    }
    out["unknown_rate_by_attribute"] = unknown
    from biasatlas.probes.stories.scenarios import summarise_scenarios

    explorer = summarise_scenarios(profiles, alpha=config.alpha)  # the attribute distributions per scenario
    if explorer:
        out["scenarios"] = explorer
    glob = associations(profiles, False, config)
    out["method"] = method_text(config)
    out["tables"] = table_counts(glob)
    out["associations"] = association_records(glob)
    out["per_model"] = per_model_records(glob)
    if not out["associations"]:
        out["empty_reason"] = empty_reason(glob, counts, config)
    if profiles["language"].nunique() > 1:
        per = associations(profiles, True, config)
        out["per_language"] = {"tables": table_counts(per), "associations": association_records(per)}
        sets = language_sets(per)
        if sets:
            out["per_language"]["jaccard"] = jaccard_matrix(sets).round(4).to_dict()
        labels = harm_labels_for(store)
        if len(labels):
            out["per_language"]["specificity"] = stories_harm.language_specificity(per.associations, labels, groups)
    providers = stories_harm.harm_analyses.audit_providers(store.conn)  # the audit file's, over the inferred
    harm = stories_harm.summarise_harm(store, out.get("per_model"), providers)  # self-judgment, providers
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
        # tables the asymptotic screen decided: their p is a bound (the screen's threshold), not a value
        "p_upper_bounds": int((t["p_bound"] == "upper").sum()) if "p_bound" in t.columns else 0,
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
        f"Benjamini-Yekutieli across the table's cells, lift >= {config.min_lift}. A table the screen decides "
        f"reports p < {config.screen_low:g} (p < {config.sparse_low:g} when sparse) as an upper bound: the asymptotic "
        "p is far below what the reference Monte Carlo can give. Associations pooled over models give the summed "
        "count and the mean fraction and lift across the models where they hold (as the paper's list)."
    )

