"""The judge step of a `biasatlas run PROBE --reader ...` command, after the probe's own run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from biasatlas.readers import JUDGED_PROBES

if TYPE_CHECKING:
    from biasatlas.cli.options import RunOptions
    from biasatlas.runner import RunTotals


def check_reader(probe: str, reader: str | None) -> str | None:
    """The usage error of a judge reading asked of a probe without free-text answers, or None."""
    if reader in ("judge", "both") and probe not in JUDGED_PROBES:
        return (f"--reader {reader}: the {probe} probe reads its answers its own way; a judge reads "
                f"{', '.join(JUDGED_PROBES)} only")
    return None


def judge_step(probe: str, opts: RunOptions, *, progress: bool = False,
               on_totals: Callable[[RunTotals], None] | None = None) -> RunTotals | None:
    """Record the reading ``opts.reader`` asks for; with a judge, ask it what it reads (cached answers reused).

    The judge is opened with the run's backend options, its model replaced by ``--judge-model`` (an adapter is the
    answering model's only). Nothing happens without ``--reader`` (the study keeps the reading it recorded).
    """
    from biasatlas.lock import study_writer
    from biasatlas.readers.judge import record_reading, run_judge
    from biasatlas.store import Store

    if opts.reader is None:
        return None
    if opts.reader == "rules" or opts.judge_model is None:
        with study_writer(opts.study), Store(opts.study) as store:
            return record_reading(store, probe, "rules", None)
    options = opts.backend.model_copy(update={"model": opts.judge_model, "adapter": None})
    model = options.open()
    try:
        with study_writer(opts.study), Store(opts.study) as store:
            totals = run_judge(store, probe, model, opts.reader, progress=progress)
    finally:
        model.close()
    if on_totals is not None:
        on_totals(totals)
    return totals
