"""The HTTP client's JSON: request bodies read back as the value sent, answers parsed as json.loads."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from biasatlas.backends.http.client import encode_body, parse_json

# Written from JSON's rules, not from the encoder: each body, the value a server reads back from the bytes.
BODIES = [
    ({"model": "m", "messages": [{"role": "user", "content": "Ça va? 🙂 \u0007 \n \"quoted\" </script>"}],
      "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 20}, None),
    ({"model": "m", "temperature": 0.7, "top_p": 1e-05, "seed": 2**40, "stop": None,
      "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {"enum": ["Oui", "日本"]}}}},
     None),
    ({"model": "m", "seed": 2**70, "n": -(2**64)}, None),  # integers past 64 bits, exactly
    ({"model": "m", "logit_bias": {1234: -100, 5: 2.5}}, {"model": "m", "logit_bias": {"1234": -100, "5": 2.5}}),
    ({"model": "m", "messages": ("a", "b"), "content": "nullable null"}, {"model": "m", "messages": ["a", "b"],
                                                                         "content": "nullable null"}),
    ({"model": "m", "temperature": 0.1 + 0.2, "top_p": 5e-324, "x": 1.7976931348623157e308}, None),
]


@pytest.mark.parametrize(("body", "read_back"), BODIES)
def test_a_request_body_reads_back_as_the_same_json_value(body: dict[str, Any], read_back: Any) -> None:
    raw = encode_body(body)
    assert isinstance(raw, bytes)
    got = json.loads(raw.decode("utf-8"))  # strict UTF-8 JSON, as a server reads it
    assert got == (body if read_back is None else read_back)
    assert json.dumps(got) == json.dumps(body if read_back is None else read_back)  # same types (1 is not 1.0)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_body_with_a_non_finite_number_is_refused_not_sent_as_null(value: float) -> None:
    # NaN/Infinity are not JSON: a server would refuse them, and sent as null it would take its default instead
    with pytest.raises(ValueError, match="JSON"):
        encode_body({"model": "m", "temperature": value})


@pytest.mark.parametrize("raw", [
    b'{"choices": [{"logprobs": {"content": [{"token": "Yes", "logprob": -0.4620981203732969}]}}], "n": 3}',
    b'{"a": 1.0, "b": -0, "c": 1e-7, "d": "\\u00e9\\ud83d\\ude42", "e": [true, false, null], "a": 2}',
    b'{"big": 123456789012345678901234567890, "neg": -99999999999999999999}',  # past 64 bits
    b'{"x": NaN, "y": Infinity, "z": -Infinity, "w": 1e400}',  # the standard module's extensions
    b'{"edge": -9223372036854775809, "u64": 18446744073709551615, "f": 0.46209812037329690123}',
    b'{"t": "\\ud83d alone", "digits": "1234567890123456789012"}',  # a lone surrogate; digits in a string
    '{"text": "UTF-16 with a BOM"}'.encode("utf-16"),
])
def test_answers_parse_to_what_json_loads_gives(raw: bytes) -> None:
    got, want = parse_json(raw), json.loads(raw)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    assert got.get("big") == want.get("big") and got.get("edge") == want.get("edge")
    if "x" in want:
        assert math.isnan(got["x"]) and got["y"] == got["w"] == math.inf


@pytest.mark.parametrize("raw", [b"", b"<html>", b'{"a": 1', b"\xff\xfe\x00garbage"])
def test_what_json_loads_refuses_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises(ValueError):
        parse_json(raw)


def test_an_attempt_times_out_after_the_client_timeout(stub: Any) -> None:
    """The attempt's limit is a shared timer (bridge.Deadlines), not aiohttp's: it still holds, about on time."""
    import asyncio
    import time

    from biasatlas.backends.http.client import ChatClient, Retryable, RetryPolicy

    async def main() -> tuple[list[Any], float]:
        client = ChatClient(server.url, {}, concurrency=4, timeout=0.4, connect_timeout=5, policy=RetryPolicy())
        started = time.monotonic()
        try:
            body = encode_body({"model": "m", "messages": [{"role": "user", "content": "x"}]})
            attempts = asyncio.gather(*(client.attempt(body) for _ in range(3)), return_exceptions=True)
            out = await asyncio.wait_for(attempts, 5)  # no limit at all: fails here, not hangs
        finally:
            await client.close()
        return out, time.monotonic() - started

    with stub.start_stub_thread("--chat-body", "hang") as server:
        out, seconds = asyncio.run(main())
    assert all(isinstance(e, Retryable) and e.cause == "timeout" and "within 0.4 s" in str(e) for e in out), out
    assert 0.4 <= seconds < 1.5
