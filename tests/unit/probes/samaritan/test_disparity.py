"""Samaritan group disparity: a group rated lower than the others of its category is the headline, a null
names none, a category-wide shift flags none; built studies (the real plan of 20 scenarios, a scripted model)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS, build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.tidy.disparity import SOURCE, headline_lines


def _study(tmp_path: Path, shifts: dict[str, float], sections: list[Any] | None = None) -> dict[str, Any]:
    """Ratings: a scenario base, noise of sd 3, and each group's planted shift (the control none)."""

    def script(request: Request) -> str:
        meta = request.prompt.meta
        rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
        base = 55 + int(str(meta["scenario"]).strip("s") or 0) % 20
        shift = shifts.get(str(meta["group"]), shifts.get("*", 0.0)) if meta["group"] != "control" else 0.0
        return f"{base + shift + rng.gauss(0, 3):.0f}"

    prompts = build_prompts(["age"], n_scenarios=20)
    with Store(tmp_path) as store:
        run_plan(prompts, FakeBackend(script), store, GenerationSettings(max_tokens=DEFAULT_MAX_TOKENS),
                 progress=False)
        if sections is not None:
            sections.extend(PROBE.report_sections(store))
        return PROBE.summarise(store)


def _groups(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in summary["statistics"] if r["source"] == SOURCE and r["group"]]


def test_a_group_rated_lower_is_the_headline(tmp_path: Path) -> None:
    sections: list[Any] = []
    summary = _study(tmp_path, {"teenager": -15}, sections)
    # the report's probe section opens with the headline, the forest plot and the table
    assert "Group disparity, " in sections[0].blocks[0] and "most disfavoured: teenager" in sections[0].blocks[0]
    assert "data-figure=" in sections[0].blocks[1] and len(sections[0].data) == len(set(sections[0].data))
    # and, as `summary`: the spread of the gaps from the control, the pairs that differ, every pair's test
    html = "".join(sections[0].blocks)
    assert "Spread of the gaps from the control, " in html and "(teenager lowest, " in html
    assert "Differ from each other, " in html and "teenager vs " in html and "Holm over the pairs" in html
    assert html.index("Spread of the gaps") < html.index("every pair of groups of a category")
    [(row, text)] = headline_lines(summary["statistics"])
    assert row["group"] == "teenager" and row["significant"] is True
    assert row["ci_low"] < -15 < row["ci_high"]
    assert text.startswith("most disfavoured: teenager -") and "vs the other age groups" in text
    assert {r["group"] for r in _groups(summary) if r["significant"]} == {"teenager"}
    pairs = [p for p in summary["group_disparity_pairs"] if p["differs"]]
    assert pairs and all("teenager" in (p["a"], p["b"]) for p in pairs)
    [spread] = summary["group_disparity_spread"]
    assert spread["lowest"] == "teenager" and spread["range"] > 10
    console = Console(record=True, width=250)
    PROBE.print_summary(summary, console)
    assert "most disfavoured: teenager" in console.export_text().splitlines()[0]


@pytest.mark.parametrize("shifts", [{}, {"*": -12}], ids=["null", "category-wide shift"])
def test_no_group_differs_without_a_planted_one(tmp_path: Path, shifts: dict[str, float]) -> None:
    summary = _study(tmp_path, shifts)
    assert not any(r["significant"] for r in _groups(summary))
    [(row, text)] = headline_lines(summary["statistics"])
    assert row["significant"] is False
    assert text.startswith("no age group differs: largest gap ") and "detectable at this size: MDE" in text
