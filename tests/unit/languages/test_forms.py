"""Descriptor form fixes at the source: misfiled MMHB rows, a pack's forms.yaml, and the checker's view of them."""

from __future__ import annotations

import sys
from pathlib import Path

from biasatlas.datafiles import data_root
from biasatlas.languages.forms import misfiled, read_form_fixes
from biasatlas.pack_review.check import check_pack
from biasatlas.probes.contact.data import descriptors_for, mmhb_descriptors

sys.path.insert(0, str(Path(__file__).parents[1] / "pack_review"))  # test_check.py: the packs checker's tests
from test_check import _write


def test_rows_filed_under_another_id_are_dropped_by_the_other_packs_sense() -> None:
    rows = data_root() / "languages" / "es" / "descriptors.mmhb.tsv"
    kept = misfiled(rows)
    assert kept["P_D039"] == ("body_type", "skin_color")  # pale, not obese
    assert kept["F_D313"] == ("political_ideologies", "political_ideologies")
    pale = {d.key: d for d in mmhb_descriptors("es")}["P_D039"]
    assert [f.text for f in pale.mmhb.forms] == ["de piel pálida"]  # "obesas" named another group


def test_a_replaced_form_is_the_one_the_plan_uses_and_keeps_its_reason() -> None:
    fixes = read_form_fixes(data_root() / "languages" / "ko")
    assert "stupid" in fixes.reasons["F_D018"]
    mute = {d.key: d for d in descriptors_for("ko")}["F_D018"]
    assert [f.text for f in mute.mmhb.forms] == ["말을 못 하는"]


def test_a_malformed_forms_file_is_a_problem_of_the_pack_not_a_traceback(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    (folder / "forms.yaml").write_text("forms:\n  P_D001: {forms: {plural: x}}\n", encoding="utf-8")
    report = check_pack(folder)
    assert not report.ok
    assert any("forms.yaml" in p for p in report.problems), report.problems


def test_the_checker_counts_the_fixes() -> None:
    report = check_pack(data_root() / "languages" / "es")
    assert report.ok, report.problems
    assert report.figures["descriptor_forms_replaced"] == len(read_form_fixes(data_root() / "languages" / "es").forms)
    assert report.figures["mmhb_ids_with_misfiled_rows"] == 5
