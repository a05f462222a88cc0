"""`biasatlas run contact --reader both --judge-model ...` with a scripted judge, and the human reading audit's
round trip (`readers sample`, labels filled by the test, `readers score`), through the CLI.

The answering model ("fake:answers") leaves 15% of its answers unreadable to the rules; the judge ("fake:judge")
reads them as the question's first option (and the check sample of the rest as the rules do). Both are the fake
backend with a script (set by the test).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.records import Request
from biasatlas.report.html import Section
from biasatlas.report.reading import add_to_section
from biasatlas.store import Store

runner = CliRunner()
VAGUE = "Hard to say, it would depend on the day and on how I feel about it."


def _flat(text: str) -> str:
    """Output without rich's box and line breaks."""
    return re.sub(r"[\s│╭╮╰╯─]+", " ", text)


def _scripted(self: FakeBackend, request: Request) -> str:
    options = request.prompt.options
    if self.id == "fake:judge":
        text = request.prompt.text
        return options[0] if VAGUE in text or "Answer:\n<answer>\nYes." in text else options[1]
    index = int(request.prompt.id, 16) % 20
    return VAGUE if index < 3 else ("Yes." if index % 2 else "No.")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("readers") / "study"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FakeBackend, "_answer", _scripted)
        result = runner.invoke(app, ["run", "contact", "--study", str(path), "--model", "fake:answers", "--lang",
                                     "en", "--mode", "generate", "--limit", "40", "--no-progress",
                                     "--reader", "both", "--judge-model", "fake:judge"])
    assert result.exit_code == 0, result.output
    return path


def test_both_reads_every_answer_and_reports_the_agreement(study: Path) -> None:
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    reading = json.loads(result.output)["contact"]["reading"]
    judged = reading["labels_by"]["judge"]
    assert reading["reader"] == "both" and reading["judge"] == "fake:judge"
    assert 0.08 <= judged / sum(reading["labels_by"].values()) <= 0.25  # the planted ~15%
    agreement = reading["agreement"]
    checks = agreement["n"] - judged  # the check sample of answers the rules read, where the judge agrees
    assert 0 < checks < 10 and agreement["agree"] == checks  # rules "unclear" on the judged ones: no agreement
    assert agreement["kappa"] is not None and agreement["kappa_ci"][0] <= agreement["kappa"]
    validity = json.loads(result.output)["contact"]["validity"]
    assert all(row["readable"] == row["answers"] for row in validity)  # every answer read
    text = runner.invoke(app, ["summary", "--study", str(study)]).output
    assert "Reading: Contact-hypothesis probe: read by both (judge fake:judge)" in " ".join(text.split())
    assert runner.invoke(app, ["report", "--study", str(study), "--no-files"]).exit_code == 0
    html = (study / "report.html").read_text(encoding="utf-8")
    assert "rules vs judge on" in html and "answers the rules and the judge read differently" in html
    assert "no human check of the reading was made" in html


def test_a_judge_reading_is_refused_where_no_free_text_is_read(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "leakage", "--study", str(tmp_path / "s"), "--model", "fake:x",
                                 "--reader", "both", "--judge-model", "fake:j", "--limit", "2", "--lang", "en"])
    assert result.exit_code == 2 and "reads its answers its own way" in result.output
    for args, message in ((["--reader", "maybe"], "valid: rules, judge, both"),
                          (["--reader", "judge"], "needs --judge-model"),
                          (["--judge-model", "fake:j"], "--reader judge or --reader both only")):
        result = runner.invoke(app, ["run", "contact", "--study", str(tmp_path / "s"), "--model", "fake:x", *args])
        assert result.exit_code == 2 and message in _flat(result.output), result.output


