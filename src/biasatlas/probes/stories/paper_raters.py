"""Two parts of the section "As in Le Jeune et al., 2025" (:mod:`.paper_report`): the agreement heatmap with each
human as a rater, and the LLM − human harm gap per attribute for each judge provider, from the summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from biasatlas.probes.stories import paper_figures as pf

#: most raters the heatmap shows (all judges first, then the humans who rated the most associations)
MAX_RATERS = 40
NO_PROVIDER = "unknown provider"


def rater_kappa_matrix(summary: Mapping[str, Any], cap: int = MAX_RATERS) -> tuple[pd.DataFrame, int, int]:
    """The rater × rater weighted kappa of the summary (NaN where a pair has none), over at most ``cap`` raters:
    every judge, then the humans who rated the most associations (ties by name); with the number of human
    raters shown and in all."""
    block = summary.get("harm", {}).get("rater_agreement") or {}
    raters = block.get("raters", [])
    judges = [r["rater"] for r in raters if r["kind"] == "judge"]
    humans = sorted((r for r in raters if r["kind"] == "human"), key=lambda r: (-r["associations"], r["rater"]))
    shown = judges[:cap] + [r["rater"] for r in humans[:max(cap - len(judges), 0)]]
    frame = pd.DataFrame(float("nan"), index=shown, columns=shown)
    keep = set(shown)
    for p in block.get("pairs", []):
        if p["a"] in keep and p["b"] in keep and p.get("kappa") is not None:
            frame.loc[p["a"], p["b"]] = frame.loc[p["b"], p["a"]] = float(p["kappa"])
    return frame, len(shown) - min(len(judges), cap), len(humans)


def rater_pair_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Every rater pair sharing an association: kinds, n, weighted kappa and label agreement, or why empty."""
    block = summary.get("harm", {}).get("rater_agreement") or {}
    kinds = {r["rater"]: r["kind"] for r in block.get("raters", [])}
    rows = [{"rater A": p["a"], "rater B": p["b"], "pair": f"{kinds.get(p['a'])} × {kinds.get(p['b'])}",
             "n": p["n"], "weighted kappa": p.get("kappa"), "label agreement": p.get("label_agreement"),
             "why empty": p.get("reason", "")} for p in block.get("pairs", [])]
    return pd.DataFrame(rows, columns=["rater A", "rater B", "pair", "n", "weighted kappa", "label agreement",
                                       "why empty"])


def provider_gap_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Mean (judge harm − human mean harm) per attribute and judge provider, t 95% interval, n."""
    rows = []
    for r in summary.get("harm", {}).get("gap_by_provider", []):
        low, high = (r.get("ci95") or [None, None])[:2]
        provider = r["provider"] or NO_PROVIDER
        rows.append({"attribute": r["attribute"],
                     "provider": f"{provider} (inferred)" if r.get("inferred") and r["provider"] else provider,
                     "judges": ", ".join(r.get("judges", [])), "estimate": r["mean_difference"], "ci_low": low,
                     "ci_high": high, "n": r["n"]})
    frame = pd.DataFrame(rows, columns=["attribute", "provider", "judges", "estimate", "ci_low", "ci_high", "n"])
    return frame.sort_values(["attribute", "provider"], kind="stable").reset_index(drop=True)


def add_rater_heatmap(out: Any, summary: Mapping[str, Any], cite: str) -> None:
    """The heatmap of every rater (judges and each human) and the table of its pairs, or a line saying why not."""
    matrix, shown, humans = rater_kappa_matrix(summary)
    if len(matrix) < 2 or not matrix.notna().to_numpy().any():
        out.add_text("Agreement heatmap with each human as a rater: needs two raters who share three or more "
                     "associations and do not both give a single score.")
        return
    kinds = {r["rater"]: r["kind"] for r in summary["harm"]["rater_agreement"]["raters"]}
    capped = (f" The study has {len(kinds)} raters: shown are every judge and the {shown} of {humans} human "
              f"raters who rated the most associations (at most {MAX_RATERS} raters in all); every pair is in "
              "the table below." if shown < humans else "")
    out.add_figure(lambda: pf.kappa_heatmap_figure(matrix, {k for k, v in kinds.items() if v == "human"}),
                   f"{cite}, heatmap of the pairwise agreement between raters, humans as individual raters (their "
                   "names in blue) beside the LLM judges: quadratic-weighted Cohen's kappa over the associations a "
                   "pair both rated (a judge's samples as their median); empty: the pair shares fewer than three "
                   f"associations, or both give a single score.{capped}")
    out.add_table(rater_pair_table(summary), f"{cite}: every rater pair that shares an association (n), with "
                  "the weighted kappa, the share labelled alike (harmful vs benign) and, where empty, why.")


def add_provider_gap(out: Any, summary: Mapping[str, Any], cite: str) -> None:
    """The gap per attribute and provider, as a figure and a table, or a line saying why not."""
    table = provider_gap_table(summary)
    if table.empty:
        out.add_text("LLM − human harm gap per attribute and judge provider: needs associations rated by both "
                     "the judges and the humans.")
        return
    out.add_figure(lambda: pf.provider_gap_figure(table), f"{cite}: LLM − human harm per attribute for each "
                   "judge provider (the paper: the gap is consistent across providers); points are the mean over "
                   "associations of the provider's judge harm minus the human mean, bars t 95% intervals (ours).")
    out.add_table(table, f"{cite}: LLM − human harm per attribute and judge provider: the mean over the "
                  "associations both rated of the provider's judges' mean harm minus the humans' median harm, with a "
                  "t 95% interval (ours; n: associations; an association counts under both of its attributes; "
                  "the provider is the audit file's, else inferred from the judge's name and marked).")
