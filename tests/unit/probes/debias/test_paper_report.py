"""The SCD results in Raj et al.'s layout (Tables 4-6, Figures 4-7) on a planted summary built with the
functions the summary uses: the tables' rows and columns, pooling and n, planted differences in their cells, and
the section rendering with and without the human study and the BBQ pairwise bootstrap."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from biasatlas.probes.contact.analysis import records
from biasatlas.probes.contact.data import CONTACTS, SCALES
from biasatlas.probes.debias import bbq as bbq
from biasatlas.probes.debias import bbq_bootstrap as boot
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import paper_report as pr
from biasatlas.probes.debias.human_study_score import score
from biasatlas.probes.debias.report import sections
from biasatlas.report.html import write_report
from biasatlas.report.publish import readable_columns

PER_CELL = 20  # prompts per scale × contact × scenario cell


def _paired(scales: list[str], planted: tuple[str, str] | None) -> pd.DataFrame:
    """Paired answers: every scale × contact × scenario cell biased half the time before and after, except the
    ``planted`` (scale, contact) cell: all biased before, none after."""
    rows = []
    for scale in scales:
        for contact in CONTACTS:
            for scenario in ("sports", "community"):
                for i in range(PER_CELL):
                    hit = (scale, contact) == planted
                    rows.append({"scale": scale, "contact": contact, "scenario": scenario, "principle": "virtual",
                                 "axis": "age" if i % 2 else "race", "biased_before": 1.0 if hit else float(i % 2),
                                 "biased_after": 0.0 if hit else float(i % 2 == 0)})
    return pd.DataFrame(rows)


def _comp(setting: str, scales: list[str], planted: tuple[str, str] | None = None,
          model: str = "base") -> dict[str, Any]:
    paired = _paired(scales, planted)
    tables = evaluate.all_tables(paired, "bh")
    return {"setting": setting, "part": "test", "mode": "choice", "fingerprint": f"fp-{setting}",
            "before_model": model, "after_model": f"{model}+{setting}", "prompts": len(paired),
            "tables": {name: records(t) for name, t in tables.items()}}


def _scored() -> pd.DataFrame:
    """BBQ answers of the base model and two settings' models: the base right half the time, the cross-dataset
    model always, the mixed model always on Age only."""
    rows = []
    for model in ("base", "base+mixed", "base+cross-dataset"):
        for i in range(80):
            category = "Age" if i < 40 else "Gender_identity"
            right = model == "base+cross-dataset" or (model == "base+mixed" and category == "Age") or i % 2 == 0
            rows.append({"model": model, "prompt_id": f"p{i}", "sample_index": 0, "category": category,
                         "context_condition": "ambig" if i % 4 < 2 else "disambig", "target": 0,
                         "correct": 1.0 if right else 0.0, "biased_answer": 0.0 if right else 1.0})
    return pd.DataFrame(rows)


def _quality(scored: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for setting in ("cross-dataset", "mixed"):  # not the paper's order: the table must sort them
        after = f"base+{setting}"
        table = bbq.scores(scored[scored["model"].isin(["base", after])])
        table.insert(0, "side", table["model"].map({"base": "before", after: "after"}))
        out.append({"setting": setting, "part": "bbq", "task": "bbq", "before_model": "base", "after_model": after,
                    "n": 80, "scores": table.to_dict(orient="records"), "tests": []})
    return out


def _human() -> dict[str, Any]:
    """Ten pairs: fluency, both annotators 'before' on 6 and 'both good' on 4; relevance, both 'after' on 5,
    'both bad' on 3, and the two disagree on 2. A is the answer before on even pairs."""
    pairs = {f"P{i:03d}": {"prompt_id": str(i), "item_id": str(i), "a": "before" if i % 2 == 0 else "after"}
             for i in range(10)}
    key = {"sheet_id": "S1", "setting": "mixed", "before_model": "base", "after_model": "base+mixed", "seed": 0,
           "n": 10, "pairs": pairs}

    def letter(side: str, a: str) -> str:
        return "A" if side == a else "B"

    ratings = {}
    for i, (pid, pair) in enumerate(pairs.items()):
        fluency = letter("before", pair["a"]) if i < 6 else "both"
        relevance = [letter("after", pair["a"])] * 2 if i < 5 else (["neither"] * 2 if i < 8 else ["both", "neither"])
        ratings[pid] = {"fluency_1": fluency, "fluency_2": fluency, "relevance_1": relevance[0],
                        "relevance_2": relevance[1]}
    return score(key, ratings)


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    comps = [_comp("cross-scenario", list(SCALES)), _comp("mixed", list(SCALES)),
             _comp("cross-scale-certainty", ["likelihood", "frequency"], planted=("likelihood", "positive"))]
    scored = _scored()
    labels = {"base": "base (no fine-tuning)", "base+cross-dataset": "cross-dataset", "base+mixed": "mixed"}
    rows = boot.pairwise(scored, labels, resamples=300, seed=1)
    return {"contact": comps, "quality": _quality(scored), "analysis": {"alpha": 0.05, "correction": "bh"},
            "bbq_pairwise": {"models": labels, "resamples": 300, "seed": 1, "confidence": 0.95,
                             "correction": "holm", "rows": rows},
            "human_study": [_human()]}


def test_table_4_layout_pooling_and_planted_cell(summary: dict[str, Any]) -> None:
    table = pr.table_4(pr.comparisons(summary))
    assert list(table.columns) == ["Setting", "Fine-tuned / evaluated", "Scale", "No Contact Before",
                                   "No Contact After", "Positive Contact Before", "Positive Contact After",
                                   "Negative Contact Before", "Negative Contact After", pr.N_OURS]
    # settings 3a first (the paper's rows), then the others in the settings' order
    assert table["Setting"].tolist() == ["Setting 3a"] * 2 + ["Setting 1"] * 3 + ["Setting 4"] * 3
    assert table["Scale"].tolist() == ["Likelihood", "Frequency", *(["Certainty", "Likelihood", "Frequency"] * 2)]
    assert table["Fine-tuned / evaluated"].iloc[0] == "fine-tuned on certainty, evaluated on likelihood, frequency"
    # n: the row's pairs over its three contacts and two scenarios
    assert set(table[pr.N_OURS]) == {3 * 2 * PER_CELL}
    planted = table.iloc[0]
    assert (planted["Positive Contact Before"], planted["Positive Contact After"]) == (100.0, 0.0)
    assert (planted["No Contact Before"], planted["No Contact After"]) == (50.0, 50.0)
    assert (table.iloc[1]["Positive Contact Before"], table.iloc[1]["Positive Contact After"]) == (50.0, 50.0)


def test_intervals_carry_n_and_wilson_bounds(summary: dict[str, Any]) -> None:
    long = pr.intervals(pr.comparisons(summary))
    cell = long[(long["Setting"] == "Setting 3a") & (long["As in"] == "Table 4") & (long["Cell"] == "likelihood")
                & (long["Contact"] == "Positive Contact") & (long["Side"] == "before")].iloc[0]
    assert (cell["% biased"], cell["biased"], cell["n"]) == (100.0, 2 * PER_CELL, 2 * PER_CELL)
    assert cell["ci_low"] < 100.0 and cell["ci_high"] == 100.0
    # Figure 5 is setting 4's: its by-scenario cells only there
    assert set(long.loc[long["As in"] == "Figure 5", "Setting"]) == {"Setting 4"}
    figure_4 = long[(long["As in"] == "Figure 4") & (long["Setting"] == "Setting 3a") & (long["Side"] == "before")]
    assert figure_4["n"].tolist() == [4 * PER_CELL] * 3  # pooled over both evaluated scales and the scenarios


def test_table_5_counts_and_kappa(summary: dict[str, Any]) -> None:
    result = summary["human_study"][0]
    table = pr.table_5(result)
    assert list(table.columns) == ["Aspect", "Response Before", "Response After", "Both Good", "Both Bad",
                                   "Disagree (ours)", pr.N_OURS]
    assert table["Aspect"].tolist() == ["Fluency", "Relevance"]
    assert table.iloc[0, 1:5].tolist() == [6, 0, 4, 0]
    assert table.iloc[1, 1:6].tolist() == [0, 5, 0, 3, 2]
    kappa = pr.kappa_table(result)
    assert kappa["Ratings"].tolist() == ["Fluency (ours)", "Relevance (ours)", "Both criteria (the paper's kappa)"]
    assert kappa.iloc[0]["Cohen's kappa"] == pytest.approx(1.0)
    assert kappa.iloc[1]["Cohen's kappa"] < 1.0
    assert kappa["n"].tolist() == [10, 10, 20]


def test_table_6_rows_columns_and_planted_difference(summary: dict[str, Any]) -> None:
    table = pr.table_6(summary)
    assert table["Model"].tolist() == ["No FT", "Setting 1", "Setting 2"]
    assert list(table.columns[:4]) == ["Model", "All", "Age", "Gender Id"]
    assert all("(ours)" in c for c in table.columns[4:])
    rows = table.set_index("Model")
    assert rows.loc["No FT", "All"] == 0.5 and rows.loc["Setting 2", "All"] == 1.0
    assert (rows.loc["Setting 1", "Age"], rows.loc["Setting 1", "Gender Id"]) == (1.0, 0.5)
    assert rows["n items (ours)"].tolist() == [80, 80, 80]
    assert rows.loc["Setting 2", "Δ All vs No FT (ours)"] == pytest.approx(0.5)
    assert rows.loc["Setting 2", "p vs No FT, Holm (ours)"] < 0.05
    assert rows.loc["No FT", "All 95% CI low (ours)"] < 0.5 < rows.loc["No FT", "All 95% CI high (ours)"]
    # setting 2 beats both others; setting 1 beats the base (Age) and loses to setting 2
    assert rows.loc["Setting 2", "pairwise wins / ties / losses (ours)"] == "2 / 0 / 0"
    assert rows.loc["No FT", "pairwise wins / ties / losses (ours)"] == "0 / 0 / 2"


def test_no_header_is_a_raw_column_name(summary: dict[str, Any]) -> None:
    comps = pr.comparisons(summary)
    frames = [pr.table_4(comps), pr.intervals(comps), pr.table_5(summary["human_study"][0]),
              pr.kappa_table(summary["human_study"][0]), pr.table_6(summary),
              pr.pairwise_table(summary["bbq_pairwise"])]
    for frame in frames:
        shown = list(readable_columns(frame).columns)
        assert not [h for h in shown if re.search(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b", str(h))], shown


def _text(section: Any) -> str:
    return "\n".join(section.blocks)


def test_section_renders_with_everything(summary: dict[str, Any], tmp_path: Path) -> None:
    found = sections(summary)
    assert [s.title for s in found] == [found[0].title, pr.CITE]
    paper = found[1]
    html = re.sub(r"<[^>]+>", "", write_report(tmp_path, [paper]).read_text(encoding="utf-8"))
    for name in ("Table 4", "Table 5", "Table 6", "Figure 4", "Figure 5"):
        assert f"Raj et al., 2024, {name}" in html
    written = sorted(p.suffix for p in (tmp_path / "report_files").iterdir() if p.name.startswith("01-"))
    # Tables 4 (and its intervals), 5 (counts, kappa), 6 (and its pairs); Figures 4 and 5 drawn
    assert written.count(".tex") == written.count(".csv") == 6
    assert written.count(".svg") == written.count(".pdf") == 2
    assert "debias-study sheet" not in _text(paper)
    # one Figure 4 over all settings; Figures 6 and 7 missing (no setting 5 or 6 in the study), and said so
    assert sum("Figure 4:" in b for b in paper.blocks) == 1
    assert "Figure 6 (Setting 5), Figure 7 (Setting 6)" in _text(paper)


def test_section_without_human_study_or_bbq(summary: dict[str, Any]) -> None:
    bare = {k: v for k, v in summary.items() if k not in ("human_study", "bbq_pairwise", "quality")}
    paper = pr.sections(bare)[0]
    text = _text(paper)
    assert "biasatlas debias-study sheet --study STUDY" in text and "biasatlas debias-study score" in text
    assert "Table 6 (BBQ) is not in this study" in text and "Table 5, Table 6" in text
    only_scores = {k: v for k, v in summary.items() if k != "bbq_pairwise"}
    table = pr.table_6(only_scores)
    assert "Δ All vs No FT (ours)" not in table.columns and table["Model"].tolist()[0] == "No FT"
    assert pr.sections(only_scores)[0].blocks
    assert pr.sections({}) == []
    # a study holding only the scored human study: the debiasing section is empty, the paper's shows Table 5
    only_human = sections({"human_study": summary["human_study"]})
    assert [s.title for s in only_human] == [pr.CITE]
    assert "Table 5: human evaluation" in _text(only_human[0]) and "Figure 4" in _text(only_human[0])


def test_text_has_no_paths_or_issue_numbers(summary: dict[str, Any]) -> None:
    paper = pr.sections(summary)[0]
    text = re.sub(r"<[^>]+>", "", _text(paper)) + paper.methods + pr.HOW_TO_STUDY + pr.HOW_TO_BBQ
    assert not re.search(r"#\d|issue|/work|\.py\b|paper 00\d", text, flags=re.IGNORECASE)
    assert "Raj et al., 2024" in text


def test_table_6_from_a_study_summary(tmp_path: Path) -> None:
    """The summary of a real (fake-backend) study: the base model and two settings asked BBQ's sample items."""
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.probes.debias import quality
    from biasatlas.probes.debias.summary import summarise
    from biasatlas.records import GenerationSettings, Request
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    def _stereotyped(request: Request) -> str:  # as test_bbq_bootstrap's
        meta, options = request.prompt.meta, request.prompt.options
        other = next(i for i in range(3) if i not in (meta["target"], meta["unknown"]))
        return options[meta["target"] if meta["question_polarity"] == "neg" else other]

    def _correct(request: Request) -> str:
        return request.prompt.options[request.prompt.meta["label"]]

    prompts = bbq.prompts(bbq.read_bbq([Path(__file__).parent / "data" / "bbq_sample.jsonl"]))
    with Store(tmp_path / "s") as store:
        for setting, after in (("cross-scenario", _stereotyped), ("mixed", _correct)):
            for role, script, name in (("before", _stereotyped, "base"), ("after", after, f"base+{setting}")):
                cfg = evaluate.run_config(role, setting, "bbq", quality.fingerprint(prompts), "fake", None, "en")
                run_plan(prompts, FakeBackend(script, name=name), store, GenerationSettings(mode="choice"),
                         config=cfg, progress=False)
        summary = summarise(store)
    rows = pr.table_6(summary).set_index("Model")
    assert rows.index.tolist() == ["No FT", "Setting 1", "Setting 4"]  # the paper's order, not the run order
    assert rows.loc["Setting 1", "All"] == 1.0 and rows.loc["Setting 1", "Δ All vs No FT (ours)"] == 1.0
    assert rows.loc["Setting 4", "All"] == rows.loc["No FT", "All"]
    assert rows.loc["Setting 4", "p vs No FT, Holm (ours)"] == 1.0
    assert set(rows["n items (ours)"]) == {len(prompts)}
    assert [s.title for s in sections(summary)][-1] == pr.CITE


