"""Ray for `batch run`: its log lines in a file, the command's own signal handlers kept, Ray shut down however the
job ends, an unreachable or Ray-Client address one line in seconds. ``ray.init`` is replaced: no Ray starts."""

from __future__ import annotations

import logging
import signal
import socket
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra")

from biasatlas.batch import ray_session  # noqa: E402
from biasatlas.batch.ray_session import RAY_LOG, RayStartError, check_address  # noqa: E402


class FakeRay:
    """ray.init that does what the real one does to signals (a SIGTERM handler exiting 15), and records."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail, self.up = fail, False
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def init(self, **kwargs: Any) -> None:
        self.calls.append(("init", kwargs))
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(15))
        if self.fail is not None:
            raise self.fail
        self.up = True

    def shutdown(self) -> None:
        self.calls.append(("shutdown", {}))
        self.up = False

    def is_initialized(self) -> bool:
        return self.up


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRay]:
    fake = FakeRay()
    for name in ("init", "shutdown", "is_initialized"):
        monkeypatch.setattr(ray, name, getattr(fake, name))
    if "ray.data" not in sys.modules:  # its import takes seconds; the real one is the integration test's
        monkeypatch.setitem(sys.modules, "ray.data", types.ModuleType("ray.data"))
    ours = signal.getsignal(signal.SIGTERM)
    loggers = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate)
               for n in ray_session.RAY_LOGGERS}
    yield fake
    signal.signal(signal.SIGTERM, ours)
    for name, (handlers, propagate) in loggers.items():  # the next test's Ray logs as before
        found = logging.getLogger(name)
        for handler in list(found.handlers):
            found.removeHandler(handler)
            handler.close()
        for handler in handlers:
            found.addHandler(handler)
        found.propagate = propagate


def test_ray_logs_to_a_file_and_the_commands_handlers_stay(fake: FakeRay, tmp_path: Path) -> None:
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
    with ray_session.ray_session(None, 3, tmp_path) as where:
        assert where == "local" and fake.calls[0][1]["num_cpus"] == 3
        assert signal.getsignal(signal.SIGTERM) is handler  # not Ray's sys.exit(15)
        logging.getLogger("ray").warning("Token authentication is enabled for this Ray cluster.")
        logging.getLogger("ray.data").info("Dataset execution finished")
    assert [c[0] for c in fake.calls] == ["init", "shutdown"]
    logged = (tmp_path / RAY_LOG).read_text(encoding="utf-8")
    assert "Token authentication" in logged and "execution finished" in logged
    for name in ("ray", "ray.data"):
        found = logging.getLogger(name)
        assert not found.propagate and all(isinstance(h, logging.FileHandler) for h in found.handlers)


def test_ray_is_shut_down_when_the_job_is_interrupted(fake: FakeRay, tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), ray_session.ray_session(None, 2, tmp_path):
        raise KeyboardInterrupt
    assert [c[0] for c in fake.calls] == ["init", "shutdown"]


def test_a_ray_that_cannot_start_is_one_line(fake: FakeRay, tmp_path: Path) -> None:
    fake.fail = RuntimeError("Failed to start the GCS server.\nSee the logs")
    with pytest.raises(RayStartError, match=r"^cannot start a local Ray: Failed to start the GCS server\. See"), \
            ray_session.ray_session(None, 2, tmp_path):
        pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_address_nobody_listens_on_is_one_line_in_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    started = time.perf_counter()
    with pytest.raises(RayStartError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        check_address(f"127.0.0.1:{port}")
    assert time.perf_counter() - started < 5
    with pytest.raises(RayStartError, match="want ray://HOST:PORT"):
        check_address("http://head:10001")
    monkeypatch.setattr(ray_session.importlib.util, "find_spec", lambda name: None)  # Ray Client's grpc missing
    with pytest.raises(RayStartError, match=r"pip install 'ray\[client\]'"):
        check_address("ray://head:10001")
    check_address("auto")  # left to Ray: it finds the local cluster or says there is none
