"""`biasatlas languages check` on hostile packs: wrong YAML types, files outside the pack, a FIFO, a symlink
loop, NUL bytes. Each is a problem of the pack on one line, never a traceback and never a hang."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasatlas.pack_review.check import check_pack

sys.path.insert(0, str(Path(__file__).parent))
from test_check import _write

JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=6)


def _edit(path: Path, key: str, value: Any) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data[key] = value
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.fixture()
def pack(tmp_path: Path) -> Path:
    return _write(tmp_path)


@pytest.mark.parametrize("key", ["grammar", "files", "provenance", "default_actions", "language", "name"])
@pytest.mark.parametrize("value", [5, "text", [1, 2], {"a": [None]}, None])
def test_a_manifest_key_of_the_wrong_type_is_a_problem(pack: Path, key: str, value: Any) -> None:
    _edit(pack / "pack.yaml", key, value)
    report = check_pack(pack)  # never raises
    assert isinstance(report.problems, list)


@pytest.mark.parametrize("key", ["cells", "scales", "grammar"])
@pytest.mark.parametrize("value", [5, "text", [1, 2], {"a": 1}])
def test_a_template_file_of_the_wrong_shape_is_a_problem(pack: Path, key: str, value: Any) -> None:
    _edit(pack / "contact" / "templates.yaml", key, value)
    report = check_pack(pack)
    assert not report.ok


@pytest.mark.parametrize("key", ["scenarios", "answer_instruction"])
def test_samaritan_files_of_the_wrong_shape_are_a_problem(pack: Path, key: str) -> None:
    _edit(pack / "samaritan" / "scenarios.yaml", key, 7)
    assert not check_pack(pack).ok


def test_a_file_outside_the_pack_is_not_followed(pack: Path) -> None:
    data = yaml.safe_load((pack / "pack.yaml").read_text(encoding="utf-8"))
    data["files"]["contact_templates"] = "../../../../../../../../etc/passwd"
    (pack / "pack.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    report = check_pack(pack)
    assert any("outside the pack" in p for p in report.problems), report.problems


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_a_template_file_does_not_hang(pack: Path) -> None:
    (pack / "contact" / "templates.yaml").unlink()
    os.mkfifo(pack / "contact" / "templates.yaml")
    report = check_pack(pack)
    assert any("not a regular file" in p for p in report.problems), report.problems


def test_a_symlink_loop_and_a_nul_byte_are_problems(pack: Path) -> None:
    os.symlink(pack / "loop2", pack / "loop1")
    os.symlink(pack / "loop1", pack / "loop2")
    data = yaml.safe_load((pack / "pack.yaml").read_text(encoding="utf-8"))
    data["files"]["contact_templates"] = "loop1"
    (pack / "pack.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert not check_pack(pack).ok
    data["files"]["contact_templates"] = "a\x00b.yaml"
    (pack / "pack.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert not check_pack(pack).ok


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["grammar", "files", "provenance", "default_actions", "language"]), value=JUNK)
def test_any_manifest_value_gives_a_report_never_a_traceback(tmp_path_factory: pytest.TempPathFactory,
                                                              key: str, value: Any) -> None:
    root = tmp_path_factory.mktemp("prop")
    pack = _write(root)
    _edit(pack / "pack.yaml", key, value)
    check_pack(pack)
    shutil.rmtree(root)


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(["cells", "scales", "grammar", "provenance"]), value=JUNK)
def test_any_template_value_gives_a_report_never_a_traceback(tmp_path_factory: pytest.TempPathFactory,
                                                              key: str, value: Any) -> None:
    root = tmp_path_factory.mktemp("prop")
    pack = _write(root)
    _edit(pack / "contact" / "templates.yaml", key, value)
    check_pack(pack)
    shutil.rmtree(root)


# ---- descriptor tables, reader tables and prompt sizes -------------------------------------------------------
def _one_line_problems(report: Any) -> list[str]:
    assert not report.ok
    assert all("\n" not in p and len(p) < 1000 for p in report.problems), report.problems
    return report.problems


@pytest.mark.parametrize("text", ["", "\n", "ID\tHB AXIS\n", "not a table at all\n", "\x00\x00\x00",
                                  "ID\tHB AXIS\tSENSE\tOPTION\tTEXT\nP_D001a\tability\n"])
def test_an_empty_or_malformed_descriptor_table_is_a_problem(pack: Path, text: str) -> None:
    (pack / "descriptors.mmhb.tsv").write_text(text, encoding="utf-8")
    problems = _one_line_problems(check_pack(pack))
    assert any("descriptors.mmhb.tsv" in p for p in problems), problems


def test_a_descriptor_over_the_csv_field_limit_is_a_problem(pack: Path) -> None:
    from biasatlas.languages import MAX_DESCRIPTOR_CHARS

    long = "x" * 131_073  # past the csv module's field limit
    for text in (long, "y" * (MAX_DESCRIPTOR_CHARS + 1)):
        (pack / "descriptors.mmhb.tsv").write_text(
            "ID\tHB AXIS\tSEMANTIC FIELD (SENSE)\tOPTION DESCRIPTON [SL]\tSUGGESTED TRANSLATION [TL]\n"
            f"P_D001a\tability\tother\tmasculine_unspec_plural_descriptor\t{text}\n", encoding="utf-8")
        problems = _one_line_problems(check_pack(pack))
        assert any("descriptors.mmhb.tsv" in p and "characters" in p for p in problems), problems


def _reader_tables(pack: Path, header: str, row: str) -> None:
    folder = pack / "readers"
    folder.mkdir(exist_ok=True)
    for name in ("yesno.csv", "yesno_heldout.csv", "ratings.csv", "ratings_heldout.csv"):
        (folder / name).write_text(f"{header}\n{row}\n", encoding="utf-8")
    data = yaml.safe_load((pack / "pack.yaml").read_text(encoding="utf-8"))
    data["files"]["reader_tables"] = "readers"
    (pack / "pack.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


@pytest.mark.parametrize(("header", "row"), [
    ("scale,language,expected,reason,source", "certainty,xx,yes,,t"),  # no answer column
    ("scale,language,answer", "certainty,xx,Oui"),  # no expected column
    ("", ""),  # empty
    ("scale,language,answer,expected,reason,source", "certainty,xx," + "z" * 131_073 + ",yes,,t"),
])
def test_a_reader_table_without_its_columns_is_a_problem(pack: Path, header: str, row: str) -> None:
    _reader_tables(pack, header, row)
    problems = _one_line_problems(check_pack(pack))
    assert any(p.startswith("readers: ") and "yesno.csv" in p for p in problems), problems


def test_a_template_rendering_huge_prompts_is_refused(pack: Path) -> None:
    from biasatlas.languages import MAX_PROMPT_CHARS

    path = pack / "contact" / "templates.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # a 44 KB template whose 4,000 slots take a 250-character descriptor: a 1 MB prompt (YAML files are bounded
    # at 1 MiB; 40,000 slots make the 10 MB prompt, refused the same way, but the YAML parser takes seconds)
    data["cells"][0]["contact"]["positive"] = "{group:np} " * 4_000
    path.write_text(yaml.safe_dump(data, allow_unicode=True, width=10**9), encoding="utf-8")
    tsv = (pack / "descriptors.mmhb.tsv").read_text(encoding="utf-8").replace("diabétiques", "d" * 250)
    (pack / "descriptors.mmhb.tsv").write_text(tsv, encoding="utf-8")
    problems = _one_line_problems(check_pack(pack))
    assert any(f"longer than {MAX_PROMPT_CHARS:,} characters" in p for p in problems), problems


TSV_JUNK = st.lists(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
                             max_size=6), max_size=5)


@settings(max_examples=20, deadline=None)
@given(rows=TSV_JUNK, header=st.booleans())
def test_any_descriptor_table_gives_a_report_never_a_traceback(tmp_path_factory: pytest.TempPathFactory,
                                                                rows: list[list[str]], header: bool) -> None:
    root = tmp_path_factory.mktemp("prop")
    pack = _write(root)
    head = "ID\tHB AXIS\tSEMANTIC FIELD (SENSE)\tOPTION DESCRIPTON [SL]\tSUGGESTED TRANSLATION [TL]\n" if header else ""
    body = "".join("\t".join(r) + "\n" for r in rows)
    (pack / "descriptors.mmhb.tsv").write_text(head + body, encoding="utf-8")
    report = check_pack(pack)
    assert all("\n" not in p for p in report.problems)
    shutil.rmtree(root)
