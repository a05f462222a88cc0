"""Tidy statistics rows of stories, leakage and debias (the headline probes' are in :mod:`.tidy`).

Each design factor goes into its own column, the test column holds the test's name only, the
estimate carries the interval of that estimate (empty where the probe computes none), and every row
has its quality flags (:mod:`biasatlas.stats.quality`): too few units per the test's rule, not
tested / not fitted / not converged with the reason.
"""

from __future__ import annotations

import math
import re
from typing import Any

from biasatlas.stats.families import family_label
from biasatlas.stats.quality import Quality, min_units, not_tested, units_flag

Row = dict[str, Any]
CI_LEVEL = 0.95
#: the debias tables' grouping factors that become columns (evaluate.GROUPINGS)
DEBIAS_FACTORS = ("contact", "scale", "scenario", "principle", "axis", "language")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _significant(p_adj: Any, alpha: Any) -> bool | None:
    return None if _missing(p_adj) or _missing(alpha) else bool(p_adj < alpha)


def split_method(method: Any) -> tuple[str | None, str | None]:
    """A method string as (the test's name, the detail in its parentheses), e.g. ``McNemar exact``
    and ``discordant: 2 → unbiased, 0 → biased``; the detail is data, never part of the name."""
    text = str(method or "").strip()
    if not text:
        return None, None
    match = re.match(r"^(.*?)\s*\((.*)\)\s*$", text)
    return (match.group(1), match.group(2)) if match else (text, None)


_DISCORDANT = re.compile(r"discordant:\s*(\d+)\s*→[^,]*,\s*(\d+)\s*→")


def mcnemar_detail(detail: str | None) -> Row:
    """discordant_b, discordant_c and ci_method out of McNemar's method detail (stats.paired.mcnemar_paired
    writes ``discordant: b → unbiased, c → biased[; Newcombe interval]``; without Newcombe the CI is Wald)."""
    match = _DISCORDANT.search(detail or "")
    if not match:
        return {}
    newcombe = "newcombe" in (detail or "").lower()
    return {"discordant_b": int(match.group(1)), "discordant_c": int(match.group(2)),
            "ci_method": "Newcombe method 10 (paired proportions)" if newcombe else "Wald (paired proportions)"}


def flag_columns(kind: str | None, units: Any, alpha: float, label: str, p: Any = 0.0,
                 reason: str | None = None, extra: Quality | None = None) -> Row:
    """flags, flag_notes and min_units of one row: not tested (p missing) with ``reason``, too few units."""
    quality = Quality()
    if extra is not None:
        quality.merge(extra)
    if _missing(p):
        quality.merge(not_tested(reason or "no p-value (too few pairs to compute the test)"))
    if kind:
        quality.merge(units_flag(kind, units, alpha, label))
    return {"flags": quality.flags, "flag_notes": quality.text,
            "min_units": min_units(kind, alpha) if kind else None}


