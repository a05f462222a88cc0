"""The reading sheet of a pack's descriptor forms in their role: rendered from the pack, held to it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from biasatlas.languages.form_readings import (
    COLUMNS,
    FormReadingError,
    Reading,
    read_file,
    reading_status,
    reading_summary,
    write_file,
)
from biasatlas.pack_review.form_reading import problems, refreshed, sheet_rows


@cache
def _fr() -> tuple[dict[str, str], ...]:
    return tuple(sheet_rows("fr"))


def _read_all(rows: tuple[dict[str, str], ...]) -> list[dict[str, str]]:
    return [{**r, "means": "something", "verdict": "natural", "note": ""} for r in rows]


def test_a_row_per_group_with_its_phrases_in_every_slot_noun() -> None:
    rows = {r["id"]: r for r in _fr()}
    deaf = rows["F_D001"]
    assert deaf["forms"] == "sourds | sourdes"
    # each slot noun of the French templates, with the form agreeing with it
    assert "étudiants sourds" in deaf["phrases"] and "personnes sourdes" in deaf["phrases"]
    assert "sourds" in deaf["example"] and deaf["example"].endswith(".")
    assert "es: sordos" in deaf["elsewhere"] and "fr:" not in deaf["elsewhere"]
    assert all(r["means"] == r["verdict"] == "" for r in rows.values())


def test_the_file_round_trips_with_its_header_and_no_tab_or_newline_in_a_cell(tmp_path: Path) -> None:
    rows = _read_all(_fr()[:3])
    rows[0]["note"] = "a\tnote\nover lines"
    path = write_file(tmp_path / "forms_read.tsv", rows, {"language": "fr", "read_by": "someone"})
    back = read_file(path)
    assert back.header == {"language": "fr", "read_by": "someone"}
    assert back.rows[0]["note"] == "a note over lines"
    assert [r["id"] for r in back.rows] == [r["id"] for r in rows]


@pytest.mark.parametrize("text", ["id\tmeans\nx\ty\n", "\t".join(COLUMNS) + "\nonly\tthree\tcells\n"])
def test_a_malformed_file_is_one_error_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "forms_read.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormReadingError, match=r"forms_read\.tsv"):
        read_file(path)


def test_a_full_reading_of_the_pack_as_it_renders_has_no_problem() -> None:
    assert problems("fr", Reading({}, tuple(_read_all(_fr())))) == []


def test_what_does_not_hold_is_listed() -> None:
    rows = _read_all(_fr())
    stale = {**rows[0], "phrases": "étudiants autrefois"}
    wrong = {**rows[1], "verdict": "wrong", "note": "names another group"}
    unread = {**rows[2], "verdict": "", "means": ""}
    extra = {**rows[3], "id": "F_D999"}
    found = problems("fr", Reading({}, (stale, wrong, unread, extra, *rows[5:])))
    text = "\n".join(found)
    assert f"{rows[0]['id']} was read as 'étudiants autrefois'" in text
    assert f"{rows[1]['id']} is read as wrong (names another group)" in text
    assert f"{rows[2]['id']} has verdict ''" in text and f"{rows[2]['id']} has no English reading" in text
    assert "F_D999 is read but not asked" in text
    assert f"{rows[3]['id']} is asked but not read" in text and f"{rows[4]['id']} is asked but not read" in text


def test_a_refresh_keeps_a_reading_only_where_the_phrases_did_not_change() -> None:
    rows = _read_all(_fr())
    rows[0] = {**rows[0], "phrases": "old phrases"}
    new = {r["id"]: r for r in refreshed("fr", Reading({}, tuple(rows)))}
    assert new[rows[0]["id"]]["verdict"] == "" and new[rows[0]["id"]]["phrases"] != "old phrases"
    assert new[rows[1]["id"]]["verdict"] == "natural"


def test_the_summary_counts_what_was_read_and_by_whom(tmp_path: Path) -> None:
    assert reading_summary(tmp_path) is None
    assert reading_status(tmp_path) == "forms not read in their role"
    rows = _read_all(_fr()[:4])
    rows[1]["verdict"] = "awkward"
    rows[2]["verdict"] = ""
    write_file(tmp_path / "forms_read.tsv", rows, {"read_by": "AI assistant, not a native speaker"})
    summary = reading_summary(tmp_path)
    assert summary is not None
    assert summary["groups"] == 4 and summary["read"] == 3
    assert summary["verdicts"] == {"natural": 2, "awkward": 1, "fixed": 0, "wrong": 0}
    assert reading_status(tmp_path) == "3 of 4 groups read in their role (AI assistant, not a native speaker)"
