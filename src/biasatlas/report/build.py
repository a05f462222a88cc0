"""Assemble the report of a study: every probe it holds, in the registry's order."""

from __future__ import annotations

from pathlib import Path

from biasatlas.probes import PROBE_MODULES, load_probe
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
    for name in study_probes(store):
        sections.extend(load_probe(name).report_sections(store))
    return write_report(study_dir, sections, out=out)
