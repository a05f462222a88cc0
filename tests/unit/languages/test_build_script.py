"""The shipped pack files are what scripts/build_language_packs.py writes from the drafts (reproducible)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from biasatlas.languages import packs_root

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "build_language_packs.py"


@pytest.fixture(scope="module")
def build() -> object:
    spec = importlib.util.spec_from_file_location("build_language_packs", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("code", ["fr", "zh", "hi", "is", "de"])
def test_generated_files_match_the_shipped_ones(build: object, tmp_path: Path, code: str) -> None:
    build.write_pack(code, None, tmp_path)  # type: ignore[attr-defined]
    written = sorted(p.relative_to(tmp_path / code) for p in (tmp_path / code).rglob("*") if p.is_file())
    assert written and Path("pack.yaml") in written
    for rel in written:
        assert (tmp_path / code / rel).read_bytes() == (packs_root() / code / rel).read_bytes(), rel
