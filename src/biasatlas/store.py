"""The study store: one SQLite file that is cache, archive and resume log at once.

Every response is committed the moment it arrives, before anything parses it. Errors are kept in
their own table and never served as answers, so the next run asks again. Schema changes go
through the numbered migrations below.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.records import Prompt, Request, Response, canonical_json

if TYPE_CHECKING:  # pandas is imported where frames are made: running a plan does not need it
    import pandas as pd

DB_NAME = "biasatlas.db"

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


class StoreError(RuntimeError):
    """A study database this version of biasatlas cannot use (one line, for the user)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """A study directory's SQLite database."""

    def __init__(self, study_dir: str | Path) -> None:
        self.dir = Path(study_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / DB_NAME
        # autocommit mode: each write below is its own transaction unless grouped explicitly
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed row survives a process crash; only an OS crash can lose
        # the last transactions. That is the trade the cache needs for thousands of writes a second.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=30000")
        self._migrate()

    # ---- schema -------------------------------------------------------------------------------
    def _migrate(self) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
        )
        done = {row[0] for row in self.conn.execute("SELECT version FROM schema_migrations")}
        newest = max(done, default=0)
        if newest > len(MIGRATIONS):  # made by a newer biasatlas: writing to it could corrupt it
            self.conn.close()
            raise StoreError(
                f"{self.path} has schema version {newest}, newer than this biasatlas knows "
                f"({len(MIGRATIONS)}): upgrade biasatlas to open this study"
            )
        for version, script in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, script.split(";")):
                    self.conn.execute(statement)
                self.conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)", (version, _now())
                )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        row = self.conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- runs ---------------------------------------------------------------------------------
    def start_run(self, probe: str, backend_id: str, config: dict[str, Any], version: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (probe, backend_id, config_json, package_version, started_at, status)"
            " VALUES (?, ?, ?, ?, ?, 'running')",
            (probe, backend_id, canonical_json(config), version, _now()),
        )
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, status: str, totals: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE runs SET finished_at = ?, status = ?, totals_json = ? WHERE run_id = ?",
            (_now(), status, canonical_json(totals), run_id),
        )

    def update_run_config(self, run_id: int, config: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE runs SET config_json = ? WHERE run_id = ?", (canonical_json(config), run_id)
        )

    def runs(self, probe: str | None = None) -> pd.DataFrame:
        import pandas as pd

        query = "SELECT * FROM runs" + (" WHERE probe = ?" if probe else "") + " ORDER BY run_id"
        frame = pd.read_sql_query(query, self.conn, params=(probe,) if probe else ())
        return frame

    def last_run(self, probe: str | None = None) -> dict[str, Any] | None:
        frame = self.runs(probe)
        if frame.empty:
            return None
        row = {str(k): v for k, v in frame.iloc[-1].to_dict().items()}
        row["config"] = json.loads(row.pop("config_json"))
        row["totals"] = json.loads(row.pop("totals_json") or "{}")
        return row

    def record_plan(self, run_id: int, backend_id: str, requests: Sequence[Request]) -> list[str]:
        """Store the prompts and the run's items in one transaction; return the request keys."""
        keys = [r.cache_key(backend_id) for r in requests]
        prompts: dict[str, Prompt] = {r.prompt.id: r.prompt for r in requests}
        self.conn.execute("BEGIN")
        try:
            self.conn.executemany(
                "INSERT OR IGNORE INTO prompts VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (
                        pid,
                        p.probe,
                        p.language,
                        canonical_json([m.model_dump() for m in p.messages]),
                        canonical_json(list(p.options)),
                        canonical_json(p.meta),
                    )
                    for pid, p in prompts.items()
                ),
            )
            self.conn.executemany(
                "INSERT OR IGNORE INTO run_items VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (run_id, r.prompt.id, k, backend_id, r.settings.mode, r.sample_index)
                    for r, k in zip(requests, keys, strict=True)
                ),
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return keys

    # ---- responses ----------------------------------------------------------------------------
    def cached_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` that already has a stored answer."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        for start in range(0, len(wanted), 900):  # stay under SQLite's bound-parameter limit
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self.conn.execute(f"SELECT key FROM responses WHERE key IN ({marks})", chunk)
            )
        return found

    def save(self, response: Response, request: Request, run_id: int | None = None) -> None:
        """Commit one response (or its error) now."""
        if response.error is not None:
            self.conn.execute(
                "INSERT INTO errors (key, backend_id, run_id, error, created_at) VALUES (?, ?, ?, ?, ?)",
                (response.key, response.backend_id, run_id, response.error[:2000], _now()),
            )
            return
        self.conn.execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                response.key,
                response.backend_id,
                canonical_json(
                    {
                        "messages": [m.model_dump() for m in request.prompt.messages],
                        "options": list(request.prompt.options),
                        "settings": request.settings.model_dump(),
                        "sample_index": request.sample_index,
                    }
                ),
                response.text,
                None if response.option_probs is None else canonical_json(response.option_probs),
                response.prompt_tokens,
                response.completion_tokens,
                response.latency_s,
                response.finish_reason,
                canonical_json(response.info),
                _now(),
            ),
        )

    def response_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def error_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM errors").fetchone()[0])

    # ---- analysis -----------------------------------------------------------------------------
    def frame(self, probe: str | None = None, run_ids: Sequence[int] | None = None) -> pd.DataFrame:
        """A tidy frame, one row per (model, mode, prompt, sample), every meta field a column.

        Items planned by several runs appear once. ``status`` is ``answered`` when a response is
        stored, ``failed`` when only errors are, ``pending`` otherwise.
        """
        import pandas as pd

        where: list[str] = []
        params: list[Any] = []
        if probe:
            where.append("p.probe = ?")
            params.append(probe)
        if run_ids:
            where.append(f"i.run_id IN ({','.join('?' * len(run_ids))})")
            params.extend(run_ids)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        query = f"""
            SELECT i.prompt_id, i.key, i.backend_id AS model, i.mode, i.sample_index,
                   MAX(i.run_id) AS run_id,
                   p.probe, p.language, p.messages_json, p.options_json, p.meta_json,
                   r.text, r.option_probs_json, r.prompt_tokens, r.completion_tokens, r.latency_s,
                   r.info_json,
                   (SELECT COUNT(*) FROM errors e WHERE e.key = i.key) AS n_errors
            FROM run_items i
            JOIN prompts p ON p.prompt_id = i.prompt_id
            LEFT JOIN responses r ON r.key = i.key
            {clause}
            GROUP BY i.prompt_id, i.backend_id, i.mode, i.sample_index
            ORDER BY MIN(i.rowid)
        """
        raw = pd.read_sql_query(query, self.conn, params=params)
        if raw.empty:
            return raw
        meta = pd.json_normalize([json.loads(m) for m in raw["meta_json"]], max_level=0)
        meta.index = raw.index
        raw["option_probs"] = [json.loads(v) if isinstance(v, str) else None for v in raw["option_probs_json"]]
        raw["options"] = [tuple(json.loads(v)) for v in raw["options_json"]]
        raw["status"] = "pending"
        raw.loc[raw["n_errors"] > 0, "status"] = "failed"
        answered = raw["text"].notna() | pd.Series([p is not None for p in raw["option_probs"]], index=raw.index)
        raw.loc[answered, "status"] = "answered"
        raw = raw.drop(columns=["meta_json", "option_probs_json", "options_json"])
        clash = [c for c in meta.columns if c in raw.columns]
        meta = meta.rename(columns={c: f"meta_{c}" for c in clash})
        return pd.concat([raw, meta], axis=1)
