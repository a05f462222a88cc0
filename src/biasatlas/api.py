"""The public Python API: plan, run and read a study without the CLI (which is a thin layer over this)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.backends.options import BackendOptions
from biasatlas.probes import PROBE_MODULES, load_probe
from biasatlas.records import Prompt
from biasatlas.study import Study

if TYPE_CHECKING:
    from biasatlas.runner import RunTotals

BACKEND_FIELDS = tuple(BackendOptions.model_fields)


def probe_names() -> list[str]:
    """The names of the probes biasatlas implements."""
    return list(PROBE_MODULES)


def plan(probe: str, **config: Any) -> list[Prompt]:
    """Every prompt a run of ``probe`` with this configuration would ask; calls no model.

    ``config`` takes the probe's options (``languages``, ``limit``, ``seed``, and the probe's own,
    e.g. ``axes`` and ``scales`` for contact); an invalid one raises ProbeConfigError.
    """
    p = load_probe(probe)
    return p.plan(p.config(**config))


def run(
    probe: str,
    *,
    study: str | Path,
    model: str = "smollm2",
    progress: bool = False,
    reader: str | None = None,
    judge_model: str | dict[str, Any] | BackendOptions | None = None,
    **config: Any,
) -> list[RunTotals]:
    """Ask ``model`` the probe's plan and store every answer in ``study``; returns each step's totals.

    Backend options (``base_url``, ``api_key_env``, ``concurrency``, ``http``, ``adapter``,
    ``batch_size``, ``dtype``) go to the backend, everything else to the probe's configuration.
    A second call asks only what the study does not hold yet. No progress bar unless asked.

    ``reader`` (``rules``, ``judge`` or ``both``, as ``--reader``; ``both`` is recommended for generate mode)
    says who reads the free-text answers of contact and samaritan; ``judge_model`` is the judge of ``judge`` and
    ``both``: a model spec, or a mapping of backend options (or ``BackendOptions``) with its own server, key and
    HTTP settings. The judge is checked before anything is asked. None: the study keeps the reading it recorded.
    """
    from biasatlas.audit.models import check_model
    from biasatlas.reading_step import check_reader, judge_options, reader_problem, run_reading

    problem = reader_problem(reader, judge_model) or check_reader(probe, reader)
    if problem:
        raise ValueError(problem)
    judge = judge_options(judge_model) if judge_model else None
    if judge is not None:
        check_model(judge)  # a typo or a missing key is found before the answering model is asked anything
    p = load_probe(probe)
    backend_values = {k: config.pop(k) for k in list(config) if k in BACKEND_FIELDS}
    backend = BackendOptions(model=model, **{k: v for k, v in backend_values.items() if v is not None})
    totals = p.run(p.config(**config), backend, study, progress=progress)
    judged = run_reading(probe, study, reader, judge, progress=progress)
    return totals if judged is None else [*totals, judged]


def open_study(path: str | Path) -> Study:
    """Open an existing study for reading (``.outcomes(probe)``, ``.summary(probe)``, ``.report()``)."""
    return Study(path)
