"""The report of a study of many models (fake, contact in two languages): written, every model in it, each
probe's summary computed once, the figures in layouts that do not grow a panel column per model."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.report.build import build_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

#: more than 14 (plotly refused one subplot column per model at 14) and than 12 heatmap panels
MODELS = 14
LANGUAGES = ["en", "de"]


def make_study(path: Path, models: int = MODELS) -> Path:
    """``models`` fake models answering the contact probe in English and German (21 prompts each)."""
    rng = random.Random(3)
    answers = ["Yes.", "No.", "Absolutely not.", "I can't answer that.", "Probably not."]
    contact = load_probe("contact")
    prompts = contact.plan(contact.config(languages=LANGUAGES, axes=["religion"], limit=21))
    with Store(path) as store:
        for k in range(models):
            run_plan(prompts, FakeBackend(lambda r: rng.choice(answers), name=f"model-{k:02d}"), store,
                     GenerationSettings(mode="generate"), progress=False)
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    import biasatlas.probes.contact.probe as probe_module
    import biasatlas.probes.contact.summary as summary_module

    study = make_study(tmp_path_factory.mktemp("many") / "study")
    calls = []
    original = summary_module.summarise

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(summary_module, "summarise", counted)
        patch.setattr(probe_module, "summarise", counted)
        with Store(study) as store:
            out = build_report(store, study)
    return out, len(calls)


def test_the_report_names_every_model(report: tuple[Path, int]) -> None:
    out, _ = report
    page = out.read_text(encoding="utf-8")
    missing = [k for k in range(MODELS) if f"model-{k:02d}" not in page]
    assert missing == []
    files = out.parent / "report_files"
    assert len(list(files.glob("*.svg"))) == len(list(files.glob("*.pdf"))) >= 2  # bars, heatmap (generate: no P)


def test_the_contact_summary_is_computed_once(report: tuple[Path, int]) -> None:
    assert report[1] == 1  # the overview's headline and the probe's section share it


def test_many_heatmap_panels_are_one_matrix(report: tuple[Path, int]) -> None:
    page = report[0].read_text(encoding="utf-8")
    assert "one matrix, a row per model and language" in page
    svg = next((report[0].parent / "report_files").glob("*axis-scenario*.svg")).read_text(encoding="utf-8")
    assert len(re.findall(r"<g id=\"axes_\d+\">", svg)) == 2  # the matrix and its colour bar, not 28 panels
