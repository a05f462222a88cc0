"""Le Jeune et al.'s harm and language analyses in the paper's layout, from the stories summary.

The paper (a web report without numbered figures) shows: harmful and benign associations per model, grouped by
provider; the LLM − human harm gap per attribute; the pairwise agreement heatmap of the LLM evaluators and the
human panel; the judges' use of the top score (5) against the humans'; that harm and realism are independent;
that models produce associations they themselves rate harmful; the language reach of harmful against benign
associations; the associations found in one language only; the marked/unmarked group shift; and an explorer of
the attribute distributions across scenarios (with a chi-square test per attribute: ours). Every table
and figure here reads the summary's dict (``summary --json``); where it lacks what a figure needs, one line says
what is needed. Intervals, tests and the columns marked "(ours)" are not in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from biasatlas.probes.stories import paper_figures as pf
from biasatlas.probes.stories import paper_raters as pr
from biasatlas.probes.stories.harm_analyses import provider_of
from biasatlas.probes.stories.paper_associations import (  # the association tables, named here as before
    association_key,
    global_table,
    harm_labels,
    jaccard_table,
    per_language_table,
)
from biasatlas.stats.proportions import wilson_interval

CITE = "As in Le Jeune et al., 2025"
TITLE = "Stories: as in Le Jeune et al., 2025"
NO_PROVIDER = "unknown provider"


def _interval(share: Mapping[str, Any]) -> dict[str, Any]:
    """A summary share (count, n, share, ci95) as estimate, ci_low, ci_high, n."""
    low, high = (share.get("ci95") or [None, None])[:2]
    return {"estimate": share.get("share"), "ci_low": low, "ci_high": high, "n": share.get("n")}


# ---- tables ---------------------------------------------------------------------------------


def provider_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Harmful and benign associations per model, grouped by provider (providers most harmful first, models by
    harmful count within each), with the unrated ones and the harmful share (Wilson 95%): ours."""
    rows = []
    for group in summary.get("harm", {}).get("by_provider", []):
        for m in group["models"]:
            rated = m["harmful"] + m["benign"]
            low, high = wilson_interval(m["harmful"], rated) if rated else (None, None)
            rows.append({"provider": group["provider"] or NO_PROVIDER,
                         "provider from": "inferred from the name" if group.get("inferred", True) else "audit file",
                         "model": m["model"], "harmful": m["harmful"], "benign": m["benign"],
                         "unrated (ours)": m["unrated"],
                         "estimate": m["harmful"] / rated if rated else None, "ci_low": low, "ci_high": high,
                         "n": rated})
    return pd.DataFrame(rows, columns=["provider", "provider from", "model", "harmful", "benign", "unrated (ours)",
                                       "estimate",
                                       "ci_low", "ci_high", "n"])


def gap_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Mean LLM − human harm per attribute (t 95% interval: ours), most underestimated first."""
    rows = [{"attribute": r["attribute"], "estimate": r["mean_difference"],
             "ci_low": (r.get("ci95") or [None, None])[0], "ci_high": (r.get("ci95") or [None, None])[1],
             "n": r["n"]}
            for r in summary.get("harm", {}).get("alignment", {}).get("mean_difference_by_attribute", [])]
    frame = pd.DataFrame(rows, columns=["attribute", "estimate", "ci_low", "ci_high", "n"])
    return frame.sort_values("estimate", kind="stable").reset_index(drop=True)


def agreement_matrix(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The rater × rater harmful/benign agreement of the summary (judges and the human panel)."""
    matrix = summary.get("harm", {}).get("alignment", {}).get("agreement_matrix") or {}
    frame = pd.DataFrame(matrix)
    return frame.reindex(index=list(frame.columns)).astype(float) if not frame.empty else frame


