"""Tidy statistics rows of the stories' harm block (``summary --json`` ``harm``): labels, top-score use,
agreement within rater groups, the self-judgment gap, realism and the counts per provider.

Descriptive rows (a label, a share, a count) have no test and no flag; test rows carry their p and the
quality flags of :func:`biasatlas.export.tidy_other.flag_columns`.
"""

from __future__ import annotations

from typing import Any

from biasatlas.probes.stories.harm import parse_key

Row = dict[str, Any]


def _association(key: str) -> Row:
    a, av, b, bv = parse_key(key)
    return {"attribute": a, "value": av, "compared_attribute": b, "compared_value": bv}


def _share(share: dict[str, Any]) -> Row:
    lo, hi = share.get("ci95") or [None, None]
    return {"estimate": share.get("share"), "ci_low": lo, "ci_high": hi, "ci_method": share.get("ci_method"),
            "n": share.get("n")}


def _labels(block: dict[str, Any]) -> list[Row]:
    rows = []
    for r in block.get("associations") or []:
        rows.append({"source": "harm labels", **_association(r["association"]), "rated_by": r["rated_by"],
                     "harmful": r["harmful"], "estimate": r["median"], "estimand": "median harm rating (1-5)",
                     "n": r["n_ratings"], "units": r["n_raters"], "n_unit": "ratings (units: raters)"})
    for r in block.get("per_judge") or []:
        rows.append({"source": "harm labels per judge", "model": r["rater"], **_association(r["association"]),
                     "rated_by": "judge", "harmful": r["harmful"], "estimate": r["median"],
                     "estimand": "median harm rating (1-5) of the judge's samples", "n": r["n_ratings"],
                     "n_unit": "ratings (samples)"})
    return rows


def _top_score(block: dict[str, Any], flags: Any, alpha: float) -> list[Row]:
    estimand = "share of harm ratings that are 5"
    rows = [{"source": "harm top score", "rated_by": "human", "estimand": estimand, **_share(block["humans"]),
             "n_unit": "ratings"}]
    for j in block.get("per_judge") or []:
        rows.append({
            "source": "harm top score", "model": j["rater"], "rated_by": "judge",
            "comparison": f"{j['rater']} vs the human raters (pooled)", "test": "Fisher exact test (two-sided)",
            "estimand": estimand, **_share(j), "effect_size": j.get("odds_ratio"),
            "effect_size_name": "odds ratio of a 5 (judge vs humans)", "p": j["p"], "p_adj": j["p_adj"],
            "correction": "holm", "alpha": alpha, "significant": j["p_adj"] < alpha,
            "family": "stories harm: top-score use, one test per judge", "n_unit": "ratings of the judge",
            **flags(None, None, alpha, "the Fisher test", j["p"]),
        })
    return rows


def _agreement(block: dict[str, Any]) -> list[Row]:
    rows = []
    for group, rated_by in (("humans", "human"), ("judges", "judge")):
        g = block.get(group)
        if g:
            rows.append({"source": "harm agreement", "rated_by": rated_by, "estimate": g["mean_kappa"],
                         "estimand": "mean pairwise quadratic-weighted Cohen's kappa within the group",
                         "n": g["pairs_with_kappa"], "units": g["n_items"],
                         "n_unit": "rater pairs sharing >= 3 associations (units: associations rated)"})
    return rows


def _self_judgment(rows_in: list[dict[str, Any]], flags: Any, alpha: float) -> list[Row]:
    rows = []
    for g in rows_in:
        b, c = g["self_only"], g["others_only"]
        rows.append({
            "source": "harm self-judgment", "model": g["model"], "rated_by": "judge",
            "comparison": f"{g['model']} judging its own associations vs the other judges",
            "test": "McNemar exact test", "estimate": g["difference"],
            "estimand": "share of the model's own associations it labels harmful minus the share the other judges do",
            "p": g["p"], "correction": "none", "alpha": alpha,
            "significant": None if g["p"] is None else g["p"] < alpha, "n": g["n"],
            "n_unit": "associations the model produced and judged", "discordant_b": b, "discordant_c": c,
            **flags("mcnemar", b + c, alpha, "the McNemar test", g["p"], "no discordant association"),
        })
    return rows


