"""A study whose every contact request failed still gives a summary and a report (nothing to rate)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.report.build import build_report
from biasatlas.runner import build_requests, run_plan
from biasatlas.stats.paired import cochran_q
from biasatlas.store import Store


def test_every_request_failed(tmp_path: Path) -> None:
    probe = load_probe("contact")
    prompts = probe.plan(probe.config(languages=["de"], axes=["religion"], limit=12))
    settings = GenerationSettings(mode="generate")
    backend = FakeBackend(lambda r: "Ja.", name="down")
    backend.fail_keys = {r.cache_key(backend.id) for r in build_requests(prompts, settings, 1)}
    with Store(tmp_path) as store:
        totals = run_plan(prompts, backend, store, settings, progress=False)
        assert totals.failed == len(prompts)
        summary = probe.summarise(store)
        out = build_report(store, tmp_path)
    assert summary is not None and out.exists()


def test_cochran_q_without_any_discordant_row_is_undefined_and_quiet() -> None:
    wide = pd.DataFrame({"none": [1, 0, 1], "positive": [1, 0, 1], "negative": [1, 0, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = cochran_q(wide)
    assert result.n == 3 and result.p != result.p  # NaN: no row varies, the test says nothing


def test_every_answer_unreadable_reports_without_warnings(tmp_path: Path) -> None:
    """A model none of whose answers can be read (found in review): the axis × scenario heatmap had an
    empty panel, and matplotlib printed "identical low and high xlims" warnings into the user's terminal."""
    probe = load_probe("contact")
    prompts = probe.plan(probe.config(languages=["en"], axes=["religion"], limit=12))
    with Store(tmp_path) as store:
        run_plan(prompts, FakeBackend(lambda r: "Hmm, let me think about that.", name="vague"), store,
                 GenerationSettings(mode="generate"), progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = build_report(store, tmp_path)
    assert out.exists()
