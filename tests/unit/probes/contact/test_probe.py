"""The contact Probe object: configuration errors, plans, --limit in prompts, several languages, imports."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from biasatlas.probes import load_probe
from biasatlas.probes.base import ProbeConfigError, limit_prompts
from biasatlas.probes.contact.plan import (
    ContactConfig,
    build_prompts,
    cell_of,
    draw_prompt_sets,
    set_of,
)
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import Prompt


def _plan(**values: Any) -> list[Prompt]:
    return PROBE.plan(PROBE.config(**values))


def _cells(prompts: list[Prompt]) -> set[object]:
    return {cell_of(p) for p in prompts}


def test_registered_with_its_modes_and_languages() -> None:
    assert load_probe("contact") is PROBE
    assert PROBE.modes[0] == "choice" and "generate" in PROBE.modes
    assert {"en", "de", "is"} <= set(PROBE.languages)


@pytest.mark.parametrize(
    ("values", "value", "valid"),
    [
        ({"scales": ["sometimes"]}, "'sometimes'", "certainty, likelihood, frequency"),
        ({"actions": ["maybe"]}, "'maybe'", "positive, negative"),
        ({"scenarios": ["beach"]}, "'beach'", "education, workplace"),
        ({"hb_version": "v9"}, "'v9'", "v1.0, v1.1"),
        ({"import_format": "xml"}, "'xml'", "raj, rows"),
        ({"languages": ["xx"]}, "'xx'", "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"),
        ({"mode": "vote"}, "'vote'", "choice, generate"),
        ({"limit": 0}, "limit", "greater than or equal to 1"),
    ],
)
def test_config_errors_are_one_line(values: dict[str, Any], value: str, valid: str) -> None:
    with pytest.raises(ProbeConfigError) as info:
        PROBE.config(**values)
    message = str(info.value)
    assert "\n" not in message and value in message and valid in message


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"languages": ["de"], "axes": ["hobby"]},
         "unknown axis 'hobby' for language 'de'; valid: nationality, religion"),
        ({"languages": ["de"], "template_set": "b"}, "unknown template set 'b' for de; valid: a"),
    ],
)
def test_plan_errors_are_one_line(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ProbeConfigError, match=message):
        _plan(**values)


def test_plan_is_the_papers_design() -> None:
    prompts = _plan(languages=["de"], axes=["religion"])
    assert len(prompts) == 630  # 7 groups x 30 templates x 3 framings (paper 000)
    assert all(p.probe == "contact" and p.language == "de" for p in prompts)
    sets: dict[object, list[str]] = {}
    for p in prompts:
        sets.setdefault(set_of(p), []).append(p.meta["contact"])
    assert all(contacts == ["none", "positive", "negative"] for contacts in sets.values())


@pytest.mark.parametrize("limit", [3, 4, 10, 89, 90, 91, 200, 629])
def test_limit_counts_prompts_in_whole_sets_over_every_cell(limit: int) -> None:
    # the stratified draw (--no-balance-groups); the default balanced one: tests/unit/probes/contact/test_balance.py
    full = _plan(languages=["de"], axes=["religion"])
    prompts = _plan(languages=["de"], axes=["religion"], limit=limit, seed=3, balance_groups=False)
    assert len(prompts) == 3 * (limit // 3)  # whole sets of 3, as many as fit in N
    per_set: dict[object, int] = {}
    for p in prompts:
        per_set[set_of(p)] = per_set.get(set_of(p), 0) + 1
    assert set(per_set.values()) == {3}
    # de: 5 scenarios x 6 principles x 1 action = 30 cells; a draw touches as many as it can
    assert len(_cells(prompts)) == min(limit // 3, len(_cells(full)))


def test_limit_below_one_set_asks_one_whole_set() -> None:
    assert len(_plan(languages=["is"], limit=1)) == 3


@pytest.mark.parametrize(
    "values",
    [
        {"languages": ["de"], "axes": ["religion"], "limit": 40, "seed": 5},
        {"languages": ["en", "is"], "axes": ["religion"], "scales": ["all"], "limit": 300, "seed": 1},
        {"languages": ["en"], "axes": ["ability"], "actions": ["all"], "limit": 150, "seed": 0},
    ],
)
def test_limit_is_the_shared_stratified_draw(values: dict[str, Any]) -> None:
    """Drawing set specs before writing prompts gives what limit_prompts gives on the written plan."""
    config = PROBE.config(**values, balance_groups=False)  # the stratified draw (--no-balance-groups)
    full = PROBE.plan(PROBE.config(**{k: v for k, v in values.items() if k != "limit"}))
    expected = limit_prompts(full, values["limit"], values["seed"], cell=cell_of, unit=set_of)
    assert [p.id for p in PROBE.plan(config)] == [p.id for p in expected]


def test_limit_is_seeded() -> None:
    a, b = (_plan(axes=["religion"], limit=60, seed=1) for _ in range(2))
    c = _plan(axes=["religion"], limit=60, seed=2)
    assert [p.id for p in a] == [p.id for p in b] != [p.id for p in c]


def test_several_languages_plan_the_union() -> None:
    both = _plan(languages=["en", "de"], axes=["religion"])
    en = _plan(languages=["en"], axes=["religion"])
    de = _plan(languages=["de"], axes=["religion"])
    assert [p.id for p in both] == [p.id for p in en + de]
    limited = _plan(languages=["en", "de"], axes=["religion"], limit=30)
    assert {p.language for p in limited} == {"en", "de"} and len(limited) <= 30


def test_language_is_a_deprecated_alias_of_languages() -> None:
    config = ContactConfig(language="de", axes=["religion"])
    assert config.languages == ["de"]
    assert "language" not in config.model_dump()
    assert [p.id for p in build_prompts(config)] == [p.id for p in _plan(languages=["de"], axes=["religion"])]
    with pytest.raises(ValueError, match="contradicts"):
        ContactConfig(language="de", languages=["en"])


def test_default_language_is_english() -> None:
    assert {p.language for p in _plan(axes=["religion"], limit=9)} == {"en"}


def test_settings_defaults_and_overrides() -> None:
    default = PROBE.settings(PROBE.config())
    assert (default.mode, default.max_tokens, default.temperature) == ("choice", 10, 0.0)
    generate = PROBE.settings(PROBE.config(mode="generate", max_tokens=4, temperature=0.7, seed=9))
    assert (generate.mode, generate.max_tokens, generate.temperature, generate.seed) == ("generate", 4, 0.7, 9)
    assert PROBE.samples(PROBE.config(samples=3)) == 3


def test_draw_prompt_sets_is_a_uniform_seeded_draw_of_sets() -> None:
    """The set draw the debiasing splits rely on: random.Random(seed).sample over the plan's sets."""
    config = ContactConfig(languages=["de"], axes=["nationality"], seed=11)
    full = build_prompts(config)
    order = list(dict.fromkeys(set_of(p) for p in full))
    chosen = {order[i] for i in random.Random(11).sample(range(len(order)), 25)}
    drawn = draw_prompt_sets(config, 25)
    assert [p.id for p in drawn] == [p.id for p in full if set_of(p) in chosen]


