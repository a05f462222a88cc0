"""`biasatlas audit --plan-only`: per cell, prompts, already cached, to ask, tokens, cost and time.

Nothing is written: the study (if it exists) is opened read-only. Estimates, as stated in docs/audit.md:

- prompt tokens: the prompt text of each request still to ask (the chat template's own tokens are
  not counted), by the model's tokenizer or at 4 characters per token (``tokens_by`` says which);
- completion tokens: at most ``max_tokens`` per request in generate mode (an upper bound), 1 in
  choice mode (one token's log-probabilities; HTTP full-option scoring sends the prompt once per option);
- cost: those tokens at the model's ``price_prompt`` / ``price_completion`` (USD per million tokens);
- time: the requests to ask times the seconds per new answer this model took in this mode in the
  study's finished runs (their totals' ``seconds`` / ``new``); unknown before the first run;
- power: per test cell of the probe (contact: language × scale; samaritan: language × category), the
  minimum detectable effect at 80% power and the probe's alpha for the planned n, with the assumptions
  (:mod:`biasatlas.probes.power`, docs/power.md); None for a probe without a power model.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from biasatlas.audit.cells import Cell
from biasatlas.audit.models import ModelInfo
from biasatlas.records import GenerationSettings, Prompt, Request

#: prompts keyed per cache look-up while counting what the study holds
KEY_CHUNK = 512


@dataclass
class CellPlan:
    """The plan of one cell; None where a figure cannot be known (``notes`` says why)."""

    model: str
    backend_id: str | None
    probe: str
    language: str
    seed: int
    mode: str
    prompts: int
    requests: int
    cached: int | None
    to_ask: int | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    seconds: float | None
    tokens_by: str
    power: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class StudyView:
    """Read-only access to a study's cache and run totals (no file is created or changed)."""

    def __init__(self, study: Path) -> None:
        from biasatlas.store import DB_NAME

        db = study / DB_NAME
        self.conn: sqlite3.Connection | None = None
        self._top: dict[str, int] = {}  # backend id -> its highest planned sample index
        if db.is_file():
            self.conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)

    def cached(self, keys: Sequence[str]) -> set[str]:
        if self.conn is None:
            return set()
        found: set[str] = set()
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), 900):
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT key FROM responses WHERE key IN ({marks})", chunk)
            found.update(row[0] for row in rows)
        return found

    def max_sample_index(self, backend_id: str) -> int:
        """The highest sample index the study planned for ``backend_id`` (-1: none); one scan per backend."""
        if self.conn is None:
            return -1
        if backend_id not in self._top:
            row = self.conn.execute("SELECT MAX(sample_index) FROM run_items WHERE backend_id = ?",
                                    (backend_id,)).fetchone()
            self._top[backend_id] = -1 if row is None or row[0] is None else int(row[0])
        return self._top[backend_id]

    def seconds_per_answer(self) -> dict[tuple[str, str], float]:
        """Measured seconds per new answer, by (backend id, mode), over the study's finished runs."""
        if self.conn is None:
            return {}
        spent: dict[tuple[str, str], list[float]] = {}
        rows = self.conn.execute("SELECT backend_id, config_json, totals_json FROM runs WHERE totals_json IS NOT NULL")
        for backend_id, config_json, totals_json in rows:
            try:
                totals = json.loads(totals_json)
                mode = json.loads(config_json).get("settings", {}).get("mode", "generate")
            except (TypeError, ValueError, AttributeError):
                continue
            new, seconds = totals.get("new") or 0, totals.get("seconds") or 0.0
            if new > 0 and seconds > 0:
                sums = spent.setdefault((backend_id, mode), [0.0, 0.0])
                sums[0] += seconds
                sums[1] += new
        return {key: s / n for key, (s, n) in spent.items()}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def estimate_cells(
    cells: Sequence[Cell], plans: Sequence[Sequence[Prompt]], infos: dict[str, ModelInfo], study: Path
) -> list[CellPlan]:
    """One :class:`CellPlan` per cell."""
    from biasatlas.backends.http.usage import cost_usd
    from biasatlas.probes.power import power_plan

    view = StudyView(study)
    try:
        pace = view.seconds_per_answer()
        rows = []
        token_memo: dict[tuple[str, str], int] = {}
        for cell, prompts in zip(cells, plans, strict=True):
            info = infos[cell.model.name]
            settings = cell.probe.settings(cell.config)
            samples = cell.probe.samples(cell.config)
            requests = len(prompts) * samples
            # counted per prompt, never one request per sample: `samples: 1e9` is a count, not a list to build
            held = _cached_per_prompt(prompts, settings, samples, info.backend_id, view)
            cached = None if held is None else sum(held)
            left = [samples] * len(prompts) if held is None else [samples - h for h in held]
            prompt_tokens = 0
            for prompt, asked in zip(prompts, left, strict=True):
                if asked:
                    memo = (cell.model.name, prompt.text)
                    if memo not in token_memo:
                        token_memo[memo] = info.count_tokens(prompt.text)
                    prompt_tokens += token_memo[memo] * asked
            todo = sum(left)
            completion_tokens = todo * (1 if settings.mode == "choice" else settings.max_tokens)
            rate = pace.get((info.backend_id, settings.mode)) if info.backend_id else None
            rows.append(CellPlan(
                model=cell.model.name,
                backend_id=info.backend_id,
                probe=cell.probe.name,
                language=cell.language,
                seed=cell.seed,
                mode=settings.mode,
                prompts=len(prompts),
                requests=requests,
                cached=cached,
                to_ask=None if cached is None else requests - cached,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost_usd(prompt_tokens, completion_tokens, info.price_prompt, info.price_completion),
                seconds=None if rate is None else round(rate * todo, 1),
                tokens_by=info.tokens_by,
                power=power_plan(cell.probe.name, prompts, mode=settings.mode,
                                 alpha=getattr(cell.config, "alpha", None)) if prompts else None,
            ))
        return rows
    finally:
        view.close()


