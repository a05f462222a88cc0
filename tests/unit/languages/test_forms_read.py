"""Every descriptor group of the nine MMHB packs is read in its role, as the pack renders it today.

A form changed in ``forms.yaml`` (or MMHB's file) makes its phrases differ from the ones read: the row must be
read again (``scripts/form_reading.py CODE`` refreshes the sheet, keeping the reading of unchanged rows).
"""

from __future__ import annotations

import pytest

from biasatlas.languages import pack, packs_root
from biasatlas.languages.form_readings import FILE, read_file, reading_status, reading_summary
from biasatlas.languages.forms import read_form_fixes
from biasatlas.pack_review.form_reading import MMHB_PACKS, problems


def _read(code: str) -> bool:
    summary = reading_summary(packs_root() / code)
    return summary is not None and summary["read"] > 0


@pytest.mark.parametrize("code", MMHB_PACKS)
def test_every_group_is_read_as_it_renders_and_none_is_wrong(code: str) -> None:
    path = packs_root() / code / FILE
    reading = read_file(path)
    if not _read(code):  # a sheet not read yet: it renders as the pack does, and nothing says it was read
        assert [p for p in problems(code, reading) if "verdict" not in p and "no English reading" not in p] == []
        assert reading_status(packs_root() / code) == "forms not read in their role"
        return
    assert problems(code, reading) == []
    assert "not a native speaker" in reading.header.get("read_by", ""), "say who read it, honestly"
    awkward_or_fixed = [r for r in reading.rows if r["verdict"] in ("awkward", "fixed")]
    assert all(r["note"].strip() for r in awkward_or_fixed), "an awkward or fixed row says why"


@pytest.mark.parametrize("code", MMHB_PACKS)
def test_the_slurs_of_the_english_source_are_left_out(code: str) -> None:
    # HolisticBias lists "fruitcake" and "fruity" (dispreferred); every faithful rendering is a slur
    omit = read_form_fixes(pack(code).path).omit
    assert {"F_D243", "P_D070"} <= set(omit), sorted(omit)


def test_the_coverage_matrix_says_how_much_was_read() -> None:
    from biasatlas.probes.coverage import coverage

    rows = {r["language"]: r for r in coverage()}
    for code in (c for c in MMHB_PACKS if _read(c)):
        summary = reading_summary(packs_root() / code)
        assert summary is not None and summary["read"] == summary["groups"] > 400
        assert rows[code]["forms_status"].startswith(f"{summary['groups']} of {summary['groups']} groups read")
    assert sum(map(_read, MMHB_PACKS)) >= 8
    assert rows["en"]["forms_status"] == ""
