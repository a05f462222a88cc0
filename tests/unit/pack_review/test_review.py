"""Native-speaker review sheets: the prompts they show are the plans' prompts, the draw is seeded and
stratified, a filled sheet is checked row by row, and only a recorded review makes a pack reviewed."""

from __future__ import annotations

import csv
import hashlib
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from biasatlas.languages import REVIEWS_FILE, pack, packs_root, read_pack
from biasatlas.languages.reviews import provenance_line, review_status, review_summary
from biasatlas.pack_review.review import COLUMNS, append_record, review_record, sheet_rows, write_sheet
from biasatlas.pack_review.review_sample import CONTACT, SAMARITAN, PackPrompts, ReviewError, draw, sample_units


@pytest.fixture(scope="module")
def fr_prompts() -> PackPrompts:
    return PackPrompts(pack("fr"))


@pytest.fixture(scope="module")
def three_rows(fr_prompts: PackPrompts) -> list[dict[str, str]]:
    return sheet_rows(fr_prompts, 3, seed=1)


def _copy(code: str, tmp_path: Path) -> Path:
    folder = tmp_path / f"{code}-pack"
    shutil.copytree(packs_root() / code, folder)
    return folder


def _filled(rows: list[dict[str, str]], path: Path, verdicts: list[str]) -> Path:
    for row, verdict in zip(rows, verdicts, strict=False):
        row["verdict"] = verdict
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_sheets_prompts_are_the_plans_own(fr_prompts: PackPrompts) -> None:
    from biasatlas.probes.contact.plan import ContactConfig, build_prompts
    from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts

    rows = sheet_rows(fr_prompts, 12, seed=5)
    tset = fr_prompts._contact[0]  # type: ignore[index]
    samaritan_ids = {p.id: p for p in samaritan_prompts(language="fr")}
    for row in rows:
        if row["probe"] == SAMARITAN:
            assert samaritan_ids[row["prompt_id"]].messages[0].content == row["prompt"]
            continue
        _, cell_id, scale, action, axis, _, contact = __import__("json").loads(row["design"])
        cell = next(c for c in tset.cells if c.id == cell_id)
        plan = build_prompts(ContactConfig(languages=["fr"], axes=[axis], scenarios=[cell.scenario],
                                           principles=[cell.principle], scales=[scale], actions=[action]))
        by_id = {p.id: p for p in plan}
        assert by_id[row["prompt_id"]].messages[0].content == row["prompt"]
        assert by_id[row["prompt_id"]].meta["contact"] == contact


@pytest.mark.parametrize("code", ["fr", "es", "zh", "de"])
def test_a_pack_folders_groups_are_the_plans_groups(code: str) -> None:
    """Read from the folder (a user's pack too), the groups and their forms are the plan's: the pack's
    form fixes applied, descriptors of one wording merged."""
    from biasatlas.probes.contact.data import descriptors_for

    ours = PackPrompts(pack(code))._contact[1]  # type: ignore[index]
    assert {k: (d.mmhb, d.pre, d.post, d.merged_ids) for k, d in ours.items()} == {
        (d.axis, d.key): (d.mmhb, d.pre, d.post, d.merged_ids) for d in descriptors_for(code)}


def test_the_draw_is_seeded_and_spread_over_the_strata(fr_prompts: PackPrompts) -> None:
    first, again, other = (sample_units(fr_prompts, 90, seed) for seed in (1, 1, 2))
    assert first == again and first != other
    probes = Counter(u.probe for u in first)
    assert probes == {CONTACT: 60, SAMARITAN: 30}
    contact_strata = {u.stratum for u in fr_prompts.contact_units()}
    per_stratum = Counter(u.stratum for u in first if u.probe == CONTACT)
    if len(contact_strata) >= 60:
        assert set(per_stratum.values()) == {1}  # 60 strata or more: 60 different ones
    else:
        assert max(per_stratum.values()) - min(per_stratum.values()) <= 1 and set(per_stratum) == contact_strata
    categories = {u.stratum for u in fr_prompts.samaritan_units()}
    seen = Counter(u.stratum for u in first if u.probe == SAMARITAN)
    assert max(seen.values()) - min(seen.values()) <= 1 and len(seen) == min(30, len(categories))


