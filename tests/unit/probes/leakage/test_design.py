"""The paper design of the leakage probe (Cao et al.): a planted leakage flow with a monolingual control.

The study holds two tiny real runs (a multilingual model asked with ``--design paper`` and a Hindi control
asked with ``--mono-for hi``) so that the design and the control are read from the study as a user's would be;
their association cells are replaced by planted 32 × 30 matrices (asking all 30 groups would take minutes).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.leakage import analysis as analysis_module
from biasatlas.probes.leakage.analysis import analyse
from biasatlas.probes.leakage.data import group_by_id, group_ids, trait_ids
from biasatlas.probes.leakage.design import study_controls, study_design, table3_wide
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.plan import build_prompts
from biasatlas.probes.leakage.probe import PROBE, LeakageConfig
from biasatlas.probes.leakage.report import print_summary, report_sections
from biasatlas.probes.leakage.summary import summarise
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store

SUBJECT, CONTROL = "fake:mbert [theme/choice]", "fake:hibert [theme/choice]"
BETA, LEAK_EN = 0.5, 0.02  # planted: the control's coefficient and the English humans' flow into Hindi
NONSHARED = [g for g in group_ids() if group_by_id()[g].category == "nonshared"]


def _planted_cells() -> pd.DataFrame:
    """Hindi cells: control = its own associations; subject = 0.1 + BETA·control + LEAK_EN·H_en (999 -> 0, as
    the paper's code read it) + trait intercepts + noise. Nothing from ru or zh."""
    human = load_human()
    rng = np.random.default_rng(7)
    shape = human["en"].shape
    control = pd.DataFrame(rng.normal(0.3, 0.1, shape), index=human["en"].index, columns=human["en"].columns)
    trait = pd.Series(rng.normal(0, 0.05, shape[0]), index=human["en"].index)
    subject = (0.1 + BETA * control + LEAK_EN * human["en"].fillna(0.0)).add(trait, axis=0)
    subject = subject + rng.normal(0, 0.02, shape)
    rows = [{"variant": variant, "model": variant.split(" [")[0], "lang": "hi", "group": g, "trait": t,
             "score": float(m.at[t, g])}
            for variant, m in ((SUBJECT, subject), (CONTROL, control)) for g in group_ids() for t in trait_ids()]
    return pd.DataFrame(rows)


def page_text(section: object) -> str:
    """A section's blocks as the reader sees them: without markup (citations are links), entities read."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", "\n".join(section.blocks)))  # type: ignore[attr-defined]


def record(**config: str) -> dict[str, object]:
    """The run record `run leakage --design paper [--mono-for LANG]` stores."""
    return PROBE.run_record(LeakageConfig(design="paper", **config))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("leakage-design") / "study")
    prompts = build_prompts(["hi"], group_names=["woman"], orders="one")[:4]
    choice = GenerationSettings(mode="choice")
    run_plan(prompts, FakeBackend(name="hibert"), store, choice, config=record(mono_for="hi"),
             progress=False)
    run_plan(prompts, FakeBackend(name="mbert"), store, choice, config=record(), progress=False)
    return store


@pytest.fixture()
def cells(monkeypatch: pytest.MonkeyPatch) -> None:
    planted_cells = _planted_cells()
    monkeypatch.setattr(analysis_module, "association_cells", lambda frame, choices=None: planted_cells)


def test_the_study_states_its_design_and_its_control(planted: Store) -> None:
    assert study_design(planted) == "paper"
    assert study_controls(planted) == {"hi": CONTROL}


@pytest.mark.usefixtures("cells")
def test_paper_design_recovers_the_planted_flow_the_control_and_the_nonshared_groups(planted: Store) -> None:
    paper = analyse(planted, design="paper")
    assert paper.controls == [CONTROL] and paper.subjects == [SUBJECT]
    (fit,) = paper.fits  # the control is not itself fitted
    assert fit.mono and fit.zero_fill and fit.n_groups == 30 and fit.n_obs == 32 * 30
    assert not fit.groups_left_out  # the 12 non-shared groups are in the fit
    beta = next(c for c in fit.coefficients if c.term == "mono")
    assert beta.ci_low <= BETA <= beta.ci_high and beta.p < 1e-6
    flows = paper.flows
    assert list(zip(flows["source"], flows["target"], strict=True)) == [("en", "hi")]
    assert flows["ci_low"].iloc[0] <= LEAK_EN <= flows["ci_high"].iloc[0]
    assert flows["p_adj"].iloc[0] == flows["p"].iloc[0] < 0.05  # the paper's criterion: uncorrected p
    # Our default design on the same study: complete cases leave the non-shared groups out, no control.
    ours = analyse(planted, design="ours")
    assert {f.variant for f in ours.fits} == {SUBJECT, CONTROL}
    left = set(NONSHARED) & set(next(f for f in ours.fits if f.variant == SUBJECT).groups_left_out)
    assert len(left) == 11, left  # all but migrant worker, which every language's table rates


@pytest.mark.usefixtures("cells")
def test_summary_report_and_fit_show_table3_and_the_paper_criterion(planted: Store, tmp_path: Path) -> None:
    summary = summarise(planted)  # the study's design: paper
    json.dumps(summary, default=str)
    assert summary["design"] == "paper" and summary["settings"]["correction"] == "none"
    (row,) = summary["table3"]
    assert row["model"] == SUBJECT and row["target"] == "HI" and row["ci_low"] <= BETA <= row["ci_high"]
    wide = table3_wide(pd.DataFrame(summary["table3"]))
    assert list(wide.columns) == ["model", "Mono → EN", "Mono → RU", "Mono → ZH", "Mono → HI"]
    assert wide.loc[0, "Mono → EN"] == "–" and str(wide.loc[0, "Mono → HI"]).startswith("0.5")
    console = Console(record=True, width=250)
    print_summary(summary, console)
    text = console.export_text()
    assert "Table 3 (Cao et al.)" in text and "uncorrected p < 0.05" in text
    ours, cao = report_sections(planted)
    assert cao.title == "Leakage: as in Cao et al., 2024"
    html = page_text(cao)
    assert "As in Cao et al., 2024, Table 3" in html and "As in Cao et al., 2024, Figure 2" in html
    assert "As in Cao et al., 2024," not in page_text(ours)
    out = CliRunner().invoke(app, ["leakage", "fit", "--study", str(planted.dir), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["design"] == "paper" and [(f["source"], f["target"]) for f in data["flows"]] == [("en", "hi")]


def test_mono_for_asks_one_language_and_is_checked() -> None:
    assert PROBE.languages_of(LeakageConfig(mono_for="hi")) == ["hi"]
    with pytest.raises(ValueError, match="answers in hi only"):
        LeakageConfig(mono_for="hi", languages=["en"])
    with pytest.raises(ValueError, match="no such language"):
        LeakageConfig(mono_for="xx")
    bad = CliRunner().invoke(app, ["run", "leakage", "--model", "fake:x", "--design", "paper", "--mono-for", "xx",
                                   "--plan-only", "--study", "/nonexistent-dir/s"])
    assert bad.exit_code == 2 and "--mono-for 'xx'" in bad.output


@pytest.mark.usefixtures("cells")
def test_the_paper_designs_flows_plot_names_its_p_uncorrected(planted: Store) -> None:
    from biasatlas.probes.leakage.figure import flows_plot

    paper = analyse(planted, design="paper")
    hover = flows_plot(paper.flows, paper.subjects, corrected=False).to_json()
    assert "p (uncorrected)" in hover and "BH" not in hover
    assert "adjusted p (BH)" in flows_plot(paper.flows, paper.subjects).to_json()  # our design's default
    sections = report_sections(planted)  # the study's design: paper
    plots = json.dumps([s.data for s in sections], ensure_ascii=False)
    assert "p (uncorrected)" in plots and "adjusted p (BH)" not in plots


@pytest.mark.usefixtures("cells")
def test_a_study_in_our_design_gets_the_papers_figure_2_and_table_3_in_their_own_section(
        planted: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Analysed in our design (complete cases, BH), the report's leakage section keeps our flows; the section "As
    in Cao et al." beside it fits the paper's design as well, so Figure 2 under the paper's criterion and Table 3
    are there whatever design the study was run in, and recover the planted en -> hi flow and the control."""
    from biasatlas.probes.leakage import report

    monkeypatch.setattr(report, "study_design", lambda store: "ours")
    ours, cao = report_sections(planted)
    assert "Leakage flows: human source → model target (BH-adjusted p < 0.05)" in page_text(ours)
    assert "adjusted p (BH)" in json.dumps(ours.data, ensure_ascii=False)
    html = page_text(cao)
    assert "As in Cao et al., 2024, Figure 2" in html and "uncorrected p < 0.05" in html
    assert "As in Cao et al., 2024, Table 3" in html and "Mono → HI" in html
    plots = json.dumps(cao.data, ensure_ascii=False)
    assert "p (uncorrected)" in plots and "adjusted p (BH)" not in plots
    assert "en" in plots and "hi" in plots  # the planted flow is drawn