def _cached_per_prompt(prompts: Sequence[Prompt], settings: GenerationSettings, samples: int,
                       backend_id: str | None, view: StudyView) -> list[int] | None:
    """How many of each prompt's ``samples`` answers the study holds; None where the backend id is unknown.

    Only the sample indices the study ever planned for this backend are keyed (every stored answer is a run's
    item: a live run's, or an exported plan's that an import answered): a sample index beyond them has no answer.
    """
    if backend_id is None:
        return None
    top = min(samples, view.max_sample_index(backend_id) + 1)
    held: list[int] = []
    for start in range(0, len(prompts), KEY_CHUNK):
        part = prompts[start : start + KEY_CHUNK]
        keys = [[Request(prompt=p, settings=settings, sample_index=s).cache_key(backend_id) for s in range(top)]
                for p in part]
        found = view.cached([k for ks in keys for k in ks])
        held.extend(sum(1 for k in ks if k in found) for ks in keys)
    return held


def plan_totals(rows: Sequence[CellPlan]) -> dict[str, Any]:
    """Sums over the cells; a sum is None when any cell's figure is unknown."""

    def total(name: str) -> Any:
        values = [getattr(r, name) for r in rows]
        if any(v is None for v in values):
            return None
        return round(sum(values), 6) if name == "cost_usd" else sum(values)

    fields = ("prompts", "requests", "cached", "to_ask", "prompt_tokens", "completion_tokens", "cost_usd",
              "seconds")
    out = {name: total(name) for name in fields}
    if out["cost_usd"] is None and any(r.cost_usd is not None for r in rows):
        out["cost_usd_priced"] = round(sum(r.cost_usd or 0.0 for r in rows), 6)  # models with prices only
    return out


def power_notes(rows: Sequence[CellPlan]) -> list[str]:
    """One line per test cell: the n and the MDE at the stated power and alpha; each probe's assumptions once."""
    lines: list[str] = []
    assumptions: dict[str, list[str]] = {}
    for r in rows:
        if r.power is None:
            continue
        assumptions.setdefault(r.probe, r.power["assumptions"])
        for c in r.power["cells"]:
            where = " ".join(str(c[k]) for k in ("scale", "category") if k in c)
            lines.append(f"power: {r.model} / {r.probe} / {r.language}{' / ' + where if where else ''}: "
                         f"n = {c['n']} {c['unit']}s, {c['test']} at α {c['alpha']:g}, {c['power']:.0%} power: "
                         f"MDE {c['mde_text']}")
    for probe, texts in assumptions.items():
        lines.extend(f"power assumptions ({probe}): {text}" for text in texts)
    lines.extend(_group_notes(rows))
    return lines


def _group_notes(rows: Sequence[CellPlan]) -> list[str]:
    """One line per probe × language × axis (group vs rest), the same for every model: said once."""
    lines: list[str] = []
    tests: dict[str, dict[str, Any]] = {}
    for r in rows:
        groups = (r.power or {}).get("groups")
        if not groups:
            continue
        tests.setdefault(r.probe, groups)
        lines.extend(f"group power: {r.probe} / {axis['line']}" for axis in groups["axes"])
    lines = list(dict.fromkeys(lines))
    for probe, groups in tests.items():
        lines.append(f"group power assumptions ({probe}): {groups['test']}; " + "; ".join(groups["assumptions"]))
    return lines
