"""Token usage, failure counts and cost of HTTP runs.

The backend counts while it runs (:class:`HttpStats`); the runner puts ``backend.run_stats()`` into
the run's totals (``totals.info["http"]``), so a study's usage is the sum over its runs' records
(:func:`study_usage`), readable long after the run without the backend.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biasatlas.store import Store


@dataclass
class EndpointStats:
    """Counters of one endpoint of a fleet since the last :meth:`.fleet.FleetClient.run_stats`."""

    requests: int = 0  # attempts sent
    answered: int = 0
    failed: int = 0  # attempts that failed (any cause)
    moved: int = 0  # attempts cancelled by a drain and asked again elsewhere
    drained: int = 0  # drain episodes
    latencies: list[float] = field(default_factory=list)  # seconds of the answered attempts

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in ("requests", "answered", "failed", "moved", "drained")}
        out["latency_s"] = None
        if self.latencies:
            import numpy as np

            values = np.asarray(self.latencies)
            p50, p95 = (round(float(q), 4) for q in np.percentile(values, [50, 95]))
            out["latency_s"] = {"mean": round(float(values.mean()), 4), "p50": p50, "p95": p95}
        return out


def cost_usd(
    prompt_tokens: int, completion_tokens: int, price_prompt: float | None, price_completion: float | None
) -> float | None:
    """Estimated cost in USD from prices per million tokens; None when no price is given."""
    if price_prompt is None and price_completion is None:
        return None
    return round(prompt_tokens * (price_prompt or 0.0) / 1e6 + completion_tokens * (price_completion or 0.0) / 1e6, 6)


@dataclass
class HttpStats:
    """Counters of one run of an HTTP backend (updated on the backend's event-loop thread only)."""

    requests: int = 0  # prompts asked (one per Response)
    attempts: int = 0  # HTTP calls made, retries and choice fallbacks included
    answered: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: Counter[str] = field(default_factory=Counter)  # failed attempts that were retried, by cause
    failures: Counter[str] = field(default_factory=Counter)  # requests given up on, by last cause
    errors: Counter[str] = field(default_factory=Counter)  # failed attempts by class (see .breaker)
    choice_fallbacks: int = 0

    def as_dict(self, price_prompt: float | None = None, price_completion: float | None = None) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "attempts": self.attempts,
            "answered": self.answered,
            "failed": self.failed,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "retries": dict(sorted(self.retries.items())),
            "failures": dict(sorted(self.failures.items())),
            "errors": dict(sorted(self.errors.items())),
            "choice_fallbacks": self.choice_fallbacks,
            "cost_usd": cost_usd(self.prompt_tokens, self.completion_tokens, price_prompt, price_completion),
        }


def format_stats(http: dict[str, Any]) -> str:
    """One line for the CLI: tokens, cost, retries and failures by cause."""
    parts = [
        f"{http.get('requests', 0)} requests in {http.get('attempts', 0)} HTTP calls",
        f"tokens: {http.get('prompt_tokens', 0)} prompt + {http.get('completion_tokens', 0)} completion",
    ]
    if http.get("cost_usd") is not None:
        parts.append(f"estimated cost ${http['cost_usd']:.4f}")
    retries = http.get("retries") or {}
    if retries:
        parts.append("retried: " + ", ".join(f"{k} {v}" for k, v in retries.items()))
    failures = http.get("failures") or {}
    if failures:
        parts.append("gave up: " + ", ".join(f"{k} {v}" for k, v in failures.items()))
    errors = http.get("errors") or {}
    if errors:
        parts.append("errors by class: " + ", ".join(f"{k} {v}" for k, v in errors.items()))
    if http.get("choice_fallbacks"):
        parts.append(f"choice fallbacks {http['choice_fallbacks']}")
    return "; ".join(parts)


