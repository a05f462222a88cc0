"""Models are shown by the display name an audit gave them; the backend id is kept beside it."""

from __future__ import annotations

from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _run(store: Store, name: str, display: str | None) -> None:
    probe = load_probe("contact")
    prompts = probe.plan(probe.config(languages=["de"], axes=["religion"], limit=3))
    config = {"display_name": display} if display else {}
    run_plan(prompts, FakeBackend(lambda r: "Ja.", name=name), store, GenerationSettings(mode="generate"),
             progress=False, config=config)


def test_frame_shows_display_names_and_keeps_the_id(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _run(store, "a", "Alpha")
        _run(store, "b", None)
        frame = store.frame("contact")
    assert set(frame["model"]) == {"Alpha", "fake:b"}
    assert set(frame["model_id"]) == {"fake:a", "fake:b"}


def test_one_name_for_two_models_never_merges_them(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _run(store, "a", "Same")
        _run(store, "b", "Same")
        models = set(store.frame("contact")["model"])
    assert models == {"Same [fake:a]", "Same [fake:b]"}


def test_no_audit_no_change(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        _run(store, "a", None)
        frame = store.frame("contact")
    assert set(frame["model"]) == {"fake:a"} and "model_id" not in frame.columns
