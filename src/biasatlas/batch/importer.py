"""`batch import`: answers in the OpenAI Batch output format stored in the study they were exported from.

Each line's ``custom_id`` is a cache key of a request some ``batch export`` run of the study wrote;
the request is rebuilt from the study (the prompt, and the run's settings and backend) and the
answer read as the live HTTP backend reads it, so ``summary`` and ``report`` work as after a live
run (a generation's answer without text, a null ``message`` or a ``content`` that is null or an
object, is malformed, as live). Errors (a line's ``error``, a status other than 200, an answer
without a usable choice) are stored as errors, so the request stays pending. Importing is idempotent
and order-free: an answer the study holds already, or an error it holds already for that key, is not
stored again. Lines of another study or plan (unknown ids) are counted and reported, never stored;
unreadable lines are reported with file and line number, and the rest is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biasatlas.backends.http.wire import missing_text
from biasatlas.batch.bodies import BatchBackend
from biasatlas.batch.export import EXPORTED
from biasatlas.batch.formats import BadLine, read_output
from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response, scrub_text
from biasatlas.store import MAX_ERROR_CHARS, Store

SAVE_EVERY = 1000  #: answers per transaction
SHOWN_IDS = 5  #: unknown ids named in the result


@dataclass
class ImportResult:
    """Counts of one import, and what could not be read."""

    lines: int = 0  # readable lines
    answers: int = 0  # answers stored
    errors: int = 0  # errors stored
    already: int = 0  # answers (or the same error) the study held already
    duplicates: int = 0  # lines for a request answered by an earlier line of this import
    unknown: int = 0  # custom_ids no batch export of this study wrote
    unknown_ids: list[str] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    runs: dict[int, dict[str, int]] = field(default_factory=dict)  # export run -> answered / failed / pending
    via: list[dict[str, Any]] = field(default_factory=list)  # how the answers were made (`batch run`'s manifests)

    def as_dict(self) -> dict[str, Any]:
        return {"lines": self.lines, "answers": self.answers, "errors": self.errors, "already": self.already,
                "duplicates": self.duplicates, "unknown": self.unknown, "unknown_ids": self.unknown_ids,
                "bad_lines": [str(b) for b in self.bad], "runs": self.runs, "via": self.via}


class _Known:
    """The requests of the study's batch export runs, by cache key, and every export run that planned each."""

    def __init__(self, store: Store) -> None:
        self.requests: dict[str, tuple[int, Request, BatchBackend]] = {}
        # A plan exported again after a partial import is a second run holding the same keys: an
        # answer completes both.
        self.runs: dict[str, list[int]] = {}
        rows = store.conn.execute("SELECT run_id, backend_id, config_json FROM runs ORDER BY run_id").fetchall()
        for run_id, backend_id, config_json in rows:
            config = json.loads(config_json or "{}")
            described = config.get("backend") or {}
            if described.get("backend") != "openai-batch":
                continue
            backend = _backend(described, config)
            if backend.id != backend_id:  # made by another version's rules: its keys cannot be checked
                continue
            settings = GenerationSettings(**config["settings"])
            items = store.conn.execute(
                "SELECT i.key, i.sample_index, p.probe, p.language, p.messages_json, p.options_json, p.meta_json"
                " FROM run_items i JOIN prompts p ON p.prompt_id = i.prompt_id WHERE i.run_id = ?",
                (run_id,),
            )
            for key, sample, probe, language, messages, options, meta in items:
                if key in self.requests:
                    self.runs[key].append(run_id)
                    continue
                prompt = Prompt(probe=probe, language=language,
                                messages=tuple(Message(**m) for m in json.loads(messages)),
                                options=tuple(json.loads(options)), meta=json.loads(meta))
                request = Request(prompt=prompt, settings=settings, sample_index=sample)
                if request.cache_key(backend.id) == key:
                    self.requests[key] = (run_id, request, backend)
                    self.runs[key] = [run_id]


def _backend(described: dict[str, Any], config: dict[str, Any]) -> BatchBackend:
    from biasatlas.backends.http.options import EndpointSpec
    from biasatlas.backends.openai_compat import OpenAIOptions

    options = OpenAIOptions(
        base_url=described.get("base_url"),
        # a fleet's id names the fleet: without it the rebuilt id is a server's and no key matches
        endpoints=[EndpointSpec(url=e["url"], concurrency=e.get("concurrency"))
                   for e in described.get("endpoints") or []],
        fleet=described.get("fleet"),
        structured=described.get("structured", "auto"),
        choice_norm=described.get("choice_norm", "sum"),
        choice_method=described.get("choice_method", "auto"),
        top_logprobs=described.get("top_logprobs", 20),
    )
    return BatchBackend(str(described["model"]), options, mode=config["settings"]["mode"])


def _stored_error(error: str) -> str:
    """An error as the store keeps it (scrubbed, cut)."""
    return scrub_text(error[: 4 * MAX_ERROR_CHARS])[:MAX_ERROR_CHARS]