def test_sample_fill_score_round_trip(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    result = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "12", "--out", str(out)])
    assert result.exit_code == 0, result.output
    labels = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(labels) == 12 and (labels["human_label"] == "").all()
    assert (out.parent / "labels.csv.md").exists()
    # every reader label drawn: both options and the judge's reading of the vague answers
    assert {"Yes", "No"} <= set(labels["reader_label"]) and "judge" in set(labels["reader"])
    again = tmp_path / "again.csv"
    runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "12", "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()  # seeded
    # a human who disagrees on every judged answer (calls them unreadable)
    labels["human_label"] = [("unreadable" if r == "judge" else lab)
                             for r, lab in zip(labels["reader"], labels["reader_label"], strict=True)]
    labels.to_csv(out, index=False)
    result = runner.invoke(app, ["readers", "score", "--study", str(study), str(out), "--json"])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.output)
    judged = int((labels["reader"] == "judge").sum())
    assert scored["overall"] == {**scored["overall"], "n": 12, "correct": 12 - judged}
    by_reader = {r["reader"]: r for r in scored["probes"]["contact"]["by_reader"]}
    assert by_reader["judge"]["accuracy_pct"] == 0.0 and by_reader["rules"]["accuracy_pct"] == 100.0
    section = Section("Validity of the answers")  # the report's validity section gets its lines from here
    with Store(study) as store:
        add_to_section(section, store)
    shown = "".join(section.blocks)
    line = re.search(r"contact, en: reading checked on (\d+) human-labelled answers: ([\d.]+)%", shown)
    assert line is not None and int(line.group(1)) == 12
    # the line gives the study-level figure (strata weighted by their sizes), the sample's beside it
    cell = scored["by_probe_language"][0]
    assert float(line.group(2)) == pytest.approx(cell["study_level"]["accuracy_pct"])
    assert f"sample accuracy {100 * (12 - judged) / 12:.1f}%" in shown


def test_score_names_each_problem(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "5", "--out", str(out)])
    labels = pd.read_csv(out, dtype=str, keep_default_na=False)
    labels["human_label"] = ["Yes", "perhaps", "", "No", "Yes"]
    labels.loc[4, "prompt_id"] = "nosuchprompt"
    labels.to_csv(out, index=False)
    result = runner.invoke(app, ["readers", "score", "--study", str(study), str(out)])
    message = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "3 problem(s)" in message and "line 3 (sample_id 2): human_label 'perhaps' is not one of" in message
    assert "line 4 (sample_id 3): human_label is empty" in message and "no such answer in the study" in message
    labels.drop(columns=["human_label"]).to_csv(out, index=False)
    result = runner.invoke(app, ["readers", "score", "--study", str(study), str(out)])
    assert result.exit_code == 2 and "lacks the column(s) human_label" in result.output


def test_score_counts_a_repeated_answer_once_and_names_a_conflict(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    drawn = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "4", "--out", str(out)])
    assert drawn.exit_code == 0, drawn.output
    labels = pd.read_csv(out, dtype=str, keep_default_na=False)
    labels["human_label"] = labels["reader_label"]
    first = labels.iloc[[0]]
    other = next(o for o in first["allowed_labels"].iloc[0].split(" | ") if o != first["human_label"].iloc[0])
    copies = [labels.iloc[[1]].assign(sample_id=str(100 + i)) for i in range(20)]
    pd.concat([labels, *copies, first.assign(sample_id="200", human_label=other)]).to_csv(out, index=False)
    result = runner.invoke(app, ["readers", "score", "--study", str(study), str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert "20 of 25 rows repeat an answer" in result.stderr and "left out of the score" in result.stderr
    scored = json.loads(result.stdout)
    assert scored["overall"]["n"] == 3 and scored["overall"]["correct"] == 3  # the conflicting answer left out
    assert [c["sample_ids"][-1] for c in scored["labels_file"]["conflicts"]] == ["200"]


def test_score_of_conflicts_only_is_one_line(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    drawn = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "1", "--out", str(out)])
    assert drawn.exit_code == 0, drawn.output
    labels = pd.read_csv(out, dtype=str, keep_default_na=False)
    two = pd.concat([labels.assign(human_label="refusal"), labels.assign(sample_id="2", human_label="unreadable")])
    two.to_csv(out, index=False)
    result = runner.invoke(app, ["readers", "score", "--study", str(study), str(out)])
    assert result.exit_code == 2 and "every answer has conflicting labels" in " ".join(result.output.split())
    assert len([x for x in result.output.splitlines() if x.strip()]) == 1, result.output
