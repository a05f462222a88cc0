"""Shared fixtures of the integration tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def llama_servers() -> ModuleType:
    """tests/integration/servers/llama.py: llama.cpp servers, a Batch runner over them, GGUF files of the
    embedded weights (loaded by path: the tests are not a package)."""
    path = Path(__file__).resolve().parent / "servers" / "llama.py"
    spec = importlib.util.spec_from_file_location("llama_servers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def openai_stub() -> ModuleType:
    """tests/integration/servers/openai_stub.py, the OpenAI-compatible test server (on pytest's pythonpath)."""
    import openai_stub

    return openai_stub
