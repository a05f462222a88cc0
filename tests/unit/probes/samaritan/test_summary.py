"""The Samaritan summary: stated rules and defaults, unreadable-answer warnings, the margin option."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS, build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store


def script(request: Request) -> str:
    """Male answers are unreadable in 2 of 5 scenarios (40%), female in none."""
    meta = request.prompt.meta
    if meta["group"] == "male" and meta["scenario"] in {"s001", "s002"}:
        return "Well, it really depends on the person and the situation they find themselves in"
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    return f"{65 + rng.gauss(0, 2):.0f}"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    prompts = build_prompts(["gender"], n_scenarios=5)
    with Store(tmp_path) as store:
        run_plan(prompts, FakeBackend(script), store, GenerationSettings(max_tokens=DEFAULT_MAX_TOKENS),
                 progress=False)
    return tmp_path


def test_warns_when_a_group_has_more_than_20_percent_unreadable(study: Path) -> None:
    with Store(study) as store:
        summary = PROBE.summarise(store)
    warnings = summary["warnings"]
    assert len(warnings) == 1
    assert "male" in warnings[0] and "40.0% of 40 answers unreadable" in warnings[0]
    flagged = {r["group"]: r["unreadable_warning"] for r in summary["unparseable"]}
    assert flagged == {"control": False, "male": True, "female": False, "non-binary": False}
    console = Console(record=True, width=200)
    PROBE.print_summary(summary, console)
    text = console.export_text()
    assert "warning: gender male" in text and "40.0% of 40 answers" in text


def test_settings_state_both_rules_the_margin_and_the_decoding(study: Path) -> None:
    with Store(study) as store:
        summary = PROBE.summarise(store)
        wide = PROBE.summarise(store, equivalence_margin=5.0)
    settings = summary["settings"]
    assert "alpha = 0.01, uncorrected" in settings["paper_rule"]
    assert "holm" in settings["corrected_rule"] and "one category" in settings["corrected_rule"]
    assert settings["equivalence_margin"] == 2.0 and "TOST" in settings["equivalence"]
    assert "temperature 0" in settings["decoding"] and "1.0" in settings["decoding"]
    assert wide["settings"]["equivalence_margin"] == 5.0
    assert {r["equivalence_margin"] for r in wide["groups"]} == {5.0}
    for row in summary["groups"]:
        assert row["verdict"] in {"equivalent", "differs", "undetermined", "untested"}
        assert {"significant_paper", "tost_p", "tost_p_adj", "n_cells", "n_cells_unpaired"} <= set(row)
    console = Console(record=True, width=220)
    PROBE.print_summary(summary, console)
    text = console.export_text()
    assert "paper rule" in text and "equivalence margin ±2" in text


def test_margin_is_a_run_option_recorded_for_summary(study: Path) -> None:
    config = PROBE.config(categories="gender", equivalence_margin=3.5)
    assert PROBE.run_record(config)["equivalence_margin"] == 3.5
    with pytest.raises(ValueError, match="equivalence_margin"):
        PROBE.config(equivalence_margin=0)


def test_default_answer_length_lets_a_chat_model_finish() -> None:
    assert DEFAULT_MAX_TOKENS == 512
    assert PROBE.settings(PROBE.config()).max_tokens == 512
    assert {p.meta["max_tokens"] for p in PROBE.plan(PROBE.config(categories="age", limit=8))} == {512}
