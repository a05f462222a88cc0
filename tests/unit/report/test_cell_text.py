"""No Python literal reaches a reader: every table cell of the page and of report_files/ is text for people.

Missing values show '–' in the page (an empty cell in a CSV), booleans 'yes'/'no', and a line break in an
answer is a line break (never the two characters of ``repr``'s ``\\n``).
"""

from __future__ import annotations

import csv
import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.probes.leakage.plan import build_prompts as leakage_prompts
from biasatlas.records import GenerationSettings
from biasatlas.report.build import build_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

LITERALS = {"None", "True", "False", "nan", "NaN", "<NA>"}
WORD = re.compile(r"\b(None|True|False)\b")


def _make_study(path: Path) -> None:
    rng = random.Random(3)
    yes_no = ["Yes.", "No.", "I can't answer that.\n\nIt depends.", "Probably not."]
    ratings = ["I'd say 70.", "80", "No idea.\n\nReally.", "55"]
    with Store(path) as store:
        contact = load_probe("contact")
        prompts = contact.plan(contact.config(languages=["en"], axes=["religion"], limit=24))
        run_plan(prompts, FakeBackend(lambda r: rng.choice(yes_no), name="alpha"), store,
                 GenerationSettings(mode="generate"), progress=False)
        samaritan = load_probe("samaritan")
        prompts = samaritan.plan(samaritan.config(languages=["en"], categories=["gender"], limit=30))
        run_plan(prompts, FakeBackend(lambda r: rng.choice(ratings), name="alpha"), store,
                 GenerationSettings(mode="generate"), progress=False)
        prompts = leakage_prompts(["en"], group_names=["woman", "man", "gay man", "lesbian"], orders="one")
        run_plan(prompts, FakeBackend(name="alpha"), store, GenerationSettings(mode="choice"), progress=False)
        build_report(store, path)


class _Cells(HTMLParser):
    """The text of every table cell of the page, with the tags inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.body: list[str] = []
        self.tags: list[str] = []
        self._text: str | None = None
        self._tag = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("td", "th"):
            self._text, self._tag = "", tag
        elif self._text is not None:
            self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._text is not None:
            self.cells.append(self._text.strip())
            if self._tag == "td":
                self.body.append(self._text.strip())
            self._text = None


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cells") / "study"
    _make_study(path)
    return path


@pytest.fixture(scope="module")
def page(study: Path) -> str:
    return (study / "report.html").read_text(encoding="utf-8")


def test_no_table_cell_of_the_page_is_a_python_literal(page: str) -> None:
    parser = _Cells()
    parser.feed(page)
    assert len(parser.cells) > 200
    assert sorted({c for c in parser.cells if c in LITERALS}) == []
    assert [c for c in parser.cells if "\\n" in c] == []
    # nor inside a cell's text (the runs table's "scripted True"); headers may say "None %" (contact's 'none')
    assert [c for c in parser.body if WORD.search(c)] == []
    assert "–" in parser.cells  # a missing value shows a dash
    assert set(parser.tags) <= {"br", "span", "strong", "sup", "em"}, set(parser.tags)


def test_answers_in_the_page_are_text_for_people(page: str) -> None:
    blocks = re.findall(r'<script type="application/json" id="answers-data-[^"]+">(.*?)</script>', page, re.S)
    assert blocks
    cells = [v for block in blocks for row in json.loads(block)["rows"] for v in row]
    assert not [v for v in cells if isinstance(v, bool) or v is None or str(v) in LITERALS]
    assert not [v for v in cells if isinstance(v, str) and "\\n" in v]
    assert any(isinstance(v, str) and "\n\n" in v for v in cells)  # a real line break stays one


def test_a_line_break_in_an_answer_is_a_line_break_in_a_table(page: str) -> None:
    assert "t answer that.<br><br>It depends." in page or "No idea.<br><br>Really." in page


def test_no_csv_holds_a_python_literal(study: Path) -> None:
    files = sorted((study / "report_files").glob("*.csv"))
    assert len(files) > 10
    found = {}
    for path in files:
        with path.open(encoding="utf-8", newline="") as handle:
            cells = [v for row in csv.reader(handle) for v in row]
        bad = sorted({v for v in cells if v in LITERALS or "\\n" in v})
        if bad:
            found[path.name] = bad
    assert found == {}


def test_no_latex_table_holds_a_python_literal(study: Path) -> None:
    files = sorted((study / "report_files").glob("[0-9]*.tex"))
    assert len(files) > 10
    found = {}
    for path in files:
        body = path.read_text(encoding="utf-8").split("\\midrule", 1)[-1]
        cells = [c.strip() for line in body.split("\\\\") for c in line.split("&")]
        bad = sorted({c for c in cells if c in LITERALS or "\\n" in c.replace("\\newline", "")})
        if bad or "\n\n" in body:
            found[path.name] = bad or ["blank line in a cell"]
    assert found == {}
