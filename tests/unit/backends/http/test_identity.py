"""The HTTP backend id: model and server, normalised, never credentials."""

from __future__ import annotations

import pytest

from biasatlas.backends.http.identity import backend_id, endpoint, fleet_id


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("HTTP://LocalHost:8000/v1", "http://localhost:8000/v1"),
        ("http://localhost/v1", "http://localhost:80/v1"),
        ("http://localhost:80/v1", "http://localhost:80/v1"),
        ("https://api.openai.com/v1", "https://api.openai.com:443/v1"),
        ("https://api.openai.com:443/v1/", "https://api.openai.com:443/v1"),
        ("https://user:secret@Example.org:8443/openai/v1?x=1#frag", "https://example.org:8443/openai/v1"),
        ("http://key@host:9000/", "http://host:9000"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("http://host:8000/Path/V1", "http://host:8000/Path/V1"),  # paths are case-sensitive
    ],
)
def test_endpoint_is_normalised(url: str, expected: str) -> None:
    assert endpoint(url) == expected


def test_credentials_never_reach_the_id() -> None:
    bid = backend_id("m", "https://alice:hunter2@host.example:8443/v1")
    assert "alice" not in bid and "hunter2" not in bid
    assert bid == "openai:m@https://host.example:8443/v1"


def test_two_servers_two_ids_one_server_one_id() -> None:
    assert backend_id("m", "http://a:8000/v1") != backend_id("m", "http://b:8000/v1")
    assert backend_id("m", "http://a:8000/v1") != backend_id("m", "http://a:8001/v1")
    assert backend_id("m", "http://a:8000/v1") != backend_id("m", "http://a:8000/v2")
    assert backend_id("m", "http://A:8000/v1/") == backend_id("m", "http://a:8000/v1")
    assert backend_id("m", "http://a/v1") == backend_id("m", "http://a:80/v1")


def test_flags_follow_a_hash() -> None:
    assert backend_id("m", "http://a:1/v1", ["json", "mean"]) == "openai:m@http://a:1/v1#json,mean"
    assert backend_id("m", "http://a:1/v1", []) == "openai:m@http://a:1/v1"


def test_a_fleet_is_named_by_model_and_fleet_not_hosts() -> None:
    assert fleet_id("m", "gpu-a") == "openai:m@fleet:gpu-a"
    assert fleet_id("m", "gpu-a", ["json", "first"]) == "openai:m@fleet:gpu-a#json,first"
    assert fleet_id("m", "gpu-a") != fleet_id("m", "gpu-b") != fleet_id("n", "gpu-b")
    assert fleet_id("m", "a") != backend_id("m", "http://a:80/v1")  # a fleet never shares a single server's cache


def test_fleet_backend_id_keeps_across_servers_and_flags_still_count() -> None:
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions

    def bid(urls: list[str], **opts: object) -> str:
        backend = OpenAIBackend("m", OpenAIOptions(endpoints=urls, fleet="f", check=False, **opts))  # type: ignore[arg-type]
        try:
            return backend.id
        finally:
            backend.close()

    one = bid(["http://a:8000/v1"])
    assert one == bid(["http://a:8000/v1", "http://b:8000/v1#8"]) == bid(["http://c:1/v1"]) == "openai:m@fleet:f#json"
    assert bid(["http://a:8000/v1"], structured="off") == "openai:m@fleet:f"
    assert bid(["http://a:8000/v1"], choice_norm="mean") == "openai:m@fleet:f#json,mean"
