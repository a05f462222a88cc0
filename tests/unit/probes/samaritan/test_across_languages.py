"""The Samaritan study in two languages: `summary` (JSON block, printed table, statistics rows) and the report's
"Across languages (Samaritan probe)" section show the same across-languages numbers; one language shows none."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS, build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.probes.samaritan.read import load_outcomes
from biasatlas.probes.samaritan.report import report_sections
from biasatlas.probes.samaritan.report_languages import section
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.tidy.columns import STATISTICS


def script(request: Request) -> str:
    """fr rates everyone 15 higher (a language-wide shift); 'female' 12 below the control in fr only."""
    meta, language = request.prompt.meta, request.prompt.language
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    rating = 60 + (15 if language == "fr" else 0) + rng.gauss(0, 2)
    if meta["group"] == "female" and language == "fr":
        rating -= 12
    return f"{round(rating)}"


def _study(path: Path, languages: tuple[str, ...]) -> Path:
    prompts = [p for lang in languages for p in build_prompts(["gender"], lang, n_scenarios=6)]
    with Store(path) as store:
        run_plan(prompts, FakeBackend(script), store, GenerationSettings(max_tokens=DEFAULT_MAX_TOKENS),
                 progress=False)
    return path


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _study(tmp_path_factory.mktemp("two"), ("en", "fr"))


def test_summary_block_printed_table_and_statistics_rows(two: Path) -> None:
    with Store(two) as store:
        summary = PROBE.summarise(store)
    block = summary["across_languages"]
    tests = {t["group"]: t for t in block["tests"]}
    assert set(tests) == {"male", "female", "non-binary"} and block["alpha"] == 0.01
    assert tests["female"]["differs"] and not tests["male"]["differs"]  # the fr shift is not a finding
    assert tests["female"]["flags"] == "few_pairs" and "en 6, fr 6" in tests["female"]["flag_notes"]
    assert "(asked in en only)" in tests["non-binary"]["left_out"]  # en asks "Enby", fr does not
    fr = next(e for e in block["effects"] if e["group"] == "female" and e["language"] == "fr")
    assert fr["ci_low"] < -12 + 3 and fr["ci_high"] > -12 - 3 and fr["ci_high"] < -6
    rows = [r for r in summary["statistics"] if r["source"] == "across_languages"]
    assert len(rows) == 9 and all(set(r) == set(STATISTICS) for r in rows)
    q_row = next(r for r in rows if r["test"] and r["group"] == "female")
    assert q_row["p_adj"] == tests["female"]["p_adj"] and q_row["significant"] and q_row["language"] == "en,fr"
    assert q_row["statistic_name"] == "Q (1 degrees of freedom)" and q_row["flags"] == "few_pairs"
    effect_row = next(r for r in rows if not r["test"] and r["group"] == "female" and r["language"] == "fr")
    assert (effect_row["estimate"], effect_row["ci_low"]) == (fr["effect"], fr["ci_low"])
    assert effect_row["temperature"] == 0.0 and effect_row["max_tokens"] == DEFAULT_MAX_TOKENS
    console = Console(record=True, width=240)
    PROBE.print_summary(summary, console)
    text = console.export_text()
    assert "Across languages" in text and "[t 95% CI]" in text and "Cochran's Q" in text
    assert "fr -12" in text or "fr -11" in text or "fr -13" in text


def test_report_section(two: Path) -> None:
    with Store(two) as store:
        sections = report_sections(store)
    assert [s.title for s in sections][-1] == "Across languages (Samaritan probe)"
    across = sections[-1]
    assert "Cochran's Q" in (across.methods or "")
    html = "".join(across.blocks)
    assert "female" in html and "differs between languages" in html and "fr" in html
    assert len(across.files) == 3  # the figure, the tests table, the effects table


def test_one_language_has_no_block(tmp_path: Path) -> None:
    study = _study(tmp_path, ("fr",))
    with Store(study) as store:
        summary = PROBE.summarise(store)
        frame = load_outcomes(store)
    assert "across_languages" not in summary
    assert not [r for r in summary["statistics"] if r["source"] == "across_languages"]
    assert section(frame, 0.01) is None and not frame.empty