def stories_rows(summary: dict[str, Any]) -> list[Row]:
    """The significant association cells: lift (no interval is computed for it), Fisher p, BY-adjusted q; the
    groups that carry them; the scenario explorer (shares per scenario, the chi-square test across scenarios);
    and the harm block's analyses (labels, top score, agreement, self-judgment, realism, providers)."""
    from biasatlas.stats.associations import AssociationConfig

    alpha = AssociationConfig().alpha if summary.get("alpha") is None else float(summary["alpha"])
    analysed = (summary.get("tables") or {}).get("stories")
    rows = []
    for a in summary.get("associations") or []:
        # the 2 x 2 table of a cell holds at most the stories analysed; fewer than the rule: no cell can be found
        units = analysed if analysed is not None else a.get("row_total")
        rows.append({
            "source": "associations", "model": "; ".join(a.get("models") or []) or None,
            "language": "; ".join(a.get("languages") or []) or None,
            "attribute": a.get("base_attribute"), "value": a.get("base_value"),
            "compared_attribute": a.get("compared_attribute"), "compared_value": a.get("compared_value"),
            "slices": a.get("slices"),
            "comparison": f"{a.get('compared_attribute')} = {a.get('compared_value')} given "
            f"{a.get('base_attribute')} = {a.get('base_value')} vs overall",
            "test": "Fisher exact test of the cell (one-sided)",
            "estimate": a.get("lift"), "estimand": "lift: P(B=b | A=a) / P(B=b)",
            "effect_size": a.get("cramers_v"),
            "effect_size_name": f"bias-corrected Cramér's V of the A × B table ({a.get('effect')})",
            "p": a.get("p"), "p_adj": a.get("q"), "correction": "by", "alpha": alpha,
            "significant": _significant(a.get("q"), alpha), "n": a.get("count"),
            "n_unit": "stories with A=a and B=b (summed over the slices)", "family": family_label("stories"),
            **flag_columns("fisher", units, alpha, "the Fisher test of the cell", a.get("p")),
        })
    from biasatlas.export.tidy_stories_harm import harm_rows
    from biasatlas.export.tidy_stories_scenarios import scenario_rows
    from biasatlas.tidy.disparity import stories_group_rows

    rows += stories_group_rows(summary.get("associations") or [], alpha)  # which groups carry them
    rows += scenario_rows(summary.get("scenarios") or {}, alpha, flag_columns)  # the scenario explorer
    return rows + harm_rows(summary.get("harm") or {}, alpha, flag_columns)


def leakage_rows(summary: dict[str, Any]) -> list[Row]:
    """Every coefficient of every mixed-model fit (Wald z), and every fit left out with its reason."""
    settings = summary.get("settings") or {}
    alpha, correction = settings.get("alpha"), settings.get("correction")
    level = float(alpha) if alpha is not None else 0.05
    rows = []
    for fit in summary.get("fits") or []:
        design = {k: fit.get(k) for k in ("formula", "n_traits", "n_groups", "zero_fill", "converged")}
        converged = fit.get("converged", True) is not False
        quality = Quality()
        if not converged:
            quality.add("not_converged", f"not converged: {fit.get('method')}")
        for c in fit.get("coefficients") or []:
            source, adjusted = c.get("source"), c.get("p_adj") is not None
            rows.append({
                "source": "fits", "model": fit.get("variant"), "language": fit.get("target"), **design,
                "term": c.get("term"), "comparison": f"{c.get('term')} → {fit.get('target')}" if source
                else c.get("term"), "test": fit.get("method"),  # a fixed description: no data in it
                "estimate": c.get("estimate"), "estimand": "fixed-effect coefficient" if source else "intercept",
                "ci_low": c.get("ci_low"), "ci_high": c.get("ci_high"), "ci_level": CI_LEVEL,
                "ci_method": "Wald (normal)", "statistic": c.get("z"), "statistic_name": "z (Wald)",
                "p": c.get("p"), "p_adj": c.get("p_adj"), "correction": correction if adjusted else None,
                "alpha": alpha, "significant": c.get("significant"), "n": fit.get("n_obs"),
                "n_unit": "(trait, group) cells", "family": family_label("leakage") if adjusted else None,
                # a mixed model's Wald test has no exact small-sample floor: no units rule (min_units empty)
                **flag_columns(None, None, level, "", c.get("p"), "no p-value from the fit", quality),
            })
    for fit in summary.get("dropped_fits") or []:  # a fit left out says so, with its reason (issue 26)
        stage = str(fit.get("stage") or "not fitted")
        quality = Quality()
        quality.add("not_fitted" if stage == "not fitted" else "not_converged", f"{stage}: {fit.get('reason')}")
        rows.append({
            "source": "dropped_fits", "model": fit.get("variant"), "language": fit.get("target"),
            "test": "linear mixed model (statsmodels MixedLM)", "n": fit.get("n_obs"),
            "n_unit": "(trait, group) cells", "alpha": alpha,
            **flag_columns(None, None, level, "", 0.0, None, quality),
        })
    return rows


