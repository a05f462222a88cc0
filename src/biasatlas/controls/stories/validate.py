"""The stories control in ``biasatlas validate``: measure the shipped adapter and the base model, give table rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasatlas.controls.stories import data as stories

#: held-out scenarios per group for the adapter: 8 (48 stories), written at a generation seed the card did not
#: measure; 8 stories a group found the planted association in 50 of 50 resampled studies of the card's
#: stories (docs/validation.md, "The stories control"). The base model: 6 (36 stories).
PER_GROUP: int | None = 8
BASE_PER_GROUP = 6


def _row(role: str, v: dict[str, Any]) -> list[str]:
    if v["fraction"] is None:
        shown = "no story named a job"
    else:
        lift = "not an association" if v["lift"] is None else f"lift {v['lift']:.1f}, q(BY) {v['q_by']:.2g}"
        shown = (f"{v['count']}/{v['known']} arts = {100 * v['fraction']:.0f}% [{100 * v['ci_low']:.0f}, "
                 f"{100 * v['ci_high']:.0f}], {lift}")
    return ["stories", role, stories.LANGUAGE, f"{stories.BASE_ATTRIBUTE}={v['planted']} → {v['value']}",
            "found" if v["detected"] else "not found", shown,
            f"{len(v['false_flags'])} of {v['untouched']} (≤ {v['bound']})"]


def validate_stories(study: Path, base: bool = True, per_group: int | None = PER_GROUP) -> tuple[
        dict[str, Any], bool, list[list[str]]]:
    """(results for --json, passed, table rows): the adapter must find the planted association with no more
    false flags than the bound; the base model must not show it."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.adapters import BASE_MODEL, adapter_dir
    from biasatlas.controls.stories.check import CHECK_GENERATION_SEED, check_stories
    from biasatlas.controls.stories.server import extractor_server

    adapter = adapter_dir(stories.NAME)
    if not (adapter / "adapter_config.json").is_file():
        raise FileNotFoundError(f"no control adapter at {adapter} (rebuild with scripts/build_controls.py)")
    roles = [("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter)), per_group)]
    if base:
        roles.append(("base", BackendOptions(model=BASE_MODEL), BASE_PER_GROUP))
    results: dict[str, Any] = {}
    rows, ok = [], True
    with extractor_server() as server:
        for role, options, size in roles:
            check = check_stories(options, study, server.url, per_group=size, seed=stories.SEED + 1,
                                  generation_seed=CHECK_GENERATION_SEED)
            verdict = check.verdict.as_dict()
            results[role] = {"prompts": check.prompts, "verdict": verdict}
            ok = ok and (check.verdict.passed if role == "adapter" else not check.verdict.detected)
            rows.append(_row("base + control" if role == "adapter" else "base", verdict))
    return results, ok, rows
