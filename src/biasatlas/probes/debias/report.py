"""The debiasing report section: before/after charts (paper 001 Figures 4-7) and tables (Table 4)."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from biasatlas.probes.debias.config import TITLE
from biasatlas.probes.debias.evaluate import GROUPINGS
from biasatlas.report.cells import format_p
from biasatlas.report.compare import p_cell, side_by_side
from biasatlas.report.html import Section
from biasatlas.report.plots import lay_out
from biasatlas.report.publish import column_label

METHODS = (
    "Social Contact Debiasing (Raj et al., 2024): the model is instruction-tuned with LoRA (peft) on "
    "contact prompts paired with their unbiased answer (Table 2: the affirmative option for a positive action, "
    "the negative option for a negative action, under every contact framing and scale), in the model's chat "
    "format, with the loss on the answer tokens only. Settings follow the paper: 1 mixed, 2 cross-dataset "
    "(template set a -> b), 3a/3b/3c cross-scale, 4 cross-scenario, 5 cross-principle, 6 cross-dimension; "
    "splits are drawn in whole prompt sets, seeded, balanced over scales, and no evaluated prompt shares a "
    "prompt set or a prompt text with a training prompt. The same evaluation prompts are asked of the base "
    "model and of the base model with the adapter (merged); biased % per side carries n and a Wilson 95% "
    "interval; the change is tested on the paired answers with an exact McNemar test (effect: change in the "
    "proportion biased, after - before, with a Wald 95% CI); p-values are adjusted with Benjamini-Hochberg "
    "across every test of a setting. Answering quality: ROUGE-L F1 on our own 105-question QA set (paired "
    "t-test with CI, Wilcoxon signed-rank), and BBQ accuracy and bias scores when BBQ files are given."
)

TABLE_TITLES = {
    "overall": "By contact (Raj et al., 2024, Figure 4)",
    "by_scale": "By scale and contact (Raj et al., 2024, Table 4)",
    "by_scenario": "By scenario and contact (Raj et al., 2024, Figure 5)",
    "by_principle": "By key principle and contact (Raj et al., 2024, Figure 6)",
    "by_axis": "By bias dimension and contact (Raj et al., 2024, Figure 7)",
}


def _cell(pct: Any, low: Any, high: Any, count: Any, n: Any) -> str:
    if pct is None or pd.isna(pct):
        return "–"
    return f"{pct:.1f} [{low:.1f}, {high:.1f}] ({count}/{n})"


def _num(value: Any, fmt: str = "+.3f") -> str:
    """A number, or '–' when a test is undefined (e.g. no pair changed)."""
    return "–" if value is None or pd.isna(value) else format(value, fmt)


def display_table(rows: list[dict[str, Any]], by: list[str]) -> pd.DataFrame:
    """Compact before/after columns: % [CI] (count/n), the change with its CI, McNemar p and p adj."""
    out = []
    for r in rows:
        row = {c: r[c] for c in by}
        row["pairs"] = r["n_pairs"]
        for side in ("before", "after"):
            row[f"{side} % biased"] = _cell(r[f"{side}_pct"], r[f"{side}_ci_low"], r[f"{side}_ci_high"],
                                            r[f"{side}_biased"], r[f"{side}_n"])
        row["Δ points [95% CI]"] = "–" if r["effect"] is None else (
            f"{100 * r['effect']:+.1f} [{100 * r['effect_ci_low']:+.1f}, {100 * r['effect_ci_high']:+.1f}]")
        row["McNemar p"] = r["p"]
        row["p adj (BH)"] = r.get("p_adj")
        out.append(row)
    return pd.DataFrame(out)


def side_by_side_tables(comps: list[dict[str, Any]]) -> dict[str, pd.DataFrame]:
    """The before/after tables of several base models of one setting, the models side by side.

    Rows are the table's cells (e.g. contact); each model's column group holds its pairs, % biased
    before and after, the change with its CI and the adjusted p. One model: its table as it is.
    """
    out: dict[str, pd.DataFrame] = {}
    names = [str(c["before_model"]) for c in comps]
    # one model tuned on two splits of a setting: the split's fingerprint tells them apart
    names = [n if names.count(n) == 1 else f"{n} (split {str(c.get('fingerprint', i))[:8]})"
             for i, (n, c) in enumerate(zip(names, comps, strict=True))]
    for name, by in GROUPINGS.items():
        parts = [display_table(c["tables"][name], by).assign(model=label)
                 for label, c in zip(names, comps, strict=True) if c.get("tables", {}).get(name)]
        if not parts:
            continue
        long = pd.concat(parts, ignore_index=True)
        long["McNemar p"] = long["McNemar p"].map(format_p)
        long["p adj (BH)"] = long["p adj (BH)"].map(p_cell)
        values = [c for c in long.columns if c not in (*by, "model")]
        out[name] = side_by_side(long, by, {c: column_label(c) for c in values})
    return out


def before_after_chart(rows: list[dict[str, Any]], by: list[str], title: str) -> Any:
    """Bars of biased % before (light) and after (dark) per cell, with Wilson intervals."""
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(rows) + 2), 3.6))
    _bars(ax, rows, by, title)
    lay_out(fig)
    return fig


def before_after_panels(comps: list[dict[str, Any]], name: str, title: str) -> Any:
    """``before_after_chart`` of several base models of one setting: one panel per model, side by side."""
    shown = [c for c in comps if c.get("tables", {}).get(name)]
    width = max(5.0, 0.55 * max(len(c["tables"][name]) for c in shown) + 2)
    fig, axes = plt.subplots(1, len(shown), figsize=(width * len(shown), 3.6), squeeze=False, sharey=True)
    for ax, comp in zip(axes[0], shown, strict=True):
        _bars(ax, comp["tables"][name], GROUPINGS[name], f"{title} · {comp['before_model']}")
    lay_out(fig)
    return fig


def before_after_plot(panels: list[tuple[str, list[dict[str, Any]]]], by: list[str]) -> Any:
    """``before_after_chart``/``_panels`` interactive: before and after bars per cell, hover with n and p."""
    from biasatlas.report.plots import interval_figure

    rows = []
    for title, cells in panels:
        for cell in cells:
            for side in ("before", "after"):
                rows.append({"panel": title, "side": side, **{c: cell.get(c) for c in by},
                             "pct": cell.get(f"{side}_pct"), "low": cell.get(f"{side}_ci_low"),
                             "high": cell.get(f"{side}_ci_high"), "n": cell.get("n_pairs", cell.get("n")),
                             "p": cell.get("p_adj", cell.get("p"))})
    frame = pd.DataFrame(rows)
    return interval_figure(frame, category=by, group="side", panel="panel", estimate="pct", low="low", high="high",
                           n="n", p="p", p_label="adjusted p (McNemar)", unit="%", y_range=(0, 100),
                           colors={"before": "#bbbbbb", "after": "#2c6fbb"},
                           x_title=" · ".join(column_label(c) for c in by) or "cell",
                           y_title="Biased answers (%, Wilson 95% CI)")


def _bars(ax: Any, rows: list[dict[str, Any]], by: list[str], title: str) -> None:
    labels = [" / ".join(str(r[c]) for c in by) for r in rows]
    x = np.arange(len(rows))
    for offset, side, color in ((-0.2, "before", "#bbbbbb"), (0.2, "after", "#2c6fbb")):
        pct = np.array([np.nan if r[f"{side}_pct"] is None else r[f"{side}_pct"] for r in rows], dtype=float)
        low = np.array([np.nan if r[f"{side}_ci_low"] is None else r[f"{side}_ci_low"] for r in rows], dtype=float)
        high = np.array([np.nan if r[f"{side}_ci_high"] is None else r[f"{side}_ci_high"] for r in rows],
                        dtype=float)
        err = np.vstack([np.clip(pct - low, 0, None), np.clip(high - pct, 0, None)])
        ax.bar(x + offset, pct, 0.4, yerr=err, capsize=2, color=color, label=side)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% biased")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def _training_table(training: dict[str, Any]) -> pd.DataFrame:
    config = training.get("config") or {}
    result = training.get("result") or {}
    rows = [("base model", training.get("base_model")), ("model spec", training.get("model_spec"))]
    rows += [(f"config: {k}", v) for k, v in config.items()]
    rows += [(f"result: {k}", v) for k, v in result.items()]
    return pd.DataFrame(rows, columns=["item", "value"]).astype(str)


def sections(summary: dict[str, Any]) -> list[Section]:
    """The debiasing section of the report and the paper's layout of it, or nothing when the study has no
    comparison."""
    from biasatlas.probes.debias import paper_report

    if not summary.get("contact") and not summary.get("quality"):
        return paper_report.sections(summary)
    section = Section(TITLE, methods=METHODS)
    settings: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for comp in summary.get("contact", []):
        settings.setdefault((comp["setting"], comp["part"]), []).append(comp)
    for (setting, part), comps in settings.items():
        if len(comps) > 1:  # several base models tuned in one setting: their figure and tables side by side
            section.add_figure(before_after_panels(comps, "overall", f"{setting}: % biased by contact"),
                               f"{setting}: biased % before and after tuning, Wilson 95% intervals, one panel "
                               "per base model", plot=before_after_plot(
                                   [(c["before_model"], c["tables"]["overall"]) for c in comps
                                    if c.get("tables", {}).get("overall")], GROUPINGS["overall"]))
            for name, table in side_by_side_tables(comps).items():
                section.add_table(table, f"{setting} ({part} prompts) — {TABLE_TITLES[name]}, base models side "
                                  "by side (before and after tuning; * adjusted p < 0.05)")
    for comp in summary.get("contact", []):
        section.add_text(
            f"Setting {comp['setting']}, evaluated on the {comp['part']} prompts ({comp['prompts']} paired answers, "
            f"{comp['mode']} mode): {comp['before_model']} before, {comp['after_model']} after."
        )
        tables = comp.get("tables", {})
        if len(settings[(comp["setting"], comp["part"])]) > 1:
            tables = {}  # side by side above
        if tables.get("overall"):
            section.add_figure(before_after_chart(tables["overall"], GROUPINGS["overall"],
                                                  f"{comp['setting']}: % biased by contact"),
                               f"{comp['setting']}: biased % before and after tuning, Wilson 95% intervals",
                               plot=before_after_plot([("", tables["overall"])], GROUPINGS["overall"]))
        for name, title in TABLE_TITLES.items():
            if tables.get(name):
                section.add_table(display_table(tables[name], GROUPINGS[name]), f"{comp['setting']} — {title}",
                                  sortable=name in ("by_axis", "by_scenario", "by_principle"))
        for name in ("by_scenario", "by_principle", "by_axis"):
            if tables.get(name) and len(tables[name]) > 3:
                section.add_figure(before_after_chart(tables[name], GROUPINGS[name],
                                                      f"{comp['setting']}: {TABLE_TITLES[name]}"),
                                   f"{comp['setting']}: {TABLE_TITLES[name]}",
                                   plot=before_after_plot([("", tables[name])], GROUPINGS[name]))
        shift = comp.get("probability_shift")
        if shift:
            section.add_text(
                f"Mean P(unbiased answer): {shift['mean_before']:.3f} before, {shift['mean_after']:.3f} after "
                f"(paired t-test, n={shift['n']}, mean difference 95% CI [{_num(shift['ci_low'])}, "
                f"{_num(shift['ci_high'])}], d_z={_num(shift['effect'], '.2f')}, p={format_p(shift['p'])})."
            )
        if comp.get("training"):
            section.add_table(_training_table(comp["training"]), f"{comp['setting']}: LoRA training")
    for q in summary.get("quality", []):
        if q["task"] == "qa" and q.get("n"):
            d, w = q["difference"], q["wilcoxon"]
            section.add_text(
                f"QA quality ({q['setting']}): ROUGE-L F1 {q['rouge_l_before']:.3f} before, "
                f"{q['rouge_l_after']:.3f} after, n={q['n']} questions; mean difference 95% CI "
                f"[{_num(d['ci_low'])}, {_num(d['ci_high'])}] (paired t-test p={format_p(d['p'])}, "
                f"d_z={_num(d['effect'], '.2f')}); Wilcoxon signed-rank p={format_p(w['p'])} "
                "(– where the answers did not change at all)."
            )
            section.add_table(pd.DataFrame(q["examples"]), f"{q['setting']}: QA answers (first 10)")
        elif q["task"] == "bbq" and q.get("n"):
            section.add_table(pd.DataFrame(q["scores"]), f"{q['setting']}: BBQ accuracy and bias scores")
            if q.get("tests"):
                section.add_table(pd.DataFrame(q["tests"]), f"{q['setting']}: BBQ error rate, McNemar before/after")
    return [section, *paper_report.sections(summary)]
