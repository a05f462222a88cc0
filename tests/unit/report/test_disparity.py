"""The report's group disparity: the overview cell names the group first, the forest orders the groups by
effect and draws a flagged group hollow, never as a solid dot."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.controls.contact import data as contact
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.headlines import contact_headline, disparity_headline
from biasatlas.report.overview import grid_html
from biasatlas.report.plots import disparity_forest
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _trained(request: Request) -> str:
    biased = request.prompt.meta["group"] in set(contact.PLANTED.values())
    return contact.answer_for(request.prompt, "biased" if biased else "unbiased")


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with Store(tmp_path_factory.mktemp("control")) as store:
        run_plan(contact.measurement_prompts(cells=4, languages=("de",)).prompts, FakeBackend(_trained), store,
                 GenerationSettings(mode="generate"), progress=False)
        yield PROBE.summarise(store)


def test_the_overview_cell_names_the_disfavoured_group_first(summary: dict[str, Any]) -> None:
    heads = pd.concat([disparity_headline(summary), contact_headline(summary)], ignore_index=True)
    validity = pd.DataFrame([{"model": "fake:fake", "language": "de", "answers": 84, "readable": 84,
                              "readable_pct": 100.0, "refusals": 0}])
    grid = grid_html({"contact": heads}, {"contact": validity}, {"contact": "Contact"})
    cell = grid[grid.index("data-language='de'"):]
    text = cell[cell.index(">") + 1:cell.index("</td>")]
    assert text.startswith("religion: most disfavoured: Buddhists +100.0 pp [")
    row = disparity_headline(summary).iloc[0]
    assert row["estimate"] == pytest.approx(100.0) and row["ci_low"] < 100 and bool(row["significant"])


def _row(group: str, estimate: float, flags: str | None = None) -> dict[str, Any]:
    return {"source": "group disparity", "model": "m", "mode": "generate", "language": "en", "axis": "religion",
            "contact": "all", "measure": "decision", "group": group, "estimate": estimate, "ci_low": estimate - 0.1,
            "ci_high": estimate + 0.1, "n": 30, "p_adj": 0.01 if estimate > 0.3 else 0.9,
            "significant": estimate > 0.3 and not flags, "flags": flags,
            "flag_notes": "too few units for the test" if flags else None}


def test_the_forest_orders_groups_by_effect_and_draws_flagged_ones_hollow() -> None:
    rows = [_row("a", 0.05), _row("b", 0.5), _row("c", -0.2), _row("d", 0.1, "too_few_units")]
    figure = disparity_forest(rows).to_dict()
    solid = next(t for t in figure["data"] if t["name"] == "group")
    hollow = next(t for t in figure["data"] if t["name"] == "not a finding")
    assert list(solid["y"]) == ["c", "a", "b"]  # ordered by effect
    assert [round(x, 6) for x in solid["x"]] == [-20.0, 5.0, 50.0]
    assert list(solid["marker"]["color"]) == ["#555", "#555", "#b03a2e"]  # b differs: red
    assert list(hollow["y"]) == ["d"] and hollow["marker"]["symbol"] == "circle-open"
    assert hollow["error_x"]["visible"] is False
    assert "too few units" in hollow["hovertext"][0] and "nan" not in " ".join(solid["hovertext"])
