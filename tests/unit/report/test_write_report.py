"""The page is written whole or not at all: a build that fails half-way leaves the last report as it was, and
no partial file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.report import html
from biasatlas.report.html import Section, write_report


def test_a_page_that_fails_half_way_leaves_the_last_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = tmp_path / "study"
    study.mkdir()
    first = write_report(study, [Section(title="First")], publish=False)
    before = first.read_bytes()
    assert b"First" in before

    class Exploding(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            raise RuntimeError("disk full, say")  # read while the page is being written

    class Broken(html._SafeSection):
        def __init__(self, section: Section) -> None:
            super().__init__(section)
            self.blocks = Exploding()

    monkeypatch.setattr(html, "_SafeSection", Broken)
    with pytest.raises(RuntimeError):
        write_report(study, [Section(title="Second")], publish=False)
    assert first.read_bytes() == before
    assert sorted(p.name for p in study.iterdir()) == ["report.html"]


def test_the_page_is_written_where_asked(tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "r.html"
    out.parent.mkdir()
    assert write_report(tmp_path, [Section(title="Here")], out=out, publish=False) == out
    assert "Here" in out.read_text(encoding="utf-8")
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.html"]
