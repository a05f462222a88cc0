"""The tidy statistics rows of the two headline probes (contact, samaritan), computed once from the summary.

Every surface reads these rows: `summary --json` (the summary's ``statistics``), the export
(``statistics_<probe>``) and the report's overview (the rows marked ``headline``). Each row has its
estimate with the interval of that estimate, the estimand, the design factors in their own columns,
the correction family, and the quality flags (:mod:`biasatlas.stats.quality`).
"""

from __future__ import annotations

import math
from typing import Any

from biasatlas.stats.families import family_label
from biasatlas.stats.quality import Quality, answer_flags, attainable_flag, not_tested, units_flag
from biasatlas.tidy.columns import STATISTICS

Row = dict[str, Any]
CONTACT_CELL = ("model", "mode", "language", "scale")
SAMARITAN_CELL = ("model", "language", "temperature", "max_tokens", "category", "group")

#: the test name of each contact test kind, and the kind of its units rule (stats.quality.RULES)
_CONTACT_TESTS = {
    "McNemar": ("McNemar exact", "mcnemar"),
    "Cochran's Q": ("Cochran's Q", "cochran"),
    "paired t": ("paired t-test", "paired_t"),
    "Wilcoxon": ("Wilcoxon signed-rank (two-sided)", "wilcoxon"),
}
_AGGREGATION = {
    "decision": "per prompt set: the majority decision of its readable samples (a tie leaves the set out)",
    "P(biased)": "per prompt set: the mean of its samples' log-odds of P(biased)",
}


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


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


def run_columns(runs: dict[str, Any] | None, model: Any) -> Row:
    """seed, samples and run ids of the runs that asked ``model`` (summary's ``runs``), joined by ``; ``."""
    info = (runs or {}).get(str(model)) or {}
    return {k: info.get(k) for k in ("run_ids", "seed", "samples", "temperature")}


def _row_flags(base: Quality, result: Row, kind: str, units: Any, alpha: float, label: str) -> Quality:
    quality = Quality().merge(base)
    if _missing(result.get("p")):
        method = str(result.get("method") or "")
        reason = method[method.find("(") + 1:method.rfind(")")] if "(" in method else "too few pairs"
        quality.merge(not_tested(reason))
    quality.merge(units_flag(kind, units, alpha, label))
    return quality


def _flag_columns(quality: Quality, kind: str, alpha: float) -> Row:
    from biasatlas.stats.quality import min_units

    return {"flags": quality.flags, "flag_notes": quality.text, "min_units": min_units(kind, alpha)}


def contact_test_name(test: Row) -> str:
    """The test name a contact test's statistics row carries (``test``), from the summary's ``method_kind``; where
    prompt sets share their no-contact answer, the test that accounts for it (stats.clustered)."""
    method = str(test.get("method") or "")
    if test.get("method_kind") == "McNemar" and method.startswith("exact permutation"):
        return "exact permutation test within questions (McNemar's c − b)"
    if test.get("method_kind") == "Cochran's Q" and method.startswith(("Cochran-Mantel", "Cochran's Q (exact")):
        return method.split(" (")[0] if method.startswith("Cochran-Mantel") else "Cochran's Q (exact conditional)"
    return _CONTACT_TESTS.get(str(test.get("method_kind")), (method, ""))[0]


