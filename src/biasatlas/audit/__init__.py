"""Audits: many models x probes x languages from one file, run into one study, one report.

``spec`` reads and validates the file, ``cells`` turns it into runs (model x probe x language x
seed, each with its probe config), ``models`` tells each model's backend id, token counter and
prices without loading it, ``estimate`` is ``--plan-only``, ``execute`` runs the cells. See
docs/audit.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from biasatlas.audit.cells import Cell, build_cells, plan_cells, skipped_languages
from biasatlas.audit.estimate import CellPlan, estimate_cells, plan_totals
from biasatlas.audit.execute import AuditRun, SharedBackendOptions, display_names, run_cells
from biasatlas.audit.models import ModelInfo, model_info
from biasatlas.audit.spec import AUDIT_PROBES, Audit, AuditError, ModelEntry, ProbeEntry, load_audit
from biasatlas.records import Prompt

__all__ = [
    "AUDIT_PROBES", "Audit", "AuditError", "AuditRun", "Cell", "CellPlan", "ModelEntry", "ModelInfo", "Plan",
    "ProbeEntry", "SharedBackendOptions", "build_cells", "check_models", "display_names", "estimate_cells",
    "load_audit", "model_info", "plan_audit", "plan_cells", "plan_totals", "run_cells", "skipped_languages",
]


def check_models(audit: Audit, *, strict: bool = True) -> tuple[dict[str, ModelInfo], list[str]]:
    """Each model's :class:`ModelInfo`, by display name, and notes.

    ``strict``: a model that cannot be used (no such file, no API key, a bad URL) is an AuditError
    naming its key path, and so are two entries that are the same model; otherwise its backend id
    is unknown and a note says why.
    """
    from biasatlas.backends.base import BackendError

    infos: dict[str, ModelInfo] = {}
    notes: list[str] = []
    seen: dict[str, ModelEntry] = {}
    for model in audit.models:
        try:
            info = model_info(model.options)
        except BackendError as exc:
            if strict:
                raise audit.error(f"{model.key}.model", str(exc)) from None
            from biasatlas.audit.models import APPROXIMATION, approximate_tokens

            info = ModelInfo(None, approximate_tokens, APPROXIMATION, id_note=str(exc))
        if info.id_note:
            notes.append(f"{model.name}: already cached unknown: {info.id_note}")
        if info.backend_id is not None:
            other = seen.setdefault(info.backend_id, model)
            if other is not model and strict:
                raise audit.error(model.key, f"the same model as {other.key} ({info.backend_id}); "
                                  "give each model once")
        infos[model.name] = info
    return infos, notes


@dataclass
class Plan:
    """A validated audit, its cells and their prompts."""

    audit: Audit
    cells: list[Cell]
    prompts: list[list[Prompt]]
    notes: list[str]


def plan_audit(path: str | Path) -> Plan:
    """Read, validate and plan an audit file (every probe config and plan checked); nothing is asked."""
    audit = load_audit(path)
    cells = build_cells(audit)
    return Plan(audit, cells, plan_cells(audit, cells), skipped_languages(audit))
