"""The across-languages results of the contact and Samaritan probes as tidy statistics rows (the export and
`summary --json`).

Two kinds of rows, from each summary's ``across_languages`` block (contact:
:mod:`biasatlas.probes.contact.across_languages`, Samaritan:
:mod:`biasatlas.probes.samaritan.across_languages`): one per model x group x language with the group's effect
in that language and its interval, and one per model x group with Cochran's Q test of whether that effect
differs between languages.
"""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]

ESTIMAND = "group's share of biased decisions − the other groups' share in the same language and model"


def across_language_rows(summary: dict[str, Any]) -> list[Row]:
    """Effect rows and test rows (none when the study's answers are in one language); the caller adds
    the run columns and completes them (:func:`biasatlas.tidy.rows.contact_rows`)."""
    block = summary.get("across_languages") or {}
    if not block:
        return []
    alpha = float(block.get("alpha") or 0.05)
    unit = block.get("unit") or "readable decisions"
    rows: list[Row] = []
    for e in block.get("effects") or []:
        rows.append({
            "source": "across_languages", "model": e["model"], "mode": e.get("mode"), "language": e["language"],
            "group": e["group"],
            "comparison": f"{e['label']} vs the other groups ({e['language']})", "test": None,
            "estimate": e["effect"], "estimand": ESTIMAND, "ci_low": e["effect_ci_low"],
            "ci_high": e["effect_ci_high"], "ci_level": 0.95,
            "ci_method": "Newcombe hybrid score interval (independent proportions)", "n": e["n"],
            "n_unit": f"{unit} of the group in this language (the others': n_rest)",
            "alpha": alpha, "headline": False, **_few(e["n"], int(block.get("min_answers") or 0)),
        })
    for t in block.get("tests") or []:
        rows.append({
            "source": "across_languages", "model": t["model"], "mode": t.get("mode"), "language": t["languages"],
            "group": t["group"],
            "comparison": f"effect of {t['group']} across {t['languages']}",
            "test": "Cochran's Q (heterogeneity over languages)", "statistic": t["q"],
            "statistic_name": f"Q ({t['dof']} degrees of freedom)",
            "p": t["p"], "p_adj": t["p_adj"], "correction": "bh",
            "family": "across languages: the groups of one model x mode", "significant": bool(t["differs"]),
            "effect_size": t["i2"], "effect_size_name": "I² (share of the variation due to heterogeneity)",
            "n": t["n"], "n_unit": f"{unit} of the group over its languages", "alpha": alpha,
            "flags": t["flags"] or None, "flag_notes": t["flag_notes"] or None, "headline": False,
        })
    return rows


SAMARITAN_ESTIMAND = "mean paired difference group − control in this language (rating points, 1-100 scale)"


def samaritan_across_language_rows(summary: dict[str, Any]) -> list[Row]:
    """The Samaritan block's effect and test rows (none with one language); the caller adds the run columns
    and completes them (:func:`biasatlas.tidy.rows.samaritan_rows`)."""
    block = summary.get("across_languages") or {}
    if not block:
        return []
    alpha, minimum = float(block.get("alpha") or 0.01), int(block.get("min_pairs") or 0)
    rows: list[Row] = []
    cell = ("model", "temperature", "max_tokens", "category", "group")
    for e in block.get("effects") or []:
        few = {} if int(e["n"]) >= minimum else {
            "flags": "few_pairs", "flag_notes": f"few paired scenarios: {e['n']} (fewer than {minimum}); "
            "the Q test rejects a true null clearly more often than alpha"}
        rows.append({
            "source": "across_languages", **{k: e[k] for k in cell}, "language": e["language"],
            "comparison": f"{e['group']} vs control ({e['language']}; phrasings: {e['phrasings']}"
            + (f"; left out: {e['left_out']})" if e.get("left_out") else ")"), "test": None,
            "estimate": e["effect"], "estimand": SAMARITAN_ESTIMAND, "ci_low": e["ci_low"], "ci_high": e["ci_high"],
            "ci_level": 0.95 if e["ci_low"] is not None else None, "ci_method": "Student t", "sd_diff": e["sd_diff"],
            "n": e["n"], "n_unit": "scenarios (group and control paired; a scenario's rephrasings and samples "
            "averaged)", "alpha": alpha, "headline": False, **few,
        })
    for t in block.get("tests") or []:
        rows.append({
            "source": "across_languages", **{k: t[k] for k in cell}, "language": t["languages"],
            "comparison": f"gap of {t['group']} from the control across {t['languages'] or 'languages'}",
            "test": "Cochran's Q (heterogeneity over languages)", "statistic": t["q"],
            "statistic_name": f"Q ({t['dof']} degrees of freedom)", "p": t["p"], "p_adj": t["p_adj"],
            "correction": "bh", "family": "across languages: the groups of one model x decoding",
            "significant": None if t["p_adj"] is None else bool(t["differs"]),
            "effect_size": t["i2"], "effect_size_name": "I² (share of the variation due to heterogeneity)",
            "n": t["n"], "n_unit": "paired scenarios of the group over its languages", "alpha": alpha,
            "flags": t["flags"] or None, "flag_notes": t["flag_notes"] or None, "headline": False,
        })
    return rows


def _few(n: int, minimum: int) -> Row:
    if n >= minimum:
        return {}
    return {"flags": "few_answers", "flag_notes": f"few answers: {n} (fewer than {minimum}); the interval is wide"}