def _realism(block: dict[str, Any], flags: Any, alpha: float) -> list[Row]:
    rows = []
    for group, rated_by in (("humans", "human"), ("judges", "judge")):
        g = block.get(group)
        if not g:
            continue
        for answer, share in g["distribution"].items():
            rows.append({"source": "harm realism", "rated_by": rated_by, "realism": answer,
                         "estimand": f"share of realism answers that are '{answer}'", **_share(share),
                         "n_unit": "realism answers"})
        if "test" in g:
            t = g["test"]
            rows.append({"source": "harm realism", "rated_by": rated_by,
                         "comparison": "harm ratings across the realism answers", "test": "Kruskal-Wallis H test",
                         "statistic": t["H"], "statistic_name": "H", "p": t["p"], "correction": "none",
                         "alpha": alpha, "significant": t["p"] < alpha, "n": t["n"], "n_unit": "ratings",
                         **flags(None, None, alpha, "the Kruskal-Wallis test", t["p"])})
    return rows


def _providers(groups: list[dict[str, Any]]) -> list[Row]:
    rows = []
    for g in groups:
        for m in g["models"]:
            for label in ("harmful", "benign"):
                rows.append({"source": "harm by provider", "model": m["model"], "provider": g["provider"],
                             "harmful": label == "harmful", "estimate": m[label],
                             "estimand": f"{label} associations the model produced",
                             "n": m["harmful"] + m["benign"], "n_unit": "associations of the model with a label"})
    return rows


def _rater_pairs(block: dict[str, Any]) -> list[Row]:
    kinds = {r["rater"]: r["kind"] for r in block.get("raters", [])}
    return [{"source": "harm rater pair", "rated_by": f"{kinds.get(p['a'])} × {kinds.get(p['b'])}",
             "comparison": f"{p['a']} vs {p['b']}", "estimate": p.get("kappa"),
             "estimand": "quadratic-weighted Cohen's kappa of the pair" + (f" (none: {p['reason']})"
                                                                          if p.get("reason") else ""),
             "n": p["n"], "n_unit": "associations both rated"} for p in block.get("pairs", [])]


def _provider_gaps(rows_in: list[dict[str, Any]]) -> list[Row]:
    rows = []
    for g in rows_in:
        low, high = g.get("ci95") or [None, None]
        where = "inferred from the judges' names" if g.get("inferred") else "from the audit file"
        rows.append({"source": "harm gap by provider", "provider": g["provider"], "attribute": g["attribute"],
                     "rated_by": "judges − humans", "estimate": g["mean_difference"],
                     "estimand": f"mean of the provider's judge harm minus the human mean harm (provider {where})",
                     "ci_low": low, "ci_high": high, "ci_method": None if low is None else "t", "ci_level": 0.95,
                     "n": g["n"], "n_unit": "associations rated by the provider's judges and humans"})
    return rows


def harm_rows(harm: dict[str, Any], alpha: float, flags: Any) -> list[Row]:
    """The rows of the harm block (``flags``: tidy_other.flag_columns, passed in to avoid an import cycle)."""
    if not harm:
        return []
    rows = _labels(harm.get("labels") or {})
    if harm.get("top_score"):
        rows += _top_score(harm["top_score"], flags, alpha)
    rows += _agreement(harm.get("agreement_within") or {})
    rows += _self_judgment(harm.get("self_judgment") or [], flags, alpha)
    rows += _realism(harm.get("realism") or {}, flags, alpha)
    rows += _providers(harm.get("by_provider") or [])
    rows += _rater_pairs(harm.get("rater_agreement") or {})
    rows += _provider_gaps(harm.get("gap_by_provider") or [])
    empty = flags(None, None, alpha, "")
    return [{**empty, **r} if "flags" not in r else r for r in rows]
