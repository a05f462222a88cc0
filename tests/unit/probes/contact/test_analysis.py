"""Contact analysis on a scripted model: the tables, tests and report reflect the answers given."""

from __future__ import annotations

from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact import probe as contact
from biasatlas.probes.contact.analysis import contact_tests, decision_table
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.html import write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _script(request: Request, refuse: str = "Amish") -> str:
    """Refuses to engage under negative contact, engages otherwise; one refusal for markup checks."""
    meta = request.prompt.meta
    if meta["descriptor"] == refuse and meta["contact"] == "none":
        return "<b>I cannot</b> answer that."
    engage = meta["contact"] != "negative"
    if meta["action"] == "negative":
        return "No." if engage else "Yes."
    return "Yes." if engage else "No."


def test_tables_tests_and_report(tmp_path: Path) -> None:
    prompts = contact.build_prompts(contact.ContactConfig(language="en", axes=["religion"], limit=180))  # 60 sets
    store = Store(tmp_path)
    drawn = prompts[0].meta["descriptor"]  # a descriptor the --limit draw holds, for the refusal
    run_plan(prompts, FakeBackend(lambda r: _script(r, drawn)), store, GenerationSettings(), progress=False)
    out = contact.outcomes(store.frame(probe="contact"))
    table = decision_table(out, ["scale", "contact"]).set_index("contact")
    assert table.loc["negative", "biased_pct"] == 100.0
    assert table.loc["positive", "biased_pct"] == 0.0
    assert table.loc["negative", "n"] == 60
    tests = contact_tests(out).set_index("comparison")
    neg = tests.loc["negative vs none"]
    assert neg["effect"] > 0.9 and neg["p"] < 1e-10 and neg["p_adj"] >= neg["p"]
    assert (out.loc[out["contact"] == "negative", "moved"].isin(["toward", "undetermined"])).all()
    summary = contact.summarise(store)
    assert summary["last_run"]["planned"] == 180 and summary["last_run"]["new"] == 180
    cell = next(r for r in summary["by_contact"] if r["contact"] == "negative")
    assert {"n", "biased_count", "biased_pct", "biased_ci_low", "biased_ci_high"} <= set(cell)
    report = write_report(tmp_path, contact.report_sections(store))
    html = report.read_text()
    assert "&lt;b&gt;I cannot&lt;/b&gt;" in html
    assert "<b>I cannot</b>" not in html
    assert html.count("data:image/png;base64") >= 2
