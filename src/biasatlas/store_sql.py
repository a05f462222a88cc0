"""SQL of the study store (``biasatlas.store``): the schema's migrations, the hot path (many rows per
INSERT statement, which keys already have an answer) and what a run that never finished got done.

``executemany`` steps once per row and gives up the GIL for each step: a batch of answers committed
beside a busy event loop became one GIL hand-over per row (the writer waits for the loop's thread,
then the loop waits for the writer's). Here a chunk of rows is one statement, one step; chunks are
powers of two, so a handful of statements stay cached. Rows are inserted in order, as
``executemany`` inserts them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import chain
from typing import Any

#: The schema, one script per version (``schema_migrations`` records which ones a study has had).
MIGRATIONS: list[str] = [
    # 1: the initial schema
    """
    CREATE TABLE prompts (
        prompt_id TEXT PRIMARY KEY,
        probe TEXT NOT NULL,
        language TEXT NOT NULL,
        messages_json TEXT NOT NULL,
        options_json TEXT NOT NULL,
        meta_json TEXT NOT NULL
    );
    CREATE TABLE runs (
        run_id INTEGER PRIMARY KEY AUTOINCREMENT,
        probe TEXT NOT NULL,
        backend_id TEXT NOT NULL,
        config_json TEXT NOT NULL,
        package_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        totals_json TEXT
    );
    CREATE TABLE run_items (
        run_id INTEGER NOT NULL REFERENCES runs(run_id),
        prompt_id TEXT NOT NULL REFERENCES prompts(prompt_id),
        key TEXT NOT NULL,
        backend_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        PRIMARY KEY (run_id, prompt_id, sample_index)
    );
    CREATE INDEX run_items_key ON run_items(key);
    CREATE TABLE responses (
        key TEXT PRIMARY KEY,
        backend_id TEXT NOT NULL,
        request_json TEXT NOT NULL,
        text TEXT,
        option_probs_json TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_s REAL,
        finish_reason TEXT,
        info_json TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE errors (
        error_id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        backend_id TEXT NOT NULL,
        run_id INTEGER,
        error TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX errors_key ON errors(key);
    """,
]


#: ``Store.frame``'s query: one row per planned item (items of several runs once), ``{where}`` its filter.
#: An item is a prompt and the key of its answer: the key holds backend, mode, decoding and sample, so two
#: decodings of one prompt are two rows, and every other column is one value per group (none picked from
#: an arbitrary row); ``run_id`` is the newest run that planned that very answer.
FRAME_SQL = """
SELECT i.prompt_id, i.key, i.backend_id AS model, i.mode, i.sample_index,
       MAX(i.run_id) AS run_id,
       p.probe, p.language, p.messages_json, p.options_json, p.meta_json,
       r.text, r.option_probs_json, r.prompt_tokens, r.completion_tokens, r.latency_s,
       r.finish_reason, r.info_json,
       (SELECT COUNT(*) FROM errors e WHERE e.key = i.key) AS n_errors
FROM run_items i
JOIN prompts p ON p.prompt_id = i.prompt_id
LEFT JOIN responses r ON r.key = i.key
{where}
GROUP BY i.prompt_id, i.key
ORDER BY MIN(i.rowid)
"""

#: The most rows one INSERT statement carries (SQLite's variable limit permitting).
MOST_ROWS = 256


@cache
def values_sql(head: str, width: int, rows: int) -> str:
    """``head`` followed by ``rows`` groups of ``width`` placeholders."""
    return head + ", ".join(["(" + ", ".join("?" * width) + ")"] * rows)


def insert_rows(conn: sqlite3.Connection, head: str, width: int, rows: Sequence[tuple[Any, ...]]) -> None:
    """Execute ``head`` (``INSERT … VALUES``) over ``rows`` of ``width`` values, many rows per statement.

    SQLite's variable limit (999 before 3.32, 32766 since) bounds a chunk.
    """
    most = max(1, min(MOST_ROWS, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    start = 0
    while start < len(rows):
        size = 1 << (min(most, len(rows) - start).bit_length() - 1)
        conn.execute(values_sql(head, width, size), list(chain.from_iterable(rows[start : start + size])))
        start += size


def answered_keys(conn: sqlite3.Connection, keys: Iterable[str]) -> set[str]:
    """The subset of ``keys`` that has a stored answer (``responses``), looked up through ``conn``."""
    wanted = list(dict.fromkeys(keys))
    found: set[str] = set()
    for start in range(0, len(wanted), 900):  # stay under SQLite's bound-parameter limit
        chunk = wanted[start : start + 900]
        sql = f"SELECT key FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
        found.update(row[0] for row in conn.execute(sql, chunk))
    return found


def run_progress(conn: sqlite3.Connection, run_id: int, started_at: str, answers_before: int | None) -> dict[str, int]:
    """What the recorded plan of a run that never finished holds: ``keyed`` items, of them ``cached`` (answered
    before the run: stored at or below row ``answers_before`` of ``responses``, or, for a run that did not note
    it, before the second the run started), ``new`` (answered since) and ``failed`` (only errors of this run)."""
    before = "r.rowid <= ?" if answers_before is not None else "r.created_at < ?"
    keyed, answered, cached, failed = conn.execute(
        f"SELECT COUNT(*), COUNT(r.key), COALESCE(SUM(r.key IS NOT NULL AND {before}), 0),"
        " COALESCE(SUM(r.key IS NULL AND EXISTS (SELECT 1 FROM errors e WHERE e.key = i.key AND e.run_id = ?)), 0)"
        " FROM run_items i LEFT JOIN responses r ON r.key = i.key WHERE i.run_id = ?",
        (started_at if answers_before is None else answers_before, run_id, run_id),
    ).fetchone()
    return {"keyed": keyed, "cached": cached, "new": answered - cached, "failed": failed}


def unfinished_totals(conn: sqlite3.Connection, run_id: int, started_at: str, noted: str | None,
                      writer: str | None) -> dict[str, Any]:
    """Totals of a run with no end recorded: ``running`` while ``writer`` (a pid) holds the study, else
    ``interrupted`` (killed). Planned as noted at its start (an older biasatlas noted nothing: then what it
    recorded of its plan), the rest from its recorded plan and the stored answers; what it had not recorded
    of its plan yet counts as pending."""
    start = json.loads(noted) if noted else {}
    done = run_progress(conn, run_id, started_at, (start.get("info") or {}).get("answers_before"))
    planned = max(int(start.get("planned") or 0), done["keyed"])
    info: dict[str, Any] = {"writer": writer} if writer else {"killed": True}
    if "planned" not in start:
        info["planned_unknown"] = True  # pending counts only the part of the plan the run recorded
    return {"run_id": run_id, "planned": planned, "cached": done["cached"], "new": done["new"],
            "failed": done["failed"], "pending": planned - done["cached"] - done["new"] - done["failed"],
            "seconds": None, "status": "running" if writer else "interrupted", "info": info}
