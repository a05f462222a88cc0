"""Running an audit: every cell a run of its probe in the one study, each model loaded once.

Each cell calls ``probe.run(config, backend_options, study)``, so a cell is resumable exactly like
``biasatlas run PROBE`` (only answers not in the study's cache are asked). A model is opened once
for all its cells: the options handed to the probes open it on first use and lend it afterwards
(options that differ, such as another extractor of the stories probe, open their own backend).
Every run a cell makes is tagged with the model's display name (``config["display_name"]``) and
the audit (``config["audit"]``), which is how reports and exports name the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr

from biasatlas.backends.options import BackendOptions

if TYPE_CHECKING:
    from biasatlas.audit.cells import Cell
    from biasatlas.backends.base import Backend
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store


class _Lent:
    """A backend lent to one probe run: everything passes through, except that closing is left to the owner."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.id = backend.id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def close(self) -> None:
        """The owner closes the model when all its cells are done."""


class SharedBackendOptions(BackendOptions):
    """Backend options whose ``open()`` builds the model once and lends it to every later ``open()``.

    Copies (``model_copy``) share the model too; a copy with other options (another model, another
    adapter) opens a backend of its own, which its caller closes, as usual.
    """

    _state: dict[str, Any] = PrivateAttr(default_factory=dict)  # shared by reference with copies

    def model_post_init(self, context: Any) -> None:
        self._state["spec"] = self.model_dump_json()

    def open(self) -> Backend:
        state = self._state
        if self.model_dump_json() != state["spec"]:
            return super().open()
        if "backend" not in state:
            state["backend"] = super().open()
        return _Lent(state["backend"])

    @property
    def backend_id(self) -> str | None:
        """The id of the model once opened."""
        backend = self._state.get("backend")
        return None if backend is None else str(backend.id)

    def close(self) -> None:
        backend = self._state.pop("backend", None)
        if backend is not None:
            backend.close()


@dataclass
class AuditRun:
    """What an audit run did: every step's totals, and the cells skipped after a model stopped."""

    totals: list[RunTotals] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: model name -> why its backend could not be used (a server that cannot be reached, a model it lacks):
    #: the model's run stopped before it began, so no run records it
    stopped: dict[str, str] = field(default_factory=dict)


def last_run_id(study: Path) -> int:
    """The study's newest run id (0 when it holds none)."""
    from biasatlas.store import DB_NAME, Store

    if not (study / DB_NAME).exists():
        return 0
    with Store(study) as store:
        row = store.conn.execute("SELECT MAX(run_id) FROM runs").fetchone()
    return int(row[0] or 0)


def tag_runs(study: Path, after: int, backend_id: str | None, name: str, audit: dict[str, Any] | None = None) -> int:
    """Record the display name (and the audit, if one ran them) in the config of the runs after ``after`` made by
    ``backend_id`` (``biasatlas run --name`` tags its runs the same way)."""
    from biasatlas.lock import study_writer
    from biasatlas.store import Store

    if backend_id is None:
        return 0
    with study_writer(study), Store(study) as store:
        rows = store.conn.execute(
            "SELECT run_id, config_json FROM runs WHERE run_id > ? AND backend_id = ?", (after, backend_id)
        ).fetchall()
        for run_id, config_json in rows:
            config = json.loads(config_json)
            config["display_name"] = name
            if audit is not None:
                config["audit"] = audit
            store.update_run_config(int(run_id), config)
    return len(rows)


def audit_title(audit_file: Path) -> str | None:
    """The ``title`` of an audit file, if it has one (None where the file cannot be read now)."""
    from biasatlas.audit.spec import read_file

    try:
        title = read_file(Path(audit_file)).get("title")
    except (ValueError, OSError):
        return None
    return str(title) if title is not None and str(title).strip() else None


def display_names(store: Store) -> dict[str, str]:
    """Backend id -> the display name an audit gave it (see :func:`biasatlas.display.display_names`)."""
    from biasatlas.display import display_names as names_of

    return names_of(store.conn)


def run_cells(
    cells: Sequence[Cell],
    study: Path,
    *,
    audit_file: Path,
    progress: bool = False,
    on_cell: Callable[[int, Cell], None] | None = None,
    on_totals: Callable[[RunTotals], None] | None = None,
    planned: Sequence[int] | None = None,
) -> AuditRun:
    """Run every cell into ``study``, model by model. A model whose run stopped (its backend kept failing,
    or could not be opened: a server that cannot be reached) has its remaining cells skipped; the later models
    are asked all the same. KeyboardInterrupt propagates after the runs made so far are tagged.
    ``planned`` (requests of each cell's plan): with ``progress``, each progress line off a terminal is
    followed by one for the whole audit (:class:`biasatlas.progress.AuditProgress`)."""
    from biasatlas.progress import CURRENT_AUDIT, AuditProgress

    tracker = AuditProgress(list(planned)) if progress and planned is not None else None
    token = CURRENT_AUDIT.set(tracker)
    try:
        return _run_cells(cells, study, audit_file, progress, on_cell, on_totals, tracker)
    finally:
        CURRENT_AUDIT.reset(token)


def _run_cells(
    cells: Sequence[Cell],
    study: Path,
    audit_file: Path,
    progress: bool,
    on_cell: Callable[[int, Cell], None] | None,
    on_totals: Callable[[RunTotals], None] | None,
    tracker: Any,
) -> AuditRun:
    from biasatlas.backends.base import BackendError

    result = AuditRun()
    audit_record: dict[str, Any] = {"file": str(audit_file)}
    title = audit_title(audit_file)
    if title is not None:
        audit_record["title"] = title  # the report's title
    by_model: dict[str, list[tuple[int, Cell]]] = {}
    for index, cell in enumerate(cells):
        by_model.setdefault(cell.model.name, []).append((index, cell))
    for name, model_cells in by_model.items():
        options = SharedBackendOptions(**model_cells[0][1].model.options.model_dump())
        stopped = False
        try:
            for index, cell in model_cells:
                if stopped:
                    result.skipped.append(cell.label())
                    continue
                if on_cell is not None:
                    on_cell(index, cell)
                if tracker is not None:
                    tracker.start_cell(index)
                before = last_run_id(study)
                try:
                    steps = cell.probe.run(cell.config, options, study, progress=progress, on_totals=on_totals)
                except BackendError as exc:  # one model's server down ends that model's cells, not the audit
                    result.stopped[name] = str(exc)
                    result.skipped.append(cell.label())
                    stopped = True
                    continue
                finally:
                    provider = {"provider": cell.model.provider} if cell.model.provider else {}
                    tag_runs(study, before, options.backend_id, name, {**audit_record, "model": name, **provider})
                result.totals.extend(steps)
                if tracker is not None:
                    tracker.finish_cell(index)
                stopped = any(t.status == "stopped" for t in steps)
        finally:
            options.close()
    return result
