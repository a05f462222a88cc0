"""The report's "Across languages" section: there for two languages, absent for one, the planted group first."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.probes.contact.across_languages import language_differences
from biasatlas.probes.contact.report_languages import _shown, _tests_table, section


def _out() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rates = {f"P_D{i:03d}": {"fr": 0.3, "zh": 0.3} for i in range(20)}
    rates["P_D777"] = {"fr": 0.3, "zh": 0.95}
    return pd.DataFrame([{"model": "m", "descriptor": g, "group": f"<b>{g}</b>-{lang}", "language": lang,
                          "biased": float(b)}
                         for g, by in rates.items() for lang, p in by.items() for b in rng.random(60) < p])


def test_one_language_has_no_section() -> None:
    out = _out()
    assert section(out[out["language"] == "fr"]) is None


def test_two_languages_show_the_planted_group_first_with_tables_and_a_figure() -> None:
    out = _out()
    tests = language_differences(out)
    assert _shown(tests)[0] == "P_D777"
    table = _tests_table(tests)
    assert table.iloc[0]["verdict"] == "differs between languages" and list(table.columns)[-1] == "verdict"
    sec = section(out)
    assert sec is not None and sec.title.startswith("Across languages")
    assert len(sec.files) == 3  # the figure's files and two tables'
    html = "\n".join(sec.blocks)
    assert "<b>P_D777</b>" not in html  # wordings are model-facing data: escaped
