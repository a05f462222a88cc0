"""Fleets (backends/http/fleet.py): dispatch by fewest outstanding, draining, return after a health
check, every request answered once, and the fleet's options on the command line."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from biasatlas.backends.base import BackendError, BackendStopped, BackendWarning, run_requests
from biasatlas.backends.http.client import ChatClient
from biasatlas.backends.http.fleet import FleetClient
from biasatlas.backends.http.usage import format_fleet
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.cli.options import build_options
from biasatlas.records import GenerationSettings, Response
from biasatlas.runner import build_requests

FAST = {"timeout": 5.0, "backoff_initial": 0.02, "fleet_health_every": 60.0}


def fleet(urls: list[str], name: str = "f", **opts: Any) -> OpenAIBackend:
    return OpenAIBackend("stub-model", OpenAIOptions(endpoints=urls, fleet=name, **{**FAST, **opts}))


class Spans:
    """Client-side attempts per request body: (endpoint, start, end), to show none overlap."""

    def __init__(self, backend: OpenAIBackend) -> None:
        self.spans: dict[bytes, list[tuple[int, float, float]]] = defaultdict(list)
        client = backend._client
        assert isinstance(client, FleetClient)
        for ep in client.endpoints:
            self._wrap(ep.index, ep.client)

    def _wrap(self, index: int, client: ChatClient) -> None:
        original = client.attempt

        async def attempt(payload: bytes, *args: Any, **kwargs: Any) -> dict[str, Any]:
            started = time.monotonic()
            try:
                return await original(payload, *args, **kwargs)
            finally:
                self.spans[payload].append((index, started, time.monotonic()))

        client.attempt = attempt  # type: ignore[method-assign]

    def assert_one_at_a_time(self) -> None:
        for payload, spans in self.spans.items():
            spans.sort(key=lambda s: s[1])
            for (_, _, end), (_, start, _) in itertools.pairwise(spans):
                assert end <= start, f"two attempts at once for {payload[:60]!r}: {spans}"


def ask(backend: OpenAIBackend, make_prompts: Any, n: int, mode: str = "generate") -> list[Response]:
    requests = build_requests(make_prompts(n), GenerationSettings(mode=mode, max_tokens=8))
    responses = list(run_requests(backend, requests))
    assert sorted(r.key for r in responses) == sorted(r.cache_key(backend.id) for r in requests)  # each once
    return responses


def ask_and_close(backend: OpenAIBackend, make_prompts: Any, n: int) -> tuple[list[Response], dict[str, Any]]:
    """:func:`ask`, then the backend's run stats; the backend is closed either way."""
    try:
        return ask(backend, make_prompts, n), backend.run_stats()
    finally:
        backend.close()


def answered_once(*servers: Any, n: int) -> None:
    """The stubs answered every prompt exactly once between them (a stub counts complete answers it sent)."""
    total: Counter[str] = Counter()
    for server in servers:
        total.update(server.stats()["answered"])
    assert len(total) == n and set(total.values()) == {1}, total


@pytest.fixture
def servers(stub: Any) -> Iterator[Any]:
    started: list[Any] = []

    def start(*flags: str) -> Any:
        server = stub.start_stub_thread(*flags)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# ---- dispatch --------------------------------------------------------------------------------------
def test_pick_fewest_outstanding_for_its_concurrency_ties_take_turns() -> None:
    loop = asyncio.new_event_loop()

    async def make() -> FleetClient:
        urls = [("http://127.0.0.1:9/v1", 4), ("http://127.0.0.1:10/v1", 2), ("http://127.0.0.1:11/v1", 8)]
        return FleetClient("f", urls, {}, model="m", options=OpenAIOptions(timeout=1, connect_timeout=1))

    client = loop.run_until_complete(make())
    try:
        a, b, c = client.endpoints
        assert {client._pick(set()).index for _ in range(3)} == {0, 1, 2}  # all idle: each in turn
        a.outstanding, b.outstanding, c.outstanding = 2, 0, 1  # loads 0.5, 0, 0.125
        assert client._pick(set()) is b
        b.outstanding = 1  # 0.5 for b, 0.125 for c
        assert client._pick(set()) is c
        c.outstanding = 8  # full: never more than its concurrency
        assert client._pick(set()) in (a, b)
        assert client._pick({0}) is b and client._pick({0, 1}) is None
        b.live = False  # drained
        assert client._pick(set()) is a
        a.outstanding = 4
        assert client._pick(set()) is None
    finally:
        loop.run_until_complete(client.close())
        loop.close()