def test_figure_panels_follow_the_papers_contact_order(summary: dict[str, Any]) -> None:
    """The interactive Figure 4 shows No, Positive, Negative Contact in that order (as the drawn one), never
    sorted by name."""
    from biasatlas.probes.debias import paper_figures as pf

    comps = pr.comparisons(summary)
    cells = [{**cell, "setting": comp["unit"]} for comp in comps for cell in comp["tables"]["overall"]]
    figure = pf.plot(pf.panels(cells), ["setting"])
    titles = [a.text for a in figure.layout.annotations if a.text in pf.CONTACT_NAMES.values()]
    assert titles == ["No Contact", "Positive Contact", "Negative Contact"]


def test_table_6_and_figure_4_in_the_settings_numbers_order(summary: dict[str, Any]) -> None:
    """Table 6 numbers its rows Setting 1-8 in the paper (settings 1, 2, 3a-c, 4-6 in turn); Figure 4 shows every
    setting in that order too. Only Table 4 puts settings 3a-c first (its rows are theirs)."""
    renamed = {"mixed": "cross-scale-certainty"}
    quality = [{**q, "setting": renamed.get(q["setting"], q["setting"])} for q in summary["quality"]]
    table = pr.table_6({"quality": quality})
    assert table["Model"].tolist() == ["No FT", "Setting 2", "Setting 3a"]
    cells = pr.figure_4_cells(pr.comparisons(summary))
    assert list(dict.fromkeys(c["setting"] for c in cells)) == ["Setting 1", "Setting 3a", "Setting 4"]


def test_pairwise_table_names_the_models_as_table_6_does(summary: dict[str, Any]) -> None:
    names = pr.model_names(summary)
    assert names == {"base (no fine-tuning)": "No FT", "mixed": "Setting 1", "cross-dataset": "Setting 2"}
    pairs = pr.pairwise_table(summary["bbq_pairwise"], names)
    shown = set(pairs["First"]) | set(pairs["Second"])
    assert shown == set(pr.table_6(summary)["Model"])
    # the page's table is the named one
    text = _text(pr.sections(summary)[0])
    assert "base (no fine-tuning)" not in text and "<td>No FT</td>" in text


def test_pairwise_table_names_its_statistics_for_readers(summary: dict[str, Any]) -> None:
    pairs = pr.pairwise_table(summary["bbq_pairwise"], pr.model_names(summary))
    assert list(dict.fromkeys(pairs["Statistic"])) == ["Accuracy", "Bias score, disambiguated",
                                                       "Bias score, ambiguous"]