def _missing_text(backend: BatchBackend, request: Request, status_code: Any, body: Any) -> str | None:
    """Why a 200 answer to a generation holds no text (a null ``message``, a ``content`` that is null or
    an object), as the live backend reads it: a malformed answer, stored as an error, never as an empty
    answer. None otherwise (a choice line scored from log-probabilities needs no text)."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if status_code != 200 or not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None  # the backend's own reading says what is wrong with these
    if backend.body(request).get("logprobs"):
        return None
    return missing_text(choices[0])


def _errors_held(store: Store, keys: Sequence[str]) -> set[tuple[str, str]]:
    held: set[tuple[str, str]] = set()
    for start in range(0, len(keys), 900):
        chunk = list(keys[start : start + 900])
        sql = f"SELECT key, error FROM errors WHERE key IN ({','.join('?' * len(chunk))})"
        held.update((k, e) for k, e in store.conn.execute(sql, chunk))
    return held


def import_batch(study: str | Path, files: Iterable[Path]) -> ImportResult:
    """Store the answers of Batch output ``files`` in ``study`` (see the module)."""
    from biasatlas.lock import study_writer

    result = ImportResult()
    with study_writer(study), Store(study) as store:
        known = _Known(store)
        lines = []
        for path in files:
            _note_engine(Path(path).parent, result)
            for line in read_output(Path(path)):
                if isinstance(line, BadLine):
                    result.bad.append(line)
                    continue
                result.lines += 1
                if line.custom_id not in known.requests:
                    result.unknown += 1
                    if len(result.unknown_ids) < SHOWN_IDS:
                        result.unknown_ids.append(line.custom_id)
                    continue
                lines.append(line)
        ids = list(dict.fromkeys(line.custom_id for line in lines))
        answered = store.cached_keys(ids)
        errors_held = _errors_held(store, ids)
        batch: list[tuple[Response, Request]] = []
        now: set[str] = set()  # answered by this import
        touched: set[int] = set()
        for line in lines:
            key = line.custom_id
            if key in answered:
                if key in now:
                    result.duplicates += 1
                else:
                    result.already += 1
                continue
            _, request, backend = known.requests[key]
            if line.error is not None:
                response = Response(key=key, backend_id=backend.id, error=line.error)
            elif (missing := _missing_text(backend, request, line.status_code, line.body)) is not None:
                response = Response(key=key, backend_id=backend.id, error=f"malformed: {missing}")
            else:
                response = backend.answer(request, line.status_code, line.body)
            if response.ok:
                answered.add(key)
                now.add(key)
                result.answers += 1
            else:
                held = (key, _stored_error(response.error or ""))
                if held in errors_held:
                    result.already += 1
                    continue
                errors_held.add(held)
                result.errors += 1
            batch.append((response, request))
            touched.update(known.runs[key])
            if len(batch) >= SAVE_EVERY:
                store.save_many(batch)
                batch = []
        if batch:
            store.save_many(batch)
        for run_id in sorted(touched):
            result.runs[run_id] = _update_run(store, run_id, result)
    return result


def _update_run(store: Store, run_id: int, result: ImportResult) -> dict[str, int]:
    """An export run's counts after the import; ``complete`` once every item is answered."""
    planned, answered, failed = store.conn.execute(
        "SELECT COUNT(*), COUNT(r.key), SUM(CASE WHEN r.key IS NULL AND EXISTS (SELECT 1 FROM errors e"
        " WHERE e.key = i.key) THEN 1 ELSE 0 END) FROM run_items i LEFT JOIN responses r ON r.key = i.key"
        " WHERE i.run_id = ?",
        (run_id,),
    ).fetchone()
    failed = int(failed or 0)
    pending = planned - answered - failed
    row = store.conn.execute("SELECT totals_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    totals = json.loads(row[0] or "{}") if row else {}
    cached = int(totals.get("cached", 0))
    status = "complete" if answered == planned else ("complete_with_errors" if pending == 0 else EXPORTED)
    this = {"answers": result.answers, "errors": result.errors, **({"via": result.via} if result.via else {})}
    imports = [*totals.get("info", {}).get("imports", []), this]
    totals.update(new=answered - cached, failed=failed, pending=pending, status=status)
    totals.setdefault("info", {})["imports"] = imports
    store.finish_run(run_id, status, totals)
    return {"planned": planned, "answered": answered, "failed": failed, "pending": pending}


def _note_engine(folder: Path, result: ImportResult) -> None:
    """Record the engine that answered the files of ``folder`` (``batch run``'s manifest), once per folder."""
    from biasatlas.batch.ray_engine import read_manifest

    manifest = read_manifest(folder)
    if manifest is None:
        return
    last = (manifest.get("runs") or [{}])[-1]
    note = {"engine": "ray", "folder": str(folder), "address": last.get("address"),
            "endpoints": last.get("endpoints"), "ray_version": last.get("ray_version"),
            "runs": len(manifest.get("runs") or [])}
    if note not in result.via:
        result.via.append(note)
