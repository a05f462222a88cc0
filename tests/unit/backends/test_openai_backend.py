"""The OpenAI-compatible backend against a local stub server (a subprocess on 127.0.0.1)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.usage import study_usage
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

FAKE_KEY = "sk-biasatlas-test-KEY-7f3c9a1e5d"


def prompts(n: int, options: tuple[str, ...] = ("Yes", "No")) -> list[Prompt]:
    return [
        Prompt(
            probe="http",
            language="en",
            options=options,
            meta={"i": i},
            messages=(Message(role="user", content=f"Would you help person {i}? Answer Yes or No."),),
        )
        for i in range(n)
    ]


def backend(stub: Any, **opts: Any) -> OpenAIBackend:
    defaults: dict[str, Any] = {
        "base_url": stub.url,
        "concurrency": 16,
        "timeout": 2.0,
        "backoff_initial": 0.02,
    }
    return OpenAIBackend("stub-model", OpenAIOptions(**{**defaults, **opts}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def stub() -> Any:
    with stub_mod.start_stub_thread() as server:
        yield server


# ---- setup checks: one clear line ---------------------------------------------------------
def test_no_key_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match=r"no API key: set the environment variable OPENAI_API_KEY"):
        OpenAIBackend("gpt-4o-mini", OpenAIOptions())


def test_unreachable_url() -> None:
    with pytest.raises(BackendError, match=r"^no server at http://127\.0\.0\.1:\d+/v1: is it running\? check"):
        OpenAIBackend("m", OpenAIOptions(base_url=f"http://127.0.0.1:{free_port()}/v1"))


def test_bad_scheme() -> None:
    with pytest.raises(BackendError, match="must start with http"):
        OpenAIBackend("m", OpenAIOptions(base_url="localhost:8000/v1"))


def test_unknown_model_names_the_offered_ones(stub: Any) -> None:
    with pytest.raises(BackendError, match=r"unknown model 'no-such-model'.*offers: stub-model"):
        OpenAIBackend("no-such-model", OpenAIOptions(base_url=stub.url))


def test_server_that_does_not_speak_the_api() -> None:
    with (
        stub_mod.start_stub_thread("--personality", "html") as html,
        pytest.raises(BackendError, match="not an OpenAI-compatible endpoint"),
    ):
        OpenAIBackend("stub-model", OpenAIOptions(base_url=html.url))


def test_rejected_key_is_one_line_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIASATLAS_TEST_KEY", FAKE_KEY)
    with (
        stub_mod.start_stub_thread("--key", "the-right-key") as locked,
        pytest.raises(BackendError) as info,
    ):
        OpenAIBackend("stub-model", OpenAIOptions(base_url=locked.url, api_key_env="BIASATLAS_TEST_KEY"))
    message = str(info.value)
    assert "rejected the API key from $BIASATLAS_TEST_KEY" in message
    assert FAKE_KEY not in message and "\n" not in message


# ---- answers ------------------------------------------------------------------------------
def test_generate_answers_come_from_the_server(stub: Any, tmp_path: Path) -> None:
    b = backend(stub, structured="off")
    ps = prompts(40)
    with Store(tmp_path) as store:
        totals = run_plan(ps, b, store, GenerationSettings(mode="generate", max_tokens=4), progress=False)
        frame = store.frame("http")
        run = store.last_run("http")
    b.close()
    assert (totals.new, totals.failed) == (40, 0)
    expected = {p.id: stub_mod.expected_answer([m.model_dump() for m in p.messages]) + "." for p in ps}
    assert dict(zip(frame["prompt_id"], frame["text"], strict=True)) == expected
    assert frame["prompt_tokens"].notna().all() and (frame["completion_tokens"] == 2).all()
    assert run is not None
    http = run["totals"]["info"]["http"]
    assert http["requests"] == 40 and http["attempts"] == 40 and http["completion_tokens"] == 80
    assert run["config"]["backend"]["base_url"] == stub.url  # recorded, without any key


def test_choice_probabilities_from_top_logprobs(stub: Any, tmp_path: Path) -> None:
    b = backend(stub, price_prompt=1.0, price_completion=4.0)
    ps = prompts(30)
    with Store(tmp_path) as store:
        totals = run_plan(ps, b, store, GenerationSettings(mode="choice"), progress=False)
        frame = store.frame("http")
        usage = study_usage(store)
    b.close()
    assert "choice_fallback" not in totals.info
    for p, probs in zip(frame["prompt_id"], frame["option_probs"], strict=True):
        prompt = next(q for q in ps if q.id == p)
        want = stub_mod.p_yes(stub_mod.prompt_digest([m.model_dump() for m in prompt.messages]))
        # The stub gives "Yes"+" yes" 0.9 p and "No"+" no" 0.9 (1 - p): normalised, exactly p.
        assert probs["Yes"] == pytest.approx(want, abs=1e-6)
    http = usage[b.id]
    assert http["completion_tokens"] == 30
    assert http["cost_usd"] == pytest.approx((http["prompt_tokens"] * 1.0 + 30 * 4.0) / 1e6)


def test_choice_falls_back_to_generate_without_logprobs(tmp_path: Path) -> None:
    with stub_mod.start_stub_thread("--no-logprobs") as plain:
        b = backend(plain)
        with Store(tmp_path) as store:
            totals = run_plan(prompts(20), b, store, GenerationSettings(mode="choice"), progress=False)
            frame = store.frame("http")
        b.close()
    assert "no logprobs" in totals.info["choice_fallback"]
    assert totals.info["http"]["choice_fallbacks"] == 20
    assert frame["option_probs"].isna().all()
    assert set(frame["text"]) <= {"Yes.", "No."}


def test_choice_falls_back_when_logprobs_are_refused(tmp_path: Path) -> None:
    with stub_mod.start_stub_thread("--refuse-logprobs") as strict:
        b = backend(strict)
        with Store(tmp_path) as store:
            totals = run_plan(prompts(10), b, store, GenerationSettings(mode="choice"), progress=False)
        b.close()
    assert totals.new == 10 and totals.failed == 0
    assert "refused logprobs" in totals.info["choice_fallback"]


def test_max_completion_tokens_when_the_server_asks_for_it(tmp_path: Path) -> None:
    with stub_mod.start_stub_thread("--new-params") as strict:
        b = backend(strict)
        with Store(tmp_path) as store:
            totals = run_plan(prompts(10), b, store, GenerationSettings(max_tokens=3), progress=False)
        b.close()
    assert totals.new == 10 and totals.failed == 0
    assert totals.info["http"]["attempts"] <= 10 + 16  # renamed once per request in flight, then kept


def test_ambiguous_options_fall_back_with_a_reason(stub: Any, tmp_path: Path) -> None:
    b = backend(stub)
    ps = prompts(3, options=("Strongly agree", "Strongly disagree"))
    with Store(tmp_path) as store:
        totals = run_plan(ps, b, store, GenerationSettings(mode="choice"), progress=False)
    b.close()
    assert "share their first word" in totals.info["choice_fallback"]


# ---- faults -------------------------------------------------------------------------------
def test_retries_count_every_fault_the_server_injected(tmp_path: Path) -> None:
    with stub_mod.start_stub_thread("--faults", "0.3", "--slow-delay", "0.75", "--seed", "7") as faulty:
        b = backend(faulty, timeout=0.25, max_retries=10)
        with Store(tmp_path) as store:
            totals = run_plan(prompts(200), b, store, GenerationSettings(mode="choice"), progress=False)
            answered = store.response_count()
        injected = faulty.stats()["faults"]
        b.close()
    assert (totals.new, totals.failed, answered) == (200, 0, 200)
    http = totals.info["http"]
    names = {
        "429": "http_429",
        "500": "http_500",
        "503": "http_503",
        "slow": "timeout",
        "drop": "connection",
        "malformed": "malformed_json",
        "empty": "empty_choices",
    }
    counted = {names[k]: v for k, v in injected.items()}
    assert http["retries"] == counted
    assert http["attempts"] == 200 + sum(counted.values()) + 1  # and the /apply-template probe


def test_given_up_requests_are_errors_and_the_next_run_asks_again(tmp_path: Path) -> None:
    ps = prompts(10)
    with stub_mod.start_stub_thread("--faults", "1.0", "--slow-delay", "1") as broken:
        b = backend(broken, timeout=0.3, max_retries=1)
        with Store(tmp_path) as store:
            first = run_plan(ps, b, store, GenerationSettings(), progress=False)
            assert store.response_count() == 0 and store.error_count() == first.failed >= 1
        b.close()
    # Every request failing, but 10 are too few for a failure rate and given up within max-wait: each is an
    # error (issue 24: the breaker no longer decides on the first five requests finished).
    assert first.status == "complete_with_errors" and first.failed == 10
    assert sum(first.info["http"]["failures"].values()) >= first.failed
    with stub_mod.start_stub_thread() as healthy:
        b = backend(healthy)
        with Store(tmp_path) as store:
            second = run_plan(ps, b, store, GenerationSettings(), progress=False)
            assert store.response_count() == 10
        b.close()
    assert (second.new, second.failed, second.cached) == (10, 0, 0)


def test_key_is_sent_but_never_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIASATLAS_TEST_KEY", FAKE_KEY)
    with stub_mod.start_stub_thread("--key", FAKE_KEY) as locked:
        b = backend(locked, api_key_env="BIASATLAS_TEST_KEY")
        with Store(tmp_path / "ok") as store:
            totals = run_plan(prompts(5), b, store, GenerationSettings(), progress=False)
        b.close()
        assert totals.new == 5  # the server accepted the key
        # A wrong key per request: the server echoes it in every 401, the errors must not.
        monkeypatch.setenv("BIASATLAS_TEST_KEY", FAKE_KEY + "-wrong")
        b = backend(locked, api_key_env="BIASATLAS_TEST_KEY", check=False)
        with Store(tmp_path / "bad") as store:
            bad = run_plan(prompts(5), b, store, GenerationSettings(), progress=False)
            errors = [r[0] for r in store.conn.execute("SELECT error FROM errors")]
        b.close()
    assert bad.status == "stopped" and "HTTP 401" in bad.info["stop_reason"]  # a rejected key stops the run
    assert bad.failed >= 1 and all("HTTP 401" in e and "***" in e for e in errors)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert FAKE_KEY.encode() not in file.read_bytes(), file


def test_thread_mode_gives_the_same_answers(stub: Any, tmp_path: Path) -> None:
    ps = prompts(30)
    texts = []
    for mode in ("inline", "thread"):
        b = backend(stub, loop=mode)
        with Store(tmp_path / mode) as store:
            run_plan(ps, b, store, GenerationSettings(mode="choice"), progress=False)
            texts.append(sorted(zip(*(store.frame("http")[c] for c in ("prompt_id", "text")), strict=True)))
        b.close()
    assert texts[0] == texts[1]


def test_requests_per_minute_limit_is_kept(stub: Any, tmp_path: Path) -> None:
    b = backend(stub, rpm=2400)  # 40 a second, one second's worth at once
    started = time.perf_counter()
    with Store(tmp_path) as store:
        run_plan(prompts(52), b, store, GenerationSettings(), progress=False)
    elapsed = time.perf_counter() - started
    b.close()
    assert elapsed >= 0.28  # 40 at once, then 12 more at 40/s


# ---- CLI settings ---------------------------------------------------------------------------
def test_http_settings_reach_the_options(stub: Any) -> None:
    import typer

    from biasatlas.backends.options import BackendOptions
    from biasatlas.cli.common import open_backend

    spec = {"model": "openai:stub-model", "base_url": stub.url}
    b = open_backend(BackendOptions(**spec, http=["timeout=0.5", "price-prompt=0.15", "rpm=60"], choice_norm="mean"))
    assert isinstance(b, OpenAIBackend)
    assert (b.options.timeout, b.options.price_prompt, b.options.rpm) == (0.5, 0.15, 60)
    assert (b.options.choice_norm, b.options.structured) == ("mean", "auto")
    b.close()
    with pytest.raises(typer.Exit):
        open_backend(BackendOptions(**spec, http=["speed=11"]))
    with pytest.raises(typer.Exit):
        open_backend(BackendOptions(**spec, http=["timeout=-1"]))


def test_parse_settings_names_the_valid_ones() -> None:
    from biasatlas.backends.openai_compat import parse_settings

    assert parse_settings(["max_retries=2", "tpm = 1000"]) == {"max_retries": "2", "tpm": "1000"}
    with pytest.raises(BackendError, match="NAME one of timeout"):
        parse_settings(["timeout"])
