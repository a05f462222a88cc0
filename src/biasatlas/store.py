"""The study store: one SQLite file that is cache, archive and resume log at once.

Responses are committed as they arrive, before anything parses them (the runner groups answers that arrive
together into one transaction). Errors are kept in their own table and never served as answers, so the next
run asks again. Schema changes go through the numbered migrations (store_sql.py). What the store writes besides
answers (errors, info, run config, totals) is scrubbed of credentials, and the values given to ``hide`` (the
run's key) are masked in answers too; an answer's text and info are capped at ``MAX_ANSWER_CHARS`` each. A damaged
database is refused before anything is written to it; a read-only study (an archived audit) is never written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas import records
from biasatlas.records import MASK, Request, Response, canonical_json, canonical_tree_json, scrub_text, scrub_value
from biasatlas.store_sql import FRAME_SQL, MIGRATIONS, answered_keys, insert_rows, unfinished_totals

if TYPE_CHECKING:  # pandas is imported where frames are made: running a plan does not need it
    import pandas as pd

DB_NAME = "biasatlas.db"

#: The most characters of one answer's text the store keeps (256 Ki characters, at most 1 MiB of
#: UTF-8): longer text is cut there and ``info["truncated_from"]`` holds its original length.
MAX_ANSWER_CHARS = 256 * 1024
MAX_ERROR_CHARS, MAX_FINISH_CHARS = 2000, 100  #: the most characters of a stored error, of a finish reason
#: The shortest value :meth:`Store.hide` masks: a shorter one would mask ordinary words in answers.
MIN_SECRET_CHARS = 8


class StoreError(RuntimeError):
    """A study database this version of biasatlas cannot use (one line, for the user)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` (False on a read-only mount, even for root)."""
    return os.access(path, os.W_OK)


class Store:
    """A study directory's SQLite database.

    ``readonly``: True opens it for reading only (nothing in the study is written); None (the
    default) does so when the database exists but this process cannot write it or its directory.
    """

    def __init__(self, study_dir: str | Path, *, readonly: bool | None = None) -> None:
        self.dir = Path(study_dir)
        self.path = self.dir / DB_NAME
        self._snapshot: tempfile.TemporaryDirectory[str] | None = None
        self._secrets: tuple[str, ...] = ()  # values masked in everything stored (hide)
        self.masked = 0  #: how many times a hidden value was replaced in stored answers and errors
        if readonly is None:
            readonly = self.path.is_file() and not (_writable(self.dir) and _writable(self.path))
        self.readonly = readonly
        if readonly:
            self.conn = self._open_readonly()
            self._check_schema(self._versions())
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        existed = self.path.is_file() and self.path.stat().st_size > 0
        # autocommit mode: each write below is its own transaction unless grouped explicitly
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout=30000")
        if existed:
            self._check_intact()
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed row survives a process crash; only an OS crash can lose
        # the last transactions. That is the trade the cache needs for thousands of writes a second.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def _check_intact(self) -> None:
        """Refuse a damaged database (pages overwritten, not only cut short) before anything is written to it."""
        try:
            problems = [str(row[0]) for row in self.conn.execute("PRAGMA quick_check(1)")]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            self.close()
            detail = " ".join(" ".join(problems).replace("*** in database main ***", "").split())[:200]
            raise StoreError(f"{self.path} is damaged ({detail}): nothing was written to it; restore it from a "
                             f"backup, or recover what is readable with: sqlite3 {self.path} .recover")

    def _open_readonly(self) -> sqlite3.Connection:
        """A read-only connection. A WAL reader needs a -shm file: in a writable directory ``mode=ro``
        (SQLite adds -wal/-shm, the database is untouched); in a read-only one ``immutable=1`` when no
        log holds data, ``mode=ro`` when the log and its -shm are there, else a private copy of both."""
        if not self.path.is_file():
            raise StoreError(f"no study database at {self.path}")
        wal, shm = (self.path.with_name(DB_NAME + suffix) for suffix in ("-wal", "-shm"))
        source, flag = self.path, "mode=ro"
        if not _writable(self.dir):
            if not (wal.is_file() and wal.stat().st_size > 0):
                flag = "immutable=1"
            elif not shm.is_file():  # a log no reader can index here: read a private copy
                self._snapshot = tempfile.TemporaryDirectory(prefix="biasatlas-readonly-")
                source = Path(self._snapshot.name) / DB_NAME
                shutil.copyfile(self.path, source)
                shutil.copyfile(wal, source.with_name(DB_NAME + "-wal"))
        uri = f"{source.resolve().as_uri()}?{flag}"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            self._drop_snapshot()
            raise StoreError(f"{self.path} is not a readable biasatlas database ({exc})") from None
        conn.execute("PRAGMA query_only=ON")
        return conn

    def _drop_snapshot(self) -> None:
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None:
            snapshot.cleanup()

    def _writing(self) -> None:
        if self.readonly:
            raise StoreError(f"study {self.dir} is open read-only: nothing can be stored in it")

    # ---- schema -------------------------------------------------------------------------------
    def _versions(self) -> set[int]:
        try:
            return {row[0] for row in self.conn.execute("SELECT version FROM schema_migrations")}
        except sqlite3.OperationalError:
            if self.readonly:
                self.close()
                raise StoreError(f"{self.path} is not a biasatlas study (no schema)") from None
            raise

    def _check_schema(self, done: set[int]) -> None:
        newest = max(done, default=0)
        if newest > len(MIGRATIONS):  # made by a newer biasatlas: writing to it could corrupt it
            self.close()
            raise StoreError(
                f"{self.path} has schema version {newest}, newer than this biasatlas knows "
                f"({len(MIGRATIONS)}): upgrade biasatlas to open this study"
            )
        if self.readonly and newest < len(MIGRATIONS):
            self.close()
            raise StoreError(
                f"{self.path} has schema version {newest}, older than this biasatlas ({len(MIGRATIONS)}); "
                "it is read-only here: open it once where it can be written to upgrade it"
            )

    def _migrate(self) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
        )
        done = self._versions()
        self._check_schema(done)
        for version, script in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, script.split(";")):
                    self.conn.execute(statement)
                self.conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (version, _now()))
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
        self._drop_snapshot()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- runs ---------------------------------------------------------------------------------
    def start_run(self, probe: str, backend_id: str, config: dict[str, Any], version: str,
                  planned: int | None = None) -> int:
        """Record a run as ``running``. ``planned`` (the plan's size) is noted in its totals at once, with
        the answers stored so far, so that a run killed before it records its end can be told apart."""
        self._writing()
        totals = None
        if planned is not None:
            before = self.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM responses").fetchone()[0]
            totals = canonical_json({"planned": planned, "status": "running", "info": {"answers_before": before}})
        cur = self.conn.execute(
            "INSERT INTO runs (probe, backend_id, config_json, package_version, started_at, status, totals_json)"
            " VALUES (?, ?, ?, ?, ?, 'running', ?)",
            (probe, backend_id, self._hidden(canonical_json(scrub_value(config)), count=False), version, _now(),
             totals),
        )
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, status: str, totals: dict[str, Any]) -> None:
        self._writing()
        sql = "UPDATE runs SET finished_at = ?, status = ?, totals_json = ? WHERE run_id = ?"
        self.conn.execute(sql, (_now(), status, self._hidden(canonical_json(scrub_value(totals)), count=False), run_id))

    def update_run_config(self, run_id: int, config: dict[str, Any]) -> None:
        self._writing()
        sql = "UPDATE runs SET config_json = ? WHERE run_id = ?"
        self.conn.execute(sql, (self._hidden(canonical_json(scrub_value(config)), count=False), run_id))

    def runs(self, probe: str | None = None) -> pd.DataFrame:
        """Every run (of ``probe``), oldest first; missing values are None. A run that never recorded its
        end reads as ``running`` while a process holds the study's writer lock, else as ``interrupted``
        (killed), with totals counted from its recorded plan (``store_sql.unfinished_totals``)."""
        import pandas as pd

        query = "SELECT * FROM runs" + (" WHERE probe = ?" if probe else "") + " ORDER BY run_id"
        frame = pd.read_sql_query(query, self.conn, params=(probe,) if probe else ())
        for column in ("config_json", "finished_at", "totals_json"):  # NULL as None, not NaN (pandas' str dtype)
            frame[column] = pd.Series([v if isinstance(v, str) else None for v in frame[column]], frame.index, object)
        open_runs = [i for i, done in zip(frame.index, frame["finished_at"], strict=True) if done is None]
        if open_runs:
            from biasatlas.lock import writer_holder

            writer = writer_holder(self.dir)
            for i in open_runs:
                row = frame.loc[i]
                totals = unfinished_totals(self.conn, int(row["run_id"]), row["started_at"], row["totals_json"],
                                           writer)
                frame.at[i, "status"] = totals["status"]
                frame.at[i, "totals_json"] = canonical_json(totals)
        return frame

    def last_run(self, probe: str | None = None) -> dict[str, Any] | None:
        frame = self.runs(probe)
        if frame.empty:
            return None
        row = {str(k): v for k, v in frame.iloc[-1].to_dict().items()}
        row["config"] = json.loads(row.pop("config_json") or "{}")
        row["totals"] = json.loads(row.pop("totals_json") or "{}")
        return row

    def record_plan(
        self, run_id: int, backend_id: str, requests: Sequence[Request], keys: Sequence[str] | None = None
    ) -> list[str]:
        """Store the prompts and the run's items in one transaction; return the request keys
        (``keys``, when the caller has them already)."""
        self._writing()
        keys = [r.cache_key(backend_id) for r in requests] if keys is None else list(keys)
        prompts = {r.prompt.id: r.prompt for r in requests}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            insert_rows(  # many rows per statement: see store_sql
                self.conn, "INSERT OR IGNORE INTO prompts VALUES ", 6,
                [(pid, p.probe, p.language, *p.json_parts()) for pid, p in prompts.items()],
            )
            items = zip(requests, keys, strict=True)
            insert_rows(
                self.conn, "INSERT OR IGNORE INTO run_items VALUES ", 6,
                [(run_id, r.prompt.id, k, backend_id, r.settings.mode, r.sample_index) for r, k in items],
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return keys

    # ---- responses ----------------------------------------------------------------------------
    def hide(self, secrets: Iterable[str]) -> None:
        """Replace these values (an API key, a URL's password) with ``***`` in everything stored from now on,
        answers included (a server may echo the key); a value under ``MIN_SECRET_CHARS`` is not taken."""
        found = {s for s in secrets if len(s) >= MIN_SECRET_CHARS}
        found |= {json.dumps(s)[1:-1] for s in found} | {json.dumps(s, ensure_ascii=False)[1:-1] for s in found}
        self._secrets = tuple(sorted(found, key=len, reverse=True))

    def _hidden(self, text: Any, count: bool = True) -> Any:
        """``text`` with every hidden value replaced by ``***`` (counted in ``masked``)."""
        for secret in self._secrets if isinstance(text, str) else ():
            found = text.count(secret)
            if found:
                text = text.replace(secret, MASK)
                self.masked += found if count else 0
        return text

    def cached_keys(self, keys: Iterable[str]) -> set[str]:
        """The subset of ``keys`` that already has a stored answer."""
        return answered_keys(self.conn, keys)

    @contextlib.contextmanager
    def key_reader(self) -> Iterator[Callable[[Iterable[str]], set[str]]]:
        """:meth:`cached_keys` on a connection of its own, for a thread beside the writing one (WAL)."""
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        try:
            yield lambda keys: answered_keys(conn, keys)
        finally:
            conn.close()

    def save(self, response: Response, request: Request, run_id: int | None = None) -> None:
        """Commit one response (or its error) now."""
        self.save_many([(response, request)], run_id)

    def save_many(self, items: Sequence[tuple[Response, Request]], run_id: int | None = None) -> None:
        """Commit responses (answers and errors) in one transaction: all of them are stored, or none."""
        self._writing()
        now = _now()
        errors: list[tuple[Any, ...]] = []
        answers: list[tuple[Any, ...]] = []
        for response, request in items:
            if response.error is not None:  # scrubbed before it is cut: a cut secret would slip through
                error = scrub_text(self._hidden(response.error[: 4 * MAX_ERROR_CHARS]))[:MAX_ERROR_CHARS]
                errors.append((response.key, response.backend_id, run_id, error, now))
            elif self._secrets:  # masked before the text is cut, and in the info (a structured answer's raw JSON)
                text = self._hidden(response.text)
                masked = response if text is response.text else response.model_copy(update={"text": text})
                answers.append(self._answer_row(masked, request, now, self._hidden))
            else:
                answers.append(self._answer_row(response, request, now))
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if errors:
                head = "INSERT INTO errors (key, backend_id, run_id, error, created_at) VALUES "
                insert_rows(self.conn, head, 5, errors)
            if answers:
                insert_rows(self.conn, "INSERT OR IGNORE INTO responses VALUES ", 11, answers)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _answer_row(response: Response, request: Request, now: str,
                    hide: Callable[[str], str] | None = None) -> tuple[Any, ...]:
        """The ``responses`` row, capped whatever the server sent (token counts SQLite cannot hold left out)."""
        text, info, finish = response.text, response.info, response.finish_reason
        if text is not None and len(text) > MAX_ANSWER_CHARS:
            info = {**info, "truncated_from": len(text)}
            text = text[:MAX_ANSWER_CHARS]
        probs = None if response.option_probs is None else canonical_tree_json(response.option_probs)
        info_json = records.capped_info_json(info, MAX_ANSWER_CHARS, hide)  # scrubbed: a fresh tree, no cycle
        finish = None if finish is None else finish[:MAX_FINISH_CHARS]
        tokens = [t if t is None or 0 <= t < 2**63 else None for t in (response.prompt_tokens,
                                                                         response.completion_tokens)]
        return (response.key, response.backend_id, request.request_json(), text, probs, *tokens,
                response.latency_s, finish, info_json, now)

    def response_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def error_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM errors").fetchone()[0])

    # ---- analysis -----------------------------------------------------------------------------
    def frame(self, probe: str | None = None, run_ids: Sequence[int] | None = None) -> pd.DataFrame:
        """A tidy frame, one row per (model, mode, decoding, prompt, sample), every meta field a column.

        Items planned by several runs appear once (``decodings.py``: two decodings of one model are two
        ``model``s). ``status``: ``answered``, ``failed`` (only errors stored) or ``pending``."""
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
        raw = pd.read_sql_query(FRAME_SQL.format(where=clause), self.conn, params=params)
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
        from biasatlas.decodings import run_decodings, with_decodings
        from biasatlas.display import display_names, with_display_names

        named = with_display_names(pd.concat([raw, meta], axis=1), display_names(self.conn))
        return with_decodings(named, run_decodings(self.conn))
