"""The OpenAI Batch file formats: input lines written in parts, output lines read one by one.

Input: ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` per line (OpenAI's
Batch API, vLLM's ``run_batch``). Output: ``{"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}`` per line, in any order; a line that cannot be read is reported
with its file and line number and the rest of the file is still read.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the most requests one OpenAI Batch input file may hold
OPENAI_MAX_LINES = 50_000


def write_parts(lines: Iterable[dict[str, Any]], out: Path, max_lines: int, stem: str = "batch") -> list[Path]:
    """Write the lines as JSONL files of at most ``max_lines`` lines each: ``{stem}-00001.jsonl``..."""
    if max_lines < 1:
        raise ValueError(f"max_lines must be at least 1, got {max_lines}")
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    handle = None
    count = 0
    try:
        for line in lines:
            if handle is None or count >= max_lines:
                if handle is not None:
                    handle.close()
                path = out / f"{stem}-{len(paths) + 1:05d}.jsonl"
                handle = path.open("w", encoding="utf-8")
                paths.append(path)
                count = 0
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    finally:
        if handle is not None:
            handle.close()
    return paths


@dataclass(frozen=True)
class OutputLine:
    """One readable Batch output line: the request's id and either a response or an error."""

    path: Path
    number: int  # 1-based line number
    custom_id: str
    status_code: Any  # None when the line carries an error and no response
    body: Any
    error: str | None  # the line's ``error`` (the request was not answered), as one string


@dataclass(frozen=True)
class BadLine:
    """A line that is not a Batch output record (truncated, not JSON, no custom_id)."""

    path: Path
    number: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.number}: {self.reason}"


def read_output(path: Path) -> Iterator[OutputLine | BadLine]:
    """The lines of one Batch output file (blank lines skipped); bad lines are yielded, not raised."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            yield parse_line(path, number, raw)


def parse_line(path: Path, number: int, raw: bytes) -> OutputLine | BadLine:
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        if not raw.endswith(b"\n") and exc.end == len(raw):  # cut inside a character (answers are UTF-8)
            return BadLine(path, number, "truncated line (ends inside a UTF-8 character)")
        return BadLine(path, number, "not UTF-8")
    except json.JSONDecodeError as exc:
        truncated = not raw.endswith(b"\n")
        return BadLine(path, number, ("truncated line" if truncated else "not JSON") + f" ({exc.msg})")
    except RecursionError:  # "[[[[..." nested past the parser's stack: this line, not the whole file
        return BadLine(path, number, "not a Batch output line (JSON nested too deeply)")
    if not isinstance(record, dict):
        return BadLine(path, number, "not a JSON object")
    custom_id = record.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return BadLine(path, number, "no custom_id")
    error = record.get("error")
    response = record.get("response")
    if error:
        text = error.get("message") or json.dumps(error) if isinstance(error, dict) else str(error)
        code = error.get("code") if isinstance(error, dict) else None
        return OutputLine(path, number, custom_id, None, None, f"batch error{f' {code}' if code else ''}: {text}")
    if not isinstance(response, dict):
        if "body" in record and "method" in record:
            return BadLine(path, number, "a batch input line (a request), not an answer: import the output file")
        return BadLine(path, number, "neither a response nor an error")
    status = response.get("status_code")
    body = response.get("body")
    if isinstance(body, str):  # some writers keep the body as JSON text
        with contextlib.suppress(ValueError, RecursionError):
            body = json.loads(body)
    return OutputLine(path, number, custom_id, status, body, None)
