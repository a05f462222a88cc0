"""`audit --plan-only`: each cell's power (the MDE per test cell at 80% power and the probe's alpha)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.stats.power import detectable_effect

runner = CliRunner()

AUDIT: dict[str, Any] = {
    "models": [{"name": "Alpha", "model": "fake:a"}],
    "probes": {
        "contact": {"languages": ["de"], "axes": ["religion"], "limit": 150, "mode": "generate"},
        "samaritan": {"languages": ["en"], "categories": ["gender"], "limit": 120},
        "leakage": {"languages": ["en"], "limit": 8},
    },
}


def _plan(tmp_path: Path, *extra: str, audit: dict[str, Any] = AUDIT) -> Any:
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump(audit, sort_keys=False), encoding="utf-8")
    return runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s"), "--plan-only", *extra])


def test_each_cell_states_its_mde_for_its_planned_units(tmp_path: Path) -> None:
    result = _plan(tmp_path, "--json")
    assert result.exit_code == 0, result.output
    cells = {c["probe"]: c for c in json.loads(result.stdout)["cells"]}
    contact = cells["contact"]["power"]
    (decision,) = contact["cells"]  # generate mode: decisions only
    assert decision["n"] == cells["contact"]["prompts"] // 3 == 50 and decision["alpha"] == 0.05
    expected = detectable_effect("mcnemar", 50, 0.05, discordant_rate=0.3).value
    assert expected is not None and decision["mde"] == round(expected, 4)
    (gender,) = cells["samaritan"]["power"]["cells"]
    assert gender["alpha"] == 0.01 and gender["unit"] == "scenario" and gender["n"] >= 2
    assert cells["leakage"]["power"] is None  # no power model


def test_table_prints_the_problems_once_and_leaves_each_cells_power_to_json(tmp_path: Path) -> None:
    small = {**AUDIT, "models": [*AUDIT["models"], {"name": "Beta", "model": "fake:b"}],
             "probes": {**AUDIT["probes"], "samaritan": {"languages": ["en"], "categories": ["gender"], "limit": 6}}}
    result = _plan(tmp_path, audit=small)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    text = " ".join(result.output.split())
    # the one that matters first: 2 gender scenarios can detect nothing
    assert lines[0].startswith("warning: samaritan / en / gender: ") and "no effect detectable" in lines[0]
    assert sum(line.startswith("warning: ") for line in lines) == 1  # contact's 50 sets detect something
    assert "(models: Alpha, Beta)" in " ".join(" ".join(lines[:3]).split())  # once, not once per model
    assert "power: Alpha / contact" not in text and "power assumptions (contact)" not in text
    assert "more notes (the smallest detectable effect of every test cell, the power assumptions): --plan-only --json" \
        in text
    notes = json.loads(_plan(tmp_path, "--json", audit=small).stdout)["notes"]
    assert any(n.startswith("power: Alpha / contact / de / certainty: n = 50 prompt sets") for n in notes)
    assert any(n.startswith("power assumptions (contact): ψ = 0.30 assumed") for n in notes)


def test_a_billion_samples_are_counted_not_listed(tmp_path: Path) -> None:
    """`samples: 1e9` is a count: the plan keys only the samples the study could hold (here the 2 of a first
    run), never a request per sample (that grew memory without end); the figures are those counts exactly."""
    from unittest import mock

    from biasatlas.audit import plan_audit
    from biasatlas.audit.models import approximate_tokens
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.records import Request
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    small = {"models": AUDIT["models"],
             "probes": {"contact": {"languages": ["de"], "axes": ["religion"], "limit": 9, "mode": "generate",
                                    "max_tokens": 8}}}
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump({**small, "samples": 10**9}, sort_keys=False), encoding="utf-8")
    plan = plan_audit(path)
    (cell,) = plan.cells
    with Store(tmp_path / "s") as store:  # a first run of 2 samples a prompt, as the audit's cell asks them
        run_plan(plan.prompts[0], FakeBackend(name="a"), store, cell.probe.settings(cell.config), samples=2,
                 progress=False)
    keyed = 0
    real = Request.cache_key

    def counted(self: Request, backend_id: str) -> str:
        nonlocal keyed
        keyed += 1
        return real(self, backend_id)

    with mock.patch.object(Request, "cache_key", counted):
        result = runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s"), "--plan-only", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["cells"]
    assert keyed <= 9 * 2  # the samples a first run stored, per prompt
    assert (row["prompts"], row["requests"], row["cached"]) == (9, 9 * 10**9, 9 * 2)
    assert row["to_ask"] == 9 * 10**9 - 18 and row["completion_tokens"] == row["to_ask"] * 8
    assert row["prompt_tokens"] == sum(approximate_tokens(p.text) for p in plan.prompts[0]) * (10**9 - 2)
