"""Reports opened in a real browser: hostile studies run no script; a study's report is usable and readable.

Chromium comes from the distribution's packages (scripts/setup.sh --dev installs it) and is driven by
playwright with its executable_path; no browser is downloaded. In CI the browser must be there.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.report.build import build_report
from biasatlas.report.html import Section, write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

HOSTILE = "r<img src=x onerror=\"document.title='pwned'\">"
ANSWERS = [
    "<script>document.title='pwned'</script>",
    "<img src='http://127.0.0.1:9/x.png' onerror=\"document.title='pwned'\">",
    "<a href=\"javascript:document.title='pwned'\">click</a>\x00",
    "</table><iframe src='http://127.0.0.1:9/'></iframe>",
    "</script><script>document.title='pwned'</script>",
]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    browser_path = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        browser_path = None
    if browser_path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium and playwright (scripts/setup.sh --dev installs them)")
        pytest.skip("chromium or playwright not installed")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        yield launched
        launched.close()


class Page:
    """A report opened in a fresh page, with every request, console error and page error recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        started = time.monotonic()
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        self.ready_s = time.monotonic() - started

    def remote(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(("file:", "data:", "blob:"))]


@pytest.mark.slow
def test_hostile_report_runs_no_script_and_loads_nothing(tmp_path: Path, browser: Any) -> None:
    import plotly.graph_objects as go

    study = tmp_path / HOSTILE
    study.mkdir()
    section = Section(title=f"Probe {HOSTILE}", methods=HOSTILE, key="contact")
    for answer in ANSWERS:
        section.add_text(answer)
    section.add_table(pd.DataFrame({"answer": ANSWERS, "n": range(len(ANSWERS))}), caption=HOSTILE)
    section.add_plot(go.Figure(go.Bar(x=ANSWERS, y=[1, 2, 3, 4, 5], hovertext=ANSWERS)), caption=HOSTILE)
    section.add_answers(pd.DataFrame({"model": [HOSTILE] * 10, "answer": ANSWERS * 2}))
    out = write_report(study, [section], title=f"report {HOSTILE}")

    page = Page(browser, out)
    title = page.page.title()
    page.page.locator("#answers-contact .dt-search input").fill("iframe")
    page.page.wait_for_timeout(300)
    visible = page.page.locator("#answers-contact table.answers tbody tr").count()
    shown = page.page.locator("#answers-contact table.answers tbody").inner_text()
    page.page.close()
    assert title == f"report {HOSTILE} · {HOSTILE}"  # shown as text, never replaced by a script
    assert page.remote() == []
    assert page.errors == []
    assert visible == 2 and "<iframe" in shown  # the filter narrowed the table; the answer shows as text


