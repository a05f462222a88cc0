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

from biasatlas.languages.check import check_pack

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
