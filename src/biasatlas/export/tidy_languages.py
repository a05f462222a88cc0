"""The contact probe's across-languages results as tidy statistics rows (the export and `summary --json`).

Two kinds of rows, from the summary's ``across_languages`` block (:mod:`biasatlas.languages.compare`):
one per model x group x language with the group's effect in that language and its interval, and one
per model x group with Cochran's Q test of whether that effect differs between languages.
"""

from __future__ import annotations

from typing import Any

Row = dict[str, Any]

ESTIMAND = "group's share of biased decisions − the other groups' share in the same language and model"


def across_language_rows(summary: dict[str, Any]) -> list[Row]:
    """Effect rows and test rows (none when the study's answers are in one language); the caller adds
    the run columns and completes them (:func:`biasatlas.export.tidy.contact_rows`)."""
    block = summary.get("across_languages") or {}
    if not block:
        return []
    alpha = float(block.get("alpha") or 0.05)
    rows: list[Row] = []
    for e in block.get("effects") or []:
        rows.append({
            "source": "across_languages", "model": e["model"], "language": e["language"], "group": e["group"],
            "comparison": f"{e['label']} vs the other groups ({e['language']})", "test": None,
            "estimate": e["effect"], "estimand": ESTIMAND, "ci_low": e["effect_ci_low"],
            "ci_high": e["effect_ci_high"], "ci_level": 0.95,
            "ci_method": "Newcombe hybrid score interval (independent proportions)", "n": e["n"],
            "n_unit": "readable decisions of the group in this language (the others': n_rest)",
            "alpha": alpha, "headline": False, **_few(e["n"], int(block.get("min_answers") or 0)),
        })
    for t in block.get("tests") or []:
        rows.append({
            "source": "across_languages", "model": t["model"], "language": t["languages"], "group": t["group"],
            "comparison": f"effect of {t['group']} across {t['languages']}",
            "test": "Cochran's Q (heterogeneity over languages)", "statistic": t["q"],
            "statistic_name": f"Q ({t['dof']} degrees of freedom)",
            "p": t["p"], "p_adj": t["p_adj"], "correction": "bh",
            "family": "across languages: the groups of one model", "significant": bool(t["differs"]),
            "effect_size": t["i2"], "effect_size_name": "I² (share of the variation due to heterogeneity)",
            "n": t["n"], "n_unit": "readable decisions of the group over its languages", "alpha": alpha,
            "flags": t["flags"] or None, "flag_notes": t["flag_notes"] or None, "headline": False,
        })
    return rows


def _few(n: int, minimum: int) -> Row:
    if n >= minimum:
        return {}
    return {"flags": "few_answers", "flag_notes": f"few answers: {n} (fewer than {minimum}); the interval is wide"}