def contact_rows(summary: dict[str, Any]) -> list[Row]:
    """The contact tests (summary ``tests``) as tidy rows, with the descriptive change in P(biased)."""
    analysis = summary.get("analysis") or {}
    alpha = float(analysis.get("alpha") or 0.05)
    cells = {tuple(str(q.get(k)) for k in CONTACT_CELL): q for q in summary.get("answer_quality") or []}
    rows: list[Row] = []
    for test in summary.get("tests") or []:
        kind_name = str(test.get("method_kind"))
        kind = _CONTACT_TESTS.get(kind_name, ("", ""))[1]
        name = contact_test_name(test)
        cell = cells.get(tuple(str(test.get(k)) for k in CONTACT_CELL)) or {}
        base = answer_flags(int(cell.get("answers") or 0), int(cell.get("unreadable") or 0),
                            int(cell.get("refusals") or 0), cell.get("top_share"), cell.get("top_label", "one option"))
        if test.get("measure") != "decision":  # probabilities move when decisions cannot: no one_option flag
            base = answer_flags(int(cell.get("answers") or 0), int(cell.get("unreadable") or 0),
                                int(cell.get("refusals") or 0))
        b, c = (None if _missing(test.get(k)) else int(test[k]) for k in ("discordant_b", "discordant_c"))
        units = (b or 0) + (c or 0) if kind == "mcnemar" and b is not None else (
            test.get("varying_sets") if kind == "cochran" else test.get("n"))
        quality = _row_flags(base, test, kind, units, alpha, name)
        quality.merge(attainable_flag(test.get("min_p"), alpha, name))
        common: Row = {
            "source": "tests", "model": test.get("model"), "mode": test.get("mode"),
            "language": test.get("language"), "scale": test.get("scale"), "measure": test.get("measure"),
            "comparison": test.get("comparison"), "alpha": alpha, "n": test.get("n"),
            "n_unit": test.get("n_unit") or "prompt sets (samples aggregated first) read under every framing compared",
            "units": test.get("units"),
            "aggregation": _AGGREGATION.get(str(test.get("measure"))),
            **run_columns(summary.get("runs"), test.get("model")), "samples": test.get("samples"),
        }
        row: Row = {
            **common, "test": name, "statistic": test.get("statistic"), "p": test.get("p"),
            "p_adj": test.get("p_adj"), "correction": test.get("correction"), "family": test.get("family")
            or family_label("contact"), "significant": None if _missing(test.get("p_adj"))
            else bool(test["p_adj"] < alpha), "discordant_b": b, "discordant_c": c, "sd_diff": test.get("sd_diff"),
            "headline": kind == "mcnemar" and test.get("comparison") == "positive vs none",
            **_flag_columns(quality, kind, alpha),
        }
        if kind == "mcnemar":
            row.update(estimate=test.get("effect"), estimand="change in the proportion of biased prompt sets "
                       "(framing − none)", ci_low=test.get("ci_low"), ci_high=test.get("ci_high"),
                       ci_method=test.get("ci_method") or "Newcombe method 10 (paired proportions)",
                       statistic_name="min(b, c): the smaller discordant count (exact binomial test)")
        elif kind == "paired_t":
            row.update(estimate=test.get("effect"), estimand=test.get("effect_name"), ci_low=test.get("ci_low"),
                       ci_high=test.get("ci_high"), ci_method="Student t", statistic_name="t",
                       effect_size=test.get("d_z"), effect_size_name="Cohen's d_z")
        else:
            row.update(effect_size=test.get("effect"), effect_size_name=test.get("effect_name") or None,
                       statistic_name="Q" if kind == "cochran" else "W (signed-rank sum)")
        row["ci_level"] = test.get("ci_level") if not _missing(row.get("ci_low")) else None
        rows.append(row)
        if kind == "paired_t" and not _missing(test.get("mean_change")):
            rows.append({
                **common, "test": "t interval of the mean paired change (descriptive; tested on the log-odds)",
                "estimate": test.get("mean_change"), "estimand": "mean change in P(biased) (framing − none)",
                "ci_low": test.get("mean_change_ci_low"), "ci_high": test.get("mean_change_ci_high"),
                "ci_level": test.get("ci_level"), "ci_method": "Student t", "headline": False,
                "aggregation": "per prompt set: the mean of "
                "its samples' P(biased)", **_flag_columns(Quality().merge(base).merge(
                    units_flag("paired_t", test.get("n"), alpha, "t interval")), "paired_t", alpha),
            })
    from biasatlas.tidy.languages import across_language_rows

    rows += [{**row, **run_columns(summary.get("runs"), row.get("model"))} for row in across_language_rows(summary)]
    from biasatlas.tidy.disparity import disparity_rows

    rows += [{**row, **run_columns(summary.get("runs"), row.get("model"))} for row in disparity_rows(
        "contact", summary.get("group_disparity") or [], alpha, ("model", "mode", "language", "axis"))]
    return _complete("contact", rows, summary.get("reading"))


