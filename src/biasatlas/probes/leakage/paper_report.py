"""The report section "Leakage: as in Cao et al., 2024": the paper's Figure 2 under its own criterion, Table 3,
Figure 1 and the category check, in the paper's layout; the leakage section beside it keeps ours.

Figure 2 and Table 3 come from the paper's fit (every missing cell 0, uncorrected p < 0.05, each language's
monolingual control where the study ran one). A study run in our design gets that fit here as well, so the
paper's criterion is always shown; a study whose answers the paper's fit cannot use says why.
"""

from __future__ import annotations

from typing import Any

from biasatlas.probes.leakage.data import LeakageDataError
from biasatlas.probes.leakage.design import PAPER_ALPHA, table3, table3_wide
from biasatlas.probes.leakage.figure import flows_figure, flows_plot
from biasatlas.probes.leakage.human_profiles import (
    CHECK_NOTE,
    FIGURE1_GROUP,
    category_check,
    figure1_table,
    profile_figure,
)
from biasatlas.report.html import Section

CITE = "As in Cao et al., 2024"
TITLE = "Leakage: as in Cao et al., 2024"
METHODS = (
    "Cao et al.'s Figure 2, Table 3 and Figure 1 and their category check in the paper's layout. Figure 2 and "
    "Table 3 are the paper's fit: every missing (999) human cell counts as 0, as the paper's code read the tables, "
    f"so the non-shared groups stay in; a flow is a positive cross-language coefficient at an uncorrected p < "
    f"{PAPER_ALPHA:g}; each target language's monolingual control (LM_tgt of Eq. 1) is the model run with "
    "--mono-for, where the study has one. Our own fit (complete cases, Benjamini-Hochberg) is in the leakage "
    "section. Intervals and n are ours."
)


def section(store: Any, analysis: Any, analyse: Any) -> Section:
    """The section from the study's ``analysis`` (its own design) and, where that is ours, the paper's fit made
    with ``analyse`` (the leakage analysis function, passed in so the report and its tests share one)."""
    out = Section(title=TITLE, methods=METHODS)
    paper = analysis if analysis.settings.get("design") == "paper" else None
    if paper is None:
        try:
            paper = analyse(store, design="paper")
        except LeakageDataError as exc:
            out.add_text(f"{CITE}, Figure 2 and Table 3: the paper's fit cannot be made from this study ({exc}).")
    if paper is not None:
        if paper.flows.empty:
            out.add_text(f"{CITE}, Figure 2: no flow under the paper's criterion (positive, uncorrected p < "
                         f"{PAPER_ALPHA:g}).")
        out.add_figure(flows_figure(paper.flows, paper.subjects),
                       f"{CITE}, Figure 2: human source → model target (a positive cross-language coefficient, "
                       f"uncorrected p < {PAPER_ALPHA:g}; every missing cell 0), one panel per model variant",
                       plot=flows_plot(paper.flows, paper.subjects, corrected=False))
        t3 = table3(paper.fits)
        if t3.empty:
            out.add_text(f"{CITE}, Table 3 needs a monolingual control per target language (`biasatlas run "
                         "leakage --mono-for LANG`): this study has none.")
        else:
            out.add_table(table3_wide(t3), f"{CITE}, Table 3: the monolingual control's coefficient (beta of "
                          "Eq. 1) per model (rows) and target language (columns), estimate [95% CI] (p)")
    check = category_check(analysis.human).rename(columns={
        "n_groups": "n groups (ours)", "n_pairs": "n pairs (ours)", "ci_low": "95% CI low (ours)",
        "ci_high": "95% CI high (ours)"})
    out.add_table(check, f"{CITE}, category check: mean cross-language correlation of the human stereotypes per "
                  "category, beside the paper's published values (column paper)")
    out.add_text(CHECK_NOTE)
    out.add_figure(profile_figure(analysis.human, FIGURE1_GROUP),
                   f"{CITE}, Figure 1: the human ABC profile of {FIGURE1_GROUP} per language (mean rating, left "
                   "pole -50 to right pole +50)")
    out.add_table(figure1_table(analysis.human, FIGURE1_GROUP), f"Figure 1's data: {FIGURE1_GROUP}, languages × "
                  "ABC trait pairs and dimension means")
    return out