def _result_row(result: Row, kind: str | None, units: Any, alpha: float, **fields: Any) -> Row:
    """A TestResult-shaped dict as a row: the method's name in ``test``; an effect named a difference is
    the estimate with its interval, any other effect (d_z, r) the effect size; ``fields`` add the rest."""
    name, detail = split_method(result.get("method"))
    effect_name = str(result.get("effect_name") or "")
    row: Row = {
        "test": name, "statistic": result.get("statistic"), "p": result.get("p"), "p_adj": result.get("p_adj"),
        "n": result.get("n"), "ci_low": result.get("ci_low"), "ci_high": result.get("ci_high"),
        "ci_level": CI_LEVEL if not _missing(result.get("ci_low")) else None,
        "statistic_name": {"mcnemar": "min(b, c): the smaller discordant count (exact binomial test)",
                           "paired_t": "t", "wilcoxon": "W (signed-rank sum)"}.get(kind or ""),
        "alpha": alpha, "significant": _significant(result.get("p_adj"), alpha),
    }
    if "difference" in effect_name:
        row.update(estimate=result.get("effect"), estimand=effect_name)
    else:
        row.update(effect_size=result.get("effect"), effect_size_name=effect_name or None)
    row.update(fields)
    counts = mcnemar_detail(detail) if kind == "mcnemar" else {}
    if counts:  # the exact rule counts the discordant pairs, not the pairs
        row.update(counts)
        units = counts["discordant_b"] + counts["discordant_c"]
    row.update(flag_columns(kind, units, alpha, name or "the test", result.get("p"),
                            None if counts else detail))
    return row


def _kind(method: Any) -> str | None:
    name = str(method or "")
    for prefix, kind in (("McNemar", "mcnemar"), ("paired t", "paired_t"), ("Wilcoxon", "wilcoxon")):
        if name.startswith(prefix):
            return kind
    return None


def debias_rows(summary: dict[str, Any]) -> list[Row]:
    """Before/after McNemar per grouping, the probability shift, and the quality tasks (QA, BBQ)."""
    alpha = float((summary.get("analysis") or {}).get("alpha") or 0.05)
    rows = []
    for comp in summary.get("contact") or []:
        where = {"model": f"{comp.get('before_model')} → {comp.get('after_model')}", "setting": comp.get("setting"),
                 "part": comp.get("part"), "mode": comp.get("mode"), "comparison": "after vs before"}
        for table, records in (comp.get("tables") or {}).items():
            for r in records:
                result = {"method": r.get("test"), "n": r.get("n_pairs"), "statistic": r.get("statistic"),
                          "p": r.get("p"), "p_adj": r.get("p_adj"), "effect": r.get("effect"),
                          "effect_name": "difference in the proportion biased (after − before)",
                          "ci_low": r.get("effect_ci_low"), "ci_high": r.get("effect_ci_high")}
                # units: the discordant pairs from the method's detail, else the pairs (their upper bound)
                rows.append(_result_row(
                    result, "mcnemar", r.get("n_pairs"), alpha, source=f"contact.tables.{table}", **where,
                    **{k: r.get(k) for k in DEBIAS_FACTORS if k in r}, correction=r.get("correction"),
                    family=family_label("debias"), n_unit="prompts read before and after"))
        shift = comp.get("probability_shift")
        if shift:
            rows.append(_result_row(
                shift, "paired_t", shift.get("n"), alpha, source="contact.probability_shift", **where,
                estimate=shift["mean_after"] - shift["mean_before"], ci_method="Student t",
                estimand="mean difference in P(unbiased answer) (after − before)", n_unit="prompts"))
    for q in summary.get("quality") or []:
        where = {"model": f"{q.get('before_model')} → {q.get('after_model')}", "setting": q.get("setting"),
                 "task": q.get("task"), "comparison": "after vs before"}
        if q.get("task") == "qa" and q.get("difference"):
            diff = q.get("rouge_l_after", 0.0) - q.get("rouge_l_before", 0.0)
            for name, result in (("difference", q["difference"]), ("wilcoxon", q.get("wilcoxon") or {})):
                kind = _kind(result.get("method"))
                rows.append(_result_row(
                    result, kind, result.get("n"), alpha, source=f"quality.qa.{name}", **where, n_unit="QA items",
                    **({"estimate": diff, "estimand": "mean difference in ROUGE-L (after − before)",
                        "ci_method": "Student t"} if name == "difference" else {})))
        for t in q.get("tests") or []:
            rows.append(_result_row(
                {**t, "effect_name": f"difference in the {t.get('quantity') or 'error rate'} (after − before)"},
                _kind(t.get("method")), t.get("n"), alpha, source="quality.bbq.tests", **where,
                condition=t.get("condition"), n_unit="BBQ items read before and after"))
    return rows + bbq_pairwise_rows(summary.get("bbq_pairwise"), alpha) + human_study_rows(
        summary.get("human_study") or [])