def study_usage(store: Store, probe: str | None = None) -> dict[str, Any]:
    """Sum the HTTP usage recorded in a study's runs (optionally one probe's), per backend.

    Returns ``{backend_id: {requests, attempts, prompt_tokens, completion_tokens, cost_usd,
    retries, failures, errors, choice_fallbacks, runs}}``; runs without HTTP records are left out.
    """
    query = "SELECT backend_id, totals_json FROM runs" + (" WHERE probe = ?" if probe else "")
    out: dict[str, dict[str, Any]] = {}
    for backend_id, totals_json in store.conn.execute(query, (probe,) if probe else ()):
        http = (json.loads(totals_json or "{}").get("info") or {}).get("http")
        if not http:
            continue
        acc = out.setdefault(
            backend_id,
            {
                "runs": 0,
                "requests": 0,
                "attempts": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "cost_usd": None,
                "retries": Counter(),
                "failures": Counter(),
                "errors": Counter(),
                "choice_fallbacks": 0,
            },
        )
        acc["runs"] += 1
        for name in ("requests", "attempts", "prompt_tokens", "completion_tokens", "choice_fallbacks"):
            acc[name] += int(http.get(name) or 0)
        if http.get("cost_usd") is not None:
            acc["cost_usd"] = round((acc["cost_usd"] or 0.0) + float(http["cost_usd"]), 6)
        acc["retries"].update(http.get("retries") or {})
        acc["failures"].update(http.get("failures") or {})
        acc["errors"].update(http.get("errors") or {})
    for acc in out.values():
        acc["retries"] = dict(sorted(acc["retries"].items()))
        acc["failures"] = dict(sorted(acc["failures"].items()))
        acc["errors"] = dict(sorted(acc["errors"].items()))
    return out


def run_notes(totals: dict[str, Any]) -> list[str]:
    """Lines a summary should print about a run's record (``store.last_run(probe)["totals"]``).

    The choice-mode fallback (the server gave no log-probabilities, so answers were generated and
    parsed as text), how choice answers were scored, whether generate answers were structured and,
    for HTTP backends, tokens, cost, retries and failures by cause, and a fleet's servers.
    """
    info = totals.get("info") or {}
    notes = []
    if info.get("choice_fallback"):
        notes.append(f"choice mode fell back to generate: {info['choice_fallback']}")
    scoring = info.get("choice_scoring")
    if scoring:
        methods = ", ".join(f"{k} {v}" for k, v in (scoring.get("methods") or {}).items())
        line = f"choice scoring: {methods} (options scored by {scoring.get('norm', 'sum')} of token log-probabilities"
        line += f"; prompt text: {scoring['prompt_text']})" if scoring.get("prompt_text") else ")"
        notes.append(line + (f"; {scoring['reason']}" if scoring.get("reason") else ""))
    structured = info.get("structured")
    if structured:
        counts = ", ".join(f"{k} {structured[k]}" for k in ("structured", "free_text") if structured.get(k))
        line = f"structured answers: {counts}" + (f" ({structured['format']})" if structured.get("format") else "")
        notes.append(line + (f"; free text because {structured['fallback']}" if structured.get("fallback") else ""))
    if info.get("http"):
        notes.append(f"http: {format_stats(info['http'])}")
    if info.get("fleet"):
        notes.append(format_fleet(info["fleet"]))
    return notes


def format_fleet(fleet: dict[str, Any]) -> str:
    """One line for the CLI from a run record's ``info["fleet"]``: each server's answers, median
    latency, failures, moves and drains."""
    parts = []
    for row in fleet.get("endpoints") or []:
        latency = f" (p50 {row['latency_s']['p50'] * 1000:.0f} ms)" if row.get("latency_s") else ""
        extra = [f"{row[k]} {k}" for k in ("failed", "moved") if row.get(k)]
        extra += [f"drained {row['drained']}x"] if row.get("drained") else []
        extra += [] if row.get("live", True) else ["drained at the end"]
        parts.append(f"{row['url']} {row['answered']} answered{latency}" + (f", {', '.join(extra)}" if extra else ""))
    return f"fleet {fleet.get('name')}: " + "; ".join(parts)
