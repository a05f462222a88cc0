"""A study directory opened for reading (``biasatlas.open_study``): the probes it holds, their tidy outcomes,
summaries and the report.

It sits with the workflows, below the API that re-exports it: the export reads a study through it, and its
``report()`` composes the report out of the probes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.probes import PROBE_MODULES, load_probe

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.store import Store


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
