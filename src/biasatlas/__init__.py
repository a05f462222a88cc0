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

__version__ = "0.2.0"

from biasatlas.api import Study, open_study, plan, probe_names, run
from biasatlas.probes.base import ProbeConfigError

__all__ = ["ProbeConfigError", "Study", "__version__", "open_study", "plan", "probe_names", "run"]
