"""Issue 27: every statistics row says which reader produced the labels it counts."""

from __future__ import annotations

from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.tidy.rows import reader_text


def test_reader_text() -> None:
    assert reader_text(None) is None
    assert reader_text({"reader": "rules", "judge": None, "labels_by": {"rules": 30}}) == "rules (30 labels)"
    both = {"reader": "both", "judge": "openai:judge@x", "labels_by": {"rules": 50, "judge": 10}}
    assert reader_text(both) == "both (labels: judge 10, rules 50; judge openai:judge@x)"


def test_every_contact_row_names_its_reader(tmp_path: Path) -> None:
    contact = load_probe("contact")
    with Store(tmp_path) as store:
        prompts = contact.plan(contact.config(languages=["en"], axes=["religion"], limit=30))
        run_plan(prompts, FakeBackend(lambda r: "Yes."), store, GenerationSettings(mode="generate"), progress=False)
        summary = contact.summarise(store)
    assert summary["reading"]["reader"] == "rules"
    assert summary["statistics"] and {r["reader"] for r in summary["statistics"]} == {"rules (30 labels)"}