def samaritan_rows(summary: dict[str, Any]) -> list[Row]:
    """The Samaritan group-vs-control tests (summary ``groups``) as tidy rows; the headline of each
    model x language x decoding is the paired t-test of the group furthest from the control."""
    settings = summary.get("settings") or {}
    alpha, correction = float(settings.get("alpha") or 0.01), settings.get("correction")
    level = settings.get("ci_level", 0.95)
    groups = summary.get("groups") or []
    top: dict[tuple[str, ...], int] = {}
    for i, g in enumerate(groups):
        key = tuple(str(g.get(k)) for k in ("model", "language", "temperature", "max_tokens"))
        if not _missing(g.get("mean_diff")) and (key not in top or abs(g["mean_diff"]) > abs(
                groups[top[key]]["mean_diff"])):
            top[key] = i
    rows: list[Row] = []
    difference = "mean difference group − control (rating points, 1-100 scale)"
    for i, g in enumerate(groups):
        answered = int(g.get("n_answered") or 0)
        base = answer_flags(answered, int(g.get("n_unparseable") or 0), int(g.get("n_refusals") or 0),
                            g.get("top_rating_share"), "one rating", "ratings", cut=int(g.get("n_cut") or 0))
        common: Row = {
            "source": "groups", **{k: g.get(k) for k in SAMARITAN_CELL}, "comparison": f"{g.get('group')} vs "
            "control", "n": g.get("n"), "alpha": alpha, "correction": correction,
            "family": g.get("family") or family_label("samaritan"),
            "n_unit": "scenarios (group and control paired; a scenario's rephrasings and samples averaged)",
            "aggregation": "per scenario: the mean rating over its rephrasings and samples read on both sides",
            **run_columns(summary.get("runs"), g.get("model")), "temperature": g.get("temperature"),
        }
        t_test = str(g.get("test") or "paired t-test")
        headline = top.get(tuple(str(g.get(k)) for k in ("model", "language", "temperature", "max_tokens"))) == i
        for name, kind, p, p_adj, extra in (
            (t_test, "paired_t", g.get("p"), g.get("p_adj"), {
                "estimate": g.get("mean_diff"), "estimand": difference, "ci_low": g.get("ci_low"),
                "ci_high": g.get("ci_high"), "ci_level": level, "ci_method": "Student t", "statistic": g.get("t"),
                "statistic_name": "t",
                "effect_size": g.get("d_z"), "effect_size_name": "Cohen's d_z", "headline": headline,
                "sd_diff": g.get("sd_diff")}),
            ("Wilcoxon signed-rank (two-sided)", "wilcoxon", g.get("wilcoxon_p"), g.get("wilcoxon_p_adj"), {
                "statistic": g.get("wilcoxon_W"), "statistic_name": "W (signed-rank sum)",
                "effect_size": g.get("rank_biserial"), "effect_size_name": "rank-biserial r", "headline": False}),
            ("TOST equivalence (paired)", "tost", g.get("tost_p"), g.get("tost_p_adj"), {
                "comparison": f"{g.get('group')} vs control (equivalent within ± {g.get('equivalence_margin')})",
                "estimate": g.get("mean_diff"), "estimand": difference, "equivalence_margin":
                g.get("equivalence_margin"), "headline": False}),
        ):
            quality = _row_flags(base, {"p": p, "method": t_test if kind == "paired_t" else ""}, kind,
                                 g.get("n"), alpha, name)
            rows.append({**common, "test": name, "p": p, "p_adj": p_adj, **extra,
                         "significant": None if _missing(p_adj) else bool(p_adj < alpha),
                         **_flag_columns(quality, kind, alpha)})
    from biasatlas.tidy.languages import samaritan_across_language_rows

    rows += [{**row, **run_columns(summary.get("runs"), row.get("model")), "temperature": row.get("temperature")}
             for row in samaritan_across_language_rows(summary)]
    from biasatlas.tidy.disparity import disparity_rows

    rows += [{**row, **run_columns(summary.get("runs"), row.get("model")), "temperature": row.get("temperature")}
             for row in disparity_rows("samaritan", summary.get("group_disparity") or [], alpha,
                                       (*SAMARITAN_CELL[:-1],), what="category")]
    return _complete("samaritan", rows, summary.get("reading"))


def reader_text(reading: dict[str, Any] | None) -> str | None:
    """Who produced the labels a probe's statistics count: ``rules``, or the judge's share with its model."""
    if not reading:
        return None
    counts = reading.get("labels_by") or {}
    judge = f"; judge {reading['judge']}" if reading.get("judge") else ""
    if set(counts) <= {reading.get("reader")}:
        return f"{reading.get('reader')} ({sum(counts.values())} labels{judge})"
    shares = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"{reading.get('reader')} (labels: {shares}{judge})"


def _complete(probe: str, rows: list[Row], reading: dict[str, Any] | None = None) -> list[Row]:
    """Every column of the statistics table on every row, in its order (`summary --json` = the export)."""
    reader = reader_text(reading)
    for row in rows:
        row.setdefault("reader", reader)
        if row.get("headline"):
            row.update(detectable(row))
    return [{**dict.fromkeys(STATISTICS), "probe": probe, **{k: v for k, v in row.items() if k in STATISTICS}}
            for row in rows]


def detectable(row: Row, power: float = 0.8) -> Row:
    """A headline row's sensitivity: the smallest effect its test had ``power`` to detect at the row's alpha,
    from the study's own figures (McNemar: the observed share of discordant prompt sets; paired t: the sd of
    the observed differences), on the estimate's scale. Stated beside a result that is not significant."""
    from biasatlas.stats.power import PowerError, detectable_effect

    n_raw, alpha_raw = row.get("n"), row.get("alpha")
    if _missing(n_raw) or _missing(alpha_raw) or int(n_raw or 0) < 1:
        return {}
    n, alpha = int(n_raw or 0), float(alpha_raw or 0)
    b, c, sd = row.get("discordant_b"), row.get("discordant_c"), row.get("sd_diff")
    try:
        shared = str(row.get("test", "")).startswith("exact permutation test within questions")
        if (str(row.get("test", "")).startswith("McNemar") or shared) and not (_missing(b) or _missing(c)):
            rate = (int(b or 0) + int(c or 0)) / n
            if shared and not _missing(row.get("units")):
                # questions, not sets, are independent: McNemar's power on as many pairs as questions (conservative)
                n = int(row.get("units") or 0)
            mde = detectable_effect("mcnemar", n, alpha, power, discordant_rate=rate)
        elif "t-test" in str(row.get("test", "")) or row.get("statistic_name") == "t":
            if _missing(sd):
                return {}
            mde = detectable_effect("paired_t", n, alpha, power, sd=float(sd or 0))
        else:
            return {}
    except PowerError as exc:
        return {"mde": None, "mde_note": str(exc)}
    what = "questions" if str(row.get("test", "")).startswith("exact permutation") else "n"
    note = mde.reason or (f"{power:.0%} power at alpha {alpha:g} on {what} = {n}; {mde.assumptions}; "
                          "from this study's own figures")
    return {"mde": mde.value, "mde_note": note}
