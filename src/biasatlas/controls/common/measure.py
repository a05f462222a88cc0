"""Run a control's held-out prompts through the probe on a backend, and bound its false flags.

Answers go through the normal runner into a study directory (every answer stored, a re-run reuses
them); each control's ``check`` module scores them with the probe's own reader and judges them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:
    from biasatlas.backends.options import BackendOptions


def ask(prompts: Sequence[Prompt], backend: BackendOptions, study: str | Path, settings: GenerationSettings,
        tag: dict[str, Any]) -> str:
    """Ask ``backend`` every prompt (answers cached in ``study``); returns the backend's id, the
    ``model`` value of its rows in the study's frame."""
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    opened = backend.open()
    try:
        with Store(study) as store:
            run_plan(list(prompts), opened, store, settings, config={"control": tag}, progress=False)
        return str(opened.id)
    finally:
        opened.close()


def false_flag_bound(groups: int, alpha: float, risk: float = 0.01) -> int:
    """The most untouched groups that may be flagged: the (1 − risk) quantile of Binomial(groups, alpha).

    Untested dependence aside, each untouched group is flagged with probability at most ``alpha``;
    more flags than this bound happen by chance with probability below ``risk``.
    """
    from scipy.stats import binom

    return int(binom.ppf(1 - risk, groups, alpha))
