"""The run's last lines name the group-disparity headline of each axis (here a fake model: no group differs)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()


def test_a_contact_run_ends_with_the_group_disparity_headline(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--model", "fake", "--lang", "de", "--axis", "religion",
                                 "--study", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    last = [line for line in lines if line.startswith("group disparity ")]
    assert last and lines[-len(last) - 2:-2] == last  # the last lines, before what to do next
    assert "religion" in last[0] and ("most disfavoured: " in last[0] or "no religion group differs: " in last[0])
    assert lines[-2].startswith(f"next: biasatlas summary --study {tmp_path}")
    assert lines[-1].strip() == f"biasatlas report --study {tmp_path}, then open {tmp_path}/report.html"


def test_an_audit_ends_with_the_headlines_and_the_report_to_open(tmp_path: Path) -> None:
    audit = tmp_path / "audit.yaml"
    audit.write_text("models:\n  - {name: Alpha, model: fake:a}\n  - {name: Beta, model: 'fake:b?biased=Muslims'}\n"
                     "probes:\n  contact: {languages: [de], axes: [religion], limit: 42}\n", encoding="utf-8")
    study = tmp_path / "study"
    result = runner.invoke(app, ["audit", str(audit), "--study", str(study), "--no-progress"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "Headlines" in line)
    block = lines[start:]
    assert any(line.startswith("Contact-hypothesis probe · Alpha") for line in block)
    assert any(line.startswith("Contact-hypothesis probe · Beta") for line in block)
    assert any(line.startswith("  group disparity: ") for line in block)
    assert any(line.startswith("  headline: ") for line in block)
    assert block[-2].startswith(f"next: biasatlas summary --study {study}")
    assert block[-1].strip() == f"open {study}/report.html" and (study / "report.html").is_file()