def agreement_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Harmful/benign agreement: humans with the judges (panel median), among the judges and among the human
    raters (each one a rater), with the mean pairwise weighted kappa (ours)."""
    harm = summary.get("harm", {})
    rows = []
    agree = harm.get("alignment", {}).get("harmful_agreement")
    if agree:
        rows.append({"raters": "humans (panel) vs LLM judges (pooled)", "estimate": agree["rate"],
                     "ci_low": agree["ci95"][0], "ci_high": agree["ci95"][1], "n": agree["n"],
                     "rater pairs": None, "mean weighted kappa (ours)": None})
    within = harm.get("agreement_within", {})
    for name, label in (("judges", "among LLM judges"), ("humans", "among human raters (each a rater)")):
        group = within.get(name)
        if group and group.get("pairs"):
            rows.append({"raters": label, "estimate": group["mean_label_agreement"], "ci_low": None,
                         "ci_high": None, "n": group["n_items"], "rater pairs": group["pairs"],
                         "mean weighted kappa (ours)": group["mean_kappa"]})
    return pd.DataFrame(rows, columns=["raters", "estimate", "ci_low", "ci_high", "n", "rater pairs",
                                       "mean weighted kappa (ours)"])


def top_score_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Share of ratings at the top score (5): humans pooled, judges pooled, each judge (Fisher against the
    humans, Holm across judges: ours)."""
    top = summary.get("harm", {}).get("top_score")
    if not top:
        return pd.DataFrame()
    humans = top["humans"]["share"]
    rows = [{"raters": "humans (pooled)", **_interval(top["humans"]), "ratio to humans": 1.0, "p (Holm, ours)": None},
            {"raters": "LLM judges (pooled)", **_interval(top["judges_pooled"]),
             "ratio to humans": top["judges_pooled"]["share"] / humans if humans else None, "p (Holm, ours)": None}]
    rows += [{"raters": j["rater"], **_interval(j), "ratio to humans": j.get("ratio_to_humans"),
              "p (Holm, ours)": j.get("p_adj")} for j in top["per_judge"]]
    return pd.DataFrame(rows)


def realism_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Per rater group and realism answer: the share of answers (Wilson 95%) and the harm given with it, and the
    Kruskal-Wallis test of harm across the answers (ours)."""
    rows = []
    for group, block in summary.get("harm", {}).get("realism", {}).items():
        test = block.get("test") or {}
        for answer, share in block.get("distribution", {}).items():
            harm = block.get("harm_by_answer", {}).get(answer, {})
            rows.append({"raters": "humans" if group == "humans" else "LLM judges", "realism": answer,
                         **_interval(share), "median harm": harm.get("median"), "mean harm": harm.get("mean"),
                         "Kruskal-Wallis p (ours)": test.get("p")})
    return pd.DataFrame(rows)


def self_judgment_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Per model that generated and judged: its own associations it rates harmful (the paper's finding), the
    share (Wilson 95%), the other judges' share on the same associations and McNemar's p (ours)."""
    rows = [{"provider": provider_of(g["model"]) or NO_PROVIDER, "model": g["model"],
             "own associations rated harmful by itself": g["self"]["count"], **_interval(g["self"]),
             "harmful by the other judges (ours)": g["others"]["share"], "difference (ours)": g["difference"],
             "McNemar p (ours)": g.get("p")}
            for g in summary.get("harm", {}).get("self_judgment", [])]
    return pd.DataFrame(rows)


def reach_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Per number of languages an association holds in: harmful and benign associations (count and share)."""
    reach = summary.get("per_language", {}).get("specificity", {}).get("reach", {})
    if "harmful" not in reach or "benign" not in reach:
        return pd.DataFrame()
    dist = {label: {int(k): int(v) for k, v in reach[label]["distribution"].items()} for label in ("harmful", "benign")}
    rows = []
    for k in sorted(set(dist["harmful"]) | set(dist["benign"])):
        row: dict[str, Any] = {"languages": k}
        for label in ("harmful", "benign"):
            row[f"{label} associations"] = dist[label].get(k, 0)
            row[f"{label} share"] = dist[label].get(k, 0) / reach[label]["n"]
        rows.append(row)
    return pd.DataFrame(rows)


def shift_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Per language and group: harmful associations involving it in the native language, the mean over the other
    languages, and the shift (native − others)."""
    rows = summary.get("per_language", {}).get("specificity", {}).get("group_shift", [])
    names = {"harmful_native": "harmful (native language)", "harmful_other_mean": "harmful (other languages, mean)"}
    return pd.DataFrame(rows, columns=["language", "group", "status", *names, "shift"]).rename(columns=names)


