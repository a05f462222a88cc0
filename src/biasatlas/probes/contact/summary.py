"""The contact probe's summary: every table and test as JSON, and as rich tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.probes.contact.data import NAME
from biasatlas.probes.contact.read import outcomes

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_ALPHA = 0.05
DEFAULT_CORRECTION = "bh"
CORRECTION_NAMES = {
    "bh": "Benjamini-Hochberg",
    "by": "Benjamini-Yekutieli",
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "none": "none (raw p)",
}


def _status_counts(frame: pd.DataFrame) -> dict[str, int]:
    if frame.empty:
        return {}
    return {str(k): int(v) for k, v in frame["status"].value_counts().items()}


def analysis_options(alpha: float | None, correction: str | None) -> tuple[float, str]:
    """The significance level and the multiple-testing correction, defaults filled in and checked."""
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    correction = DEFAULT_CORRECTION if correction is None else correction
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha}: must be between 0 and 1 (exclusive)")
    if correction not in CORRECTION_NAMES:
        raise ValueError(f"correction {correction!r}: valid: {', '.join(CORRECTION_NAMES)}")
    return alpha, correction


def summarise(store: Any, alpha: float | None = None, correction: str | None = None) -> dict[str, Any]:
    """Every contact table and test, JSON-ready, with the last run's totals.

    ``correction`` (default Benjamini-Hochberg) adjusts the p-values of the paired tests across all
    of them; ``alpha`` (default 0.05) only marks which adjusted p-values are significant when printed.
    """
    from biasatlas.probes.contact import analysis as ca

    alpha, correction = analysis_options(alpha, correction)
    frame = store.frame(probe=NAME)
    out = outcomes(frame)
    last = store.last_run(NAME)
    summary: dict[str, Any] = {
        "items": _status_counts(frame),
        "last_run": None
        if last is None
        else {k: last["totals"].get(k) for k in ("run_id", "planned", "cached", "new", "failed", "pending",
                                                   "seconds", "status", "info")},
    }
    if out.empty:
        return summary
    for name, table in ca.all_tables(out).items():
        summary[name] = ca.records(table)
    summary["none_reasons"] = ca.records(ca.reasons_table(out))
    summary["direction"] = ca.records(ca.direction_table(out))
    summary["tests"] = ca.records(ca.contact_tests(out, correction))
    summary["analysis"] = {"alpha": alpha, "correction": correction}
    return summary


def _pct(row: dict[str, Any], level: str) -> str:
    pct, low, high = row.get(f"{level}_pct"), row.get(f"{level}_ci_low"), row.get(f"{level}_ci_high")
    if pct is None:
        return "–"
    return f"{pct:.1f} [{low:.1f}, {high:.1f}]"


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """The contact table (paper 001 Table 3 layout) and the paired tests, as rich tables."""
    from rich.table import Table

    last = summary.get("last_run")
    if last:
        console.print(
            f"last run {last['run_id']}: planned {last['planned']}, cached {last['cached']}, new {last['new']}, "
            f"failed {last['failed']} ({last['status']})"
        )
        from biasatlas.backends.http.usage import run_notes

        for note in run_notes(last):
            console.print(f"[yellow]note[/]: {note}")
    rows = summary.get("by_contact", [])
    if not rows:
        console.print("No scored contact answers yet.")
        return
    table = Table(title="% unbiased / biased / none by contact [Wilson 95% CI]")
    for col in ("model", "mode", "lang", "scale", "contact", "n", "unbiased %", "biased %", "none %"):
        table.add_column(col, justify="left" if col in {"model", "mode", "lang", "scale", "contact"} else "right")
    for r in rows:
        table.add_row(r["model"], r["mode"], r["language"], r["scale"], r["contact"], str(r["n"]),
                      _pct(r, "unbiased"), _pct(r, "biased"), _pct(r, "none"))
    console.print(table)
    tests = summary.get("tests", [])
    if tests:
        options = summary.get("analysis", {})
        alpha = options.get("alpha", DEFAULT_ALPHA)
        correction = options.get("correction", DEFAULT_CORRECTION)
        t = Table(title="Contact effect: paired tests on the same prompt sets")
        for col in ("model", "mode", "lang", "scale", "comparison", "n", "effect", "95% CI", "p", "p adj"):
            t.add_column(col)
        for r in tests:
            ci = "–" if r["ci_low"] is None else f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
            eff = "–" if r["effect"] is None else f"{r['effect']:+.3f}"
            p = "–" if r["p"] is None else f"{r['p']:.3g}"
            padj = "–" if r["p_adj"] is None else f"{r['p_adj']:.3g}" + (" *" if r["p_adj"] < alpha else "")
            t.add_row(r["model"], r["mode"], r["language"], r["scale"], r["comparison"], str(r["n"]), eff, ci, p, padj)
        console.print(t)
        console.print("effect: change in the proportion of biased answers (framing − none); "
                      f"Cochran's Q effect: eta²; p adj: {CORRECTION_NAMES.get(correction, correction)} "
                      f"over all tests; * p adj < {alpha:g}")
