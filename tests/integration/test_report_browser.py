"""A report built from hostile study names and answers, opened in a real browser: no script of theirs runs.

Chromium comes from the distribution's packages (scripts/setup.sh --dev installs it) and is driven by
playwright with its executable_path; no browser is downloaded. In CI the browser must be there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from biasatlas.report.html import Section, write_report

HOSTILE = "r<img src=x onerror=\"document.title='pwned'\">"
ANSWERS = [
    "<script>document.title='pwned'</script>",
    "<img src='http://127.0.0.1:9/x.png' onerror=\"document.title='pwned'\">",
    "<a href=\"javascript:document.title='pwned'\">click</a>\x00",
    "</table><iframe src='http://127.0.0.1:9/'></iframe>",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.mark.slow
def test_hostile_report_runs_no_script_and_loads_nothing(tmp_path: Path) -> None:
    browser_path = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        browser_path = None
    if browser_path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromium and playwright (scripts/setup.sh --dev installs them)")
        pytest.skip("chromium or playwright not installed")
    study = tmp_path / HOSTILE
    study.mkdir()
    section = Section(title=f"Probe {HOSTILE}", methods=HOSTILE)
    for answer in ANSWERS:
        section.add_text(answer)
    section.add_table(pd.DataFrame({"answer": ANSWERS, "n": range(len(ANSWERS))}), caption=HOSTILE, sortable=True)
    out = write_report(study, [section], title=f"report {HOSTILE}")

    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.as_uri())
        page.wait_for_timeout(500)
        title = page.title()
        # our own script ran (the sortable table got its filter box) ...
        filters = page.locator("input.filter").count()
        page.locator("input.filter").first.fill("iframe")
        visible = page.locator("table.sortable tbody tr:visible").count()
        browser.close()
    assert title == f"report {HOSTILE} · {HOSTILE}"  # shown as text, never replaced by a script
    remote = [u for u in requests if not u.startswith(("file:", "data:"))]
    assert remote == []
    assert errors == []
    assert filters == 1
    assert visible == 1
