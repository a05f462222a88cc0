"""No flagged result without its flag, on every surface (issue 37, points 4, 6, 7).

One study with flagged and clean headline rows of two probes: contact in English (clean: 0 unreadable,
many discordant prompt sets) and in German (every third answer unreadable: flagged ``unreadable``);
Samaritan for one model on 5 scenarios (``too_few_units``: the paired t-test needs >= 8 at alpha 0.01)
and for another on 12 (clean). Every surface is read: `summary` (text and --json), the report page,
its CSV copies and the export; each flagged number appears with its flag, and no note is ever "nan".
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes import load_probe
from biasatlas.probes.samaritan.plan import build_prompts
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.build import build_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

runner = CliRunner()


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def _contact(request: Request) -> str:
    """Biased under no contact in half the prompt sets, never under positive contact; German: 1 in 3 unreadable."""
    meta = request.prompt.meta
    german = request.prompt.language == "de"
    if german and _digest(request.prompt.id) % 3 == 0:
        return "Hmm."
    biased = meta["contact"] == "negative" or (meta["contact"] == "none" and _digest(meta["set_id"]) % 2 == 0)
    yes, no = ("Ja.", "Nein.") if german else ("Yes.", "No.")
    if meta["action"] == "negative":
        return yes if biased else no
    return no if biased else yes


def _samaritan(request: Request) -> str:
    """Women rated 20 points below the control, men alike; each scenario its own base."""
    meta = request.prompt.meta
    base = 40 + _digest(meta["scenario"]) % 30 + 2 * int(meta["rephrasing"])
    return f"{base - (20 if meta['group'] == 'female' else 0) + _digest(request.prompt.id) % 3}"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flags")
    with Store(path) as store:
        contact = load_probe("contact")
        # the stratified draw (--no-balance-groups) the answer counts below were written against
        prompts = contact.plan(contact.config(languages=["en", "de"], axes=["religion"], scales=["certainty"],
                                              limit=300, balance_groups=False))
        run_plan(prompts, FakeBackend(_contact, name="c"), store, GenerationSettings(mode="generate"), progress=False)
        every = build_prompts(["gender"], "en", temperature=0.0, max_tokens=64)
        scenarios = sorted({p.meta["scenario"] for p in every})
        for name, n in (("few", 5), ("many", 12)):
            plan = [p for p in every if p.meta["scenario"] in scenarios[:n]]
            run_plan(plan, FakeBackend(_samaritan, name=name), store, GenerationSettings(max_tokens=64),
                     progress=False)
        build_report(store, path)
    return path


def _summary_text(study: Path) -> str:
    result = runner.invoke(app, ["summary", "--study", str(study)], env={"COLUMNS": "400"}, terminal_width=400)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_study_has_flagged_and_clean_headlines(study: Path) -> None:
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    data = json.loads(result.stdout)
    heads = {(r["model"], r["language"]): r for p in ("contact", "samaritan") for r in data[p]["statistics"]
             if r["headline"]}
    assert "unreadable" in heads[("fake:c", "de")]["flags"] and heads[("fake:c", "en")]["flags"] is None
    assert "too_few_units" in heads[("fake:few", "en")]["flags"] and heads[("fake:many", "en")]["flags"] is None


def _json(study: Path) -> dict:
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_summary_prints_each_flag_beside_its_p_and_no_verdict_on_too_few_units(study: Path) -> None:
    text = _summary_text(study)
    # the contact tests (the one model and mode are in the table's title; the flags in a column of their own)
    german = [line for line in text.splitlines() if line.startswith("de ") and ("McNemar" in line or "Cochran" in line)]
    assert german and all(re.search(r"\d \*\s+unreadable\s*$", line) for line in german if "McNemar" in line)
    assert "24% of 105 answers unreadable" in text
    english = [line for line in text.splitlines() if line.startswith("en ") and "McNemar" in line]
    assert english and not any("unreadable" in line or "⚑" in line for line in english)
    # the Samaritan group tables: a row per group, its model in the table's title
    few = [line for line in text.splitlines() if line.startswith(("female ", "male ", "non-binary "))
           and "too_few_units" in line and "verdict" not in line]
    assert len(few) == 3  # the three gender groups of fake:few, each "not a finding" with its flag
    assert all("not a finding" in line and "differs" not in line and "equivalent" not in line for line in few)
    persona = next(line for line in text.splitlines() if line.startswith("default persona · fake:few"))
    assert persona.startswith("default persona · fake:few · en · T=0 · 64 tokens · gender: none (equivalent")
    assert "differ:" not in persona and "⚑ not a finding" in persona and "female, male, non-binary" in persona
    many = next(line for line in text.splitlines() if line.startswith("default persona · fake:many"))
    assert "differ: female" in many  # the clean model keeps its verdicts
    assert not re.search(r"\bnan\b", text)


def test_summary_json_carries_the_flags_of_every_group_and_the_persona(study: Path) -> None:
    data = _json(study)["samaritan"]
    few = [g for g in data["groups"] if g["model"] == "fake:few"]
    assert {g["flags"] for g in few} == {"too_few_units"} and all(">= 8" in g["flag_notes"] for g in few)
    assert all(g["flags"] is None for g in data["groups"] if g["model"] == "fake:many")
    persona = {p["model"]: p for p in data["default_persona"]}
    assert persona["fake:few"]["default_groups"] == [] and persona["fake:few"]["differing_groups"] == []
    assert persona["fake:few"]["flagged_groups"] == ["female", "male", "non-binary"]
    assert persona["fake:many"]["differing_groups"] == ["female"] and persona["fake:many"]["flagged_groups"] == []
    # Figure 1's share of units that differ counts only the units where the test is a finding
    frequency = {r["group"]: r for r in data["significance_frequency"]}
    assert frequency["female"]["n_units"] == 1 and frequency["female"]["share_significant"] == 1.0
    assert not re.search(r'": "nan"|: NaN', json.dumps(_json(study), default=str))


def _page(study: Path) -> str:
    return (study / "report.html").read_text(encoding="utf-8")


def test_the_overview_never_shows_nan_and_flags_every_flagged_headline(study: Path) -> None:
    page = _page(study)
    assert "⚑ nan" not in page and not re.search(r">nan<|<br>nan|⚑ NaN", page)
    grid = page[page.index("class='overview"):page.index("</table>", page.index("class='overview"))]
    assert "title='24% of 105 answers unreadable'>⚑" in grid
    assert "(no interval shown) <span class='flag' title='too few units for paired t-test: 5 pairs" in grid
    # the headline of fake:few counts no flagged group as one that differs
    assert "(0 of 3 groups differ; 3 flagged, not a finding)" in page and "(1 of 3 groups differ)" in page


def _plots(page: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/json" id="plot-[^"]*">(.*?)</script>', page, re.S)
    return [json.loads(block) for block in blocks]


def test_the_overview_forest_draws_an_untested_point_hollow_with_its_reason(study: Path) -> None:
    forest = next(p for p in _plots(_page(study)) if any("not a finding" in str(t.get("name")) for t in p["data"]))
    hollow = [t for t in forest["data"] if "not a finding" in str(t.get("name"))]
    solid = [t for t in forest["data"] if "not a finding" not in str(t.get("name"))]
    assert all(t["marker"]["symbol"] == "circle-open" for t in hollow)
    assert any("fake:few" in y for t in hollow for y in t["y"])
    assert not any("fake:few" in y for t in solid for y in t["y"])  # never a solid dot
    assert any("too few units for paired t-test" in h for t in hollow for h in t["hovertext"])


def _csv(study: Path, part: str) -> list[dict[str, str]]:
    path = next(p for p in (study / "report_files").glob("*.csv") if part in p.name)
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_report_tables_and_their_csv_copies_carry_flags_and_every_digit(study: Path) -> None:
    data = _json(study)
    tests = {(t["language"], t["comparison"], t["method_kind"]): t for t in data["contact"]["tests"]}
    rows = _csv(study, "every-statistic-of-the-paired-tests")
    for row in rows:
        test = tests[(row["Language"], row["Comparison"], row["Method kind"])]
        assert float(row["p"]) == test["p"]  # full precision: no rounding to 4 decimals (2.9e-11 stayed 2.9e-11)
        assert ("unreadable" in row["Flags"]) == (row["Language"] == "de")
    wide = _csv(study, "paired-tests-of-the-contact-effect")
    assert all("⚑ unreadable" in r["adjusted p ⚑ flags"] for r in wide if r["Language"] == "de")
    groups = _csv(study, "every-statistic-per-model")
    few = [r for r in groups if r["Model"] == "fake:few"]
    assert few and all(r["⚑ flags"] == "too_few_units" and r["Verdict"].startswith("not a finding") for r in few)
    assert {float(r["p (t; sign test without spread)"]) for r in few} == {
        g["p"] for g in data["samaritan"]["groups"] if g["model"] == "fake:few"}
    persona = {r["Model"]: r for r in _csv(study, "default-persona")}
    assert persona["fake:few"]["Flagged groups"] == "female, male, non-binary"
    assert persona["fake:few"]["Default groups"] == ""
    for path in (study / "report_files").glob("*.csv"):
        assert not re.search(r"(^|,)nan(,|$)", path.read_text(encoding="utf-8"), re.M), path.name


def test_the_page_shows_p_in_one_format_and_flags_beside_the_p(study: Path) -> None:
    page = _page(study)
    assert "not a finding (⚑ too_few_units)" in page
    assert "0.00117 * ⚑ unreadable" in page  # the German McNemar: significant, and flagged beside it
    assert "2.91e-11" in page and "4.39e-07 ⚑ too_few_units" in page


def test_the_export_carries_the_flags_beside_the_numbers(study: Path, tmp_path: Path) -> None:
    from biasatlas.export import export_study

    export_study(study, tmp_path / "out", fmt="csv")
    with (tmp_path / "out" / "statistics_contact.csv").open(encoding="utf-8") as handle:
        heads = {r["language"]: r for r in csv.DictReader(handle) if r["headline"] in ("true", "True", "1")}
    assert heads["de"]["flags"] == "unreadable" and heads["en"]["flags"] == ""
    data = _json(study)
    head = next(r for r in data["contact"]["statistics"] if r["headline"] and r["language"] == "en")
    assert float(heads["en"]["p"]) == head["p"]