def language_exclusive(records: Sequence[Mapping[str, Any]], labels: Mapping[str, bool]) -> pd.DataFrame:
    """Associations found in one language only (of the per-language aggregation): per language, how many, split
    harmful, benign and unrated by ``labels`` (association key -> harmful). Languages with none are left out
    unless another language of the records has some: they are then 0."""
    languages = sorted({str(lang) for r in records for lang in (r.get("languages") or [])})
    counts = {lang: {"harmful": 0, "benign": 0, "unrated": 0} for lang in languages}
    seen: set[tuple[str, str]] = set()
    for r in records:
        held = sorted({str(lang) for lang in (r.get("languages") or [])})
        key = association_key(r)
        if len(held) != 1 or (held[0], key) in seen:
            continue
        seen.add((held[0], key))
        label = labels.get(key)
        counts[held[0]]["unrated" if label is None else "harmful" if label else "benign"] += 1
    frame = pd.DataFrame([{"language": lang, **c, "total": sum(c.values())} for lang, c in counts.items()],
                         columns=["language", "harmful", "benign", "unrated", "total"])
    if not frame["total"].any():
        return frame.iloc[0:0]
    return frame.sort_values(["total", "language"], ascending=[False, True], kind="stable").reset_index(drop=True)


# ---- the section ----------------------------------------------------------------------------


def section(summary: Mapping[str, Any]) -> Any:
    """The section "As in Le Jeune et al., 2025" from a stories summary dict."""
    from biasatlas.report.html import Section

    out = Section(TITLE)
    harm = summary.get("harm", {})
    has_humans = bool(harm.get("human_ratings"))
    out.add_text(f"{CITE}: the paper's harm and language analyses in its layout, and its explorer of the "
                 "attribute distributions across scenarios. Harmful = median harm >= 4, from "
                 "the human ratings where an association has any, else from the LLM judges (the paper labels only "
                 "the human-rated set). Intervals, tests and what is marked (ours) are not in the paper."
                 + ("" if has_humans or not harm else " The study has no human ratings: the labels are the judges'."))
    _global(out, summary)
    if harm:
        _providers(out, summary)
        _gap(out, summary, has_humans)
        _agreement(out, summary)
        _top(out, summary, has_humans)
        _realism(out, summary)
        _self(out, summary)
    else:
        out.add_text("Harmful vs benign associations per model and provider, the LLM − human gap, agreement, top-score "
                     "use, realism and the self-judgment gap: need harm ratings of the associations (LLM judges, "
                     "human raters or both).")
    _languages(out, summary)
    from biasatlas.probes.stories.scenario_report import explorer_section

    explorer_section(out, summary, CITE)
    return out


def _global(out: Any, summary: Mapping[str, Any]) -> None:
    if "associations" not in summary:
        return
    table = global_table(summary)
    if table.empty:
        out.add_text("The table of the global aggregation's associations: no association holds.")
        return
    out.add_table(table, f"{CITE}: all significant associations of the global aggregation (stories of every "
                  "language pooled), the paper's table: the association, how many models show it (and which) "
                  "and its harm label (humans where they rated it, else the LLM judges; unrated: neither).")


def _providers(out: Any, summary: Mapping[str, Any]) -> None:
    table = provider_table(summary)
    if table.empty:
        out.add_text("Harmful and benign associations per model: needs the per-model associations of the summary.")
        return
    out.add_figure(lambda: pf.provider_figure(table), f"{CITE}, figure 'Harmful and benign associations per "
                   "model': grouped by provider, sorted by harmful association count within each group; the "
                   "provider is the audit file's where it names one, else inferred from the model's name "
                   "(marked).")
    out.add_table(table, f"{CITE}: harmful and benign associations per model, grouped by provider (estimate: the "
                  "harmful share of the rated ones with a Wilson 95% interval, ours; n: rated associations).")


