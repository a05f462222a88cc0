"""The embedded model (SmolLM2-135M) as the judge reader, end to end through the CLI: its answers are stored
under its identity, a rerun asks it nothing, and the summary reports the reading and the agreement.

The answering model is the fake backend with a script (answers the rules read, and some they cannot), so that
only the judge costs model time: a small plan (12 contact answers it reads, and one samaritan answer of the 25 of
a scenario set).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.records import Request
from biasatlas.store import Store

pytestmark = pytest.mark.slow
runner = CliRunner()


def _scripted(self: FakeBackend, request: Request) -> str:
    index = int(request.prompt.id, 16) % 4
    if request.prompt.probe == "samaritan":  # one answer of the scenario set for the judge (102 labels to score)
        return "Somewhere between rather likely and not at all, it depends." if request.prompt.meta["is_control"] \
            else "70"
    return ("Hard to say, it depends on the day." if index == 0 else
            "Yes, I would." if index % 2 else "No, I would not.")


def _run(study: Path, probe: str, reader: str, *extra: str) -> None:
    args = ["run", probe, "--study", str(study), "--model", "fake:answers", "--lang", "en", "--mode", "generate",
            "--no-progress", "--reader", reader, "--judge-model", "smollm2", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def test_the_embedded_model_reads_contact_and_samaritan_answers(tmp_path: Path) -> None:
    study = tmp_path / "study"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FakeBackend, "_answer", _scripted)
        _run(study, "contact", "judge", "--limit", "12", "--axis", "religion")
        _run(study, "samaritan", "both", "--limit", "1")
        with Store(study) as store:
            judged = store.frame(probe="contact.judge")
            ratings = store.frame(probe="samaritan.judge")
            asked = store.response_count()
        assert len(judged) == 12 and (judged["status"] == "answered").all()
        assert judged["model"].str.startswith("local:").all()  # stored under the judge's identity
        for probs in judged["option_probs"]:  # a label from the closed set, by probability
            assert len(probs) == 4 and sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        assert len(ratings) == 1 and all(len(p) == 102 for p in ratings["option_probs"])
        _run(study, "contact", "judge", "--limit", "12", "--axis", "religion")  # a rerun asks nothing again
        with Store(study) as store:
            assert store.response_count() == asked
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    contact = summary["contact"]["reading"]
    assert contact["reader"] == "judge" and contact["judge"].startswith("local:")
    assert contact["labels_by"] == {"judge": 12} and contact["agreement"]["n"] == 12
    samaritan = summary["samaritan"]["reading"]
    assert samaritan["reader"] == "both" and samaritan["labels_by"]["judge"] == 1