def _study(path: Path, per_model: int) -> Path:
    """Two fake models, contact in English and German and samaritan in English, with realistic answers."""
    rng = random.Random(7)
    yes_no = ["Yes.", "No.", "Absolutely not.", "Sure! The answer is: Yes.", "I can't answer that.", "Probably not."]
    ratings = ["I'd say 70.", "80", "About 60-70.", "Between 40 and 50.", "No idea.", "<b>55</b>"]
    with Store(path) as store:
        for model in ("alpha", "beta"):
            contact = load_probe("contact")
            prompts = contact.plan(contact.config(languages=["en", "de"], axes=["religion"], limit=per_model))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(yes_no), name=model), store,
                     GenerationSettings(mode="generate"), progress=False)
            samaritan = load_probe("samaritan")
            prompts = samaritan.plan(samaritan.config(languages=["en"], categories=["gender"], limit=per_model // 2))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(ratings), name=model), store,
                     GenerationSettings(mode="generate"), progress=False)
        build_report(store, path)
    return path / "report.html"


@pytest.mark.slow
def test_study_report_overview_filter_and_drill_down(tmp_path: Path, browser: Any) -> None:
    out = _study(tmp_path / "study", per_model=60)
    page = Page(browser, out)
    p = page.page
    # the overview comes first: a grid of models x probe/language, and the plot of the headline effects
    assert p.locator("section h2").first.inner_text() == "Overview"
    cells = p.locator("table.overview td.drill")
    assert cells.count() == 2 * 3  # 2 models x (contact en, contact de, samaritan en)
    assert p.locator("section#section-overview div.plot .main-svg").count() >= 1
    p.screenshot(path=str(_shots(tmp_path) / "report-overview.png"))

    # a filter narrows a table
    box = p.locator("#answers-contact .dt-search input")
    before = p.locator("#answers-contact .dt-info").inner_text()
    box.fill("Absolutely not")
    p.wait_for_timeout(300)
    after = p.locator("#answers-contact .dt-info").inner_text()
    assert "filtered from" in after and after != before
    rows = p.locator("#answers-contact table.answers tbody tr")
    assert all("Absolutely not" in rows.nth(i).inner_text() for i in range(rows.count()))

    # a click on a grid cell shows the answers behind it: that model and language only
    cell = p.locator("table.overview td.drill[data-probe='contact'][data-language='de']").first
    model = cell.get_attribute("data-model")
    cell.click()
    p.wait_for_timeout(300)
    info = p.locator("#answers-contact .dt-info").inner_text()
    assert "filtered from" in info
    first_cells = p.locator("#answers-contact table.answers tbody tr td:nth-child(1)")
    langs = p.locator("#answers-contact table.answers tbody tr td:nth-child(2)")
    assert first_cells.count() > 0
    assert {first_cells.nth(i).inner_text() for i in range(first_cells.count())} == {model}
    assert {langs.nth(i).inner_text() for i in range(langs.count())} == {"de"}
    p.locator("#answers-contact").screenshot(path=str(_shots(tmp_path) / "report-contact-answers.png"))
    _side_by_side(p, tmp_path)
    _group_row(p)
    _plot_points(p)
    p.close()
    assert page.errors == [] and page.remote() == []
    files = {f.suffix for f in (tmp_path / "study" / "report_files").iterdir()}
    assert files == {".csv", ".tex", ".svg", ".pdf", ".bib"}  # references.bib of the paper set


def _column(p: Any, box: str, name: str) -> list[str]:
    """The texts of one column of an answers table, found by its header."""
    heads = p.locator(f"{box} table.answers thead th").all_inner_texts()
    i = [h.strip() for h in heads].index(name) + 1
    return p.locator(f"{box} table.answers tbody tr td:nth-child({i})").all_inner_texts()


def _side_by_side(p: Any, tmp_path: Path) -> None:
    """A probe table shows both models side by side; a filter narrows it; a model's cell opens its answers."""
    headline = p.locator("div.table[data-drill]").filter(has_text="By contact framing, models side by side")
    assert headline.count() == 1
    top = [t.strip() for t in headline.locator("thead tr").first.locator("th").all_inner_texts()]
    assert [t for t in top if t] == ["fake:alpha", "fake:beta"]
    headline.scroll_into_view_if_needed()
    headline.screenshot(path=str(_shots(tmp_path) / "report-contact-side-by-side.png"))

    # a filter narrows a side-by-side table (long enough to have one)
    action = p.locator("div.table[data-drill]").filter(has_text="By scale × contact × action")
    rows = action.locator("tbody tr")
    before = rows.count()
    action.locator("input[type='search']").fill("negative")
    p.wait_for_timeout(300)
    texts = rows.all_inner_texts()
    assert 0 < len(texts) < before and all("negative" in t for t in texts)

    # a click on beta's cell of a row shows beta's answers of that row's language and contact framing
    spec = json.loads(headline.get_attribute("data-drill") or "{}")
    column = min(int(i) for i, model in spec["models"].items() if model == "fake:beta")
    heads = [t.strip() for t in headline.locator("thead tr").nth(1).locator("th").all_inner_texts()]
    row = headline.locator("tbody tr").first.locator("td")
    language, contact = row.nth(heads.index("Language")).inner_text(), row.nth(heads.index("Contact")).inner_text()
    row.nth(column).click()
    p.wait_for_timeout(300)
    assert "filtered from" in p.locator("#answers-contact .dt-info").inner_text()
    assert set(_column(p, "#answers-contact", "Model")) == {"fake:beta"}
    assert set(_column(p, "#answers-contact", "Language")) == {language}
    assert set(_column(p, "#answers-contact", "Contact")) == {contact}


def _group_row(p: Any) -> None:
    """A click on a row of "By group" narrows the answers to that group; a prompt set's framings sit together."""
    table = p.locator("div.table[data-drill]").filter(has_text="by group").first
    heads = [t.strip() for t in table.locator("thead tr").last.locator("th").all_inner_texts()]
    row = table.locator("tbody tr").first.locator("td")
    group = row.nth(heads.index("Group")).inner_text()
    row.nth(heads.index("Group")).click()
    p.wait_for_timeout(300)
    assert set(_column(p, "#answers-contact", "Group")) == {group}
    sets = _column(p, "#answers-contact", "Prompt set")
    runs = [name for name, _ in itertools.groupby(sets)]
    assert sets and len(runs) == len(set(runs))  # each prompt set's rows (its framings) one after the other


def _click_centre(p: Any, element: Any) -> None:
    element.scroll_into_view_if_needed()
    box = element.bounding_box()
    assert box is not None
    p.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    p.wait_for_timeout(200)
    p.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    p.wait_for_timeout(400)


def _filter_text(p: Any, probe: str) -> str:
    return str(p.locator(f"#answers-{probe} .active-filter .what").inner_text())


def _plot_points(p: Any) -> None:
    """A click on a bar narrows the answers to its model, language, scale and framing; on a group's point of
    the disparity forest to that group."""
    p.locator("#answers-contact button.reset").click()
    total = len(_column(p, "#answers-contact", "Model"))
    bars = p.locator("figure").filter(has_text="Biased answers by contact framing").locator("div.plot")
    assert bars.get_attribute("data-drill-probe") == "contact"
    _click_centre(p, bars.locator(".trace.bars .point path").first)
    shown = _filter_text(p, "contact")
    assert "Model = " in shown and "Contact = " in shown and "Language = " in shown, shown
    info = p.locator("#answers-contact .dt-info").inner_text()
    assert "filtered from" in info
    assert len(set(_column(p, "#answers-contact", "Model"))) == 1
    assert len(set(_column(p, "#answers-contact", "Contact"))) == 1
    assert len(set(_column(p, "#answers-contact", "Language"))) == 1

    p.locator("#answers-contact button.reset").click()
    assert len(_column(p, "#answers-contact", "Model")) == total
    forest = p.locator("figure").filter(has_text="Group disparity: each group").locator("div.plot").first
    probe = forest.get_attribute("data-drill-probe")
    assert probe in ("contact", "samaritan")
    ticks = set(forest.locator(".yaxislayer-above .ytick text").all_text_contents())
    _click_centre(p, forest.locator(".scatterlayer .trace .points path.point").first)
    shown = _filter_text(p, probe)
    assert "Group = " in shown, shown
    group = shown.split("Group = \u201c", 1)[1].split("\u201d", 1)[0]
    assert group in ticks
    assert set(_column(p, f"#answers-{probe}", "Group")) == {group}


def _shots(tmp_path: Path) -> Path:
    """Where screenshots go: docs/images when BIASATLAS_DOC_SCREENSHOTS=1 (to refresh the docs), else tmp."""
    if os.environ.get("BIASATLAS_DOC_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        return DOCS_IMAGES
    return tmp_path


@pytest.mark.slow
def test_report_of_20000_answers_opens(tmp_path: Path, browser: Any) -> None:
    """Size and render time of a 20,000-answer report (figures in docs/performance.md come from this test)."""
    rng = random.Random(3)
    answers = ["Yes.", "No.", "Absolutely not.", "Probably not.", "I can't answer that.", "Sure, why not."]
    study = tmp_path / "big"
    started = time.monotonic()
    with Store(study) as store:
        for model in ("alpha", "beta"):
            contact = load_probe("contact")
            prompts = contact.plan(contact.config(languages=["en", "de", "is"], limit=10_000))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(answers), name=model), store,
                     GenerationSettings(mode="generate"), progress=False)
        n = store.response_count()
        built = time.monotonic()
        out = build_report(store, study)
    build_s = time.monotonic() - built
    page = Page(browser, out)
    cell = page.page.locator("table.overview td.drill").first
    cell.click()
    page.page.wait_for_timeout(300)
    info = page.page.locator("#answers-contact .dt-info").inner_text()
    page.page.close()
    size_mb = out.stat().st_size / 1e6
    line = (f"report of {n} answers: {size_mb:.1f} MB, built in {build_s:.0f} s, ready in the browser in "
            f"{page.ready_s:.1f} s (study made in {built - started:.0f} s)")
    print(line)
    if os.environ.get("BIASATLAS_BENCH_OUT"):
        with open(os.environ["BIASATLAS_BENCH_OUT"], "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    assert n >= 19_900
    assert "filtered from" in info
    assert page.errors == [] and page.remote() == []
    assert size_mb < 40  # about 0.7 kB an answer with its prompt, plus 5 MB of libraries


# ---- issue 28: a 2-model audit report a researcher can use as it is -------------------------------------------
AUDIT_TITLE = "Religion bias in English and German: alpha & beta"
LATEX_ANSWERS = [
    "Yes.", "No & never_ever 100% {really} $5 #1 ~^\\", "Δ − × ± ≥ < > | 汉字 🙂\x00",
    "Absolutely not. " * 20, "I can't answer that.\n\nIt depends.", "„Ja“ – Þú ert á Íslandi…",
]
# a plain article: its default text width, no geometry (every table must fit it as it is)
LATEX_DOCUMENT = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs,array,graphicx,pdflscape}
\begin{document}
%s
\end{document}
"""


@pytest.fixture(scope="module")
def audit_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two fake models made by an audit (its title recorded): contact in English (generate, answers that break
    LaTeX and show literals) and German (choice mode: option probabilities), samaritan in English."""
    rng = random.Random(11)
    path = tmp_path_factory.mktemp("audit") / "study"
    ratings = ["I'd say 70.", "80", "About 60-70 & more.", "<b>55</b> Δ", "No idea."]
    config = {"audit": {"title": AUDIT_TITLE}}
    with Store(path) as store:
        for model in ("alpha", "beta"):
            contact = load_probe("contact")
            english = contact.plan(contact.config(languages=["en"], axes=["religion"], limit=24))
            run_plan(english, FakeBackend(lambda r: rng.choice(LATEX_ANSWERS), name=model), store,
                     GenerationSettings(mode="generate"), config=config, progress=False)
            german = contact.plan(contact.config(languages=["de"], axes=["religion"], limit=24))
            run_plan(german, FakeBackend(name=model), store, GenerationSettings(mode="choice"), config=config,
                     progress=False)
            samaritan = load_probe("samaritan")
            prompts = samaritan.plan(samaritan.config(languages=["en"], categories=["gender"], limit=12))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(ratings), name=model), store,
                     GenerationSettings(mode="generate"), config=config, progress=False)
        build_report(store, path)
    return path


