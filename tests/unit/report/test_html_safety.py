"""Reports escape everything that comes from a study: names, titles, model answers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biasatlas.report.html import Section, write_report

HOSTILE = "r<img src=x onerror=\"document.title='pwned'\">"
ANSWER = "Yes</td><script>document.title='pwned'</script>\x00\x07 done"


def _report(tmp_path: Path) -> str:
    study = tmp_path / HOSTILE
    study.mkdir()
    section = Section(title=f"Probe {HOSTILE}", methods=f"methods {HOSTILE}")
    section.add_text(ANSWER)
    section.add_table(pd.DataFrame({"answer": [ANSWER], HOSTILE: [1]}), caption=HOSTILE, sortable=True)
    out = write_report(study, [section], title=f"t {HOSTILE}")
    return out.read_text(encoding="utf-8")


def test_no_markup_from_the_study_survives(tmp_path: Path) -> None:
    page = _report(tmp_path)
    assert "<img src=x" not in page
    assert "<script>document.title" not in page
    assert "<img" not in page.replace("<img alt=", "")  # no tag of theirs; text with quotes is harmless
    assert "&lt;img src=x onerror=" in page


def test_control_characters_removed(tmp_path: Path) -> None:
    page = _report(tmp_path)
    assert "\x00" not in page and "\x07" not in page


def test_only_our_script_may_run_and_nothing_remote_loads(tmp_path: Path) -> None:
    page = _report(tmp_path)
    assert "Content-Security-Policy" in page
    assert "default-src 'none'" in page
    assert "script-src 'sha256-" in page
    assert page.count("<script>") == 1
