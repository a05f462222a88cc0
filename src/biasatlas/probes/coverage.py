"""The coverage matrix of `biasatlas languages`: probe x language, with each pack's review status
(``status``: from the recorded native-speaker reviews only), its reviews' figures and its files' provenance."""

from __future__ import annotations

from typing import Any

from biasatlas.languages import ATLAS_LANGUAGES, LanguagePackError, pack, pack_codes
from biasatlas.languages.form_readings import reading_status, reading_summary
from biasatlas.languages.reviews import review_status, review_summary

PROBES = ("contact", "samaritan", "stories", "leakage")


def _probe_languages() -> dict[str, tuple[str, ...]]:
    from biasatlas.probes import load_probe

    return {name: tuple(load_probe(name).languages) for name in PROBES}


def coverage() -> list[dict[str, Any]]:
    """One row per language (atlas order, then any other language a probe speaks)."""
    by_probe = _probe_languages()
    codes = list(dict.fromkeys([*ATLAS_LANGUAGES, *pack_codes(), *(c for v in by_probe.values() for c in v)]))
    rows = []
    for code in codes:
        review: dict[str, Any] | None = None
        forms_read: dict[str, Any] | None = None
        forms_status = ""
        try:
            p = pack(code)
            status, name, files = review_status(p), p.name, p.status
            review = review_summary(p)
            forms_read = reading_summary(p.path)
            forms_status = reading_status(p.path) if forms_read is not None else ""
        except LanguagePackError:
            status, name, files = "no pack (probe data only)", code, None
        rows.append({"language": code, "name": name, "status": status,
                     **{probe: code in langs for probe, langs in by_probe.items()},
                     "review": review, "forms_read": forms_read, "forms_status": forms_status,
                     "files": files})
    return rows
