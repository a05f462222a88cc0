"""The embedded model (SmolLM2-135M) as the judge reader, end to end through the CLI: its answers are stored
under its identity as a label of the closed set chosen by probability, and the summary reports the reading and
the agreement.

The answering model is the fake backend with a script (answers the rules read, and some they cannot), so that
only the judge costs model time: 6 contact answers, each judged over 4 labels. (The samaritan judge scores 102
labels per answer, ~13 CPU s each for this model on 2 cores: its logic is tested with a scripted judge in
tests/unit/readers/test_judge_samaritan.py; that a rerun asks the judge nothing again in test_judge.py.)
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
    return "Hard to say, it depends on the day." if index == 0 else "Yes, I would." if index % 2 else "No, I would not."


def test_the_embedded_model_reads_contact_answers(tmp_path: Path) -> None:
    study = tmp_path / "study"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FakeBackend, "_answer", _scripted)
        result = runner.invoke(app, ["run", "contact", "--study", str(study), "--model", "fake:answers", "--lang", "en",
                                     "--mode", "generate", "--no-progress", "--limit", "6", "--axis", "religion",
                                     "--reader", "judge", "--judge-model", "smollm2"])
    assert result.exit_code == 0, result.output
    with Store(study) as store:
        judged = store.frame(probe="contact.judge")
        answers = store.frame(probe="contact")
    assert len(judged) == 6 and (judged["status"] == "answered").all()
    assert judged["model"].str.startswith("local:").all()  # stored under the judge's identity
    assert set(judged["answer_key"]) == set(answers["key"])  # each judge answer names the answer it read
    for probs in judged["option_probs"]:  # a label from the closed set, by probability
        assert len(probs) == 4 and sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    reading = json.loads(result.output)["contact"]["reading"]
    assert reading["reader"] == "judge" and reading["judge"].startswith("local:")
    assert reading["labels_by"] == {"judge": 6} and reading["agreement"]["n"] == 6