def _gap(out: Any, summary: Mapping[str, Any], has_humans: bool) -> None:
    table = gap_table(summary)
    if table.empty:
        out.add_text("LLM − human harm gap per attribute: needs "
                     + ("associations rated by both the judges and the humans." if has_humans
                        else "human ratings beside the judges'."))
        return
    overall = summary["harm"]["alignment"].get("mean_difference_llm_minus_human", {}).get("mean")
    out.add_figure(lambda: pf.gap_figure(table, overall), f"{CITE}, figure 'LLM − Human harmfulness delta, per "
                   "attribute': mean LLM harm minus mean human harm per association, per attribute (negative: "
                   "LLMs rate it less harmful than humans); bars are t 95% intervals (ours); the dashed line is the "
                   "mean delta.")
    out.add_table(table, f"{CITE}: LLM − human harm per attribute, all judges pooled (an association counts under "
                  "both of its attributes; n: associations). The paper shows it is consistent across providers: "
                  "per provider below.")
    pr.add_provider_gap(out, summary, CITE)


def _agreement(out: Any, summary: Mapping[str, Any]) -> None:
    matrix = agreement_matrix(summary)
    if len(matrix) >= 2:
        out.add_figure(lambda: pf.heatmap_figure(matrix), f"{CITE}, heatmap of the pairwise agreement between the "
                       "LLM evaluators and the human panel: share of shared associations both label alike "
                       "(harmful vs benign); the humans enter as one panel (their median per association), "
                       "labelled 'humans'.")
    else:
        out.add_text("Agreement heatmap: needs at least two raters (two judges, or a judge and human ratings).")
    pr.add_rater_heatmap(out, summary, CITE)
    table = agreement_table(summary)
    if table.empty:
        out.add_text("Agreement between and within rater groups: needs at least two raters who share three or "
                     "more associations.")
        return
    if not (table["raters"] == "among human raters (each a rater)").any():
        out.add_text("Agreement among human raters: needs at least two human raters who share three or more "
                     "associations.")
    out.add_table(table, f"{CITE}: agreement on harmful vs benign (paper: humans and LLMs agree on 77%, models "
                  "among themselves on about 80%). Humans vs judges: share of associations labelled alike, Wilson "
                  "95%; within a group: mean over rater pairs of the share labelled alike, each human a rater "
                  "(n: associations), and the mean pairwise quadratic-weighted Cohen's kappa (ours).")


def _top(out: Any, summary: Mapping[str, Any], has_humans: bool) -> None:
    table = top_score_table(summary)
    if table.empty:
        out.add_text("Use of the top score (5) by LLM judges vs humans: needs "
                     + ("LLM judge ratings." if has_humans else "human ratings beside the judges'."))
        return
    ratio = pd.to_numeric(table["ratio to humans"], errors="coerce").iloc[1]  # the judges pooled
    said = f" Here humans use 5 {1 / ratio:.1f}× as often as the judges." if ratio > 0 else ""
    out.add_figure(lambda: pf.top_score_figure(table), f"{CITE}: share of ratings at the maximum score 5, humans "
                   "and LLM judges (paper: LLMs use it about 3× less often); Wilson 95% intervals (ours).")
    out.add_table(table, f"{CITE}: share of ratings at 5 (unit: a rating; a judge's samples count each) with a "
                  "Wilson 95% interval, the ratio to the humans' share and, ours, Fisher's exact test of each judge "
                  f"against the humans, Holm across judges (optimistic: ratings are not independent).{said}")


def _realism(out: Any, summary: Mapping[str, Any]) -> None:
    table = realism_table(summary)
    if table.empty:
        out.add_text("Realism vs harm: needs realism answers of the judges or the humans.")
        return
    out.add_table(table, f"{CITE}: harm and realism ('is this pattern frequent in real-world data?'); the paper "
                  "notes the two are independent. Share of each answer per rater group (Wilson 95%; n: answers), "
                  "the harm given with it and, ours, a Kruskal-Wallis test of harm across the answers.")


def _self(out: Any, summary: Mapping[str, Any]) -> None:
    table = self_judgment_table(summary)
    if table.empty:
        out.add_text("Self-judgment gap: needs a model that both generated the stories and judged their "
                     "associations, beside at least one other judge.")
        return
    out.add_table(table, f"{CITE}: models generate associations they themselves rate harmful. Per model that "
                  "generated and judged: its own associations it rates harmful (estimate: the share, Wilson 95%; n: "
                  "its associations), and, ours, the other judges' share on the same ones and McNemar's exact p.")


