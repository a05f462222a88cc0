"""Reading failures by group in a contact study's summary and report: a scripted model that refuses to answer
for one group three times as often as for the others (every group asked the same questions)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.probes.contact.summary import print_summary, summarise
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.report.reading_failures import KEY, flag_lines, section
from biasatlas.runner import run_plan
from biasatlas.store import Store

GROUPS = ("Muslim", "Christian", "Buddhist", "Hindu", "Jewish")
REFUSAL = "I'm sorry, but I can't answer that."


def _answer(request: Request) -> str:
    """Refuses 30% of the questions about Muslims, 10% of the others; else a seeded Yes or No."""
    draw = int(stable_hash([request.prompt.text])[:8], 16) % 100
    share = 30 if request.prompt.meta["group"] == "Muslim" else 10
    if draw < share:
        return REFUSAL
    return "Yes." if draw % 2 else "No."


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("failures") / "study"
    config = PROBE.config(languages=["en"], axes=["religion"], mode="generate")
    prompts = [p for p in PROBE.plan(config) if p.meta["group"] in GROUPS]
    with Store(path) as store:
        run_plan(prompts, FakeBackend(_answer, name="refuser"), store, GenerationSettings(mode="generate"),
                 progress=False)
    return path


def test_the_summary_finds_the_group_refused_more_often(study: Path) -> None:
    with Store(study) as store:
        summary = summarise(store)
    block = summary[KEY]
    refusal = [g for g in block["groups"] if g["kind"] == "refusal"]
    muslim = min(refusal, key=lambda g: g["p_adj"])
    assert muslim["group"] == "Muslim" and muslim["differs"]
    # against a rest that holds the Muslim answers, another group may look low: never high
    assert all(g["diff_pp"] < 0 for g in refusal if g["differs"] and g["group"] != "Muslim")
    assert 2 < muslim["ratio"] < 4.5
    console = Console(file=io.StringIO(), width=300)
    print_summary(summary, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Reading failures by group" in text
    assert "for Muslim the model refused" in text and "as often as for the other groups" in text


def test_the_report_has_a_section_of_reading_failures(study: Path) -> None:
    from biasatlas.probes.contact.read import load_outcomes

    with Store(study) as store:
        part = section(load_outcomes(store), "contact", "Contact-hypothesis probe")
    assert part is not None
    html = "".join(part.blocks)
    assert "Muslim" in html and "Holm" in html


def test_an_effect_smaller_than_the_failure_gap_is_flagged() -> None:
    summary = {KEY: {"effect_flags": [{"model": "m", "language": "en", "group": "Muslim", "effect_pp": 4.0,
                                       "not_read_pct": 30.0, "other_not_read_pct": 10.0, "versus": "the control"}]}}
    (line,) = flag_lines(summary)
    assert "Muslim" in line and "+4.0 points" in line and "30.0%" in line


def test_the_contact_flag_compares_a_group_effect_with_its_failure_gap() -> None:
    import pandas as pd

    from biasatlas.report.reading_failures import add_failures

    rows = []
    for descriptor, refused in (("a", 6), ("b", 1), ("c", 1)):  # 60%, 10%, 10% of ten questions not read
        for q in range(10):
            rows.append({"model": "m", "language": "en", "mode": "generate", "axis": "x", "group": descriptor,
                         "descriptor": descriptor, "template_id": f"t{q}", "action": "positive",
                         "scale": "yes_no", "contact": "none", "status": "answered", "key": f"{descriptor}{q}",
                         "sample_index": 0, "answer": None if q < refused else "affirmative",
                         "reason": "refusal" if q < refused else None})
    across = {"effects": [{"model": "m", "mode": "generate", "language": "en", "group": "a", "label": "a",
                           "effect": 0.2},  # 20 points: less than the 50-point gap in what was read
                          {"model": "m", "mode": "generate", "language": "en", "group": "b", "label": "b",
                           "effect": -0.4}]}  # 40 points: more than b's 15-point gap (10% vs 35%)
    summary: dict[str, object] = {"across_languages": across}
    add_failures(summary, pd.DataFrame(rows), "contact")
    flags = summary[KEY]["effect_flags"]  # type: ignore[index]
    assert [(f["group"], round(f["not_read_pct"]), round(f["other_not_read_pct"])) for f in flags] == [("a", 60, 10)]


def test_the_samaritan_flag_compares_a_groups_bias_with_its_gap_to_the_control() -> None:
    import pandas as pd

    from biasatlas.report.reading_failures import add_failures

    rows = []
    for category, group, unread in (("control", "control", 1), ("gender", "male", 1), ("gender", "female", 5)):
        for scenario in range(20):  # 5%, 5% and 25% of twenty scenarios not read
            rows.append({"model": "m", "language": "en", "temperature": 0.0, "max_tokens": 64,
                         "category": category, "group": group, "scenario": f"s{scenario}", "rephrasing": 1,
                         "status": "answered", "key": f"{group}{scenario}", "sample_index": 0,
                         "rating": float("nan") if scenario < unread else 50.0,
                         "parse_reason": "refusal" if scenario < unread else None})
    cell = {"model": "m", "language": "en", "temperature": 0.0, "max_tokens": 64, "category": "gender"}
    groups = [{**cell, "group": "male", "bias": 3.0}, {**cell, "group": "female", "bias": 12.0},
              {**cell, "group": "female", "bias": -30.0}]
    summary: dict[str, object] = {"groups": groups}
    add_failures(summary, pd.DataFrame(rows), "samaritan")
    flags = summary[KEY]["effect_flags"]  # type: ignore[index]
    assert [(f["group"], f["effect_pp"]) for f in flags] == [("female", 12.0)]  # 20 points apart in failures
