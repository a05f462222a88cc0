"""biasatlas: audit large language models for social bias and stereotypes, across languages.

The public API (see ``docs/api.md``)::

    import biasatlas
    prompts = biasatlas.plan("contact", languages=["de"], axes=["religion"], limit=30)
    biasatlas.run("contact", model="smollm2", study="studies/de", languages=["de"], axes=["religion"])
    with biasatlas.open_study("studies/de") as study:
        frame = study.outcomes("contact")      # one row per answer, every design factor
        summary = study.summary("contact")     # tables with n and intervals, tests
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = ["ProbeConfigError", "Study", "__version__", "open_study", "plan", "probe_names", "run"]

if TYPE_CHECKING:
    from biasatlas.api import Study, open_study, plan, probe_names, run
    from biasatlas.probes.base import ProbeConfigError

# The API is imported on first use: `import biasatlas` (and so the console script's start, where a Ctrl-C
# must already give the clean message) stays instant.
_LAZY = {
    "Study": "biasatlas.api",
    "open_study": "biasatlas.api",
    "plan": "biasatlas.api",
    "probe_names": "biasatlas.api",
    "run": "biasatlas.api",
    "ProbeConfigError": "biasatlas.probes.base",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'biasatlas' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API only: ``dir(biasatlas)`` lists what ``__all__`` names, not the module's helpers."""
    return sorted(__all__)
