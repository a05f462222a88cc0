"""Raj et al.'s SCD results in the paper's own layout: Tables 4, 5, 6 and Figures 4-7, over every setting.

- Table 4: % biased before / after per setting × evaluated scale, the contact framings as column pairs (the
  paper's shows settings 3a-c; ours every setting the study holds, settings 3a-c first as in the paper);
- Figures 4-7: see :mod:`.paper_figures`;
- Table 5: the human fluency / relevance counts (before, after, both good, both bad) where both annotators agree,
  and Cohen's kappa between the annotators;
- Table 6: BBQ accuracy per model (the base model as "No FT", then each setting) over every context, per
  category in the paper's column order; what we add (Wilson interval, bias scores, the pairwise bootstrap with
  Holm's correction and its wins / ties / losses) is marked "(ours)".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.contact.data import CONTACTS, SCALES
from biasatlas.probes.debias import paper_figures as pf
from biasatlas.probes.debias.evaluate import GROUPINGS
from biasatlas.probes.debias.splits import SETTINGS
from biasatlas.report.html import Section
from biasatlas.stats.proportions import wilson_interval

CITE = "As in Raj et al., 2024"
KEY = "debias-paper"
N_OURS = "n pairs (ours)"
ALPHA = 0.05  # our level for the pairwise wins / ties / losses (the paper names none)
#: the paper's order of the settings in Table 4 (3a-c are its rows); the rest follow in the settings' order
ORDER = ["cross-scale-certainty", "cross-scale-likelihood", "cross-scale-frequency",
         *(s for s in SETTINGS if not s.startswith("cross-scale-"))]
#: BBQ's file categories -> Table 6's column names, in its order
BBQ_COLUMNS = {"Age": "Age", "Disability_status": "Disability", "Gender_identity": "Gender Id",
               "Nationality": "Nationality", "Physical_appearance": "Phys App", "Race_ethnicity": "Race Eth",
               "Race_x_gender": "Race Gen", "Race_x_SES": "Race Ses", "Religion": "Religion", "SES": "Ses",
               "Sexual_orientation": "Sex Orient"}
#: the pairwise bootstrap's statistics as Table 6's columns name them
STATISTIC_NAMES = {"accuracy": "Accuracy", "bias_disambig": "Bias score, disambiguated",
                   "bias_ambig": "Bias score, ambiguous"}
TABLE_5_COLUMNS = {"before": "Response Before", "after": "Response After", "both good": "Both Good",
                   "both bad": "Both Bad"}
HOW_TO_STUDY = ("Table 5 (human fluency and relevance) is not in this study yet: draw a blinded sheet of the QA "
                "answers with `biasatlas debias-study sheet --study STUDY --out SHEET.csv`, let two annotators fill "
                "it, and score it with `biasatlas debias-study score --study STUDY SHEET.csv`; the report then "
                "shows the table.")
HOW_TO_BBQ = ("Table 6 (BBQ) is not in this study: run `biasatlas debias` with BBQ's files (`--bbq`) for the "
              "settings to compare; the pairwise bootstrap needs two or more models asked BBQ.")


def setting_label(name: str) -> str:
    """"Setting 3a", or the name itself for a setting the toolkit does not define."""
    return f"Setting {SETTINGS[name].number}" if name in SETTINGS else str(name)


def trained_on(name: str) -> str:
    """Table 4's row-group header: what the setting tunes on and evaluates on."""
    if name.startswith("cross-scale-"):
        scale = name.removeprefix("cross-scale-")
        return f"fine-tuned on {scale}, evaluated on {', '.join(s for s in SCALES if s != scale)}"
    return SETTINGS[name].title if name in SETTINGS else str(name)


def _rank(name: str) -> int:
    return ORDER.index(name) if name in ORDER else len(ORDER)


def _number(name: str) -> int:
    """The setting's place in the settings' own order (1, 2, 3a-c, 4-6): Table 6's rows and Figure 4's bars."""
    names = list(SETTINGS)
    return names.index(name) if name in names else len(names)