def test_draw_gives_every_unit_once_when_asked_for_more_than_there_are(fr_prompts: PackPrompts) -> None:
    import random

    units = fr_prompts.samaritan_units()[:7]
    assert sorted(map(repr, draw(units, 50, random.Random(0)))) == sorted(map(repr, units))


def test_a_sheet_has_the_columns_the_english_source_and_empty_verdicts(fr_prompts: PackPrompts, tmp_path: Path) -> None:
    rows = sheet_rows(fr_prompts, 9, seed=0)
    assert len(rows) == 9 and all(tuple(r) == COLUMNS for r in rows)
    assert all(r["verdict"] == r["correction"] == r["comment"] == "" for r in rows)
    assert len({r["prompt_id"] for r in rows}) == 9
    for row in rows:
        assert row["english_prompt"] and row["language"] == "fr"
        if row["probe"] == CONTACT:
            # MMHB ids have no English wording here: the English cell with the group's axis and sense
            assert row["english_match"] == "cell only" and f"[{row['axis']}:" in row["english_prompt"]
        else:
            assert row["english_match"] == "cell and group"
    out = tmp_path / "deep" / "sheet.csv"
    guide = write_sheet(rows, out, pack=pack("fr"), seed=0, pack_option="")
    assert guide.exists() and "verdict" in guide.read_text() and "--apply sheet.csv" in guide.read_text()
    with out.open(encoding="utf-8-sig", newline="") as fh:
        assert list(csv.DictReader(fh)) == rows


def test_english_rows_are_matched_cell_and_group() -> None:
    rows = sheet_rows(PackPrompts(pack("en")), 6, seed=0)
    assert {r["english_match"] for r in rows} == {"cell and group"}
    assert all(r["english_prompt"] == r["prompt"] for r in rows)


def test_a_filled_sheet_makes_a_record_with_counts_sha_and_corrections(fr_prompts: PackPrompts,
                                                                       tmp_path: Path) -> None:
    folder = _copy("fr", tmp_path)
    rows = sheet_rows(fr_prompts, 8, seed=4)
    rows[2]["correction"], rows[5]["comment"] = "une meilleure phrase", "registre familier"
    sheet = _filled(rows, tmp_path / "filled.csv", ["ok", "ok", "wrong", "awkward", "OK ", "ok", "", ""])
    p = read_pack(folder)
    assert p.reviews == () and review_status(p) == "machine-drafted, not reviewed by a native speaker"
    record = review_record(sheet, p, "  Ana   Lima ", "2026-11-30")
    assert record["reviewer"] == "Ana Lima" and record["date"] == "2026-11-30" and record["language"] == "fr"
    assert record["prompts_reviewed"] == 6 and record["verdicts"] == {"ok": 4, "awkward": 1, "wrong": 1}
    assert record["sheet_sha256"] == hashlib.sha256(sheet.read_bytes()).hexdigest()
    kept = {c["prompt_id"]: c for c in record["corrections"]}
    assert set(kept) == {rows[2]["prompt_id"], rows[3]["prompt_id"], rows[5]["prompt_id"]}
    assert kept[rows[2]["prompt_id"]]["correction"] == "une meilleure phrase"
    path = append_record(p, record)
    assert path == folder / REVIEWS_FILE and yaml.safe_load(path.read_text())["reviews"][0]["verdicts"]["ok"] == 4
    again = read_pack(folder)
    assert review_summary(again)["accepted"] == pytest.approx(4 / 6)
    assert review_status(again) == "machine-drafted, read by 1 reviewer, 6 prompts reviewed, 67% accepted"
    with pytest.raises(ReviewError, match="already recorded"):
        review_record(sheet, again, "Ana Lima", None)
    second = _filled(sheet_rows(fr_prompts, 3, seed=9), tmp_path / "b.csv", ["ok", "ok", "ok"])
    append_record(again, review_record(second, again, "Bo", "2026-12-01"))
    assert review_status(read_pack(folder)) == "machine-drafted, read by 2 reviewers, 9 prompts reviewed, 78% accepted"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda rows: rows[1].update(verdict="fine"), "line 3: unknown verdict 'fine'; valid: ok, awkward, wrong"),
    (lambda rows: [r.pop("verdict") for r in rows], "missing column(s) verdict"),
    (lambda rows: rows[0].update(prompt_id="0" * 24), "is not a prompt of the fr pack"),
    (lambda rows: rows[0].update(design='["contact", "fr-a-nope", "x"]'), "is not a prompt of the fr pack"),
    (lambda rows: rows[0].update(language="es"), "language 'es', not this pack's (fr)"),
    (lambda rows: [r.update(verdict="") for r in rows], "no row has a verdict"),
    (lambda rows: rows.append(dict(rows[0])), "appears twice"),
])
def test_a_bad_sheet_is_refused_in_one_line(three_rows: list[dict[str, str]], tmp_path: Path, edit: object,
                                           message: str) -> None:
    rows = [dict(r) for r in three_rows]
    for row in rows:
        row["verdict"] = "ok"
    edit(rows)  # type: ignore[operator]
    sheet = _filled(rows, tmp_path / "s.csv", [])
    with pytest.raises(ReviewError) as caught:
        review_record(sheet, pack("fr"), "Ana", "2026-11-30")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_another_packs_sheet_is_refused(tmp_path: Path) -> None:
    rows = sheet_rows(PackPrompts(pack("es")), 3, seed=0)
    sheet = _filled(rows, tmp_path / "es.csv", ["ok"] * 3)
    with pytest.raises(ReviewError, match="not this pack's"):
        review_record(sheet, pack("fr"), "Ana", None)


