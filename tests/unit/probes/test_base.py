"""The shared helpers of every probe: the stratified --limit draw and plan summaries."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from biasatlas.probes.base import limit_prompts, plan_summary
from biasatlas.records import Message, Prompt


def _prompts() -> list[Prompt]:
    out = []
    for lang in ("de", "is"):
        for scale in ("certainty", "likelihood"):
            for scenario in range(5):
                for group in range(4):
                    for contact in ("none", "positive", "negative"):
                        text = f"{lang}{scale}{scenario}{group}{contact}"
                        meta = {"scale": scale, "scenario": scenario, "group": group, "contact": contact,
                                "set": f"{lang}{scale}{scenario}{group}", "principle": None}
                        out.append(Prompt(probe="t", language=lang,
                                          messages=(Message(role="user", content=text),), meta=meta))
    return out


def _draw(limit: int, seed: int = 0) -> list[Prompt]:
    return limit_prompts(_prompts(), limit, seed, cell=lambda p: (p.language, p.meta["scale"], p.meta["scenario"]),
                         unit=lambda p: p.meta["set"])


def test_limit_counts_prompts_and_keeps_sets_whole() -> None:
    drawn = _draw(30)
    assert len(drawn) == 30
    assert all(n == 3 for n in Counter(p.meta["set"] for p in drawn).values())


def test_small_limit_touches_every_language_first() -> None:
    drawn = _draw(6)
    assert {p.language for p in drawn} == {"de", "is"}


def test_limit_touches_every_cell_it_can() -> None:
    drawn = _draw(60)  # 20 sets for 20 cells
    assert len({(p.language, p.meta["scale"], p.meta["scenario"]) for p in drawn}) == 20


def test_seeded_and_order_kept() -> None:
    assert [p.id for p in _draw(30, 1)] == [p.id for p in _draw(30, 1)]
    assert [p.id for p in _draw(30, 1)] != [p.id for p in _draw(30, 2)]
    ids = [p.id for p in _prompts()]
    positions = [ids.index(p.id) for p in _draw(30)]
    assert positions == sorted(positions)


def test_below_one_unit_gives_one_unit() -> None:
    assert len(_draw(1)) == 3


def test_plan_summary_has_no_none_levels() -> None:
    summary = plan_summary(_prompts(), ["language", "scale", "principle"])
    assert "principle" not in summary["factors"]
    assert summary["languages"] == {"de": 120, "is": 120}


@pytest.mark.parametrize("name", ["samaritan", "leakage", "debias"])
def test_unknown_analysis_option_is_refused(name: str, tmp_path: Any) -> None:
    from biasatlas.probes import load_probe
    from biasatlas.store import Store

    with Store(tmp_path) as store, pytest.raises(TypeError, match=f"unknown analysis option.*{name}.*alhpa"):
        load_probe(name).summarise(store, alhpa=0.05)
