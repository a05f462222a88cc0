"""The cells of an audit: one run per model x probe x language (x seed), each with its probe config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biasatlas.audit.spec import Audit, AuditError, ModelEntry, ProbeEntry
from biasatlas.probes import load_probe
from biasatlas.probes.base import Probe, ProbeConfig, ProbeConfigError
from biasatlas.records import Prompt


@dataclass
class Cell:
    """One model x probe x language x seed: a run of ``probe`` with ``config`` (its languages narrowed to one)."""

    model: ModelEntry
    probe: Probe
    language: str
    seed: int
    config: ProbeConfig

    def label(self, seeds: int = 1) -> str:
        seed = f" · seed {self.seed}" if seeds > 1 else ""
        return f"{self.model.name} · {self.probe.name} · {self.language}{seed}"


def probe_languages(audit: Audit, entry: ProbeEntry) -> list[str]:
    """A probe's languages: its own, else the audit's it has data for, else its defaults."""
    probe = load_probe(entry.name)
    if entry.languages is not None:
        return entry.languages
    if audit.languages is not None:
        return [lang for lang in audit.languages if lang in probe.languages]
    return list(probe.default_languages)


def skipped_languages(audit: Audit) -> list[str]:
    """Notes on the audit's languages a probe has no data for (those cells are left out)."""
    notes = []
    for entry in audit.probes:
        if entry.languages is None and audit.languages is not None:
            missing = [lang for lang in audit.languages if lang not in load_probe(entry.name).languages]
            if missing:
                notes.append(f"{entry.name} has no data in {', '.join(missing)}: those cells are left out")
    return notes


def _config(audit: Audit, entry: ProbeEntry, probe: Probe, values: dict[str, Any]) -> ProbeConfig:
    try:
        return probe.config(**values)
    except ProbeConfigError as exc:
        raise _error(audit, entry, probe, str(exc)) from None


def _error(audit: Audit, entry: ProbeEntry, probe: Probe, message: str) -> AuditError:
    """A probe's one-line config error, under the key path of the field it names (if it names one)."""
    head, sep, rest = message.partition(": ")
    if sep and head.split(".")[0] in probe.config_model.model_fields:
        return audit.error(f"{entry.key}.{head}", rest)
    return audit.error(entry.key, message)


def cell_config(audit: Audit, entry: ProbeEntry, language: str, seed: int, model: str) -> ProbeConfig:
    """The probe config of one cell: the file's values, one language, the seed, the samples, the model's method.

    ``samples`` given under the probe applies as given; the audit's top-level ``samples`` applies
    where the probe samples (generate mode): choice mode scores each prompt once.
    """
    probe = load_probe(entry.name)
    values = {**entry.values, "languages": [language], "seed": seed}
    if entry.samples is not None:
        values["samples"] = entry.samples
    config = _config(audit, entry, probe, values)
    if entry.samples is None and audit.samples is not None and probe.mode_of(config) != "choice":
        config = _config(audit, entry, probe, {**values, "samples": audit.samples})
    for_model = getattr(probe, "for_model", None)  # leakage: the method the model needs (theme or ilps)
    if callable(for_model):
        try:
            config = for_model(config, model)
        except ProbeConfigError as exc:
            raise _error(audit, entry, probe, str(exc)) from None
    return config


def build_cells(audit: Audit) -> list[Cell]:
    """Every cell of the audit, model by model, then probe, language and seed (the order they run in)."""
    cells = []
    for model in audit.models:
        for entry in audit.probes:
            probe = load_probe(entry.name)
            for language in probe_languages(audit, entry):
                for seed in audit.seeds:
                    config = cell_config(audit, entry, language, seed, model.options.model)
                    cells.append(Cell(model, probe, language, seed, config))
    return cells


def plan_cells(audit: Audit, cells: list[Cell]) -> list[list[Prompt]]:
    """Each cell's prompts (plans shared by cells of the same config); a plan that fails is an AuditError."""
    plans: dict[tuple[str, str], list[Prompt]] = {}
    out = []
    for cell in cells:
        key = (cell.probe.name, cell.config.model_dump_json())
        if key not in plans:
            entry = next(e for e in audit.probes if e.name == cell.probe.name)
            try:
                plans[key] = cell.probe.plan(cell.config)
            except ProbeConfigError as exc:
                raise _error(audit, entry, cell.probe, str(exc)) from None
            if not plans[key]:
                raise audit.error(entry.key, f"the plan in {cell.language} is empty: nothing to ask "
                                  "(check the filters)")
        out.append(plans[key])
    return out
