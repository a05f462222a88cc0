"""`biasatlas languages review`: draw a sheet, fill it, apply it; the record shows in `biasatlas languages`
and in the report's line on the language packs. Every pack written to is a temporary copy."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.languages import REVIEWS_FILE, pack, packs_root

runner = CliRunner()


@pytest.fixture
def packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A packs folder with a copy of fr and links to the other shipped packs, as the shipped one."""
    shipped = packs_root()
    root = tmp_path / "languages"
    root.mkdir()
    for folder in shipped.iterdir():
        if folder.name == "fr":
            shutil.copytree(folder, root / "fr")
        elif folder.is_dir():
            (root / folder.name).symlink_to(folder)
    monkeypatch.setattr("biasatlas.languages.packs_root", lambda: root)
    pack.cache_clear()
    yield root
    pack.cache_clear()


def _fill(sheet: Path, verdicts: list[str]) -> list[dict[str, str]]:
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row, verdict in zip(rows, verdicts, strict=True):
        row["verdict"] = verdict
    rows[-1]["correction"] = "Une meilleure formulation."
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["languages", *args])
    return result.exit_code, " ".join(result.output.split())


def test_round_trip_sample_fill_apply_then_matrix_and_report(packs: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "new" / "folder" / "sheet.csv"
    code, out = _invoke("review", "--lang", "fr", "--n", "6", "--seed", "2", "--out", str(sheet))
    assert code == 0, out
    assert sheet.exists() and (sheet.parent / "sheet.guide.txt").exists()
    code, out = _invoke("review", "--lang", "fr", "--n", "6", "--out", str(sheet))
    assert code == 2 and "exists; pass --force" in out
    code, out = _invoke("review", "--lang", "fr", "--n", "6", "--seed", "2", "--out", str(sheet), "--force")
    assert code == 0, out
    _fill(sheet, ["ok", "ok", "ok", "awkward", "wrong", "ok"])

    code, out = _invoke("review", "--apply", str(sheet), "--reviewer", "Ana Lima", "--date", "2026-11-30")
    assert code == 0, out
    assert "4 ok, 1 awkward, 1 wrong" in out and (packs / "fr" / REVIEWS_FILE).exists()
    status = "machine-drafted, read by 1 reviewer, 6 prompts reviewed, 67% accepted"

    rows = {r["language"]: r for r in json.loads(runner.invoke(app, ["languages", "--json"]).output)}
    assert rows["fr"]["status"] == status
    assert rows["fr"]["review"]["verdicts"] == {"ok": 4, "awkward": 1, "wrong": 1}
    assert rows["es"]["status"] == "machine-drafted, not reviewed by a native speaker"
    assert status in " ".join(runner.invoke(app, ["languages"], env={"COLUMNS": "300"}).output.split())

    from biasatlas.records import Message, Prompt, Request
    from biasatlas.report.metadata import runs_section
    from biasatlas.store import Store

    with Store(tmp_path / "study") as store:
        run_id = store.start_run("contact", "m", {}, "0")
        for language in ("fr", "es"):
            prompt = Prompt(probe="contact", language=language, messages=(Message(role="user", content="?"),))
            store.record_plan(run_id, "m", [Request(prompt=prompt)])
        section = runs_section(store)
    assert section is not None
    html = " ".join(section.blocks)
    assert f"French (fr): {status}" in html and "Spanish (es): machine-drafted, not reviewed" in html


def test_apply_to_a_pack_folder_outside_the_package(tmp_path: Path) -> None:
    folder = tmp_path / "my-fr"
    shutil.copytree(packs_root() / "fr", folder)
    sheet = tmp_path / "s.csv"
    code, out = _invoke("review", "--pack", str(folder), "--n", "3", "--out", str(sheet))
    assert code == 0, out
    assert "--pack" in (tmp_path / "s.guide.txt").read_text()
    _fill(sheet, ["ok", "ok", "wrong"])
    code, out = _invoke("review", "--pack", str(folder), "--apply", str(sheet), "--reviewer", "Bo")
    assert code == 0, out
    assert "read by 1 reviewer, 3 prompts reviewed, 67% accepted" in out
    assert not (packs_root() / "fr" / REVIEWS_FILE).exists()  # the shipped pack is untouched
    code, out = _invoke("review", "--pack", str(folder), "--apply", str(sheet), "--reviewer", "Bo")
    assert code == 2 and "already recorded" in out


@pytest.mark.parametrize(("column", "value", "message"), [
    ("verdict", "maybe", "unknown verdict 'maybe'"),
    ("prompt_id", "f" * 24, "is not a prompt of the fr pack"),
    ("language", "es", "not this pack's (fr)"),
])
def test_apply_refuses_a_bad_sheet_with_exit_2(tmp_path: Path, column: str, value: str, message: str) -> None:
    folder = tmp_path / "my-fr"
    shutil.copytree(packs_root() / "fr", folder)
    sheet = tmp_path / "s.csv"
    assert _invoke("review", "--pack", str(folder), "--n", "2", "--out", str(sheet))[0] == 0
    rows = _fill(sheet, ["ok", "ok"])
    rows[0][column] = value
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    code, out = _invoke("review", "--pack", str(folder), "--apply", str(sheet), "--reviewer", "Bo")
    assert code == 2 and message in out and "Traceback" not in out
    assert not (folder / REVIEWS_FILE).exists()


def test_usage_errors(tmp_path: Path) -> None:
    assert _invoke("review", "--lang", "fr")[0] == 2
    code, out = _invoke("review", "--lang", "xx", "--out", str(tmp_path / "s.csv"))
    assert code == 2 and "no language pack 'xx'" in out
    sheet = tmp_path / "s.csv"
    sheet.write_text("prompt_id,language\nabc,fr\n")
    code, out = _invoke("review", "--lang", "fr", "--apply", str(sheet), "--reviewer", "Bo")
    assert code == 2 and "missing column(s) probe, design, verdict, correction, comment" in out
    code, out = _invoke("review", "--lang", "fr", "--apply", str(sheet))
    assert code == 2 and "--reviewer" in out
