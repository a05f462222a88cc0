"""The judge step after a probe's own run: of `biasatlas run PROBE --reader ...`, of an audit file's ``reader``
and ``judge_model``, and of the Python API's ``run(..., reader=, judge_model=)``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.readers import JUDGED_PROBES, READERS

if TYPE_CHECKING:
    from biasatlas.audit.spec import Audit
    from biasatlas.backends.options import BackendOptions
    from biasatlas.runner import RunTotals


def check_reader(probe: str, reader: str | None) -> str | None:
    """The usage error of a judge reading asked of a probe without free-text answers, or None."""
    if reader in ("judge", "both") and probe not in JUDGED_PROBES:
        return (f"--reader {reader}: the {probe} probe reads its answers its own way; a judge reads "
                f"{', '.join(JUDGED_PROBES)} only")
    return None


def judge_options(judge_model: str | dict[str, Any] | BackendOptions) -> BackendOptions:
    """The judge's backend options from a model spec, a mapping of options, or options: its own server, key and
    HTTP settings, never the answering model's."""
    from biasatlas.backends.options import BackendOptions

    if isinstance(judge_model, BackendOptions):
        return judge_model
    if isinstance(judge_model, dict):
        return BackendOptions(**judge_model)
    return BackendOptions(model=str(judge_model).strip())


def run_reading(probe: str, study: str | Path, reader: str | None, judge: BackendOptions | None, *,
                progress: bool = False, on_totals: Callable[[RunTotals], None] | None = None) -> RunTotals | None:
    """Record the reading ``reader`` asks for; with a judge, ask it what it reads (cached answers reused).
    Nothing happens without a reader (the study keeps the reading it recorded)."""
    from biasatlas.lock import study_writer
    from biasatlas.readers.judge import record_reading, run_judge
    from biasatlas.store import Store

    if reader is None:
        return None
    if reader == "rules" or judge is None:
        with study_writer(study), Store(study) as store:
            return record_reading(store, probe, "rules", None)
    from biasatlas.readers.judge import judge_probe, unusable_judge_keys

    model = judge.open()
    try:
        with study_writer(study), Store(study) as store:
            totals = run_judge(store, probe, model, reader, progress=progress)
            unusable = len(unusable_judge_keys(store, probe, model.id))
            asked = int(store.conn.execute("SELECT COUNT(*) FROM prompts WHERE probe = ?",
                                           (judge_probe(probe),)).fetchone()[0])
    finally:
        model.close()
    if unusable:  # a judge that refuses or answers garbage is never silent
        print(f"warning: the judge {model.id} gave no usable label for {unusable} of the {asked} answers it read "
              "(a refusal, another language, free text); they count as unreadable (reason 'judge unusable')",
              file=sys.stderr)
    if on_totals is not None:
        on_totals(totals)
    return totals


def over_http(spec: str) -> bool:
    """Whether a model spec names a model served over HTTP (``openai:MODEL``), which has a server to reach."""
    return spec.partition("+lora:")[0].partition(":")[0] == "openai"


def _servers(options: BackendOptions) -> frozenset[str]:
    """The server URLs an HTTP model is asked at (its own defaults where none is given), for comparison."""
    import os

    from biasatlas.backends.http.setup import OPENAI_URL

    urls = [e.url for e in options.endpoints] or [options.base_url or os.environ.get("OPENAI_BASE_URL")
                                                  or OPENAI_URL]
    return frozenset(url.strip().rstrip("/") for url in urls)


def same_model(judge: BackendOptions, model: BackendOptions) -> bool:
    """Whether the judge is the model under test: the same spec, and for an HTTP model the same server."""
    if judge.model.strip() != model.model.strip():
        return False
    return not over_http(judge.model) or bool(_servers(judge) & _servers(model))


def judge_notes(judge: BackendOptions, models: Sequence[BackendOptions], url_option: str) -> list[str]:
    """What deserves a word before judging: where an HTTP judge is asked when the models under test have a server
    of their own (it never inherits theirs). ``url_option`` names the option that gives the judge its server
    (``--judge-base-url``, or an audit file's ``judge_model.base_url``)."""
    from biasatlas.backends.http.setup import safe_url

    notes = []
    if (over_http(judge.model) and not judge.base_url and not judge.endpoints
            and any(m.base_url or m.endpoints for m in models)):
        where = ", ".join(sorted(safe_url(u) for u in _servers(judge)))
        notes.append(f"the judge {judge.model} is asked at {where} (its own default: $OPENAI_BASE_URL, else "
                     f"OpenAI's), not at the answering model's server; {url_option} gives it another")
    return notes


def reader_problem(reader: str | None, judge_model: Any) -> str | None:
    """What is wrong with a reader and its judge as the API takes them (as ``--reader`` and ``--judge-model``)."""
    if reader is not None and reader not in READERS:
        return f"reader {reader!r}: valid: {', '.join(READERS)}"
    if reader in ("judge", "both") and not judge_model:
        return f"reader {reader!r} needs judge_model (the model that reads the answers)"
    if judge_model and reader not in ("judge", "both"):
        return "judge_model is used by reader 'judge' or 'both' only"
    return None


def check_judge(audit: Audit) -> None:
    """Raise the audit's AuditError (key ``judge_model``) when its judge cannot be used, before anything is asked."""
    from biasatlas.audit.models import check_model
    from biasatlas.backends.base import BackendError

    if audit.judge is None:
        return
    try:
        check_model(audit.judge.options)
    except BackendError as exc:
        raise audit.error("judge_model.model", str(exc)) from None


def audit_reading(audit: Audit, study: Path, *, progress: bool = False,
                  on_totals: Callable[[RunTotals], None] | None = None) -> Sequence[RunTotals]:
    """The audit's reading of each judged probe it ran (after every cell: the judge reads every model's answers)."""
    probes = [p.name for p in audit.probes if p.name in JUDGED_PROBES]
    judge = audit.judge.options if audit.judge is not None else None
    steps = [run_reading(name, study, audit.reader, judge, progress=progress, on_totals=on_totals)
             for name in probes]
    return [t for t in steps if t is not None]
