"""Model specs: a mistyped bare name is refused at once, without touching the network."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from biasatlas.backends.base import BackendError
from biasatlas.backends.registry import make_backend


@pytest.mark.parametrize("spec", ["nosuchmodel", "smolm2", "local:nosuchmodel", "./nothing/here", "x.gguf"])
def test_unknown_local_model_is_refused_at_once(spec: str) -> None:
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        make_backend(spec)
    assert time.monotonic() - started < 2
    assert "\n" not in str(info.value)
    assert spec.split(":")[-1].lstrip("./") in str(info.value)


def test_unknown_kind_lists_valid_ones() -> None:
    with pytest.raises(BackendError, match="openai:"):
        make_backend("")


def test_existing_directory_is_not_refused_by_the_name_check(tmp_path: Path) -> None:
    # an empty directory is a path: the loader (not the name check) reports what is missing
    with pytest.raises(Exception) as info:
        make_backend(str(tmp_path))
    assert "unknown model" not in str(info.value)
