"""The totals line after a run."""

from __future__ import annotations

import pytest

from biasatlas.cli import common
from biasatlas.runner import RunTotals


def test_totals_name_each_server_of_a_fleet(capsys: pytest.CaptureFixture[str]) -> None:
    fleet = {"name": "pool", "endpoints": [
        {"url": "http://a:8000/v1", "answered": 60, "latency_s": {"p50": 0.05}, "failed": 2, "drained": 1},
        {"url": "http://b:8000/v1", "answered": 40, "latency_s": {"p50": 0.07}},
    ]}
    common.print_totals(RunTotals(run_id=3, planned=100, new=100, info={"fleet": fleet}))
    err = capsys.readouterr().err
    assert "fleet pool" in err and "http://a:8000/v1 60 answered" in err and "http://b:8000/v1 40 answered" in err
    assert "drained 1x" in err
