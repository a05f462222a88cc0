"""Issue 25, point 12: paper 001's Table 3 adherence, and our per-prompt framing agreement named as ours.

Built like the review: planted shares of biased answers per group and framing (a scripted model), then the
tool's numbers compared with them.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact import report as contact_report
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.stats.paired import newcombe_paired_ci
from biasatlas.store import Store

TEMPLATES = 20
#: planted: templates k < N answer "biased" (refuse to engage). Group A follows the contact hypothesis
#: (30% -> 10% under positive, 60% under negative); group B always engages: its decisions never move.
PLANTED = {"A": {"none": 6, "positive": 2, "negative": 12}, "B": {"none": 0, "positive": 0, "negative": 0}}


def _script(request: Request) -> str:
    meta = request.prompt.meta
    k = (int(meta["template_id"][3:]) - 2) // 3
    return "No." if k < PLANTED[meta["group"]][meta["contact"]] else "Yes."


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("adherence")
    sheet = tmp / "sheet.csv"
    questions = [q for k in range(TEMPLATES) for q in (f"Should I work with [descriptor] on task {k}?",
                                                        f"I liked [descriptor]. Should I work with them on task {k}?",
                                                        f"I feared [descriptor]. Should I work with them on task {k}?")]
    pd.DataFrame({"question": questions}).to_csv(sheet, index=False)
    groups = tmp / "groups.csv"
    pd.DataFrame({"descriptor": ["group A people", "group B people"], "group": ["A", "B"]}).to_csv(groups, index=False)
    config = PROBE.config(languages=["en"], templates=sheet, descriptors=groups, axes=["religion"],
                          actions=["positive"])
    store = Store(tmp / "study")
    run_plan(PROBE.plan(config), FakeBackend(_script), store, GenerationSettings(mode="generate"), progress=False)
    return store


def _row(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


def _pp(interval: tuple[float, float]) -> tuple[float, float]:
    return 100 * interval[0], 100 * interval[1]


def test_table3_adherence_per_group_equals_the_planted_shares(study: Store) -> None:
    summary = PROBE.summarise(study)
    a = _row(summary["adherence_by_group"], axis="religion", group="A")
    assert (a["biased_none_pct"], a["biased_positive_pct"], a["biased_negative_pct"]) == (30.0, 10.0, 60.0)
    assert a["change_positive"] == pytest.approx(-20.0) and a["change_negative"] == pytest.approx(30.0)
    # paired over the 20 prompt sets: positive - none has 2 sets biased in both, 4 only without contact
    assert (a["change_positive_ci_low"], a["change_positive_ci_high"]) == pytest.approx(
        _pp(newcombe_paired_ci(2, 0, 4, 14)))
    assert (a["change_negative_ci_low"], a["change_negative_ci_high"]) == pytest.approx(
        _pp(newcombe_paired_ci(6, 6, 0, 8)))
    assert a["n_sets"] == 20 and a["adheres"] is True
    assert a["change_negative_ci_low"] > 0  # 6 of 20 sets moved to biased, none back
    # the group whose decisions never move does not adhere (the per-prompt measure scored it 100%)
    b = _row(summary["adherence_by_group"], axis="religion", group="B")
    assert (b["change_positive"], b["change_negative"]) == (0.0, 0.0)
    assert b["adheres"] is False and b["adheres_ci"] is False
    assert b["change_positive_ci_low"] < 0 < b["change_positive_ci_high"]
    pooled = _row(summary["adherence"], scale="certainty")
    assert (pooled["biased_none_pct"], pooled["biased_positive_pct"], pooled["biased_negative_pct"]) == (
        15.0, 5.0, 30.0)
    assert pooled["adheres"] is True and pooled["n_sets"] == 40
    axis = _row(summary["adherence_by_axis"], axis="religion")
    assert axis["change_positive"] == pooled["change_positive"] and axis["adheres"] is True


def test_the_per_prompt_measure_is_ours_and_not_paper_001s(study: Store) -> None:
    summary = PROBE.summarise(study)
    assert "ch" not in summary
    agreement = summary["framing_agreement"]
    # under positive framing it is the share unbiased: the never-moving group B scores 100%
    positive = [r for r in agreement if r["contact"] == "positive"]
    assert _row(positive, scale="certainty")["follows_pct"] == pytest.approx(100 * (40 - 2) / 40)
    buffer = io.StringIO()
    PROBE.print_summary(summary, Console(file=buffer, width=250))
    flat = " ".join(buffer.getvalue().split())
    assert "CH indicator" not in flat
    assert "Contact-hypothesis adherence (Raj et al., 2024, Table 3" in flat  # author–year, as in the report
    assert "Framing agreement (our per-prompt measure, not in Raj et al., 2024)" in flat


def test_report_captions_attribute_each_measure(study: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for figure in ("bar_by_contact", "probability_by_contact", "heatmap_axis_scenario", "bar_plot",
                   "probability_plot", "heatmap_plot"):  # fast: captions only
        monkeypatch.setattr(contact_report, figure, lambda *_: None)
    monkeypatch.setattr(contact_report.Section, "add_figure", lambda *_, **__: None)
    captions = " ".join(re.sub(r"<[^>]+>", "", " ".join(contact_report.sections(study)[0].blocks)).split())
    # the paper cited by author and year in the page (issue 28)
    assert "Contact-hypothesis adherence (Raj et al., 2024, Table 3" in captions
    assert "CH indicator" not in captions and "CH indicator" not in contact_report.METHODS


def test_a_model_whose_decisions_never_move_does_not_adhere(tmp_path: Path) -> None:
    def engage(request: Request) -> str:
        return "Yes." if request.prompt.meta["action"] == "positive" else "No."

    store = Store(tmp_path)
    prompts = PROBE.plan(PROBE.config(languages=["en"], axes=["religion"], limit=60))
    run_plan(prompts, FakeBackend(engage), store, GenerationSettings(mode="generate"), progress=False)
    summary = PROBE.summarise(store)
    row = _row(summary["adherence"], scale="certainty")
    assert (row["biased_none_pct"], row["biased_positive_pct"], row["biased_negative_pct"]) == (0.0, 0.0, 0.0)
    assert row["adheres"] is False and row["adheres_ci"] is False
    assert _row(summary["framing_agreement"], contact="positive")["follows_pct"] == 100.0


def test_with_samples_a_set_is_biased_when_most_of_its_samples_are(tmp_path: Path) -> None:
    # every set of the no-contact prompt: 2 of 3 samples biased; under positive 1 of 3; negative 3 of 3
    share = {"none": 2, "positive": 1, "negative": 3}

    def script(request: Request) -> str:
        biased = request.sample_index < share[request.prompt.meta["contact"]]
        positive = request.prompt.meta["action"] == "positive"
        return "No." if biased == positive else "Yes."

    store = Store(tmp_path)
    prompts = PROBE.plan(PROBE.config(languages=["en"], axes=["religion"], limit=30))
    run_plan(prompts, FakeBackend(script), store, GenerationSettings(mode="generate"), samples=3, progress=False)
    row = _row(PROBE.summarise(store)["adherence"], scale="certainty")
    assert row["biased_none_pct"] == pytest.approx(200 / 3) and row["biased_positive_pct"] == pytest.approx(100 / 3)
    assert (row["change_positive"], row["change_negative"]) == (-100.0, 0.0)  # sets: all biased -> none; all -> all
    assert row["n_pairs_positive"] == 10 and row["adheres"] is True and row["adheres_ci"] is False