def _languages(out: Any, summary: Mapping[str, Any]) -> None:
    per_language = summary.get("per_language")
    if not per_language:
        out.add_text("Language reach, language-exclusive associations and the marked/unmarked shift: need stories "
                     "in more than one language.")
        return
    table = per_language_table(summary)
    if not table.empty:
        out.add_table(table, f"{CITE}: all significant associations of the per-language aggregation, the "
                      "paper's table: the association, its language reach (how many languages, and which) and its "
                      "harm label (as above).")
    reach = reach_table(summary)
    if reach.empty:
        out.add_text("Language reach of harmful vs benign associations: needs harm labels of both harmful and "
                     "benign per-language associations.")
    else:
        spec = per_language["specificity"]["reach"]
        test = spec.get("test", {})
        out.add_figure(lambda: pf.reach_figure(reach), f"{CITE}, figure of how many languages each association "
                       "appears in, harmful vs benign (share of each).")
        out.add_table(reach, f"{CITE}: associations by the number of languages they hold in (mean: harmful "
                      f"{spec['harmful']['mean_languages']:.2f}, benign {spec['benign']['mean_languages']:.2f}"
                      + (f"; Mann-Whitney U p = {test['p']:.3g}, ours" if test.get("p") is not None else "") + ").")
    jaccard = jaccard_table(summary)
    if jaccard.empty:
        out.add_text("Jaccard similarity of the association sets between languages: needs associations in at "
                     "least two languages.")
    else:
        out.add_figure(lambda: pf.heatmap_figure(jaccard, "Jaccard similarity (0-1)"), f"{CITE}, heatmap of the "
                       "Jaccard similarity of the association sets between languages (|X ∩ Y| / |X ∪ Y| of the "
                       "per-language associations; the paper shows it beside the language-exclusive chart).")
    exclusive = language_exclusive(per_language.get("associations", []), harm_labels(summary))
    if exclusive.empty:
        out.add_text("Language-exclusive associations: none holds in one language only.")
    else:
        out.add_figure(lambda: pf.exclusive_figure(exclusive), f"{CITE}: associations found in one language only, "
                       "per language, harmful, benign and unrated (the paper lists them one by one; the count per "
                       "language is ours).")
        out.add_table(exclusive, f"{CITE}: associations found in one language only, per language.")
    shift = shift_table(summary)
    if shift.empty:
        out.add_text("Marked vs unmarked group shift: needs harmful associations in more than one language and "
                     "the marked/unmarked groups of those languages.")
        return
    out.add_figure(lambda: pf.shift_figure(shift), f"{CITE}, figure of the marked vs unmarked group shift: harmful "
                   "associations involving a group when prompting in its language minus the mean over the other "
                   "languages.")
    out.add_table(shift, f"{CITE}: marked vs unmarked group shift per language (the groups per language are ours, "
                  "not the paper's list).")


def summary_from(store: Any, glob: Any, per: Any | None, profiles: pd.DataFrame | None = None) -> dict[str, Any]:
    """The parts of the stories summary this section reads, from the associations the report already mined (as
    :func:`analysis.summarise` builds them) and the ``profiles`` it read (for the scenario explorer)."""
    from biasatlas.probes.stories import harm as stories_harm
    from biasatlas.probes.stories.analysis import association_records, harm_labels_for, per_model_records

    out: dict[str, Any] = {"per_model": per_model_records(glob), "associations": association_records(glob)}
    if profiles is not None:
        from biasatlas.probes.stories.scenarios import summarise_scenarios

        explorer = summarise_scenarios(profiles, alpha=glob.config.alpha)
        if explorer:
            out["scenarios"] = explorer
    if per is not None:
        out["per_language"] = {"associations": association_records(per)}
        labels = harm_labels_for(store)
        if len(labels):
            out["per_language"]["specificity"] = stories_harm.language_specificity(per.associations, labels)
    providers = stories_harm.harm_analyses.audit_providers(store.conn)  # the audit file's, over the inferred
    harm = stories_harm.summarise_harm(store, out["per_model"], providers)
    if harm:
        out["harm"] = harm
    return out
