"""Reports escape everything that comes from a study: names, titles, model answers."""

from __future__ import annotations

import base64
import hashlib
import json
import re
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
    # executable scripts: our module (and plotly.js when there are plots), each allowed by its hash
    scripts = re.findall(r"<script( type=\"[^\"]*\")?>(.*?)</script>", page, flags=re.S)
    runnable = [body for kind, body in scripts if kind in ("", ' type="module"')]
    assert len(runnable) == 1
    for body in runnable:
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        assert f"'sha256-{digest}'" in page
    # data blocks never hold the study's markup raw (an answer cannot close its block)
    for kind, body in scripts:
        if kind == ' type="application/json"':
            assert "<" not in body and ">" not in body


def test_answers_and_plots_travel_as_escaped_data(tmp_path: Path) -> None:
    import plotly.graph_objects as go

    study = tmp_path / "s"
    study.mkdir()
    section = Section(title="answers", key="contact")
    section.add_answers(pd.DataFrame({"model": ["m"], "answer": [ANSWER + "</script><!--"]}))
    section.add_plot(go.Figure(go.Bar(x=[HOSTILE], y=[1])), caption=HOSTILE)
    page = write_report(study, [section]).read_text(encoding="utf-8")
    blocks = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, flags=re.S)
    assert len(blocks) == 2
    for _, body in blocks:
        assert "<" not in body and ">" not in body
        json.loads(body)  # still valid JSON
    assert json.loads(blocks[0][1])["rows"][0][1] == ANSWER.replace("\x00", "").replace("\x07", "") + "</script><!--"
    # plotly.js is embedded and allowed by its hash, with our module
    assert page.count("<script>") == 1 and page.count('<script type="module">') == 1


def test_a_long_sentence_on_every_row_is_said_once_under_the_caption() -> None:
    from biasatlas.report.html import table_html

    family = "contact: BH over every contact test of the study (the one question the study asks of many cells)"
    out = table_html(pd.DataFrame({"Group": ["a", "b", "c"], "Family": [family] * 3, "p": [0.1, 0.2, 0.3]}), "Tests")
    assert out.count("BH over every contact test") == 1 and "<th>Family</th>" not in out
    assert "Family (every row): contact: BH over every contact test" in out
