"""The statistics table of one probe: every test its summary reports, one row each, in one shape.

Built from ``Probe.summarise(store)`` (what `biasatlas summary --json` prints): each probe's test
rows are mapped onto the columns of :data:`STATISTICS`, the same for every probe, so the tables
of several probes concatenate. A value a summary does not give stays empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from biasatlas.export.columns import STATISTICS
from biasatlas.stats.families import family_label

Row = dict[str, Any]
CI_LEVEL = 0.95


def statistics_rows(probe: str, summary: dict[str, Any], alpha: float | None = None) -> list[Row]:
    """Every test of ``summary`` (the probe's summarise output) as rows of :data:`STATISTICS`.

    ``alpha`` is the level summarise was given, for a probe whose summary does not state it (stories).
    """
    if not summary:
        return []
    if summary.get("statistics") is not None:  # computed once by the probe's summarise (contact, samaritan)
        rows: list[Row] = summary["statistics"]
    else:
        mapper = MAPPERS.get(probe)
        if mapper is None:
            return []
        if probe == "stories":
            summary = {**summary, "alpha": alpha}
        rows = mapper(summary)
    return [{**dict.fromkeys(STATISTICS), "probe": probe, **{k: v for k, v in row.items() if k in STATISTICS}}
            for row in rows]


def run_info(store: Any, probe: str) -> dict[str, dict[str, str | None]]:
    """Per backend id: the run ids, seeds, samples and temperatures of ``probe``'s runs, each joined by ``; ``."""
    import json

    info: dict[str, dict[str, list[str]]] = {}
    for run in store.runs(probe).to_dict("records"):
        config = json.loads(run.get("config_json") or "{}")
        settings = config.get("settings") or {}
        entry = info.setdefault(str(run["backend_id"]), {"run_ids": [], "seed": [], "samples": [], "temperature": []})
        for key, value in (("run_ids", run["run_id"]), ("seed", settings.get("seed")),
                           ("samples", config.get("samples")), ("temperature", settings.get("temperature"))):
            if value is not None and str(value) not in entry[key]:
                entry[key].append(str(value))
    from biasatlas.display import display_names

    joined = {model: {k: "; ".join(v) or None for k, v in entry.items()} for model, entry in info.items()}
    names = display_names(store.conn)  # an audit's rows name the model by its display name
    return {**joined, **{names[m]: v for m, v in joined.items() if m in names}}


def _subset(row: dict[str, Any], keys: Iterable[str]) -> str | None:
    parts = [f"{k}={row[k]}" for k in keys if row.get(k) is not None]
    return "; ".join(parts) or None


def _statistic_name(method: str) -> str | None:
    for prefix, name in (("McNemar", "min(b, c): the smaller discordant count (exact binomial test)"),
                         ("Cochran", "Q"), ("paired t", "t"), ("Wilcoxon", "W (signed-rank sum)")):
        if method.startswith(prefix):
            return name
    return None


def _significant(p_adj: Any, alpha: Any) -> bool | None:
    if p_adj is None or alpha is None or p_adj != p_adj:  # NaN
        return None
    return bool(p_adj < alpha)


def _test_result(result: dict[str, Any], **fields: Any) -> Row:
    """A TestResult-shaped dict (method, n, statistic, p, effect, effect_name, CI, p_adj) as a row.

    An effect named a difference is the estimate (its CI is the row's); any other effect (Cohen's
    d_z, rank-biserial r, eta²) is the effect size, and ``fields`` may give the estimate.
    """
    method = str(result.get("method") or "")
    effect_name = str(result.get("effect_name") or "")
    is_estimate = "difference" in effect_name
    row: Row = {
        "test": method or None,
        "statistic": result.get("statistic"),
        "statistic_name": _statistic_name(method),
        "p": result.get("p"),
        "p_adj": result.get("p_adj"),
        "n": result.get("n"),
        "ci_low": result.get("ci_low"),
        "ci_high": result.get("ci_high"),
        "ci_level": result.get("ci_level", CI_LEVEL) if result.get("ci_low") is not None else None,
    }
    if is_estimate:
        row.update(estimate=result.get("effect"), estimand=effect_name)
    else:
        row.update(effect_size=result.get("effect"), effect_size_name=effect_name or None)
    row.update(fields)
    return row


# ---- per probe ---------------------------------------------------------------------------------
def _stories(summary: dict[str, Any]) -> list[Row]:
    from biasatlas.stats.associations import AssociationConfig

    alpha = AssociationConfig().alpha if summary.get("alpha") is None else summary["alpha"]
    rows = []
    for a in summary.get("associations") or []:
        rows.append({
            "source": "associations", "model": "; ".join(a.get("models") or []) or None,
            "language": "; ".join(a.get("languages") or []) or None,
            "subset": f"slices={a.get('slices')}" if a.get("slices") is not None else None,
            "comparison": f"{a['base_attribute']}={a['base_value']} → {a['compared_attribute']}={a['compared_value']}",
            "test": "one-sided Fisher exact test of the cell (in an A × B table significant after BH)",
            "estimate": a.get("lift"), "estimand": "lift: P(B=b | A=a) / P(B=b)",
            "effect_size": a.get("cramers_v"),
            "effect_size_name": f"bias-corrected Cramér's V of the A × B table ({a.get('effect')})",
            "p": a.get("p"), "p_adj": a.get("q"), "correction": "by", "alpha": alpha,
            "significant": _significant(a.get("q"), alpha), "n": a.get("count"),
            "n_unit": "stories with A=a and B=b (summed over the slices)", "family": family_label("stories"),
        })
    return rows


def _leakage(summary: dict[str, Any]) -> list[Row]:
    settings = summary.get("settings") or {}
    alpha, correction = settings.get("alpha"), settings.get("correction")
    rows = []
    for fit in summary.get("fits") or []:
        for c in fit.get("coefficients") or []:
            source = c.get("source")
            rows.append({
                "source": "fits", "model": fit.get("variant"), "language": fit.get("target"),
                "subset": _subset(fit, ("n_traits", "n_groups", "zero_fill", "converged")),
                "comparison": f"{c.get('term')} → {fit.get('target')}" if source else c.get("term"),
                "test": f"{fit.get('method')}: {fit.get('formula')}", "estimate": c.get("estimate"),
                "estimand": "fixed-effect coefficient" if source else "intercept",
                "ci_low": c.get("ci_low"), "ci_high": c.get("ci_high"), "ci_level": CI_LEVEL,
                "statistic": c.get("z"), "statistic_name": "z (Wald)", "p": c.get("p"), "p_adj": c.get("p_adj"),
                "correction": correction if c.get("p_adj") is not None else None,
                "alpha": alpha, "significant": c.get("significant"), "n": fit.get("n_obs"),
                "n_unit": "(trait, group) cells", "family": family_label("leakage") if c.get("p_adj") is not None
                else None, "flags": None if fit.get("converged", True) else "not_converged",
                "flag_notes": None if fit.get("converged", True) else f"not converged: {fit.get('method')}",
            })
    for fit in summary.get("dropped_fits") or []:  # a fit left out says so, with its reason (issue 26)
        stage = str(fit.get("stage") or "not fitted")
        rows.append({
            "source": "dropped_fits", "model": fit.get("variant"), "language": fit.get("target"),
            "test": "linear mixed model (statsmodels MixedLM)", "n": fit.get("n_obs"), "n_unit": "(trait, group) cells",
            "flags": "not_fitted" if stage == "not fitted" else "not_converged",
            "flag_notes": f"{stage}: {fit.get('reason')}", "alpha": alpha,
        })
    return rows


def _debias(summary: dict[str, Any]) -> list[Row]:
    alpha = (summary.get("analysis") or {}).get("alpha")
    rows = []
    for comp in summary.get("contact") or []:
        model = f"{comp.get('before_model')} → {comp.get('after_model')}"
        where = {"setting": comp.get("setting"), "part": comp.get("part"), "mode": comp.get("mode")}
        for table, records in (comp.get("tables") or {}).items():
            for r in records:
                keys = [k for k in r if not k.startswith(("before_", "after_", "effect"))
                        and k not in {"n_pairs", "test", "statistic", "p", "p_adj", "correction"}]
                result = {"method": r.get("test"), "n": r.get("n_pairs"), "statistic": r.get("statistic"),
                          "p": r.get("p"), "p_adj": r.get("p_adj"), "effect": r.get("effect"),
                          "effect_name": "difference in the proportion biased (after − before)",
                          "ci_low": r.get("effect_ci_low"), "ci_high": r.get("effect_ci_high")}
                rows.append(_test_result(
                    result, source=f"contact.tables.{table}", model=model,
                    subset=_subset({**where, **r}, [*where, *keys]), comparison="after vs before",
                    correction=r.get("correction"), family=family_label("debias"), alpha=alpha,
                    significant=_significant(r.get("p_adj"), alpha), n_unit="prompts read before and after"))
        shift = comp.get("probability_shift")
        if shift:
            rows.append(_test_result(
                shift, source="contact.probability_shift", model=model, subset=_subset(where, where),
                comparison="after vs before", estimate=shift["mean_after"] - shift["mean_before"],
                estimand="mean difference in P(unbiased answer) (after − before)", n_unit="prompts"))
    for q in summary.get("quality") or []:
        model = f"{q.get('before_model')} → {q.get('after_model')}"
        where = {"setting": q.get("setting"), "task": q.get("task")}
        if q.get("task") == "qa" and q.get("difference"):
            diff = q.get("rouge_l_after", 0.0) - q.get("rouge_l_before", 0.0)
            for name, result in (("difference", q["difference"]), ("wilcoxon", q.get("wilcoxon") or {})):
                rows.append(_test_result(
                    result, source=f"quality.qa.{name}", model=model, subset=_subset(where, where),
                    comparison="after vs before", n_unit="QA items",
                    **({"estimate": diff, "estimand": "mean difference in ROUGE-L (after − before)"}
                       if name == "difference" else {})))
        for t in q.get("tests") or []:
            rows.append(_test_result(
                {**t, "effect_name": "difference in the error rate (after − before)"}, source="quality.bbq.tests",
                model=model, subset=_subset({**where, **t}, [*where, "condition"]), comparison="after vs before",
                n_unit="BBQ items read before and after"))
    return rows


MAPPERS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "stories": _stories,
    "leakage": _leakage,
    "debias": _debias,
}
