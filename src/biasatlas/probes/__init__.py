"""The probes biasatlas implements. A plain dict names them; nothing registers itself on import.

Each probe is a package ``biasatlas.probes.<name>`` whose ``probe`` module holds ``PROBE``, an
instance of :class:`biasatlas.probes.base.Probe` (name, title, a pydantic config, plan, settings,
outcomes, summarise, print_summary, report_sections).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from biasatlas.probes.base import Probe

PROBE_MODULES: dict[str, str] = {
    "contact": "biasatlas.probes.contact.probe",
    "samaritan": "biasatlas.probes.samaritan.probe",
    "stories": "biasatlas.probes.stories.probe",
    "leakage": "biasatlas.probes.leakage.probe",
    "debias": "biasatlas.probes.debias.probe",
}


def load_probe(name: str) -> Probe:
    """The probe called ``name``; a clear error lists the valid names."""
    if name not in PROBE_MODULES:
        raise ValueError(f"unknown probe {name!r}; valid: {', '.join(PROBE_MODULES)}")
    probe: Probe = importlib.import_module(PROBE_MODULES[name]).PROBE
    return probe


def available_probes() -> dict[str, Probe]:
    """Every probe, by name."""
    return {name: load_probe(name) for name in PROBE_MODULES}
