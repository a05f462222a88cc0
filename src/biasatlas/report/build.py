"""Assemble the report of a study: the overview, every probe it holds (registry order), the runs, the papers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biasatlas.probes import PROBE_MODULES, load_probe
from biasatlas.probes.base import Probe
from biasatlas.report.answers import answers_frame
from biasatlas.report.cache import build_cache, release
from biasatlas.report.headlines import COLUMNS, headline
from biasatlas.report.html import Section, write_report
from biasatlas.report.metadata import references_section, runs_section, study_title
from biasatlas.report.methods_doc import methods_block
from biasatlas.report.overview import overview_section
from biasatlas.report.table_data import model_label
from biasatlas.store import Store


def study_probes(store: Store) -> list[str]:
    """The probes with prompts in the study, plus debias (its comparisons reuse contact prompts)."""
    rows = {r[0] for r in store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()}
    present = [name for name in PROBE_MODULES if name in rows]
    if "debias" not in present:
        present.append("debias")
    return present


def build_report(store: Store, study_dir: Path, out: Path | None = None, *, publish: bool = True) -> Path:
    """Write the self-contained HTML report of ``store`` (default ``study_dir/report.html``).

    With ``publish`` every table (CSV, LaTeX) and figure (SVG, PDF) also goes to ``report_files/``.
    """
    with build_cache():  # each probe's summary once: its headline and its section both read it
        return _build(store, study_dir, out, publish)


def _build(store: Store, study_dir: Path, out: Path | None, publish: bool) -> Path:
    probe_sections: list[Section] = []
    headlines: dict[str, pd.DataFrame] = {}
    validity: dict[str, pd.DataFrame] = {}
    titles: dict[str, str] = {}
    for name in study_probes(store):
        probe = load_probe(name)
        titles[name] = probe.title
        own = probe.report_sections(store)
        full = methods_block(name)
        if full is not None and own:
            own[0].blocks.insert(0, full)  # right under the section's methods paragraph
        if name != "debias":
            validity[name] = _model_labels(probe.validity(store))
            headlines[name] = _headline(probe, store)
            answers = _answers_section(probe, store)
            if answers is not None:
                own.append(answers)
        probe_sections.extend(own)
    sections: list[Section] = []
    overview = overview_section(headlines, validity, titles)
    if overview is not None:
        sections.append(overview)
    checks = _validity_section(validity, titles, headlines)
    if checks is not None:
        from biasatlas.report.reading import add_to_section  # issue 27: the reading, its agreement and human check

        add_to_section(checks, store)
        sections.append(checks)
    sections.extend(probe_sections)
    runs = runs_section(store)
    if runs is not None:
        sections.append(runs)
    sections.append(references_section())
    title = study_title(store)  # an audit's title, where an audit made the study
    release()  # the summaries have given the sections their tables
    if title is None:
        return write_report(study_dir, sections, out=out, publish=publish)
    return write_report(study_dir, sections, title=title, out=out, publish=publish, page_title=title)


def _headline(probe: Probe, store: Store) -> pd.DataFrame:
    try:
        return headline(probe, store)
    except (KeyError, ValueError) as exc:  # a probe's outcomes without the columns its headline reads
        import logging

        logging.getLogger(__name__).warning("no headline for %s: %s", probe.name, exc)
        return pd.DataFrame(columns=COLUMNS)


def _model_labels(table: pd.DataFrame) -> pd.DataFrame:
    return table if table.empty else table.assign(model=table["model"].astype(str))


def _answers_section(probe: Probe, store: Store) -> Section | None:
    outcomes = probe.outcomes(store)
    if outcomes.empty:
        return None
    frame = answers_frame(outcomes, tuple(probe.factors), probe.value_column, model_of=model_label)
    if frame.empty:
        return None
    section = Section(title=f"{probe.title}: the answers", key=probe.name,
                      methods="Every stored answer of this probe with the prompt, the design factors, the value "
                      "the reader parsed and its reason. Choice-mode answers show the option probabilities. "
                      "Long answers are cut in the page; `biasatlas export` gives them whole.")
    section.add_answers(frame)
    return section


def _validity_section(validity: dict[str, pd.DataFrame], titles: dict[str, str],
                      headlines: dict[str, pd.DataFrame]) -> Section | None:
    from biasatlas.report.checks import validity_section

    return validity_section(validity, titles, headlines)  # the same flags as the overview's cells