def test_bad_reviewer_or_date(fr_prompts: PackPrompts, tmp_path: Path) -> None:
    sheet = _filled(sheet_rows(fr_prompts, 2, seed=0), tmp_path / "s.csv", ["ok", "ok"])
    with pytest.raises(ReviewError, match="--reviewer"):
        review_record(sheet, pack("fr"), "  ", None)
    with pytest.raises(ReviewError, match="YYYY-MM-DD"):
        review_record(sheet, pack("fr"), "Ana", "30/11/2026")


def test_a_manifest_flag_never_makes_a_pack_reviewed_without_a_record(tmp_path: Path) -> None:
    folder = _copy("fr", tmp_path)
    manifest = yaml.safe_load((folder / "pack.yaml").read_text())
    for row in manifest["provenance"]:
        row["native_speaker_reviewed"] = True
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True))
    flagged = read_pack(folder)
    assert not flagged.reviewed and flagged.status != "reviewed"
    assert review_status(flagged) == "machine-drafted, not reviewed by a native speaker"
    (folder / REVIEWS_FILE).write_text("reviews:\n- {reviewer: Ana, verdicts: {ok: 2, awkward: 0, wrong: 0}}\n")
    assert read_pack(folder).reviewed


def test_a_malformed_reviews_file_names_itself(tmp_path: Path) -> None:
    from biasatlas.languages import LanguagePackError

    folder = _copy("fr", tmp_path)
    for body in ("reviews: 3\n", "reviews:\n- {reviewer: Ana, verdicts: {ok: many}}\n", "reviews:\n- {verdicts: {}}\n"):
        (folder / REVIEWS_FILE).write_text(body)
        with pytest.raises(LanguagePackError, match=r"reviews\.yaml"):
            read_pack(folder)


def test_no_shipped_pack_is_called_reviewed() -> None:
    for code in ("fr", "es", "de", "zh"):
        assert pack(code).reviews == () and review_status(pack(code)).endswith("not reviewed by a native speaker")
    line = provenance_line(["fr", "xx"])
    assert line is not None and "French (fr): machine-drafted, not reviewed by a native speaker" in line
    assert provenance_line(["xx"]) is None