def figure_4_cells(comps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every comparison's overall cells, each named by its setting's label, the settings in their numbers' order."""
    ordered = sorted(comps, key=lambda c: _number(str(c["setting"])))  # stable: a setting's units keep their order
    return [{**cell, "setting": comp["unit"]} for comp in ordered
            for cell in comp.get("tables", {}).get("overall") or []]


def comparisons(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The contact comparisons in the paper's order, each with ``unit``: its setting, and its base model, mode,
    part or split where the study holds several (never two comparisons under one label)."""
    comps = sorted(summary.get("contact", []), key=lambda c: (_rank(str(c["setting"])), str(c["before_model"])))
    extra = [k for k in ("before_model", "mode", "part") if len({str(c.get(k)) for c in comps}) > 1]
    out, seen = [], set()
    for comp in comps:
        label = " · ".join([setting_label(str(comp["setting"])), *(str(comp.get(k)) for k in extra)])
        if label in seen:
            label += f" (split {str(comp.get('fingerprint'))[:8]})"
        seen.add(label)
        out.append({**comp, "unit": label})
    return out


def _value(row: dict[str, Any], key: str) -> float:
    value = row.get(key)
    return float("nan") if value is None or pd.isna(value) else round(float(value), 2)


def table_4(comps: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows setting × evaluated scale, columns the paper's (No / Positive / Negative Contact, Before / After);
    n pairs over the row's contact framings (ours)."""
    rows = []
    for comp in comps:
        cells = comp.get("tables", {}).get("by_scale") or []
        for scale in [s for s in SCALES if any(c["scale"] == s for c in cells)]:
            of_scale = {str(c["contact"]): c for c in cells if c["scale"] == scale}
            row: dict[str, Any] = {"Setting": comp["unit"], "Fine-tuned / evaluated": trained_on(str(comp["setting"])),
                                   "Scale": scale.capitalize()}
            for contact in CONTACTS:
                cell = of_scale.get(contact, {})
                for side in ("before", "after"):
                    row[f"{pf.CONTACT_NAMES[contact]} {side.capitalize()}"] = _value(cell, f"{side}_pct")
            row[N_OURS] = int(sum(int(c.get("n_pairs") or 0) for c in of_scale.values()))
            rows.append(row)
    return pd.DataFrame(rows)


def intervals(comps: list[dict[str, Any]]) -> pd.DataFrame:
    """Table 4's and Figures 4-7's cells in long form with their Wilson 95% intervals and n (ours)."""
    where = {"overall": "Figure 4", "by_scale": "Table 4", "by_scenario": "Figure 5", "by_principle": "Figure 6",
             "by_axis": "Figure 7"}
    rows = []
    for comp in comps:
        for name, shown in where.items():
            if name in ("by_scenario", "by_principle", "by_axis") and not _figure_setting(comp, name):
                continue
            for cell in comp.get("tables", {}).get(name) or []:
                cell_name = " / ".join(str(cell[c]) for c in GROUPINGS[name] if c != "contact")
                for side in ("before", "after"):
                    rows.append({"Setting": comp["unit"], "As in": shown, "Cell": cell_name or "all",
                                 "Contact": pf.CONTACT_NAMES.get(str(cell["contact"]), str(cell["contact"])),
                                 "Side": side, "% biased": _value(cell, f"{side}_pct"),
                                 "ci_low": _value(cell, f"{side}_ci_low"), "ci_high": _value(cell, f"{side}_ci_high"),
                                 "biased": cell.get(f"{side}_biased"), "n": cell.get(f"{side}_n")})
    return pd.DataFrame(rows)


def _figure_setting(comp: dict[str, Any], name: str) -> bool:
    return any(setting == comp["setting"] and grouping == name for setting, grouping, _ in pf.SETTING_FIGURES.values())


def table_5(result: dict[str, Any]) -> pd.DataFrame:
    """Rows Fluency / Relevance, the paper's four columns counted where both annotators agree; the pairs they
    disagree on and n (ours)."""
    rows = []
    for criterion, part in result["criteria"].items():
        row: dict[str, Any] = {"Aspect": criterion.capitalize()}
        row.update({shown: int(part["agreed"].get(k, 0)) for k, shown in TABLE_5_COLUMNS.items()})
        row.update({"Disagree (ours)": int(part["disagreed"]), N_OURS: int(result["n"])})
        rows.append(row)
    return pd.DataFrame(rows)


def kappa_table(result: dict[str, Any]) -> pd.DataFrame:
    """Cohen's kappa between the two annotators: per criterion (ours) and over both (the paper's one figure)."""
    found = [(c.capitalize() + " (ours)", part["kappa"]) for c, part in result["criteria"].items()]
    found.append(("Both criteria (the paper's kappa)", result["kappa_pooled"]))
    rows = []
    for name, k in found:
        low, high = k.get("kappa_ci") or (None, None)
        rows.append({"Ratings": name, "Cohen's kappa": k.get("kappa"), "ci_low": low, "ci_high": high,
                     "n": k.get("n"), "% agree": k.get("agreement_pct")})
    return pd.DataFrame(rows)


def _accuracy(score: dict[str, Any]) -> tuple[int, int]:
    """Correct answers and n over every context of one ``bbq.scores`` row (ambiguous and disambiguated)."""
    k = n = 0
    for cond in ("ambig", "disambig"):
        count, acc = int(score.get(f"{cond}_n") or 0), score.get(f"{cond}_acc")
        if count and acc is not None and not pd.isna(acc):
            k, n = k + round(float(acc) * count), n + count
    return k, n


def bbq_models(summary: dict[str, Any]) -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(Table 6's row, the pairwise bootstrap's label of the model and of its base, the model's ``bbq.scores``
    rows): each base model first ("No FT"), then each setting's tuned model in the settings' order
    (the paper's Setting 1-8)."""
    checks = sorted((q for q in summary.get("quality", []) if q.get("task") == "bbq" and q.get("n")),
                    key=lambda q: _number(str(q["setting"])))
    bases = {str(q["before_model"]) for q in checks}
    out: list[tuple[str, str, str, list[dict[str, Any]]]] = []
    for side, key in (("before", "before_model"), ("after", "after_model")):
        for q in checks:
            model = str(q[key])
            if side == "before" and any(r[1] == f"{model} (no fine-tuning)" for r in out):
                continue
            label = f"{model} (no fine-tuning)" if side == "before" else str(q["setting"])
            row = "No FT" if side == "before" else setting_label(str(q["setting"]))
            if len(bases) > 1:
                row += f" · {q['before_model']}"
            out.append((row, label, f"{q['before_model']} (no fine-tuning)",
                        [s for s in q.get("scores", []) if s.get("side") == side]))
    return out


def _pairwise_rows(block: dict[str, Any] | None, statistic: str = "accuracy") -> list[dict[str, Any]]:
    return [r for r in (block or {}).get("rows", []) if r.get("statistic") == statistic]


def wins_ties_losses(label: str, rows: list[dict[str, Any]], alpha: float = ALPHA) -> str:
    """Pairwise tests on accuracy a model wins, ties and loses (Holm-adjusted p < ``alpha``; higher is better)."""
    won = tied = lost = 0
    for r in rows:
        if label not in (r["first"], r["second"]) or r.get("difference") is None:
            continue
        ahead = r["difference"] if r["second"] == label else -r["difference"]
        if r.get("p_adj") is None or r["p_adj"] >= alpha or ahead == 0:
            tied += 1
        elif ahead > 0:
            won += 1
        else:
            lost += 1
    return f"{won} / {tied} / {lost}"


def table_6(summary: dict[str, Any]) -> pd.DataFrame:
    """Rows No FT and each setting, columns All and the categories (accuracy over every context), then ours:
    n, the Wilson interval of All, the bias scores, the difference to No FT with its bootstrap interval and Holm
    p, and the pairwise wins / ties / losses."""
    models = bbq_models(summary)
    block = summary.get("bbq_pairwise")
    pairs = _pairwise_rows(block)
    held = {str(s.get("category")) for *_, scores in models for s in scores} - {"all"}
    columns = [c for c in BBQ_COLUMNS if c in held] + sorted(held - set(BBQ_COLUMNS))
    rows = []
    for row_name, label, base_label, scores in models:
        by = {str(s.get("category")): s for s in scores}
        k, n = _accuracy(by.get("all", {}))
        low, high = wilson_interval(k, n)
        row: dict[str, Any] = {"Model": row_name, "All": round(k / n, 3) if n else float("nan")}
        for c in columns:
            kc, nc = _accuracy(by.get(c, {}))
            row[BBQ_COLUMNS.get(c, c)] = round(kc / nc, 3) if nc else float("nan")
        row.update({"n items (ours)": n, "All 95% CI low (ours)": _round(low),
                    "All 95% CI high (ours)": _round(high),
                    "Bias score, disambiguated (ours)": _round(by.get("all", {}).get("bias_disambig")),
                    "Bias score, ambiguous (ours)": _round(by.get("all", {}).get("bias_ambig"))})
        if block:
            base = next((r for r in pairs if r["second"] == label and r["first"] == base_label), None)
            row.update({"Δ All vs No FT (ours)": _round(base and base.get("difference")),
                        "Δ 95% CI low (ours)": _round(base and base.get("ci_low")),
                        "Δ 95% CI high (ours)": _round(base and base.get("ci_high")),
                        "p vs No FT, Holm (ours)": (base or {}).get("p_adj"),
                        "pairwise wins / ties / losses (ours)": wins_ties_losses(label, pairs)})
        rows.append(row)
    return pd.DataFrame(rows)


def _round(value: Any, places: int = 3) -> float:
    return float("nan") if value is None or pd.isna(value) else round(float(value), places)


def model_names(summary: dict[str, Any]) -> dict[str, str]:
    """The pairwise bootstrap's label of each model -> its row in Table 6 ("No FT", "Setting 2", ...)."""
    return {label: row for row, label, _, _ in bbq_models(summary)}


def pairwise_table(block: dict[str, Any], names: dict[str, str] | None = None) -> pd.DataFrame:
    """Every pair and statistic of the bootstrap: both values, the difference (second − first) with its interval,
    p and Holm-adjusted p (ours: the paper gives no procedure); the models named as Table 6's rows by ``names``."""
    names = names or {}
    return pd.DataFrame([{"First": names.get(r["first"], r["first"]), "Second": names.get(r["second"], r["second"]),
                          "Statistic": STATISTIC_NAMES.get(r["statistic"], r["statistic"]), "n": r["n"],
                          "First value": _round(r.get("first_value")), "Second value": _round(r.get("second_value")),
                          "Difference": _round(r.get("difference")), "ci_low": _round(r.get("ci_low")),
                          "ci_high": _round(r.get("ci_high")), "p": r.get("p"), "p adj (Holm)": r.get("p_adj")}
                         for r in block.get("rows", [])])


def _figures(section: Section, comps: list[dict[str, Any]]) -> list[str]:
    """Figures 4-7, one figure each over the settings that have its cells; the missing ones' names."""
    cells = figure_4_cells(comps)
    missing = []
    if cells:
        pf.add_figure(section, cells, ["setting"], "% biased before and after tuning, every setting",
                      f"{CITE}, Figure 4: percentage of prompts that generate biased responses before (light) and "
                      "after (dark) instruction-tuning, every setting, one panel per contact framing (Wilson 95% "
                      "intervals: ours)")
    else:
        missing.append("Figure 4")
    for number, (setting, grouping, what) in pf.SETTING_FIGURES.items():
        of_setting = [c for c in comps if c["setting"] == setting and c.get("tables", {}).get(grouping)]
        by = GROUPINGS[grouping][0]
        several = len(of_setting) > 1
        shown = [{**cell, "setting": comp["unit"]} for comp in of_setting for cell in comp["tables"][grouping]]
        if not shown:
            missing.append(f"Figure {number} ({setting_label(setting)})")
            continue
        pf.add_figure(section, shown, ["setting", by] if several else [by],
                      f"{setting_label(setting)}: % biased by {what}",
                      f"{CITE}, Figure {number} ({setting_label(setting)}): percentage of prompts generating biased "
                      f"responses before (light) and after (dark) tuning, by {what}, one panel per contact framing "
                      "(Wilson 95% intervals: ours)")
    return missing


def sections(summary: dict[str, Any]) -> list[Section]:
    """The section in the paper's layout, or nothing when the study holds no SCD result at all."""
    comps = comparisons(summary)
    models = bbq_models(summary)
    studies = summary.get("human_study") or []
    if not comps and not models and not studies:
        return []
    section = Section(CITE, key=KEY, methods=(
        "The SCD tables and figures of Raj et al., 2024 (Tables 4-6, Figures 4-7) in the paper's layout, every "
        "setting of the study in one table or figure. Biased % as in the setting's own tables (paired prompts, "
        "Wilson 95% intervals); BBQ accuracy over every context asked; the pairwise bootstrap of the models on "
        "their common BBQ items with Holm's correction over the pairs of a statistic. Columns and tables marked "
        "(ours) are not in the paper."))
    section.add_text(
        f"{CITE}: the paper's SCD results in its layout. The paper states no intervals, no correction and no level "
        "for its pairwise bootstrap; the intervals, n, Holm's correction (level 0.05) and the bias scores are ours. "
        "The paper's figures are read from their captions (their bars are not in its text): one panel per contact "
        "framing, before and after side by side.")
    table = table_4(comps)
    if not table.empty:
        section.add_table(table, f"{CITE}, Table 4: percentage of prompts that generate biased responses per "
                          "setting and evaluated prompt scale, before and after tuning (the paper's table holds "
                          "settings 3a-c; ours every setting the study holds; n: ours)")
    missing = _figures(section, comps)
    long = intervals(comps)
    if not long.empty:
        section.add_table(long, f"{CITE}, Table 4 and Figures 4-7 with Wilson 95% intervals and n (ours)")
    for result in studies:
        section.add_table(table_5(result), f"{CITE}, Table 5: human evaluation of text generation quality before "
                          f"and after bias mitigation, {setting_label(str(result['setting']))}: pairs where both "
                          "annotators agree (the paper does not say how it combined its two annotators); "
                          "disagreements and n: ours")
        section.add_table(kappa_table(result), f"{CITE}, Table 5: Cohen's kappa between the two annotators "
                          "(the paper reports one kappa; per criterion and intervals: ours)")
    if not studies:
        section.add_text(HOW_TO_STUDY)
        missing.append("Table 5")
    if models:
        section.add_table(table_6(summary), f"{CITE}, Table 6: BBQ accuracy per model over every context, per "
                          "category (higher is better). The paper tests every two models with a pairwise bootstrap "
                          "and names no correction or level; ours: paired bootstrap of the common items, 95% "
                          "percentile intervals, Holm over the pairs, wins / ties / losses at adjusted p < 0.05. "
                          "The paper numbers its rows Setting 1-8; ours are named by setting (3a, 3b, 3c)")
        block = summary.get("bbq_pairwise")
        if block and block.get("rows"):
            section.add_table(pairwise_table(block, model_names(summary)),
                              f"{CITE}, Table 6: BBQ between every two models (named as Table 6's rows), paired "
                              f"bootstrap of items ({block['resamples']} resamples, seed {block['seed']}), second − "
                              "first; p adjusted with Holm over the pairs of a statistic (ours)")
    else:
        section.add_text(HOW_TO_BBQ)
        missing.append("Table 6")
    if missing:
        section.add_text(f"Not made from this study (its data lack them): {', '.join(missing)}.")
    return [section]
