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

    ``correction`` (default Benjamini-Hochberg) adjusts the p-values of the paired tests (decisions and
    probabilities) across all of them; ``alpha`` (default 0.05) sets the level of the tests' intervals
    (1 − alpha) and marks which adjusted p-values are significant when printed. The tables' intervals are 95%.
    """
    import pandas as pd

    from biasatlas.probes.contact import analysis as ca

    alpha, correction = analysis_options(alpha, correction)
    frame = store.frame(probe=NAME)
    out = outcomes(frame, store)
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
    summary["acquiescence"] = ca.records(ca.acquiescence_table(out))
    from biasatlas.probes.contact.adherence import ADHERENCE_LEVELS  # pandas and scipy: not at CLI start

    for key, by in ADHERENCE_LEVELS.items():  # paper 001 Table 3: positive < none < negative, % biased
        summary[key] = ca.records(ca.adherence_table(out, by))
    summary["framing_agreement"] = ca.records(ca.framing_agreement_table(out))  # ours, per prompt
    summary["p_biased"] = ca.records(ca.probability_table(out, ["scale", "contact"]))
    summary["p_biased_by_action"] = ca.records(ca.probability_table(out, ["scale", "contact", "action"]))
    summary["direction"] = ca.records(ca.direction_table(out))
    summary["direction_probability"] = ca.records(ca.probability_direction_table(out))
    summary["tests"] = ca.records(ca.contact_tests(out, correction, alpha))
    summary["analysis"] = {"alpha": alpha, "correction": correction}
    summary["answer_quality"] = ca.records(answer_quality(out))
    if "descriptor" in out.columns and out["language"].nunique() > 1:
        from biasatlas.probes.contact.across_languages import across_languages

        # each group's effect in every language, and whether it differs (issue 29); None: one language
        summary["across_languages"] = across_languages(out, alpha)
    from biasatlas.probes.contact.disparity import disparity

    # which group of an axis is treated worse: the headline (docs/methods.md, "Group disparity")
    summary["group_disparity"] = ca.records(pd.DataFrame(disparity(out, alpha)))
    from biasatlas.readers.agreement import agreement
    from biasatlas.tidy.rows import contact_rows, run_info

    summary["runs"] = run_info(store, NAME)
    summary["reading"] = agreement(store, NAME, out)  # who read the answers the statistics count (issue 27)
    from biasatlas.report.reading_failures import add_failures

    add_failures(summary, out, NAME, alpha)  # reading failures tested by group; flags of the group effects
    summary["statistics"] = contact_rows(summary)  # the rows every surface reads (export, report's overview)
    return summary


def answer_quality(out: pd.DataFrame) -> pd.DataFrame:
    """Per model x mode x language x scale: answers, unreadable (no decision), refusals, and the share of
    the readable answers that chose the most frequent option (``top_share``; yes-saying shows here)."""
    import pandas as pd

    rows = []
    for key, cell in out.groupby(["model", "mode", "language", "scale"], sort=True):
        reason = cell["reason"].fillna("").astype(str).str.lower()
        readable = cell[cell["decision"] != "none"]
        answer = readable["affirmative"].map({1.0: "the affirmative option", 0.0: "the negative option"})
        shares = answer.value_counts(normalize=True)
        rows.append({**dict(zip(["model", "mode", "language", "scale"], key, strict=True)), "answers": len(cell),
                     "unreadable": int((cell["decision"] == "none").sum()),
                     "refusals": int(((cell["decision"] == "none") & reason.str.contains("refus")).sum()),
                     "top_share": float(shares.iloc[0]) if len(shares) else None,
                     "top_label": str(shares.index[0]) if len(shares) else None})
    return pd.DataFrame(rows)


def _pct(row: dict[str, Any], level: str) -> str:
    pct, low, high = row.get(f"{level}_pct"), row.get(f"{level}_ci_low"), row.get(f"{level}_ci_high")
    if pct is None:
        return "–"
    return f"{pct:.1f} [{low:.1f}, {high:.1f}]"


def _num(value: Any, fmt: str = "+.3f") -> str:
    return "–" if value is None else format(value, fmt)


def _interval(low: Any, high: Any, fmt: str = "+.3f") -> str:
    return "–" if low is None or high is None else f"[{format(low, fmt)}, {format(high, fmt)}]"


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Any:
    """A table that fits the terminal (constant columns into the title, folded when wide; papers author–year)."""
    from biasatlas.report.citations import cite_papers
    from biasatlas.terminal import FitTable

    return FitTable(cite_papers(title), columns, rows, text=TEXT_COLUMNS)


TEXT_COLUMNS = frozenset({"model", "mode", "lang", "scale", "contact", "action", "actions", "comparison", "measure",
                          "test", "axis", "adheres", "group", "effect per language", "verdict", "⚑ flags"})
KEYS = ("model", "mode", "language", "scale")


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """The contact tables (paper 001 Table 3 layout and adherence; polarity, framing agreement and probability
    tables) and the tests."""
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
    head = ["model", "mode", "lang", "scale"]
    console.print(_table("% unbiased / biased / none by contact [Wilson 95% CI]",
                         [*head, "contact", "n", "unbiased %", "biased %", "none %"],
                         [[*(str(r[k]) for k in KEYS), r["contact"], str(r["n"]), _pct(r, "unbiased"),
                           _pct(r, "biased"), _pct(r, "none")] for r in rows]))
    by_action = summary.get("by_contact_action", [])
    if len({r["action"] for r in by_action}) > 1:
        console.print(_table("% biased by contact × action [Wilson 95% CI]",
                             [*head, "contact", "action", "n", "biased %"],
                             [[*(str(r[k]) for k in KEYS), r["contact"], r["action"], str(r["n"]),
                               _pct(r, "biased")] for r in by_action]))
    _print_adherence(summary, console, head)
    _print_answer_tables(summary, console, head)
    _print_tests(summary, console, head)
    print_disparity_table(summary, console)
    _print_across_languages(summary, console)
    from biasatlas.report.reading_failures import print_failures

    print_failures(summary, NAME, console)


#: groups printed in the across-languages table (those that differ first, then by adjusted p)
SHOWN_GROUPS = 20


def _print_across_languages(summary: dict[str, Any], console: Any) -> None:
    """The groups asked in several languages: effect per language, and the heterogeneity test."""
    from biasatlas.report.cells import format_p

    block = summary.get("across_languages")
    if not block or not block.get("tests"):
        return
    effects: dict[tuple[Any, ...], list[str]] = {}
    for r in block["effects"]:
        effects.setdefault((r["model"], r.get("mode"), r["group"]), []).append(
            f"{r['language']} ({r['label']}) {100 * r['effect']:+.0f} [{100 * r['effect_ci_low']:+.0f}, "
            f"{100 * r['effect_ci_high']:+.0f}] (n {r['n']})")
    rows = []
    tests = sorted(block["tests"], key=lambda t: (not t["differs"], t["p_adj"] if t["p_adj"] is not None else 1))
    for t in tests[:SHOWN_GROUPS]:
        verdict = ("differs" if t["differs"] else "no detectable difference") if not t["flags"] else t["flag_notes"]
        model = str(t["model"]) + (f" ({t['mode']})" if t.get("mode") else "")  # modes are never pooled
        rows.append([model, str(t["group"]), "; ".join(effects.get((t["model"], t.get("mode"), t["group"]), [])),
                     f"{t['q']:.2f} ({t['dof']})", format_p(t["p"]), format_p(t["p_adj"]), verdict])
    console.print(_table("Across languages: each group's biased share minus its language's other groups, in "
                         "points [Newcombe 95% CI]; Cochran's Q of heterogeneity over languages",
                         ["model", "group", "effect per language", "Q (df)", "p", "p adj (BH)", "verdict"], rows))
    if len(tests) > SHOWN_GROUPS:
        console.print(f"{len(tests) - SHOWN_GROUPS} more groups, none of them differing, in `summary --json` "
                      "(across_languages) and the export" if not tests[SHOWN_GROUPS]["differs"] else
                      f"{len(tests) - SHOWN_GROUPS} more groups in `summary --json` (across_languages) and the export")
    console.print(f"method: {block['method']}")


def print_disparity_table(summary: dict[str, Any], console: Any) -> None:
    """Each group against the other groups of its axis (all framings pooled), ordered by effect."""
    from biasatlas.report.cells import format_p
    from biasatlas.tidy.disparity import SOURCE

    rows = [r for r in summary.get("statistics") or [] if r.get("source") == SOURCE and r.get("group")
            and r.get("contact") == "all" and r.get("measure") == "decision"]
    if not rows:
        return
    rows.sort(key=lambda r: (str(r["model"]), str(r["mode"]), str(r["language"]), str(r["axis"]),
                             -(r["estimate"] if r.get("estimate") is not None else -1e9)))
    table = [[str(r["model"]), str(r["mode"]), str(r["language"]), str(r["axis"]), str(r["group"]), str(r["n"]),
              _num(None if r.get("estimate") is None else 100 * r["estimate"], "+.1f"),
              "–" if r.get("ci_low") is None or "too_few" in str(r.get("flags")) else
              _interval(100 * r["ci_low"], 100 * r["ci_high"], "+.1f"), format_p(r.get("p")),
              _p_star(r.get("p_adj"), float(r.get("alpha") or DEFAULT_ALPHA), r.get("flags")), r.get("flags") or ""]
             for r in rows]
    console.print(_table("Group disparity: % biased, each group − the mean of the other groups of its axis, all "
                         "framings pooled, in points [95% CI clustered on no-contact questions]; exact conditional "
                         "test within questions; p adj Holm over the groups of the axis",
                         ["model", "mode", "lang", "axis", "group", "n questions", "effect", "95% CI", "p",
                          "p adj", "⚑ flags"], table))


def _verdict(row: dict[str, Any]) -> str:
    if row.get("adheres") is None:
        return "–"
    if not row["adheres"]:
        return "no"
    return "yes, CIs exclude 0" if row.get("adheres_ci") else "yes (a CI includes 0)"


def _print_adherence(summary: dict[str, Any], console: Any, head: list[str]) -> None:
    """Paper 001 Table 3 adherence per scale, and per axis where the study has several."""
    for key, extra in (("adherence", []), ("adherence_by_axis", ["axis"])):
        rows = summary.get(key, [])
        if not rows or (extra and len({r["axis"] for r in rows}) < 2):
            continue
        console.print(_table(
            "Contact-hypothesis adherence (paper 001 Table 3): % biased lower under positive and higher under "
            "negative contact than under none [Wilson 95% CI]; change vs none in points [Newcombe 95% CI, paired "
            "on prompt sets]",
            [*head, *extra, "n sets", "none %", "positive %", "negative %", "Δ positive", "Δ negative", "adheres"],
            [[*(str(r[k]) for k in KEYS), *(str(r[k]) for k in extra), str(r["n_sets"]),
              *(_pct(r, f"biased_{f}") for f in ("none", "positive", "negative")),
              *(f"{_num(r[f'change_{f}'], '+.1f')} "
                f"{_interval(r[f'change_{f}_ci_low'], r[f'change_{f}_ci_high'], '+.1f')}"
                for f in ("positive", "negative")), _verdict(r)] for r in rows]))


def _print_answer_tables(summary: dict[str, Any], console: Any, head: list[str]) -> None:
    acq = [r for r in summary.get("acquiescence", []) if r["contact"] == "all"]
    if acq:
        console.print(_table("Acquiescence: % affirmative answers (yes-saying), all framings [Wilson 95% CI]",
                             [*head, "actions", "n", "affirmative %"],
                             [[*(str(r[k]) for k in KEYS), r["actions"], str(r["n"]), _pct(r, "affirmative")]
                              for r in acq]))
    agreement = summary.get("framing_agreement", [])
    if agreement:
        console.print(_table("Framing agreement (our per-prompt measure, not in paper 001): % of framed answers "
                             "whose decision agrees with the framing (positive: unbiased, negative: biased; no "
                             "comparison with no contact) [Wilson 95% CI]",
                             [*head, "contact", "n", "agrees %"],
                             [[*(str(r[k]) for k in KEYS), r["contact"], str(r["n"]), _pct(r, "follows")]
                              for r in agreement]))
    probs = summary.get("p_biased", [])
    if probs:
        console.print(_table("Mean P(biased option) per cell (choice mode) [t 95% CI over prompts; Wilson's where "
                             "t leaves 0-1]",
                             [*head, "contact", "n", "mean", "95% CI"],
                             [[*(str(r[k]) for k in KEYS), r["contact"], str(r["n"]), _num(r["mean"], ".3f"),
                               _interval(r["ci_low"], r["ci_high"], ".3f")] for r in probs]))
    moved = summary.get("direction_probability", [])
    if moved:
        threshold = moved[0]["threshold"]
        console.print(_table(f"Change in P(unbiased) toward the framing vs no contact (moved: |change| >= "
                             f"{threshold:g}) [t 95% CI over prompt sets]",
                             [*head, "contact", "n", "mean change", "95% CI", "toward %", "same %", "away %"],
                             [[*(str(r[k]) for k in KEYS), r["contact"], str(r["n"]), _num(r["mean_change"]),
                               _interval(r["ci_low"], r["ci_high"]), f"{r['toward_pct']:.0f}",
                               f"{r['same_pct']:.0f}", f"{r['away_pct']:.0f}"] for r in moved]))


#: flags under which a test's p and interval are not a finding (stats.quality.Quality.blocks_interval)
BLOCKING = ("not_tested", "too_few_units", "not_fitted", "not_converged")


def test_flags(summary: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    """The flags and their notes of each row of ``summary['tests']``, as its statistics row has them
    (:func:`biasatlas.tidy.rows.contact_rows` decides them once; every surface reads them from there)."""
    from biasatlas.tidy.rows import contact_test_name

    key = ("model", "mode", "language", "scale", "comparison", "measure")
    rows = {(*(str(r.get(k)) for k in key), str(r.get("test"))): r
            for r in summary.get("statistics") or [] if r.get("source") == "tests"}
    found = []
    for test in summary.get("tests") or []:
        row = rows.get((*(str(test.get(k)) for k in key), contact_test_name(test))) or {}
        found.append((row.get("flags"), row.get("flag_notes")))
    return found


def p_adj_text(p_adj: Any, alpha: float, flags: str | None) -> str:
    """The adjusted p with * below alpha, and the flags beside it; no * where a flag forbids a finding."""
    from biasatlas.report.cells import format_p

    if p_adj is None:
        text = "–"
    else:
        blocked = any(code in (flags or "") for code in BLOCKING)
        text = format_p(p_adj) + (" *" if p_adj < alpha and not blocked else "")
    return f"{text} ⚑ {flags}" if flags else text


def _p_star(p_adj: Any, alpha: float, flags: str | None) -> str:
    """The adjusted p with its * (none where a flag forbids a finding), the flags left to a column of their own."""
    return p_adj_text(p_adj, alpha, flags).split(" ⚑ ")[0]


def _print_tests(summary: dict[str, Any], console: Any, head: list[str]) -> None:
    from biasatlas.report.cells import format_p

    tests = summary.get("tests", [])
    if not tests:
        return
    options = summary.get("analysis", {})
    alpha = options.get("alpha", DEFAULT_ALPHA)
    correction = options.get("correction", DEFAULT_CORRECTION)
    rows, notes = [], []
    for r, (flags, flag_notes) in zip(tests, test_flags(summary), strict=True):
        change = "–" if r.get("mean_change") is None else (
            f"{r['mean_change']:+.3f} {_interval(r.get('mean_change_ci_low'), r.get('mean_change_ci_high'))}")
        rows.append([*(str(r[k]) for k in KEYS), r["comparison"], r["measure"], r["method_kind"], str(r["n"]),
                     _num(r["effect"]), _interval(r["ci_low"], r["ci_high"]), change,
                     format_p(r["p"]), _p_star(r["p_adj"], alpha, flags), flags or ""])
        if flag_notes:
            notes.append(f"⚑ {' · '.join(str(r[k]) for k in KEYS)} · {r['comparison']} · {r['method_kind']}: "
                         f"{flag_notes}")
    level = f"{100 * (1 - alpha):g}%"
    console.print(_table("Contact effect: paired tests on the same prompt sets",
                         [*head, "comparison", "measure", "test", "n sets", "effect", f"{level} CI",
                          "ΔP(biased)", "p", "p adj", "⚑ flags"], rows))
    for line in notes:
        console.print(line, markup=False)
    console.print("effect: decision: change in the proportion of biased answers (framing − none), Newcombe "
                  "interval; Cochran's Q: eta²")
    console.print("effect: P(biased): paired t: mean change in log-odds, Wilcoxon: rank-biserial r; "
                  "ΔP(biased): mean change of P(biased) [t CI]")
    console.print(f"p adj: {CORRECTION_NAMES.get(correction, correction)} over all tests; * p adj < {alpha:g} "
                  f"(never on a row flagged {', '.join(BLOCKING)}); ⚑ quality flags, each explained below the table")
