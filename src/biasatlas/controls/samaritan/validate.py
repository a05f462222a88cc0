"""The Samaritan control in ``biasatlas validate``: measure the shipped adapter and the base model, give table rows."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biasatlas.controls.samaritan import data as samaritan

#: held-out scenarios `biasatlas validate` and the CI test ask base + adapter, one phrasing per age group
#: (x 5 prompts): the power curve finds the planted group in 50 of 50 studies from 12 scenarios on in
#: English (0.70 at 10), from 8 in German (every difference the same: the exact sign test needs 8)
VALIDATE_SCENARIOS = {"en": 12, "de": 8}
#: held-out scenarios asked of the base model (its answers at 6 tokens are mostly unreadable: a cheap check)
BASE_SCENARIOS = 2


def _shown(verdict: dict[str, Any]) -> str:
    f = verdict.get("found") or {}
    if f.get("bias") is None:
        return f"untested ({f.get('n', 0) if f else 0} scenarios readable for both sides)"
    ci = "" if f.get("ci_low") is None else f" [{f['ci_low']:+.1f}, {f['ci_high']:+.1f}]"
    p = "" if f.get("p_adj") is None else f", p(Holm) {f['p_adj']:.2g}"
    return f"{f['bias']:+.1f} rating points{ci}{p}"


def validate(study: str | Path, base: bool = True, scenarios: Mapping[str, int] | None = None
             ) -> tuple[dict[str, Any], list[list[str]], bool]:
    """`biasatlas validate`'s Samaritan part: (results by model role, table rows, passed).

    Base + adapter must find the planted group with no more untouched groups flagged than the bound; the
    base model must not find it. Rows: probe, model, language, planted group, found, effect, untouched flagged.
    """
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.adapters import BASE_MODEL, adapter_dir
    from biasatlas.controls.samaritan.check import check_samaritan  # looked up on each call (tests replace it)

    adapter = adapter_dir(samaritan.NAME)
    if not (adapter / "adapter_config.json").is_file():
        raise FileNotFoundError(f"no control adapter at {adapter} (rebuild with scripts/build_controls.py)")
    roles = [("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter)))]
    if base:
        roles.append(("base", BackendOptions(model=BASE_MODEL)))
    results: dict[str, Any] = {}
    rows: list[list[str]] = []
    ok = True
    for role, options in roles:
        check = check_samaritan(options, study,
                                scenarios=(scenarios or VALIDATE_SCENARIOS) if role == "adapter" else BASE_SCENARIOS,
                                phrasings=samaritan.first_phrasings())
        verdicts = [v.as_dict() for v in check.verdicts]
        results[role] = {"prompts": check.prompts, "verdicts": verdicts}
        ok = ok and (check.passed if role == "adapter" else not any(v["detected"] for v in verdicts))
        for v in verdicts:
            rows.append([samaritan.NAME, "base + control" if role == "adapter" else "base", v["language"],
                         v["planted"], "found" if v["detected"] else "not found", _shown(v),
                         f"{len(v['false_flags'])} of {v['untouched']} (≤ {v['false_flag_bound']})"])
    return results, rows, ok
