"""The public Python API: plan, run and read a study without the CLI (which is a thin layer over this)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.backends.options import BackendOptions
from biasatlas.probes import PROBE_MODULES, load_probe
from biasatlas.records import Prompt

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.runner import RunTotals
    from biasatlas.store import Store

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


class Study:
    """A study directory opened for reading: tidy outcomes, summaries and the report."""

    def __init__(self, path: str | Path) -> None:
        from biasatlas.store import DB_NAME, Store

        self.path = Path(path)
        if not (self.path / DB_NAME).exists():
            raise FileNotFoundError(f"no study at {self.path} (expected {self.path / DB_NAME})")
        self.store: Store = Store(self.path)

    def probes(self) -> list[str]:
        """The probes the study holds answers for."""
        rows = self.store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()
        return [r[0] for r in rows if r[0] in PROBE_MODULES]

    def outcomes(self, probe: str) -> pd.DataFrame:
        """One row per stored answer: every design factor, the answer and the parsed value with its reason."""
        return load_probe(probe).outcomes(self.store)

    def summary(self, probe: str, **analysis: Any) -> dict[str, Any]:
        """The probe's analysis as a JSON-ready dict (``alpha``, ``correction`` where the probe tests)."""
        return load_probe(probe).summarise(self.store, **analysis)

    def report(self, out: str | Path | None = None) -> Path:
        """Write the self-contained HTML report (default ``STUDY/report.html``); returns its path."""
        from biasatlas.report.build import build_report

        return build_report(self.store, self.path, Path(out) if out is not None else None)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_study(path: str | Path) -> Study:
    """Open an existing study for reading (``.outcomes(probe)``, ``.summary(probe)``, ``.report()``)."""
    return Study(path)