def _rows_dataset(tmp_path: Path) -> tuple[Path, Path]:
    sheet = tmp_path / "q.csv"
    pd.DataFrame({"q": [
        "Should I work with [descriptor]?", "I like [descriptor]. Should I work with [descriptor]?",
        "I fear [descriptor]. Should I work with [descriptor]?",
        "Should I study with [descriptor]?", "I like [descriptor]. Should I study with [descriptor]?",
        "I fear [descriptor]. Should I study with [descriptor]?",
    ]}).to_csv(sheet, index=False)
    desc = tmp_path / "d.txt"
    desc.write_text("tall people\nshort people\nold people\n")
    return sheet, desc


def test_imported_dataset_limit_keeps_whole_sets(tmp_path: Path) -> None:
    sheet, desc = _rows_dataset(tmp_path)
    full = _plan(templates=sheet, descriptors=desc)
    assert len(full) == 2 * 3 * 3
    limited = _plan(templates=sheet, descriptors=desc, limit=10, seed=4)
    assert len(limited) == 9 and len({set_of(p) for p in limited}) == 3
    assert {p.id for p in limited} <= {p.id for p in full}


def test_imported_plan_summary_has_no_none_levels(tmp_path: Path) -> None:
    sheet, desc = _rows_dataset(tmp_path)
    config = PROBE.config(templates=sheet, descriptors=desc)
    summary = PROBE.plan_summary(PROBE.plan(config), config)
    assert "None" not in repr(summary)
    assert summary["prompt_sets"] == 6 and summary["languages"] == {"en": 18}
    assert "scenario" not in summary["factors"] and summary["factors"]["contact"]["none"] == 6


def test_import_errors_and_languages(tmp_path: Path) -> None:
    sheet, _ = _rows_dataset(tmp_path)
    with pytest.raises(ProbeConfigError, match="descriptor list"):
        _plan(templates=sheet)
    with pytest.raises(ProbeConfigError, match="one language"):
        _plan(templates=sheet, languages=["en", "de"])
    with pytest.raises(ProbeConfigError, match="file not found"):
        _plan(templates=tmp_path / "missing.csv")
