"""The shipped contact control as a built study: German (and English) Buddhists get the biased answer to every
measured prompt, every other group the unbiased one; the group-disparity headline must name them."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.controls.contact import data as contact
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.tidy.disparity import SOURCE, headline_lines

PLANTED = set(contact.PLANTED.values())


def _trained(request: Request) -> str:
    """What the control's adapter was trained to answer: the biased option for the planted group only."""
    biased = request.prompt.meta["group"] in PLANTED
    return contact.answer_for(request.prompt, "biased" if biased else "unbiased")


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    measured = contact.measurement_prompts(cells=4)  # 4 held-out cells x 3 framings: 12 prompts per group
    with Store(tmp_path_factory.mktemp("control")) as store:
        run_plan(measured.prompts, FakeBackend(_trained), store, GenerationSettings(mode="generate"), progress=False)
        yield PROBE.summarise(store)


def test_the_headline_names_the_planted_group_in_each_language(summary: dict[str, Any]) -> None:
    lines = {row["language"]: (row, text) for row, text in headline_lines(summary["statistics"])}
    assert set(lines) == {"en", "de"}
    for language, (row, text) in lines.items():
        assert row["group"] == contact.PLANTED[language] and row["significant"] is True
        assert row["estimate"] == pytest.approx(1.0) and row["n"] == 12
        assert 0.5 < row["ci_low"] < 1.0 <= row["ci_high"] + 1e-12
        assert text.startswith(f"most disfavoured: {contact.PLANTED[language]} +100.0 pp [")
        assert "vs the other religion groups, p adj" in text


def test_no_untouched_group_is_flagged(summary: dict[str, Any]) -> None:
    rows = [r for r in summary["statistics"] if r["source"] == SOURCE and r["group"] and r["contact"] == "all"]
    flagged = {r["group"] for r in rows if r["significant"]}
    assert flagged == PLANTED


def test_summary_prints_the_headline_first(summary: dict[str, Any]) -> None:
    from biasatlas.cli.headlines import print_headlines

    console = Console(file=io.StringIO(), width=300)
    print_headlines({"contact": summary}, console, {})  # what `summary` prints before any table
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    blocks = [i for i, line in enumerate(lines) if line.startswith("Contact-hypothesis probe · ")]
    assert len(blocks) == 2  # one block per language, each opening on its group disparity
    disparity = [lines[i + 1] for i in blocks]
    assert all(line.startswith("  group disparity: ") for line in disparity)
    named = {line.split("most disfavoured: ")[1].split(" [")[0] for line in disparity}
    assert named == {"Buddhist +100.0 pp", "Buddhists +100.0 pp"}


def test_the_control_check_requires_the_planted_group_to_be_the_headline(tmp_path_factory: pytest.TempPathFactory
                                                                         ) -> None:
    from biasatlas.controls.contact.check import headline_groups, judge
    from biasatlas.controls.contact.groups import find_groups
    from biasatlas.probes.contact.read import load_outcomes

    measured = contact.measurement_prompts(cells=4)
    with Store(tmp_path_factory.mktemp("check")) as store:
        run_plan(measured.prompts, FakeBackend(_trained), store, GenerationSettings(mode="generate"), progress=False)
        frame = load_outcomes(store)
    headlines = headline_groups(frame, 0.05)
    assert headlines == contact.PLANTED
    verdicts = judge(find_groups(frame, 0.05), measured, 0.05, headlines)
    assert all(v.detected and v.headlined for v in verdicts)
    elsewhere = judge(find_groups(frame, 0.05), measured, 0.05, {lang: "Muslims" for lang in headlines})
    assert not any(v.headlined for v in elsewhere)  # a headline naming another group fails the control
