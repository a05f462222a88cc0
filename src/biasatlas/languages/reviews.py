"""What a language pack's recorded native-speaker reviews say (its ``reviews.yaml``, read into
:attr:`biasatlas.languages.Pack.reviews`): the figures, the status line of the coverage matrix and the report's
line. The sheets and the records they leave are :mod:`biasatlas.pack_review.review`'s (they render the probes'
prompts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from biasatlas.languages import Pack

VERDICTS = ("ok", "awkward", "wrong")


def review_summary(pack: Pack) -> dict[str, Any]:
    """Reviewers (distinct names), reviews, prompts reviewed, verdict counts, share accepted (verdict ok)."""
    counts: Counter[str] = Counter()
    for record in pack.reviews:
        for verdict, n in (record.get("verdicts") or {}).items():
            counts[str(verdict)] += int(n)
    total = sum(counts.values())
    return {"reviewers": len({str(r.get("reviewer")) for r in pack.reviews}), "reviews": len(pack.reviews),
            "prompts_reviewed": total, "verdicts": {v: counts[v] for v in VERDICTS},
            "accepted": counts["ok"] / total if total else None}


def review_status(pack: Pack) -> str:
    """"machine-drafted, read by N reviewers, M prompts reviewed, K% accepted", or "machine-drafted, not
    reviewed by a native speaker" where no review is recorded (whatever the manifest's rows say)."""
    s = review_summary(pack)
    if not s["prompts_reviewed"]:
        return "machine-drafted, not reviewed by a native speaker"
    who = f"{s['reviewers']} reviewer{'s' if s['reviewers'] != 1 else ''}"
    return (f"machine-drafted, read by {who}, {s['prompts_reviewed']} prompts reviewed, "
            f"{100 * s['accepted']:.0f}% accepted")


def study_pack_line(store: Any) -> str | None:
    """:func:`provenance_line` of the languages of a study's contact and Samaritan prompts."""
    from biasatlas.languages import ATLAS_LANGUAGES

    found = {str(row[0]) for row in store.conn.execute(
        "SELECT DISTINCT language FROM prompts WHERE probe IN ('contact', 'samaritan')")}
    order = [c for c in ATLAS_LANGUAGES if c in found] + sorted(found - set(ATLAS_LANGUAGES))
    return provenance_line(order)


def provenance_line(codes: Sequence[str]) -> str | None:
    """The report's line on the language packs of a study's prompts (None when none of them has a pack)."""
    from biasatlas.languages import LanguagePackError, pack
    from biasatlas.languages.form_readings import reading_status, reading_summary

    parts = []
    for code in codes:
        try:
            p = pack(code)
        except LanguagePackError:
            continue
        forms = reading_summary(p.path)
        parts.append(f"{p.name} ({code}): {review_status(p)}"
                     + (f"; {reading_status(p.path)}" if forms is not None and forms["read"] else ""))
    if not parts:
        return None
    return ("Language packs of the contact and Samaritan prompts (native-speaker reviews recorded with "
            "`biasatlas languages review`): " + "; ".join(parts) + ".")
