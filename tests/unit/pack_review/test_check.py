"""`biasatlas languages check`: a small pack passes; each kind of broken pack is reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from biasatlas.languages import pack, pack_codes
from biasatlas.pack_review.check import check_pack
from biasatlas.probes.contact.data import descriptors_for
from biasatlas.probes.contact.wording import merges, read_same_wording

TSV = ("ID\tHB AXIS\tSEMANTIC FIELD (SENSE)\tOPTION DESCRIPTON [SL]\tSUGGESTED TRANSLATION [TL]\n"
       "P_D001a\tability\tother\tmasculine_unspec_plural_descriptor\tdiabétiques\n"
       "P_D001b\tability\tother\tfeminine_unspec_plural_descriptor\tdiabétiques\n"
       "P_D002a\tage\told\tunspec_unspec_unspec_descriptor\td'âge mûr\n"
       "P_D003a\tgender_and_sex\tbinary\tfeminine_unspec_singular_descriptor\tféminine\n")


def _cell(agree: dict[str, str] | None = None) -> dict[str, Any]:
    q = {s: "Devrais-je aider des {group:np} ?" for s in ("certainty",)}
    cell: dict[str, Any] = {
        "id": "xx-a-equal_status-education", "principle": "equal_status", "scenario": "education",
        "noun": {"np": "étudiants"},
        "contact": {"positive": "J'ai aidé des {group:np}.", "negative": "J'ai évité des {group:np}."},
        "actions": {"positive": {"verb": "aider", **q}, "negative": {"verb": "éviter", **q}},
    }
    if agree is not None:
        cell["agree"] = agree
    return cell


def _write(tmp: Path, *, options: tuple[str, str] = ("Oui", "Non"), agree: dict[str, str] | None = None,
           files: dict[str, str] | None = None, mmhb_cite: str = "P_D002", tsv: str = TSV,
           same_wording: str | None = None, phrasings: list[dict[str, str]] | None = None) -> Path:
    folder = tmp / "xx"
    (folder / "contact").mkdir(parents=True)
    (folder / "samaritan").mkdir()
    (folder / "descriptors.mmhb.tsv").write_text(tsv, encoding="utf-8")
    if same_wording is not None:
        (folder / "same_wording.yaml").write_text(same_wording, encoding="utf-8")
    (tmp / "words_xx.yaml").write_text("negators: {xx: [pas]}\n", encoding="utf-8")
    templates = {"provenance": {"language": "xx", "native_speaker_reviewed": False},
                 "grammar": {"order": "post", "marked": True},
                 "scales": {"certainty": {"options": list(options), "instruction": "Oui ou Non."}},
                 "cells": [_cell({"gender": "masculine", "number": "plural"} if agree is None else agree)]}
    (folder / "contact" / "templates.yaml").write_text(yaml.safe_dump(templates, allow_unicode=True))
    (folder / "samaritan" / "scenarios.yaml").write_text(yaml.safe_dump(
        {"answer_instruction": "1-100", "scenarios": [{"id": "s001", "rephrasings": ["{A_person} aide. 1-100 ?"]}]}))
    (folder / "samaritan" / "groups.yaml").write_text(yaml.safe_dump({
        "control": {"indefinite": "une personne", "definite": "la personne"},
        "phrasings": [{"phrasing": "Elderly person", "indefinite": "une personne d'âge mûr",
                       "definite": "la personne d'âge mûr", "mmhb": mmhb_cite}, *(phrasings or [])]},
        allow_unicode=True))
    manifest = {"language": "xx", "name": "Test", "default_actions": ["positive", "negative"],
                "files": files or {"contact_templates": "contact/templates.yaml", "descriptors": "descriptors.mmhb.tsv",
                                   "samaritan_scenarios": "samaritan/scenarios.yaml",
                                   "samaritan_groups": "samaritan/groups.yaml", "reader_words": "../words_xx.yaml"},
                "provenance": [{"file": "contact/templates.yaml", "written_by": "test",
                                "native_speaker_reviewed": False, "validate": "this test"}]}
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True))
    return folder


def test_a_small_pack_is_valid(tmp_path: Path) -> None:
    report = check_pack(_write(tmp_path))
    assert report.ok, report.problems
    # P_D003 has only a feminine singular form: it cannot fill a masculine plural slot
    assert report.figures["cell_descriptor_pairs_skipped"] == 1
    assert report.figures["mmhb_forms_used"] == {"masculine/plural": 1, "unspec/unspec": 1}
    assert report.figures["samaritan_phrasings_from_mmhb"] == 1


def test_options_whose_words_nest_are_refused(tmp_path: Path) -> None:
    report = check_pack(_write(tmp_path, options=("Mungkin", "Tidak mungkin")))
    assert any("not distinct" in p for p in report.problems)
    assert check_pack(_write(tmp_path / "b", options=("Probable", "Improbable"))).ok


def test_a_cell_without_agreement_is_refused(tmp_path: Path) -> None:
    report = check_pack(_write(tmp_path, agree={}))
    assert any("no 'agree'" in p for p in report.problems)


def test_a_missing_file_and_a_false_mmhb_citation_are_refused(tmp_path: Path) -> None:
    report = check_pack(_write(tmp_path, mmhb_cite="P_D001"))
    assert any("cites MMHB P_D001" in p for p in report.problems)
    files = {"contact_templates": "contact/nothing.yaml", "reader_words": "../words_xx.yaml"}
    report = check_pack(_write(tmp_path / "b", files=files))
    assert any("does not exist" in p for p in report.problems)


def test_no_pack_yaml(tmp_path: Path) -> None:
    assert not check_pack(tmp_path).ok


def test_shipped_packs_and_their_status() -> None:
    assert pack_codes() == ["en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko"]
    assert pack("fr").status.startswith("machine-drafted, not reviewed by a native speaker")
    assert "descriptors.mmhb.tsv" in pack("fr").status
    assert not pack("de").reviewed


# issue 37: P_D004 "diabetic (other)" reads as P_D001's "diabétiques" with a masculine plural noun
COLLIDING = TSV + "P_D004a\tability\tother\tmasculine_unspec_plural_descriptor\tDiabétiques \n"


def test_two_descriptors_of_one_wording_are_refused_unless_the_pack_lists_the_merge(tmp_path: Path) -> None:
    report = check_pack(_write(tmp_path, tsv=COLLIDING))
    assert not report.ok
    assert any("P_D001, P_D004 read as one wording ('diabétiques')" in p and "same_wording.yaml" in p
               for p in report.problems), report.problems
    listed = "merged:\n- keep: P_D001\n  ids: [P_D004]\n  wording: diabétiques\n"
    report = check_pack(_write(tmp_path / "b", tsv=COLLIDING, same_wording=listed))
    assert report.ok, report.problems
    # the plan's view: one group of the two, three groups of four descriptors
    assert report.figures["descriptors"] == 4 and report.figures["groups"] == 3
    assert report.figures["descriptors_merged"] == 1


def test_a_listed_merge_the_data_do_not_make_is_refused(tmp_path: Path) -> None:
    stale = "merged:\n- keep: P_D001\n  ids: [P_D002]\n  wording: diabétiques\n"
    report = check_pack(_write(tmp_path, same_wording=stale))
    assert any("not a merge the data make" in p for p in report.problems), report.problems


def test_two_samaritan_phrasings_of_one_wording_are_refused(tmp_path: Path) -> None:
    twin = {"phrasing": "Old person", "indefinite": "une personne d'âge  mûr", "definite": "la personne âgée"}
    report = check_pack(_write(tmp_path, phrasings=[twin]))
    assert any("Elderly person and Old person read as one wording" in p for p in report.problems), report.problems


def test_every_shipped_pack_lists_the_merges_its_plan_makes() -> None:
    for code in pack_codes():
        listed = {str(e["keep"]): tuple(map(str, e["ids"])) for e in read_same_wording(pack(code).path)}
        assert listed == merges(descriptors_for(code)), code
