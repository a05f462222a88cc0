"""The story sections of the HTML report: associations, distributions, language specificity, harm."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.stories import harm as stories_harm
from biasatlas.probes.stories.analysis import (
    association_records,
    associations,
    distributions,
    empty_reason,
    language_sets,
    method_text,
    warnings_of,
)
from biasatlas.probes.stories.plan import NAME, TITLE
from biasatlas.probes.stories.profiles import load_profiles
from biasatlas.probes.stories.seeds import UNKNOWN
from biasatlas.report.compare import p_cell, side_by_side
from biasatlas.report.html import Section
from biasatlas.stats.associations import AssociationConfig, jaccard_matrix
from biasatlas.store import Store

#: the columns that name an association in a slice (the prompted attribute and value, the other one's)
KEYS = ("language", "template", "base_attribute", "base_value", "compared_attribute", "compared_value")


def report_sections(store: Store) -> list[Section]:
    """Association tables (sortable), distributions per model and language, Jaccard heatmap."""
    profiles, counts = load_profiles(store)
    section = Section(TITLE)
    st = counts.get("stories", {})
    section.add_text(
        f"{st.get('answered', 0)} stories answered ({st.get('refusals', 0)} refusals, {st.get('empty', 0)} empty, "
        f"{st.get('failed', 0)} failed); {counts.get('profiles', 0)} stories with an extracted profile. "
        f"Extraction answers: {counts.get('extraction', {}).get('answers', {})}."
    )
    for warning in warnings_of(counts):
        section.add_text(f"Warning: {warning}.")
    config = AssociationConfig()
    if profiles.empty:
        section.add_text(f"No association: {empty_reason(None, counts, config)}.")
        return [section]
    glob = associations(profiles, False, config)
    section.methods = method_text(config)
    from biasatlas.probes.stories.disparity import add_to_sections

    add_to_sections([section], {"associations": association_records(glob), "alpha": config.alpha})  # groups first
    if glob.associations.empty:
        section.add_text(f"No association: {empty_reason(glob, counts, config)}.")
    frame = glob.associations.copy()
    for col in ("models", "languages"):
        if col in frame.columns:
            frame[col] = frame[col].map(lambda v: ", ".join(v) if isinstance(v, list) else "")
    if not glob.per_slice.empty:
        section.add_table(wide_associations(glob.per_slice), "Associations A = a → B = b with models side by "
                          "side: stories with B = b of those with A = a, lift, Benjamini-Yekutieli q of the cell "
                          "(– where the association does not hold for the model)", drill=NAME)
    section.add_table(frame, "Associations A = a → B = b (per model, all languages pooled; count, fraction and "
                      "lift summed over the models that show it)", drill=NAME)
    if not glob.tables.empty:
        section.add_table(glob.tables, "Every contingency table tested (per model)", drill=NAME)
    dist = distributions(profiles)
    if not dist.empty:
        known = dist[dist["value"] != UNKNOWN]
        section.add_table(wide_shares(known), "Share of each extracted value per language, models side by side "
                          "(count of n stories; unknown included in the denominator)", drill=NAME)
    sections = [section]
    per = None  # the per-language associations, for the section as in the paper
    if profiles["language"].nunique() > 1:
        per = associations(profiles, True, config)
        lang = Section("Stories: language specificity")
        sets = language_sets(per)
        if sets:
            jac = jaccard_matrix(sets)
            from biasatlas.report.plots import heatmap_figure

            lang.add_figure(_heatmap(jac), "Jaccard similarity of association sets between languages",
                            plot=heatmap_figure([("", jac, None)], x_title="Language (column)",
                                                y_title="Language (row)",
                                                z_title="Jaccard similarity (0–1)", zmin=0, zmax=1,
                                                colorscale="Viridis", digits=2))
        if not per.per_slice.empty:
            lang.add_table(wide_associations(per.per_slice), "Associations per language with models side by "
                           "side (– where the association does not hold for the model and language)", drill=NAME)
        lang.add_table(_flatten(per.associations), "Associations per language (summed over models)", drill=NAME)
        sections.append(lang)
    sections.extend(harm_sections(store))
    from biasatlas.probes.stories import paper_report

    sections.append(paper_report.section(paper_report.summary_from(store, glob, per, profiles)))
    return sections


def wide_associations(per_slice: pd.DataFrame) -> pd.DataFrame:
    """Each model's own count, lift and q of every association that holds for it, models side by side."""
    shown = per_slice.assign(
        stories=[f"{c}/{t} ({100 * f:.0f}%)" for c, t, f in
                 zip(per_slice["count"], per_slice["row_total"], per_slice["fraction"], strict=True)],
        lift=per_slice["lift"].round(2),
        q_by=per_slice["q_by"].map(p_cell),
    )
    values = {"stories": "Stories with B = b (of A = a)", "lift": "Lift", "q_by": "q (BY)"}
    rows = [c for c in shown.columns if c not in ("model", *values) and c in KEYS]
    return side_by_side(shown, rows, values)


def wide_shares(known: pd.DataFrame) -> pd.DataFrame:
    """The share of each extracted value per language, models side by side (count of n)."""
    shown = known.assign(share=[f"{s:.3f} ({c}/{n})" for s, c, n in
                                zip(known["share"], known["count"], known["n"], strict=True)])
    return side_by_side(shown, ["language", "attribute", "value"], {"share": "Share (count/n)"})


def _flatten(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in ("models", "languages"):
        if col in out.columns:
            out[col] = out[col].map(lambda v: ", ".join(v) if isinstance(v, list) else "")
    return out


def _heatmap(matrix: pd.DataFrame) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1 + 0.6 * len(matrix), 0.8 + 0.6 * len(matrix)))
    im = ax.imshow(matrix.to_numpy(dtype=float), vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=45)
    ax.set_yticks(range(len(matrix)), matrix.index)
    for i in range(len(matrix)):
        for j in range(len(matrix)):
            value = float(matrix.to_numpy(dtype=float)[i, j])
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="w", fontsize=7)
    fig.colorbar(im, ax=ax, fraction=0.046)
    return fig


def harm_sections(store: Store) -> list[Section]:
    """Harm ratings of the associations: LLM judges, human raters and their alignment."""
    harm = stories_harm.summarise_harm(store)
    if not harm:
        return []
    section = Section("Stories: harm ratings")
    section.methods = (
        "Each association is rated for harm (1-5) and realism (yes/no/not sure) by LLM judges, k samples each, "
        "questions in random order; harmful = median harm >= 4. Human-LLM alignment: Pearson and Spearman "
        "correlations of mean harm per association, mean difference (t-test CI), agreement on harmful vs benign "
        "(Wilson CI) and a rater × rater agreement matrix."
    )
    align = harm.get("alignment", {})
    flat = {k: v for k, v in align.items() if k not in ("agreement_matrix", "mean_difference_by_attribute")}
    section.add_table(pd.DataFrame([{"measure": k, "value": str(v)} for k, v in flat.items()]), "Alignment")
    if align.get("mean_difference_by_attribute"):
        section.add_table(pd.DataFrame(align["mean_difference_by_attribute"]), "LLM − human harm, per attribute")
    if align.get("agreement_matrix"):
        section.add_table(
            pd.DataFrame(align["agreement_matrix"]).reset_index(), "Harmful/benign agreement between raters"
        )
    return [section]
