"""Assemble the report of a study: every probe it holds, in the registry's order."""

from __future__ import annotations

from pathlib import Path

from biasatlas.probes import PROBE_MODULES, load_probe
from biasatlas.probes.base import Probe
from biasatlas.report.html import Section, write_report
from biasatlas.store import Store


def study_probes(store: Store) -> list[str]:
    """The probes with prompts in the study, plus debias (its comparisons reuse contact prompts)."""
    rows = {r[0] for r in store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()}
    present = [name for name in PROBE_MODULES if name in rows]
    if "debias" not in present:
        present.append("debias")
    return present


def build_report(store: Store, study_dir: Path, out: Path | None = None) -> Path:
    """Write the self-contained HTML report of ``store`` (default ``study_dir/report.html``)."""
    sections: list[Section] = []
    validity = Section(
        title="Validity of the answers",
        methods="Per model and language: answers stored, answers a reader could read (the rates of every probe "
        "describe these only), refusals, hedges or both options, answers in another language, answers cut at the "
        "token limit. A warning marks cells where more than 20% are unreadable.",
    )
    for name in study_probes(store):
        probe = load_probe(name)
        sections.extend(probe.report_sections(store))
        if name != "debias":
            _add_validity(validity, probe, store)
    if validity.blocks:
        sections.insert(0, validity)
    return write_report(study_dir, sections, out=out)


def _add_validity(section: Section, probe: Probe, store: Store) -> None:
    from biasatlas.validity import warnings

    table = probe.validity(store)
    if table.empty:
        return
    for line in warnings(table, probe.name):
        section.add_text(f"Warning: {line}")
    section.add_table(table, caption=f"{probe.title}: validity by model and language")
