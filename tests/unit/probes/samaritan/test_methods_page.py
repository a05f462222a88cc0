"""Issue 25, point 11: the methods page keeps from paper 003 only what §4.5 says (paired t-tests at
alpha 0.01); the unit of pairing (one difference per scenario) is marked as our choice."""

from __future__ import annotations

from pathlib import Path

PAGE = Path(__file__).resolve().parents[4] / "docs" / "methods" / "samaritan.md"


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_paired_unit_is_ours_not_the_papers() -> None:
    text = PAGE.read_text(encoding="utf-8")
    kept = _section(text, "What we keep from the paper")
    assert "t-test over scenarios" not in kept  # §4.5 names no unit
    assert "alpha = 0.01" in kept and "our choice" in kept
    deviations = _section(text, "Deviations, and why")
    assert "### The paired unit (our choice)" in deviations and "§4.5" in deviations
