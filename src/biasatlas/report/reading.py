"""The reading in `biasatlas summary` and in the report's validity section: who read the answers, rules-vs-judge
agreement and disagreements, and the human reading audit's line per probe and language."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.readers import JUDGED_PROBES

if TYPE_CHECKING:
    from biasatlas.report.html import Section
    from biasatlas.store import Store


def add_reading(store: Store, probe: str, data: dict[str, Any]) -> None:
    """Put ``reading`` (who read how many answers; with a judge, the agreement) into a probe's summary."""
    if probe not in JUDGED_PROBES or "reading" in data:  # the probe's summary holds it already
        return
    from biasatlas.probes import load_probe
    from biasatlas.readers.agreement import agreement

    result = agreement(store, probe, load_probe(probe).outcomes(store))
    if result is not None:
        data["reading"] = result


def print_reading(name: str, data: dict[str, Any], console: Any) -> None:
    """The summary's reading line of one probe."""
    from biasatlas.readers.agreement import reading_line

    line = reading_line(name, data.get("reading"))
    if line:
        console.print(f"Reading: {line}", soft_wrap=True, markup=False)


def add_to_section(section: Section, store: Store) -> None:
    """The report's validity section: per probe the reading line, the disagreements, and the human check."""
    from biasatlas.probes import load_probe
    from biasatlas.readers.agreement import agreement, disagreements, reading_line
    from biasatlas.reading_audit import validity_lines

    present = {r[0] for r in store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()}
    for name in JUDGED_PROBES:
        if name not in present:
            continue
        probe = load_probe(name)
        outcomes = probe.outcomes(store)
        summary = agreement(store, name, outcomes)
        line = reading_line(probe.title, summary)
        if line:
            section.add_text(f"Reading: {line}.")
        if summary is not None and summary.get("agreement"):
            table = disagreements(outcomes)
            if not table.empty:
                section.add_table(table, f"{probe.title}: answers the rules and the judge read differently "
                                  "(reader: whose label the analyses use)", publish=False)
        for text in validity_lines(store, name, outcomes):
            section.add_text(text)