def test_the_faster_endpoint_gets_more_and_none_exceeds_its_concurrency(servers: Any, make_prompts: Any) -> None:
    fast, slow = servers("--delay", "0.01"), servers("--delay", "0.2")
    backend = fleet([f"{fast.url}#3", f"{slow.url}#2"], structured="off")
    try:
        ask(backend, make_prompts, 80)
        rows = {row["url"]: row for row in backend.run_stats()["fleet"]["endpoints"]}
    finally:
        backend.close()
    assert rows[fast.url]["answered"] > 4 * rows[slow.url]["answered"] > 0
    assert fast.stats()["inflight_max"] <= 3 and slow.stats()["inflight_max"] <= 2
    assert rows[fast.url]["answered"] + rows[slow.url]["answered"] == 80
    latency = rows[slow.url]["latency_s"]
    assert 0.2 <= latency["p50"] <= latency["p95"] and latency["mean"] >= 0.2


def test_choice_scoring_through_a_fleet_matches_one_server(servers: Any, make_prompts: Any) -> None:
    """Full-option scoring asks /apply-template (the server's root) and /completions: each routed to a server."""
    a, b = servers("--apply-template"), servers("--apply-template")
    single = OpenAIBackend("stub-model", OpenAIOptions(base_url=a.url, **FAST))
    many = fleet([a.url, b.url], concurrency=2)
    requests = build_requests(make_prompts(12), GenerationSettings(mode="choice"))

    def probs(backend: OpenAIBackend) -> list[Any]:
        by_key = {r.key: r.option_probs for r in run_requests(backend, requests)}
        return [by_key[r.cache_key(backend.id)] for r in requests]

    try:
        alone, spread = probs(single), probs(many)
        scoring = many.run_stats()["choice_scoring"]
    finally:
        single.close()
        many.close()
    assert scoring["methods"] == {"completions": 12}, scoring
    assert b.stats()["completions"] > 0 and a.stats()["completions"] > 0
    assert spread == alone and all(p is not None for p in spread)


def test_one_plain_server_has_no_fleet_object(stub: Any) -> None:
    with stub.start_stub_thread() as server:
        for opts in ({"base_url": server.url, "concurrency": 5}, {"endpoints": [f"{server.url}#5"]}):
            backend = OpenAIBackend("stub-model", OpenAIOptions(**opts))
            try:
                assert type(backend._client) is ChatClient and backend.fleet is None
                assert backend.options.concurrency == 5 and backend.id == f"openai:stub-model@{server.url}#json"
                assert "fleet" not in backend.run_stats() and "fleet" not in backend.describe()
            finally:
                backend.close()


# ---- draining, moving, coming back ----------------------------------------------------------------
def test_a_failing_endpoint_is_drained_and_every_prompt_answered_once(servers: Any, make_prompts: Any) -> None:
    good = [servers("--delay", "0.005") for _ in range(2)]
    bad = servers("--chat-status", "500")
    backend = fleet([s.url for s in (*good, bad)], concurrency=4, fleet_failures=3)
    spans = Spans(backend)
    responses, stats = ask_and_close(backend, make_prompts, 120)
    assert all(r.ok for r in responses), [r.error for r in responses if not r.ok][:3]
    rows = {row["url"]: row for row in stats["fleet"]["endpoints"]}
    assert rows[bad.url]["answered"] == 0 and rows[bad.url]["drained"] == 1 and not rows[bad.url]["live"]
    assert 3 <= rows[bad.url]["failed"] <= 3 + 8  # the 3 in a row that drained it, and those out with them
    assert "3 failed attempts in a row" in rows[bad.url]["drained_because"]
    assert sum(rows[s.url]["answered"] for s in good) == 120
    assert stats["http"]["answered"] == 120 and stats["http"]["failed"] == 0
    answered_once(*good, n=120)
    spans.assert_one_at_a_time()


def test_a_stalled_endpoint_is_drained_and_its_requests_go_elsewhere(servers: Any, make_prompts: Any) -> None:
    good, hung = servers("--delay", "0.005"), servers("--chat-body", "hang")
    backend = fleet([good.url, hung.url], concurrency=4, fleet_stall=0.4, timeout=30.0)
    spans = Spans(backend)
    started = time.perf_counter()
    responses, stats = ask_and_close(backend, make_prompts, 60)
    seconds = time.perf_counter() - started
    assert all(r.ok for r in responses) and seconds < 5, seconds  # not the 30 s timeout of an attempt
    rows = {row["url"]: row for row in stats["fleet"]["endpoints"]}
    assert rows[hung.url]["drained"] == 1 and "no answer for 0.4 s" in rows[hung.url]["drained_because"]
    assert rows[hung.url]["moved"] >= 1 and rows[hung.url]["answered"] == 0
    assert rows[good.url]["answered"] == 60
    moved = [r for r in responses if (r.info.get("retries") or {}).get("drained")]
    assert len(moved) == rows[hung.url]["moved"]  # the moved requests say so in their info
    assert stats["http"]["retries"] == {"drained": len(moved)}
    answered_once(good, n=60)
    spans.assert_one_at_a_time()


