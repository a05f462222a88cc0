"""The controls' registry: a probe name to its control package, one stage module at a time."""

from __future__ import annotations

import pytest

from biasatlas.controls import CONTROL_PACKAGES, load_control


def test_every_control_has_data_build_check_power_and_card() -> None:
    for probe in CONTROL_PACKAGES:
        for stage in ("data", "build", "check", "power", "card"):
            assert load_control(probe, stage).__name__ == f"biasatlas.controls.{probe}.{stage}"
    assert load_control("contact").NAME == "contact"


def test_unknown_probe_or_stage_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="valid: contact, samaritan, stories"):
        load_control("leakage")
    with pytest.raises(ValueError, match="no stage 'validate'"):
        load_control("contact", "validate")
