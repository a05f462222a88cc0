"""The work list of `batch run`: the input lines as requests to ask, each once, without Ray.

A batch input may repeat itself: a file copied twice into ``--in``, a line pasted again, two exports
of one plan. Each request is asked once: a line repeating an earlier line's ``custom_id`` and body is a
duplicate (counted, not asked); a line whose body another ``custom_id`` asks already gets that request's
answer written under its own id as well (``also``: the body, with its per-sample seed, is the whole
request, so the answer is the same); a ``custom_id`` given a second, different body is a conflict (the
first body is asked, the conflict reported). Lines whose answer ``--out`` holds already are skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class WorkItem:
    """One request to ask: its input line as written, and the other ids that get its answer."""

    custom_id: str
    text: str
    also: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """The item as a Ray Data row (the ids as JSON text: a column of plain strings)."""
        return {"text": self.text, "also": json.dumps(self.also)}


@dataclass
class WorkList:
    """The requests to ask, and what the input held beyond them (every line is one of these)."""

    items: list[WorkItem] = field(default_factory=list)
    lines: int = 0
    skipped: int = 0  # answered in --out before
    duplicates: int = 0  # the same custom_id and body as an earlier line
    shared: int = 0  # another custom_id with an earlier line's body: answered with that line's answer
    unreadable: list[str] = field(default_factory=list)  # "FILE:LINE: why"
    conflicts: list[str] = field(default_factory=list)  # custom_ids given two different bodies

    @property
    def accounted(self) -> int:
        """Lines decided before anything is asked (the rest are the items and their ``also`` ids)."""
        return self.skipped + self.duplicates + len(self.unreadable) + len(self.conflicts)


def body_digest(body: dict[str, Any]) -> str:
    """The identity of a request body: the same fields and values, whatever their order in the line."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_input(raw: bytes) -> tuple[str, str, dict[str, Any]]:
    """(text, custom_id, body) of one input line; ValueError says why it is not one."""
    try:
        text = raw.decode("utf-8").strip()
        line = json.loads(text)
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from exc
    except RecursionError as exc:  # "[[[[..." 100,000 deep: the parser's stack, not the job, gives up
        raise ValueError("not a batch input line (JSON nested too deeply)") from exc
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str) or not line["custom_id"]:
        raise ValueError("not a batch input line (no custom_id)")
    if not isinstance(line.get("body"), dict):
        raise ValueError("not a batch input line (its body is not an object)")
    return text, line["custom_id"], line["body"]


def work_list(files: Iterable[Path], done: frozenset[str] | set[str] = frozenset()) -> WorkList:
    """The requests of ``files`` to ask, each once (see the module), skipping the ids in ``done``."""
    work = WorkList()
    bodies: dict[str, str] = {}  # custom_id -> body digest, of every readable line seen
    asked: dict[str, WorkItem] = {}  # body digest -> the item asking it
    for path in files:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                work.lines += 1
                try:
                    text, custom_id, body = parse_input(raw)
                    digest = body_digest(body)
                except RecursionError:  # parsed just under the limit, too deep to write back
                    work.unreadable.append(f"{path}:{number}: not a batch input line (JSON nested too deeply)")
                    continue
                except ValueError as exc:
                    work.unreadable.append(f"{path}:{number}: {exc}")
                    continue
                if custom_id in bodies:  # this id came before: asked (or skipped) once already
                    if bodies[custom_id] == digest:
                        work.duplicates += 1
                    else:
                        work.conflicts.append(custom_id)
                    continue
                bodies[custom_id] = digest
                if custom_id in done:
                    work.skipped += 1
                elif digest in asked:
                    asked[digest].also.append(custom_id)
                    work.shared += 1
                else:
                    asked[digest] = WorkItem(custom_id, text)
                    work.items.append(asked[digest])
    return work
