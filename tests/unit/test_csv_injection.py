"""CSV files (exports and the report's tables) cannot carry spreadsheet formulas: a text cell starting
with =, +, -, @, tab or carriage return gets a leading single quote (OWASP); numbers stay numbers."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from biasatlas.backends.fake import FakeBackend
from biasatlas.export import export_study
from biasatlas.probes.contact import probe as contact
from biasatlas.records import GenerationSettings
from biasatlas.report.publish import TableFile, write_files
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.table_files import write_table

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "fine", "a=b"]
ESCAPED = ["'=HYPERLINK(\"http://x\",\"y\")", "'+1+1", "'-2+3", "'@SUM(A1)", "'\t=1", "'\r=1", "fine", "a=b"]


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_write_table_escapes_formula_text_and_keeps_numbers(tmp_path: Path) -> None:
    frame = pd.DataFrame({"text": HOSTILE, "number": [-0.5, 1.0, -3.0, 0.0, 2.5, -1e-3, 7.0, 8.0],
                          "=header": pd.array(HOSTILE, dtype="string")})
    rows = _rows(write_table(frame, tmp_path / "t.csv", "csv"))
    assert rows[0] == ["text", "number", "'=header"]
    assert [r[0] for r in rows[1:]] == ESCAPED and [r[2] for r in rows[1:]] == ESCAPED
    assert [r[1] for r in rows[1:]] == ["-0.5", "1.0", "-3.0", "0.0", "2.5", "-0.001", "7.0", "8.0"]


def test_report_csv_files_escape_formula_text(tmp_path: Path) -> None:
    frame = pd.DataFrame({"group": HOSTILE, "estimate": [-0.5] * len(HOSTILE)})
    written = write_files(tmp_path, [("01-table", TableFile(frame, "caption"))])
    rows = _rows(next(p for p in written if p.suffix == ".csv"))
    assert [r[0] for r in rows[1:]] == ESCAPED and {r[1] for r in rows[1:]} == {"-0.5"}


def test_an_answer_that_is_a_formula_is_exported_as_text(tmp_path: Path) -> None:
    prompts = contact.build_prompts(contact.ContactConfig(languages=["en"], axes=["ability"], limit=6))
    with Store(tmp_path / "s") as store:
        run_plan(prompts, FakeBackend(lambda request: "=cmd|' /C calc'!A0"), store, GenerationSettings(),
                 progress=False)
    export_study(tmp_path / "s", tmp_path / "out", "csv")
    rows = _rows(tmp_path / "out" / "answers_contact.csv")
    column = rows[0].index("answer_text")
    assert {r[column] for r in rows[1:]} == {"'=cmd|' /C calc'!A0"}
