"""The runs table shows local paths relative to the model cache, not the machine's directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.report.metadata import shown_paths


def test_paths_under_the_caches_and_home_are_relative(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BIASATLAS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    text = (f"path {tmp_path}/cache/models/smollm2.gguf; adapter {tmp_path}/hub/models--a--b/snapshots/1; "
            f"other {Path.home()}/weights/x.bin")
    assert shown_paths(text) == ("path [model cache]/models/smollm2.gguf; adapter "
                                 "[Hugging Face cache]/models--a--b/snapshots/1; other ~/weights/x.bin")
    assert str(tmp_path) not in shown_paths(text)
