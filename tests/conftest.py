"""Fixtures of every test: biasatlas' user cache in a folder of the test session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from biasatlas.backends.local.identity import CACHE_ENV


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """$BIASATLAS_CACHE_DIR for the whole session (the CLI subprocesses inherit it): weight digests and
    the converted copy of the embedded GGUF model are made once per session, by its first model load,
    and never read from or written to the user's own cache."""
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("biasatlas-cache"))
    yield
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before
