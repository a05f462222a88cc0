"""What goes over the wire to an OpenAI-compatible server: request bodies out, answers in.

Request bodies as compact JSON (:func:`encode_body`), answers parsed as ``json.loads`` would
(:func:`parse_json`), a response body read up to a cap (:func:`read_body`), the text a chat answer
must hold (:func:`missing_text`), a server's error message and its ``Retry-After``.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import aiohttp
import orjson

# The slow path of encode_body: what orjson cannot write, or may have written as null.
_BODY_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as POSTed: compact UTF-8 JSON, by orjson (0.7 µs a chat body against 4.4 for ``json``).

    Bodies whose JSON holds ``null`` go through the standard module instead: orjson writes NaN and
    infinities as ``null`` (a server would then apply its default: a silently different request),
    where the standard module with ``allow_nan=False`` refuses them (ValueError). The same for
    what orjson cannot write (integers past 64 bits, non-string keys): the value sent is the same.
    """
    try:
        raw: bytes | None = orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError: past 64 bits, a key that is not a string...
        raw = None
    if raw is not None and b"null" not in raw:  # (a null of the body's own, or the word in a message: slow path)
        return raw
    try:
        return _BODY_ENCODER.encode(body).encode("utf-8")
    except ValueError as exc:
        raise ValueError(f"the request body is not JSON: {exc}") from exc


# 19 digits in a row: maybe an integer past 64 bits, which orjson would read as a float. Found as
# a run of 19 ones in the text with digits mapped to 1 and the rest to 0 (a regular expression took
# 10 µs on an answer's long floats, translate and a substring search take 1).
_DIGIT_ONES = bytes(1 if 48 <= i <= 57 else 0 for i in range(256))
_LONG_RUN = b"\x01" * 19


def parse_json(body: bytes) -> Any:
    """``json.loads(body)``, the same value, by orjson (3x faster on an answer) where it can.

    orjson refuses some of what the standard module takes (NaN, 1e400, UTF-16 text, lone
    surrogates...) and reads integers past 64 bits as floats: the first go to ``json.loads`` when
    orjson fails, the second when a run of 19 digits is in the text, so what is accepted and
    what it parses to do not change (tests compare the two).
    """
    if _LONG_RUN not in body.translate(_DIGIT_ONES):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


def missing_text(choice: dict[str, Any]) -> str | None:
    """Why a chat answer's first ``choice`` holds no text (None: it does). An empty string is text; a
    ``message`` that is null or no object, or a ``content`` that is null, an object or a list, is not."""
    message = choice.get("message")
    if not isinstance(message, dict):
        return f"the answer has no text (message: {_kind(message)})"
    content = message.get("content")
    if not isinstance(content, str):
        return f"the answer has no text (message.content: {_kind(content)})"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return "an object" if isinstance(value, dict) else type(value).__name__


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


class BodyTooLarge(Exception):
    """A response body past the client's ``max_body`` (the message says so, and how to raise it)."""


async def read_body(resp: aiohttp.ClientResponse, cap: int) -> bytes:
    """The response body, or :class:`BodyTooLarge` once it passes ``cap`` bytes: a declared length past
    it at once, an endless or compressed body as soon as what was read (decompressed) passes it."""
    length = resp.content_length
    if length is not None and length > cap:
        raise BodyTooLarge(_too_large(cap, f"{length} bytes declared"))
    if length is not None and not resp.headers.get("Content-Encoding"):
        return await resp.read()  # exactly the declared length: the quick way of nearly every answer
    body = bytearray()
    async for chunk in resp.content.iter_any():
        body += chunk
        if len(body) > cap:
            raise BodyTooLarge(_too_large(cap, "more read, the rest not"))
    return bytes(body)


def _too_large(cap: int, what: str) -> str:
    from biasatlas.backends.http.options import format_size

    return (f"the answer is larger than max_body {format_size(cap)} ({what}): "
            f"--http max_body=SIZE raises it for answers this long")


def html_summary(text: str) -> str | None:
    """An HTML page in one short phrase (its title or first heading), or None when ``text`` is no HTML page:
    a web server's error page is not pasted into an error line."""
    import html
    import re

    head = text.lstrip()[:200].lower()
    if not (head.startswith(("<!doctype html", "<html", "<head", "<body", "<?xml")) or "<html" in head):
        return None
    found = re.search(r"<(title|h1)[^>]*>(.*?)</\1>", text, re.IGNORECASE | re.DOTALL)
    # no title or heading: the page's own text (scripts and styles left out), e.g. "<html>Bad gateway</html>"
    shown = found[2] if found else re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.I | re.S)
    words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", shown)).split())
    return f"an HTML page ({clip(words, 80)})" if words else "an HTML page"


def error_message(status: int, body: bytes) -> str:
    """The server's own error message when it sends one (OpenAI's ``{"error": {"message"}}``), at most
    300 characters of it on one line, a longer one shortened where a word ends (and `` …`` says so); an HTML
    error page as its title."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        page = html_summary(text)
        if page is not None:
            return f"HTTP {status}: {page}"
        return f"HTTP {status}: {clip(' '.join(text.split()))}" if text else f"HTTP {status}"
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or err
        if err:
            return f"HTTP {status}: {clip(str(err))}"
    return f"HTTP {status}: {clip(text)}"


def clip(text: str, size: int = 300) -> str:
    """``text``, or its first words within ``size`` characters and `` …``: never a word cut in two."""
    if len(text) <= size:
        return text
    head = text[: size - 1]
    cut = head.rfind(" ")
    return (head[:cut] if cut > size // 2 else head).rstrip() + " …"