@pytest.mark.parametrize(("settings", "stall"), [
    ({"timeout": 300.0}, 300.0),  # slow generations: an attempt may take 5 minutes, so may a stall
    ({"timeout": 2.0}, 2.0),
    ({}, 60.0),  # the attempt timeout's default
    ({"timeout": 300.0, "fleet_stall": 90.0}, 90.0),  # set: as given
])
def test_a_stall_is_as_long_as_an_attempt_may_take_unless_set(settings: dict[str, float], stall: float) -> None:
    """A stall shorter than the attempt timeout drained servers whose answers were slow but on time,
    cancelling them to be asked again elsewhere, as slowly: with timeout=300 and answers of 90 s,
    no answer could ever finish."""
    loop = asyncio.new_event_loop()

    async def make() -> FleetClient:
        urls = [("http://127.0.0.1:9/v1", 4), ("http://127.0.0.1:10/v1", 4)]
        return FleetClient("f", urls, {}, model="m", options=OpenAIOptions(connect_timeout=1, **settings))

    client = loop.run_until_complete(make())
    try:
        assert client.stall == stall
        assert client.describe(str)["fleet_stall"] == stall  # the run record states the value in force
    finally:
        loop.run_until_complete(client.close())
        loop.close()


class FakeClock:
    """A clock a test moves, and a sleep that moves it (no real time passes)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def on_fake_clock(test: Any) -> None:
    """Run ``await test(client, clock)`` on a fleet of two unreachable servers with the default options."""
    loop = asyncio.new_event_loop()

    async def main() -> None:
        urls = [("http://127.0.0.1:9/v1", 4), ("http://127.0.0.1:10/v1", 4)]
        client = FleetClient("f", urls, {}, model="m", options=OpenAIOptions(connect_timeout=1))
        clock = FakeClock()
        client.clock, client.sleep = clock, clock.sleep  # type: ignore[method-assign,assignment]
        try:
            await test(client, clock)
        finally:
            await client.close()

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def test_a_stall_of_the_default_length_drains_on_a_fake_clock() -> None:
    """The default stall is the attempt timeout, 60 s: checked without waiting a minute."""

    async def test(client: FleetClient, clock: FakeClock) -> None:
        busy, idle = client.endpoints
        busy.outstanding, busy.progress, idle.progress = 2, 0.0, 0.0
        clock.now = 59.9
        client.look_for_stalls()
        assert busy.live and idle.live
        clock.now = 60.1
        client.look_for_stalls()
        assert not busy.live and busy.reason == "no answer for 60 s with 2 requests outstanding"
        assert idle.live  # nothing outstanding: idle is no stall

    on_fake_clock(test)


def test_a_drained_endpoint_is_asked_every_5_s_and_comes_back_on_a_fake_clock() -> None:
    """The default health check: GET /models every 5 s until it lists the model (here the third)."""
    import aiohttp

    async def test(client: FleetClient, clock: FakeClock) -> None:
        ep = client.endpoints[1]
        answers: list[Any] = [aiohttp.ClientConnectionError("refused"), (200, {"data": [{"id": "other"}]}, ""),
                              (200, {"data": [{"id": "m"}]}, "")]

        async def get_json(path: str, timeout: float) -> Any:
            answer = answers.pop(0)
            if isinstance(answer, BaseException):
                raise answer
            return answer

        ep.client.get_json = get_json  # type: ignore[method-assign]
        ep.live, ep.reason = False, "3 failed attempts in a row"
        await client._heal(ep)
        assert clock.slept == [5.0, 5.0, 5.0] and clock.now == 15.0
        assert ep.live and ep.reason is None and ep.progress == 15.0

    on_fake_clock(test)


def test_answers_slower_than_a_short_stall_but_within_the_timeout_drain_nothing(
    servers: Any, make_prompts: Any
) -> None:
    slow_a, slow_b = servers("--delay", "0.3"), servers("--delay", "0.3")
    backend = fleet([slow_a.url, slow_b.url], concurrency=2, timeout=1.0)  # fleet_stall not set
    responses, stats = ask_and_close(backend, make_prompts, 8)
    assert all(r.ok for r in responses)
    assert [row["drained"] for row in stats["fleet"]["endpoints"]] == [0, 0]


def test_a_drained_endpoint_comes_back_after_a_health_check(stub: Any, servers: Any, make_prompts: Any) -> None:
    steady, flaky = servers("--delay", "0.01"), stub.start_stub_thread("--delay", "0.01")
    port = flaky.port
    backend = fleet([steady.url, flaky.url], concurrency=2, fleet_failures=2, fleet_health_every=0.1)
    try:
        flaky.stop()  # down: connections refused, health checks fail
        ask(backend, make_prompts, 30)
        first = {row["url"]: row for row in backend.run_stats()["fleet"]["endpoints"]}
        assert first[flaky.url]["drained"] == 1 and first[flaky.url]["answered"] == 0
        assert not first[flaky.url]["live"]
        back = servers("--delay", "0.01", "--port", str(port))
        requests = build_requests(make_prompts(200)[30:], GenerationSettings(mode="generate", max_tokens=8))
        assert all(r.ok for r in run_requests(backend, requests))
        second = {row["url"]: row for row in backend.run_stats()["fleet"]["endpoints"]}
    finally:
        backend.close()
    assert second[flaky.url]["live"] and second[flaky.url]["drained"] == 0
    assert second[flaky.url]["answered"] > 20, second  # back after its health check, taking its share
    answered_once(steady, back, n=200)


def test_a_refused_answer_format_drains_no_endpoint(servers: Any, make_prompts: Any) -> None:
    """llama-cpp-python answers json_schema with a 500 naming the field: the request's fault, not the server's."""
    a, b = servers("--response-format", "json_object"), servers("--response-format", "json_object")
    backend = fleet([a.url, b.url], concurrency=8, fleet_failures=1)  # a single counted failure would drain
    responses, stats = ask_and_close(backend, make_prompts, 40)
    assert all(r.ok for r in responses)
    assert all(row["drained"] == 0 and row["live"] for row in stats["fleet"]["endpoints"]), stats["fleet"]
    assert stats["structured"]["structured"] == 40


def test_every_endpoint_drained_and_none_back_stops_the_run(stub: Any, make_prompts: Any) -> None:
    gone = [stub.start_stub_thread() for _ in range(2)]
    for server in gone:
        server.stop()
    backend = fleet([s.url for s in gone], check=False, max_wait=1.0, fleet_failures=2, fleet_health_every=0.2)
    started = time.perf_counter()
    try:
        requests = build_requests(make_prompts(20), GenerationSettings(mode="generate", max_tokens=8))
        with pytest.raises(BackendStopped, match=r"no answer for 1 s \(max-wait\)") as stopped:
            list(run_requests(backend, requests))
        rows = backend.run_stats()["fleet"]["endpoints"]
    finally:
        backend.close()
    assert time.perf_counter() - started < 5
    assert "every endpoint of fleet f is drained" in stopped.value.reason or "connection" in stopped.value.reason
    assert all(row["drained"] >= 1 and not row["live"] for row in rows)


def test_setup_one_endpoint_down_starts_drained_all_down_is_one_line(stub: Any, servers: Any) -> None:
    up = servers()
    down = stub.start_stub_thread()
    down.stop()
    with pytest.warns(BackendWarning, match="failed its setup check"):
        backend = fleet([up.url, down.url])
    try:
        described = {e["url"]: e for e in backend.describe()["endpoints"]}
        assert described[down.url]["setup"].startswith(f"no server at {down.url}")
        assert "setup" not in described[up.url]
    finally:
        backend.close()
    with pytest.raises(BackendError, match=r"no endpoint of fleet 'f' passes the setup check: no server at") as err:
        fleet([down.url])
    assert "\n" not in str(err.value)


def test_describe_and_id_name_the_fleet_not_the_hosts(servers: Any) -> None:
    a, b = servers(), servers()
    one = fleet([f"https://user:hunter2@127.0.0.1:{a.port}/v1#3"], check=False)
    two = fleet([a.url, f"{b.url}#5"], concurrency=7)
    try:
        assert one.id == two.id == "openai:stub-model@fleet:f#json"
        described = two.describe()
        assert described["fleet"] == "f" and described["base_url"] is None and described["concurrency"] == 12
        assert [(e["url"], e["concurrency"]) for e in described["endpoints"]] == [(a.url, 7), (b.url, 5)]
        assert "hunter2" not in str(one.describe()) and "user" not in str(one.describe())
    finally:
        one.close()
        two.close()


# ---- the command line ---------------------------------------------------------------------------
def values(**given: Any) -> dict[str, Any]:
    return {"study": ".", "model": "openai:m", **given}


def test_cli_several_base_urls_need_a_fleet_name() -> None:
    with pytest.raises(typer.BadParameter, match=r"--base-url is given 2 times: .* name it with --fleet NAME"):
        build_options(values(base_url=["http://a:1/v1", "http://b:1/v1"]))
    backend = build_options(values(base_url=["http://a:1/v1#16", "http://b:1/v1"], fleet="gpu", concurrency=4)).backend
    assert backend.fleet == "gpu" and backend.base_url is None
    assert [(e.url, e.concurrency) for e in backend.endpoints] == [("http://a:1/v1", 16), ("http://b:1/v1", None)]
    single = build_options(values(base_url=["http://a:1/v1"], fleet="gpu")).backend  # a fleet of one, to grow
    assert single.fleet == "gpu" and [e.url for e in single.endpoints] == ["http://a:1/v1"]


def test_cli_one_base_url_is_a_plain_server() -> None:
    plain = build_options(values(base_url=["http://a:1/v1#8"], concurrency=2)).backend
    assert (plain.base_url, plain.endpoints, plain.fleet, plain.concurrency) == ("http://a:1/v1", [], None, 8)
    assert build_options(values(base_url="http://a:1/v1")).backend.base_url == "http://a:1/v1"


@pytest.mark.parametrize(("given", "words"), [
    ({"base_url": ["http://u:hunter2@a:1/v1#x"], "fleet": "f"}, "--base-url 'http://a:1/v1': the part after '#'"),
    ({"base_url": ["a:1/v1", "b:1/v1"], "fleet": "f"}, "--base-url 'a:1/v1': an endpoint URL must start with http"),
    ({"base_url": ["http://a:1/v1"], "fleet": "my fleet"}, "--fleet 'my fleet': 1-64 letters, digits"),
    ({"fleet": "f"}, "--fleet 'f': give its servers with --base-url"),
])
def test_cli_bad_fleet_input_is_one_line_without_credentials(given: dict[str, Any], words: str) -> None:
    with pytest.raises(typer.BadParameter) as err:
        build_options(values(**given))
    assert str(err.value).startswith(words) and "\n" not in str(err.value) and "hunter2" not in str(err.value)


def test_format_fleet_one_line() -> None:
    fleet_info = {"name": "gpu", "endpoints": [
        {"url": "http://a:1/v1", "answered": 282, "failed": 0, "moved": 0, "drained": 0, "live": True,
         "latency_s": {"mean": 0.036, "p50": 0.0349, "p95": 0.043}},
        {"url": "http://b:1/v1", "answered": 36, "failed": 4, "moved": 2, "drained": 1, "live": False,
         "latency_s": None}]}
    assert format_fleet(fleet_info) == ("fleet gpu: http://a:1/v1 282 answered (p50 35 ms); http://b:1/v1 36 answered, "
                                        "4 failed, 2 moved, drained 1x, drained at the end")


def test_summary_notes_name_each_server_of_a_fleet() -> None:
    from biasatlas.backends.http.usage import run_notes

    fleet = {"name": "pool", "endpoints": [{"url": "http://a:1/v1", "answered": 5, "latency_s": {"p50": 0.05}},
                                           {"url": "http://b:1/v1", "answered": 3, "latency_s": None, "moved": 2}]}
    notes = run_notes({"info": {"fleet": fleet}})
    assert notes == ["fleet pool: http://a:1/v1 5 answered (p50 50 ms); http://b:1/v1 3 answered, 2 moved"]


def test_a_server_that_fails_its_setup_check_is_announced(stub: Any, servers: Any) -> None:
    """The run goes on without that server: the user must be told, not find it in the run record later."""
    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    up = servers()
    down = stub.start_stub_thread()
    down.stop()
    with pytest.warns(BackendWarning, match=rf"fleet f: {down.url} failed its setup check \(no server at"):
        fleet([up.url, down.url]).close()
    with tempfile.TemporaryDirectory() as study:
        result = CliRunner().invoke(app, ["run", "contact", "--study", study, "--model", "openai:stub-model",
                                          "--base-url", up.url, "--base-url", down.url, "--fleet", "f",
                                          "--limit", "6", "--no-progress"])
    assert result.exit_code == 0, result.output
    lines = [x for x in result.output.splitlines() if x.startswith("warning: fleet")]
    assert len(lines) == 1 and down.url in lines[0] and "drained" in lines[0] and up.url not in lines[0]
