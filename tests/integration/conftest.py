"""Shared fixtures of the integration tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

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


@pytest.fixture(scope="session")
def q8_gguf(tmp_path_factory: pytest.TempPathFactory, llama_servers: ModuleType) -> Path:
    """The embedded SmolLM2 weights as Q8_0 (made once per session): llama.cpp answers a contact prompt
    in ~0.31 CPU s where the shipped Q4_1 takes ~0.45 (servers/llama.py says why)."""
    return Path(llama_servers.requantized(tmp_path_factory.mktemp("gguf"), "q8_0"))


@pytest.fixture(scope="session")
def llama_pair(llama_servers: ModuleType, q8_gguf: Path) -> Iterator[Any]:
    """Two llama.cpp servers (llama-cpp-python's, the ``server`` extra) of the embedded weights, started
    once for the whole session on first use and shared by every test that asks a real OpenAI-compatible
    server: one thread each, n_ctx 2048, model name ``smollm2`` (llama-cpp-python answers any name with
    its one model). A ``Fleet``: ``urls``, ``pids``, ``cpu_s()``.

    Tests must not depend on what another test asked before them: the servers keep only the last
    prompt's key/value cache, which changes speed, not answers beyond llama.cpp's own rounding."""
    with llama_servers.llama_fleet(q8_gguf, 2, n_ctx=2048) as fleet:
        _SHARED.fleet = fleet
        yield fleet
        _SHARED.fleet = None


class _Shared:
    """The session's shared llama.cpp servers once started, and the test during which one died."""

    fleet: Any = None
    died_in: str | None = None


_SHARED = _Shared()
_USES_SERVER = {"llama_pair", "llama_url"}


@pytest.fixture(autouse=True)
def _llama_alive(request: pytest.FixtureRequest) -> None:
    """A test that needs the shared servers after one of them died fails at once with the one reason
    (not with a connection error after its retries)."""
    if _SHARED.died_in is not None and _USES_SERVER & set(request.fixturenames):
        pytest.fail(f"the shared llama.cpp server died during {_SHARED.died_in} (reported there)", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """When a shared llama.cpp server has died, the failing test says so in one line: how it exited, after how
    many requests, and where its log is, in place of the connection errors that followed."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if _SHARED.fleet is None or _SHARED.died_in is not None:
        return
    if not _USES_SERVER & set(getattr(item, "fixturenames", ())):
        return
    line = _SHARED.fleet.dead()
    if line is not None:
        _SHARED.died_in = item.nodeid
        report.outcome = "failed"
        report.longrepr = line


@pytest.fixture(scope="session")
def llama_url(llama_pair: Any) -> str:
    """The base URL (``.../v1``) of the first shared llama.cpp server."""
    return str(llama_pair.urls[0])
