"""The story summary as console text and rich tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from biasatlas.report.cells import format_p


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """Counts, extraction outcomes, refusal rate, tables and the association tables."""
    counts = summary.get("counts", {})
    st = counts.get("stories", {})
    console.print(
        f"stories: {st.get('answered', 0)} answered of {st.get('planned', 0)} planned "
        f"({st.get('failed', 0)} failed, {st.get('pending', 0)} pending), {st.get('refusals', 0)} refusals, "
        f"{st.get('empty', 0)} empty, {counts.get('profiles', 0)} profiles"
    )
    ex = counts.get("extraction", {})
    if ex:
        console.print(f"extraction answers: {ex.get('answers', {})}; rejected because: "
                      f"{ex.get('rejection_reasons', {})}")
        if ex.get("out_of_vocabulary_by_attribute"):
            console.print(f"out-of-vocabulary values (set to unknown): {ex['out_of_vocabulary_by_attribute']}")
    if "refusal_rate" in summary:
        r = summary["refusal_rate"]
        console.print(f"refusal rate {r['rate']:.1%} (95% CI {r['ci95'][0]:.1%}–{r['ci95'][1]:.1%}, n={r['n']})")
    if counts.get("vote"):
        console.print(f"vote: {counts['vote']}")
    for warning in summary.get("warnings", []):
        console.print(f"[yellow]warning[/]: {warning}")
    if "correction_note" in summary:
        console.print(f"[yellow]note[/]: {summary['correction_note']}")
    if "tables" in summary:
        console.print(f"tables: {summary['tables']}")
    if summary.get("scenarios", {}).get("tests"):
        tests = [t for t in summary["scenarios"]["tests"] if t["level"] == "scenario"]
        differ = sorted({t["attribute"] for t in tests if t["significant"]})
        console.print(f"scenario explorer (chi-square across scenarios, prompts permuted, ours): {len(differ)} of "
                      f"{len({t['attribute'] for t in tests})} attributes differ across scenarios"
                      + (f" ({', '.join(differ)})" if differ else ""))
    print_associations(summary.get("associations", []), console, "Associations (per model, all languages)")
    if summary.get("empty_reason"):
        console.print(f"no association: {summary['empty_reason']}")
    if "per_language" in summary:
        print_associations(summary["per_language"]["associations"], console, "Associations per language")


def print_associations(records: list[dict[str, Any]], console: Console, title: str, limit: int = 40) -> None:
    """The first ``limit`` associations as a table."""
    if not records:
        console.print(f"{title}: none")
        return
    table = Table(title=f"{title} ({len(records)}; top {min(limit, len(records))})")
    for col in ("A = a", "B = b", "count", "fraction (mean)", "lift (mean)", "p", "q (BY)", "V", "models",
                "languages"):
        table.add_column(col)
    for r in records[:limit]:
        table.add_row(
            f"{r['base_attribute']} = {r['base_value']}",
            f"{r['compared_attribute']} = {r['compared_value']}",
            str(r["count"]),
            f"{r['fraction']:.2f}",
            f"{r['lift']:.2f}",
            format_p(r["p"]),
            format_p(r["q"]),
            f"{r['cramers_v']:.3f}",
            ", ".join(r.get("models") or []),
            ", ".join(r.get("languages") or []),
        )
    console.print(table)

