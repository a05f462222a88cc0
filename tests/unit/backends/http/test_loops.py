"""Which event loop runs the HTTP requests: uvloop where installed, the standard library's when asked."""

from __future__ import annotations

import asyncio

import pytest

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.loops import InlineLoop, LoopThread, event_loop_name, new_event_loop


def made_loop() -> tuple[str, str]:
    """(event_loop_name, the module of its class) of a fresh loop from new_event_loop, closed again."""
    loop = new_event_loop()
    try:
        return event_loop_name(loop), type(loop).__module__
    finally:
        loop.close()


def test_uvloop_by_default_where_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv("BIASATLAS_EVENT_LOOP", raising=False)
    assert made_loop()[0] == "uvloop"


@pytest.mark.parametrize("asked", ["asyncio", " AsyncIO "])
def test_the_standard_loop_when_asked(monkeypatch: pytest.MonkeyPatch, asked: str) -> None:
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", asked)
    name, module = made_loop()
    assert name == "asyncio"
    assert module.startswith("asyncio")


def test_a_loop_name_it_does_not_know_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", "trio")
    with pytest.raises(BackendError, match=r"BIASATLAS_EVENT_LOOP='trio': expected auto, uvloop or asyncio"):
        new_event_loop()


def test_uvloop_asked_but_missing_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_uvloop(name: str, *args: object, **kwargs: object) -> object:
        if name == "uvloop":
            raise ImportError("No module named 'uvloop'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_uvloop)
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", "uvloop")
    with pytest.raises(BackendError, match="uvloop is not installed"):
        new_event_loop()
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", "auto")  # auto falls back to the standard loop
    assert made_loop()[0] == "asyncio"


@pytest.mark.parametrize("loop_name", ["uvloop", "asyncio"])
@pytest.mark.parametrize("runner_class", [InlineLoop, LoopThread])
def test_both_runners_run_on_the_loop_asked(
    monkeypatch: pytest.MonkeyPatch, runner_class: type[InlineLoop] | type[LoopThread], loop_name: str
) -> None:
    if loop_name == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", loop_name)
    runner = runner_class()
    try:
        assert event_loop_name(runner.loop) == loop_name

        async def answer() -> int:
            await asyncio.sleep(0.001)
            return 42

        assert runner.call(answer(), timeout=5) == 42
    finally:
        runner.stop()


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("kind", ["uvloop", "asyncio"])
def test_stopping_a_loop_an_interrupt_left_running_does_not_hide_the_interrupt(
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A Ctrl-C raised inside the loop's own bookkeeping (uvloop's ``_pause_signals``) can leave the inline loop
    marked running; closing the backend then must not raise "this event loop is already running" in place of
    the KeyboardInterrupt (CI run of test_signals, 2026-11-27: exit 1 with a traceback instead of 130)."""
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", kind)
    inline = InlineLoop()

    async def sleeper() -> None:
        await asyncio.sleep(3600)

    task = inline.loop.create_task(sleeper())

    async def closing() -> None:
        pass

    async def stop_while_running() -> None:
        await asyncio.sleep(0)
        # the loop is running here, as after such an interrupt: closing the client is refused cleanly (no
        # "coroutine was never awaited"), and stop() does not raise
        with pytest.raises(BackendError, match="interrupted"):
            inline.call(closing())
        inline.stop()

    inline.loop.run_until_complete(stop_while_running())
    assert task.cancelling() or task.cancelled()  # its tasks are cancelled all the same
    inline.stop()  # once the loop has returned, stop() finishes the job
    assert inline.loop.is_closed() and task.cancelled()
