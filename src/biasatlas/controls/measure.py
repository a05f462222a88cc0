"""Run a control's held-out prompts through the probe on a backend, and read what the probe finds.

Answers go through the normal runner into a study directory (every answer stored, a re-run reuses
them), are scored by the probe's own reader, and the groups are compared by :mod:`.groups`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.options import BackendOptions

CONTACT_SETTINGS = GenerationSettings(mode="choice", max_tokens=10, temperature=0.0, seed=0)


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


def contact_outcomes(study: str | Path, backend_id: str | None = None) -> pd.DataFrame:
    """The contact probe's scored outcomes in ``study`` (of one backend when ``backend_id`` is given)."""
    from biasatlas.probes.contact.read import load_outcomes
    from biasatlas.store import Store

    with Store(study) as store:
        frame = load_outcomes(store)
    if backend_id is not None and not frame.empty:
        frame = frame[frame["model"] == backend_id]
    return frame
