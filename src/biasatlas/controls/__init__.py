"""Positive controls: LoRA adapters of the embedded model with a planted bias of known size.

Each control says what was planted (which group, in which direction, in which languages), which of
the probe's own prompts trained it and which held-out prompts measure it. ``scripts/build_controls.py``
trains the adapters (each control's ``build``), ``biasatlas validate`` and the integration tests run the
probe on them (each control's ``check``) and check that the planted group is found, in the planted
direction, and that the untouched groups are not.

Layout, like ``probes/``: a package per probe, ``controls/<probe>/``, with the same stage modules where
the stage exists: ``data`` (what was planted, training and held-out prompts), ``build``, ``check``,
``power``, ``card``, ``validate``, and the probe's own (``contact/scd.py``, ``contact/groups.py``,
``stories/keywords.py``, ``stories/server.py``). What every control shares lives in ``controls/common/``
(the shipped adapters and their training settings, the card files, asking the prompts, the false-flag
bound, the figure's saving), not at this level, so that every other folder here is one probe's control
and this module stays the registry. A plain dict names the controls; nothing registers itself on import.
"""

from __future__ import annotations

import importlib
from types import ModuleType

CONTROL_PACKAGES: dict[str, str] = {
    "contact": "biasatlas.controls.contact",
    "samaritan": "biasatlas.controls.samaritan",
    "stories": "biasatlas.controls.stories",
}


def load_control(probe: str, stage: str = "data") -> ModuleType:
    """The ``stage`` module (``data``, ``build``, ``check``, ``power``, ``card``, ``validate``, …) of the control
    of ``probe``; a clear error lists the valid probes, or says that this control has no such stage."""
    if probe not in CONTROL_PACKAGES:
        raise ValueError(f"unknown control {probe!r}; valid: {', '.join(CONTROL_PACKAGES)}")
    name = f"{CONTROL_PACKAGES[probe]}.{stage}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise ValueError(f"the {probe} control has no stage {stage!r}") from None
