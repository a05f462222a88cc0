"""``--design paper`` on `run contact`, `run samaritan`, `run stories` and `debias`: say what the paper's design sets.

The values themselves are set by each probe's design module (the config a run records); this prints them
once, before the plan or the run, and turns a value the design refuses into one usage line (exit 2).
"""

from __future__ import annotations

from typing import Any

from biasatlas.cli.common import console, fail


def say_design(probe: str, design: str, values: dict[str, Any]) -> None:
    """One line on stderr naming every value ``--design`` sets for ``probe``; a conflict is one error line."""
    from biasatlas.probes.base import ProbeConfigError

    if design != "paper":
        fail(f"--design {design!r}: valid: paper")
    import importlib

    module = importlib.import_module(f"biasatlas.probes.{probe}.design")  # contact, samaritan, stories or debias
    try:
        _, said = module.apply(values)
    except ProbeConfigError as exc:
        fail(str(exc))
        return
    console.print(f"design paper sets: {'; '.join(said)}", markup=False, highlight=False)