LITERAL = re.compile(r"^(None|True|False|nan|NaN)$|\\n")


@pytest.mark.slow
def test_audit_report_reads_as_a_paper_would_need_it(audit_study: Path, browser: Any) -> None:
    page = Page(browser, audit_study / "report.html")
    p = page.page
    assert p.title() == AUDIT_TITLE

    # no Python literal and no literal \n in any cell of any table (the answers tables: every page shown); a
    # header may be the word "None" where a paper's table names its no-decision column so (Ikae et al.)
    cells = p.locator("table td").all_inner_texts()
    headers = p.locator("table th").all_inner_texts()
    assert len(cells) > 500
    assert [c for c in cells if LITERAL.search(c.strip())] == []
    assert [h for h in headers if LITERAL.search(h.strip()) and h.strip() != "None"] == []

    # every figure is interactive (no static image in the page), every plot has axis titles
    assert p.locator("figure img").count() == 0
    for key in ("overview", "contact-hypothesis-probe", "samaritan"):
        section = p.locator(f"section[id^='section-{key}']").first
        plots = section.locator("div.plot")
        assert plots.count() >= 1, key
        for i in range(plots.count()):
            titles = [t.strip() for t in plots.nth(i).locator(".g-xtitle, .g-ytitle").evaluate_all(
                "nodes => nodes.map((n) => n.textContent || '')")]
            assert len([t for t in titles if t]) >= 2, (key, i, titles)
    figure = p.locator("section[id^='section-contact'] figure").first
    figure.scroll_into_view_if_needed()
    figure.screenshot(path=str(_shots(audit_study) / "report-contact-figure.png"))

    # a filter on one column searches that column only: "Nein" in the Answer column, not every German prompt
    box = "#answers-contact"
    total = p.locator(f"{box} table.answers tbody tr").count()
    p.locator(f"{box} input[data-column='Answer']").fill("Nein")
    p.wait_for_timeout(300)
    info = p.locator(f"{box} .dt-info").inner_text()
    answers = _column(p, box, "Answer")
    assert "filtered from" in info and answers and all("nein" in a.lower() for a in answers)
    assert "Answer contains" in p.locator(f"{box} .active-filter").inner_text()
    german_prompts = p.locator(f"{box} input[data-column='Prompt']")
    german_prompts.fill("Ja oder Nein")
    p.wait_for_timeout(300)
    narrowed = int(re.findall(r"of ([\d,]+) entries", p.locator(f"{box} .dt-info").inner_text())[0].replace(",", ""))
    assert 0 < narrowed < 2 * 24 * 2  # the German prompts' answers saying Nein, not all the German answers
    # choice-mode answers show the probability of each option
    probabilities = _column(p, box, "P(option)")
    assert probabilities and all(re.fullmatch(r"\S+ [01]\.\d{3} · \S+ [01]\.\d{3}", v) for v in probabilities)
    p.locator(box).screenshot(path=str(_shots(audit_study) / "report-answers-column-filter.png"))

    # after a drill-down the active filter is shown in words, and the clear button clears it
    cell = p.locator("table.overview td.drill[data-probe='contact'][data-language='de']").first
    model = cell.get_attribute("data-model") or ""
    cell.click()
    p.wait_for_timeout(300)
    active = p.locator(f"{box} .active-filter").inner_text()
    assert f"Model = “{model}”" in active and "Language = “de”" in active
    p.locator(f"{box} button.reset").click()
    p.wait_for_timeout(300)
    assert "No filter" in p.locator(f"{box} .active-filter").inner_text()
    assert p.locator(f"{box} table.answers tbody tr").count() == total

    # one validity table with a flag column, citations link to the references, the methods are in the page
    validity = p.locator("section#section-validity")
    assert validity.locator("table").count() == 1 and "Warning:" not in validity.inner_text()
    assert "Flag" in validity.locator("thead").inner_text()
    # text left, numbers right; a table wider than the page has a scrollbar above it that moves it
    align = validity.locator("tbody tr").first.locator("td").evaluate_all(
        "cells => cells.map((c) => getComputedStyle(c).textAlign)")
    heads = [h.strip() for h in validity.locator("thead th").all_inner_texts()]
    assert align[heads.index("Probe")] in ("left", "start") and align[heads.index("Answers")] == "right"
    bar = p.locator("#answers-contact div.topscroll")
    assert bar.is_visible()
    bar.evaluate("b => { b.scrollLeft = 200; b.dispatchEvent(new Event('scroll')); }")
    p.wait_for_timeout(100)
    assert bar.evaluate("b => b.nextElementSibling.scrollLeft") > 0
    assert p.locator("a.cite[href='#ref-raj2024']").count() >= 1 and p.locator("#ref-raj2024").count() == 1
    assert p.locator("details.methods-full").count() >= 2 and "docs/methods" not in p.locator("body").inner_text()
    p.evaluate("window.scrollTo(0, 0)")
    p.screenshot(path=str(_shots(audit_study) / "report-audit-top.png"))
    p.close()
    assert page.errors == [] and page.remote() == []


