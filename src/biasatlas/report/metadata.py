"""The report's closing sections: what ran (models, revisions, settings, versions, dates) and the papers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.report.cells import cell_text
from biasatlas.report.citations import REFERENCES as CITED
from biasatlas.report.html import Section, escape
from biasatlas.store import Store

#: the papers biasatlas implements and the methods it cites, as the references section lists them
REFERENCES = tuple(r.text for r in CITED)


def runs_table(store: Store) -> pd.DataFrame:
    """One row per run: probe, model and what identifies it, settings, counts, status, dates, versions."""
    runs = store.runs()
    rows = []
    for run in runs.to_dict("records"):
        config, totals = _json(run.get("config_json")), _json(run.get("totals_json"))
        settings = config.get("settings") or {}
        backend = config.get("backend") or {}
        versions = config.get("versions") or {}
        described = backend if isinstance(backend, dict) else {"description": str(backend)}
        rows.append({
            "run_id": run["run_id"],
            "probe": run["probe"],
            "model": config.get("display_name") or run["backend_id"],
            "model id": run["backend_id"],
            "model details": shown_paths("; ".join(f"{k} {cell_text(v)}" for k, v in described.items()
                                                   if v not in (None, "", {})))[:300],
            "settings": "; ".join(f"{k} {cell_text(settings[k]) or '–'}"
                                  for k in ("mode", "max_tokens", "temperature", "seed") if k in settings),
            "samples": config.get("samples"),
            "planned": totals.get("planned"),
            "new": totals.get("new"),
            "cached": totals.get("cached"),
            "failed": totals.get("failed"),
            "status": run["status"],
            "started": run["started_at"],
            "finished": run["finished_at"],
            "versions": "; ".join(f"{k} {cell_text(v)}" for k, v in versions.items() if v),
        })
    return pd.DataFrame(rows)


def _caches() -> list[tuple[str, str]]:
    """(directory, what a reader is told) for the places a model's files usually are, the longest first."""
    import os

    from biasatlas.backends.local.identity import cache_dir

    home = Path.home()
    hub = os.environ.get("HF_HUB_CACHE") or str(Path(os.environ.get("HF_HOME") or home / ".cache" / "huggingface")
                                                 / "hub")
    places = [(str(cache_dir()), "[model cache]"), (hub, "[Hugging Face cache]"), (str(home), "~")]
    return sorted(((d.rstrip("/"), name) for d, name in places if d and d != "/"), key=lambda p: -len(p[0]))


def shown_paths(text: str) -> str:
    """``text`` with local paths relative to the model cache (or the Hugging Face cache, or ~): a report
    shows where a model came from without the machine's directories."""
    for directory, name in _caches():
        text = text.replace(directory + "/", name + "/")
    return text


def study_title(store: Store) -> str | None:
    """The title of the audit that made the study's newest titled run (``config["audit"]["title"]``), if any."""
    rows = store.conn.execute("SELECT config_json FROM runs ORDER BY run_id DESC").fetchall()
    for (config_json,) in rows:
        audit = _json(config_json).get("audit")
        title = audit.get("title") if isinstance(audit, dict) else None
        if isinstance(title, str) and title.strip():
            return title.strip()
    return None


def _json(raw: Any) -> dict[str, Any]:
    """A JSON column as a dict; {} for a run that never recorded it (NULL comes back as NaN)."""
    if not isinstance(raw, str) or not raw:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


def runs_section(store: Store) -> Section | None:
    """What ran, for the reader who has to reproduce it."""
    table = runs_table(store)
    if table.empty:
        return None
    section = Section(
        title="Runs: models, settings, versions",
        key="runs",
        methods="Every run recorded in the study, in order: the model as biasatlas identifies it (server URL and "
        "model name, or the digest of the local weights and adapter), what the backend reported about it, the "
        "decoding settings, the counts (planned, newly asked, from the cache, failed), status, dates (UTC) and the "
        "versions of biasatlas and its libraries.",
    )
    section.add_table(table, caption="Runs")
    from biasatlas.languages.reviews import study_pack_line  # the packs' native-speaker reviews, as recorded

    packs = study_pack_line(store)
    if packs is not None:
        section.add_text(packs)
    return section


def references_section() -> Section:
    """The bibliography of the methods cited in the report."""
    section = Section(title="References", key="references")
    for reference in sorted(CITED, key=lambda r: r.text):
        # the anchor every author–year citation of the page links to
        section.add_html(f"<p class='reference' id='ref-{reference.key}'>{escape(reference.text)}</p>")
    return section