def bbq_pairwise_rows(block: dict[str, Any] | None, alpha: float) -> list[Row]:
    """Table 6's significance: one row per two models and BBQ statistic (paired bootstrap, Holm over the pairs)."""
    rows: list[Row] = []
    level = (block or {}).get("confidence")
    for r in (block or {}).get("rows") or []:
        rows.append({
            "source": "quality.bbq.pairwise", "task": "bbq", "model": f"{r['first_model']} → {r['second_model']}",
            "setting": r.get("second"), "comparison": f"{r['second']} vs {r['first']}", "measure": r["statistic"],
            "test": "paired bootstrap of items", "estimate": r.get("difference"),
            "estimand": f"difference in BBQ {r.get('what')} (second − first)", "ci_low": r.get("ci_low"),
            "ci_high": r.get("ci_high"),
            "ci_level": None if _missing(r.get("ci_low")) else level,
            "ci_method": f"percentile ({r.get('resamples')} resamples, seed {r.get('seed')})",
            "p": r.get("p"), "p_adj": r.get("p_adj"), "correction": r.get("correction"), "alpha": alpha,
            "family": "debias BBQ pairwise: the pairs of one statistic", "significant": _significant(r.get("p_adj"),
                                                                                                   alpha),
            "n": r.get("n"), "n_unit": "BBQ items answered by both models",
            # a bootstrap has no exact small-sample floor: no units rule (min_units empty)
            **flag_columns(None, None, alpha, "", r.get("p"), r.get("note")),
        })
    return rows


def human_study_rows(scores: list[dict[str, Any]]) -> list[Row]:
    """Table 5's agreement: Cohen's kappa between the two annotators per criterion and over both (no test)."""
    rows: list[Row] = []
    for result in scores:
        parts = [(c, part["kappa"]) for c, part in (result.get("criteria") or {}).items()]
        for criterion, k in [*parts, ("both criteria", result.get("kappa_pooled") or {})]:
            rows.append({
                "source": "human_study", "task": "human study", "setting": result.get("setting"),
                "model": f"{result.get('before_model')} → {result.get('after_model')}", "measure": criterion,
                "comparison": "annotator 1 vs annotator 2", "test": None, "estimate": k.get("kappa"),
                "estimand": "Cohen's kappa between the two annotators (de-blinded labels)",
                "ci_low": (k.get("kappa_ci") or [None, None])[0], "ci_high": (k.get("kappa_ci") or [None, None])[1],
                "ci_level": CI_LEVEL if k.get("kappa_ci") else None, "ci_method": "asymptotic (statsmodels)",
                "n": k.get("n"), "n_unit": "rated pairs (both criteria: pairs × 2)",
                **flag_columns(None, None, CI_LEVEL, "", 0.0, None, None if k.get("kappa") is not None else
                               not_tested(k.get("note") or "kappa undefined")),
            })
    return rows