@pytest.mark.slow
def test_every_tex_of_the_report_compiles_with_pdflatex(audit_study: Path) -> None:
    """pdflatex from Debian's texlive-latex-base/-recommended (scripts/setup.sh --dev); CI fails without it."""
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs pdflatex (scripts/setup.sh --dev installs texlive-latex-base/-recommended)")
        pytest.skip("pdflatex not installed")
    folder = audit_study / "report_files"
    files = sorted(folder.glob("[0-9]*.tex"))
    assert len(files) > 10
    assert [f.read_text(encoding="utf-8").count("\\label{") for f in files] == [1] * len(files)
    # one document inputs every table: one pdflatex run; an error names the file it is in
    body = "\n\\clearpage\n".join(f"\\input{{{f.name}}}" for f in files)
    (folder / "all-tables.tex").write_text(LATEX_DOCUMENT % body, encoding="utf-8")
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "all-tables.tex"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    errors = [line for line in done.stdout.splitlines() if line.startswith("!")]
    assert done.returncode == 0 and errors == [], done.stdout[-3000:]
    log = (folder / "all-tables.log").read_text(errors="replace")
    assert "Missing character" not in log
    overfull = [float(x) for x in re.findall(r"Overfull \\[hv]box \(([\d.]+)pt too wide", log)]
    assert [x for x in overfull if x > 1.0] == [], "a table runs over the text width"
    # the paper set: its tables and references compile (pdflatex, bibtex, pdflatex)
    for step in ([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], ["bibtex", "paper"],
                 [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"]):
        if step[0] == "bibtex" and shutil.which("bibtex") is None:
            continue
        done = subprocess.run(step, cwd=folder, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-3000:]
    assert "Overfull \\hbox" not in (folder / "paper.log").read_text(errors="replace")


@pytest.mark.slow
def test_reading_check_shows_in_the_validity_section(tmp_path: Path, browser: Any) -> None:
    """Issue 27: `readers sample` -> a person fills human_label -> `readers score` -> the report's validity
    section says, per probe and language, how well the answers were read, or that no check was made."""
    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    study = tmp_path / "study"
    replies = ["Yes.", "No.", "Probably not, no.", "I can't answer that.", "Yes, gladly."]
    rng = random.Random(27)
    with Store(study) as store:
        contact = load_probe("contact")
        for language in ("en", "de"):
            prompts = contact.plan(contact.config(languages=[language], axes=["religion"], limit=30))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(replies), name="m"), store,
                     GenerationSettings(mode="generate"), progress=False)
    runner = CliRunner()
    labels_csv = tmp_path / "labels.csv"
    sampled = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "20", "--out", str(labels_csv)])
    assert sampled.exit_code == 0, sampled.output
    labels = pd.read_csv(labels_csv, dtype=str, keep_default_na=False)
    labels = labels[labels["language"] == "en"]  # a person checked the English answers only
    labels["human_label"] = labels["reader_label"]  # ... and read each as the reader did
    labels.to_csv(labels_csv, index=False)
    scored = runner.invoke(app, ["readers", "score", "--study", str(study), str(labels_csv)])
    assert scored.exit_code == 0, scored.output
    with Store(study) as store:
        build_report(store, study)
    page = Page(browser, study / "report.html")
    validity = page.page.locator("section#section-validity").inner_text()
    n = len(labels)
    assert f"contact, en: reading checked on {n} human-labelled answers: 100.0%" in validity
    assert "contact, de: no human check of the reading was made" in validity
    page.page.close()
    assert page.errors == [] and page.remote() == []


@pytest.mark.slow
def test_report_of_fifty_models_in_twelve_languages_opens_and_draws_every_plot(tmp_path: Path, browser: Any) -> None:
    """50 fake models × the contact probe in all twelve languages (one prompt set a cell: the cells, not the
    answers, make a report of many models large; one subplot column per model once made plotly refuse 14):
    every model in the overview, every plot drawn, no error."""
    from biasatlas.languages import pack_codes

    rng = random.Random(5)
    answers = ["Yes.", "No.", "Absolutely not.", "I can't answer that.", "Probably not."]
    study = tmp_path / "many"
    contact = load_probe("contact")
    languages = pack_codes()
    assert len(languages) == 12
    prompts = contact.plan(contact.config(languages=languages, axes=["religion"], limit=3))
    with Store(study) as store:
        for k in range(50):
            run_plan(prompts, FakeBackend(lambda r: rng.choice(answers), name=f"model-{k:02d}"), store,
                     GenerationSettings(mode="generate"), progress=False)
        out = build_report(store, study, publish=False)
    page = Page(browser, out)
    p = page.page
    overview = p.locator("section#section-overview")
    info = overview.locator(".dt-info").first.inner_text()  # the grid is paged: a row per model
    assert re.search(r"\bof 50 entries", info), info
    overview.locator(".dt-search input").first.fill("model-49")
    p.wait_for_timeout(300)
    first = overview.locator("table.overview tbody tr").first.inner_text()
    assert "model-49" in first.split("\t")[0], first
    plots = p.locator("div.plot").count()
    drawn = p.locator("div.plot .main-svg").count()
    p.close()
    assert plots >= 3 and drawn >= plots  # each plot has its SVG (plotly draws two or more layers a plot)
    assert page.errors == [] and page.remote() == []
