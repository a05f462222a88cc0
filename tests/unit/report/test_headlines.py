"""Headline measures of the overview: read from the summary rows (one family, prompt sets as units, flags)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from samaritan_design import design
from statsmodels.stats.contingency_tables import mcnemar

from biasatlas.report.headlines import contact_headline, samaritan_headline
from biasatlas.report.overview import grid_html


def _contact(pairs: list[tuple[float, float]], model: str = "m", language: str = "en", samples: int = 1,
             p_shift: float | None = None) -> pd.DataFrame:
    """Outcomes of prompt sets (none, positive) biased or not, each sample alike; negative always biased.

    ``p_shift``: choice mode, P(biased) 0.6 under no contact and 0.6 + p_shift under positive contact.
    """
    rows = []
    for i, (none, positive) in enumerate(pairs):
        for contact, biased in (("none", none), ("positive", positive), ("negative", 1.0)):
            p = None if p_shift is None else 0.6 + (p_shift if contact == "positive" else 0.0) + 0.01 * (i % 3)
            for k in range(samples):
                rows.append({"model": model, "mode": "generate" if p_shift is None else "choice",
                             "language": language, "scale": "certainty", "set_id": f"s{i}",
                             "prompt_id": f"s{i}-{contact}", "sample_index": k, "contact": contact,
                             "biased": biased, "decision": "none" if np.isnan(biased) else
                             ("biased" if biased else "unbiased"), "reason": None if not np.isnan(biased)
                             else "no answer", "affirmative": 1.0 if not np.isnan(biased) else np.nan,
                             "p_biased": p})
    return pd.DataFrame(rows)


def _contact_summary(outcomes: pd.DataFrame, correction: str = "bh") -> dict:
    from biasatlas.probes.contact.analysis import contact_tests, records
    from biasatlas.probes.contact.summary import answer_quality
    from biasatlas.tidy.rows import contact_rows

    summary = {"tests": records(contact_tests(outcomes, correction)),
               "analysis": {"alpha": 0.05, "correction": correction},
               "answer_quality": records(answer_quality(outcomes))}
    summary["statistics"] = contact_rows(summary)
    return summary


def test_contact_headline_is_the_paired_change_under_positive_contact() -> None:
    # 10 sets biased under no contact only, 2 under positive only, 8 both, 20 neither; 3 unreadable pairs
    pairs = [(1.0, 0.0)] * 10 + [(0.0, 1.0)] * 2 + [(1.0, 1.0)] * 8 + [(0.0, 0.0)] * 20 + [(np.nan, 1.0)] * 3
    table = contact_headline(_contact_summary(_contact(pairs)))
    row = table.iloc[0]
    assert row["n"] == 40  # the unreadable pairs are left out
    assert row["estimate"] == pytest.approx(100 * (2 - 10) / 40)
    assert row["p"] == pytest.approx(mcnemar(np.array([[8, 10], [2, 20]]), exact=True).pvalue)
    assert row["ci_low"] < row["estimate"] < row["ci_high"]


def test_samples_are_not_extra_pairs() -> None:
    # issue 26: 40 prompt sets x 2 samples were counted as 80 pairs; the unit is the prompt set
    pairs = [(1.0, 0.0)] * 9 + [(0.0, 1.0)] * 3 + [(0.0, 0.0)] * 28
    once = contact_headline(_contact_summary(_contact(pairs))).iloc[0]
    twice = contact_headline(_contact_summary(_contact(pairs, samples=2))).iloc[0]
    assert twice["n"] == once["n"] == 40
    assert twice["p"] == pytest.approx(once["p"]) == pytest.approx(
        mcnemar(np.array([[0, 9], [3, 28]]), exact=True).pvalue)


def test_a_sets_samples_are_read_by_majority() -> None:
    frame = _contact([(1.0, 0.0)] * 8 + [(0.0, 0.0)] * 8, samples=3)
    # one of three samples of every set flips: the majority keeps the planted decision
    flip = (frame["sample_index"] == 2) & (frame["contact"] != "negative")
    frame.loc[flip, "biased"] = 1.0 - frame.loc[flip, "biased"]
    row = contact_headline(_contact_summary(frame)).iloc[0]
    assert row["n"] == 16 and row["estimate"] == pytest.approx(-50.0)


def test_contact_headline_reads_the_adjusted_p_of_the_probes_family() -> None:
    # three languages: the headline's p_adj is the one of the summary's row (BH over every contact test),
    # not a second correction over the headlines
    frames = [_contact([(1.0, 0.0)] * 12 + [(0.0, 0.0)] * 10, language=lang) for lang in ("en", "de", "is")]
    summary = _contact_summary(pd.concat(frames, ignore_index=True))
    table = contact_headline(summary)
    assert len(table) == 3
    rows = {r["language"]: r for r in summary["statistics"] if r["headline"]}
    for _, row in table.iterrows():
        assert row["p_adj"] == rows[row["language"]]["p_adj"]
        assert row["family"] == rows[row["language"]]["family"] and row["correction"] == "bh"
    holm = contact_headline(_contact_summary(pd.concat(frames, ignore_index=True), "holm"))
    assert (holm["p_adj"] >= table["p_adj"]).all()  # the user's correction reaches the overview too


def test_contact_headline_needs_both_framings() -> None:
    frame = _contact([(1.0, 0.0)] * 5)
    assert contact_headline(_contact_summary(frame[frame["contact"] != "positive"])).empty


def test_one_option_cell_says_so_and_shows_the_probability_effect() -> None:
    # a yes-sayer: every answer affirmative, no decision moves; P(biased) falls by 0.05 under positive contact
    frame = _contact([(1.0, 1.0)] * 20, p_shift=-0.05)
    row = contact_headline(_contact_summary(frame)).iloc[0]
    assert "one_option" in row["flags"] and "100%" in row["flag_notes"]
    assert "too_few_units" in row["flags"]  # 0 discordant pairs: McNemar cannot reach p < 0.05
    assert row["probability_effect"].startswith("ΔP(biased) -0.050 [")
    validity = pd.DataFrame([{"model": "m", "language": "en", "answers": 60, "readable_pct": 100.0,
                              "refusals": 0}])
    html = grid_html({"contact": contact_headline(_contact_summary(frame))}, {"contact": validity},
                     {"contact": "Contact"})
    assert "100% of the time: decisions cannot move" in html and "ΔP(biased) -0.050" in html
    assert "(no interval shown)" in html  # an interval on 0 discordant pairs is not a finding


def test_a_cell_without_a_headline_says_why() -> None:
    validity = pd.DataFrame([{"model": "m", "language": "en", "answers": 6, "readable_pct": 100.0,
                              "refusals": 0}])
    html = grid_html({"contact": pd.DataFrame()}, {"contact": validity, "stories": validity},
                     {"contact": "Contact", "stories": "Stories"})
    assert "no prompt set was read under both no contact and positive contact" in html
    assert "no headline measure for this probe" in html


def _samaritan_summary(frame: pd.DataFrame) -> dict:
    from biasatlas.probes.samaritan.summary import analyse, records
    from biasatlas.tidy.rows import samaritan_rows

    groups = analyse(frame, 0.01, "holm")["groups"]
    summary = {"settings": {"alpha": 0.01, "correction": "holm", "ci_level": 0.95}, "groups": records(groups)}
    summary["statistics"] = samaritan_rows(summary)
    return summary


def test_samaritan_headline_names_the_largest_gap_and_counts_the_groups_that_differ() -> None:
    frame = design({"person": ("control", "control", 0.0), "women": ("women", "gender", -15.0),
                    "men": ("men", "gender", 0.0),
                    "elderly": ("elderly", "age", 6.0)}, n_scenarios=12)
    summary = _samaritan_summary(frame)
    row = samaritan_headline(summary).iloc[0]
    assert "women" in row["measure"] and "2 of 3 groups differ" in row["measure"]
    assert row["estimate"] == pytest.approx(-15.0, abs=1.0)
    assert row["n"] == 12 and row["significant"]
    women = next(r for r in summary["groups"] if r["group"] == "women")
    assert row["p_adj"] == women["p_adj"]  # the summary's Holm within the category, not a second correction


def test_samaritan_on_two_scenarios_shows_no_interval() -> None:
    # issue 26: cells compared on n = 2 scenarios showed intervals like [-431, +420]
    summary = _samaritan_summary(design({"person": ("control", "control", 0.0), "women": ("women", "gender", -15.0)},
                                        n_scenarios=2, noise=5.0))
    row = samaritan_headline(summary).iloc[0]
    assert row["n"] == 2 and "too_few_units" in row["flags"] and ">= 8" in row["flag_notes"]


def test_runs_table_lists_an_interrupted_run_without_totals(tmp_path: Path) -> None:
    from biasatlas.report.metadata import runs_table
    from biasatlas.store import Store

    with Store(tmp_path) as store:
        store.start_run("contact", "fake:m", {"settings": {"mode": "choice"}, "display_name": "M"}, "0")
        table = runs_table(store)
    assert table.iloc[0]["model"] == "M" and table.iloc[0]["model id"] == "fake:m"
    # no process holds the study's writer lock: a run that never ended was interrupted (issue 24)
    # its totals are counted from its recorded plan: none recorded, 0 planned
    assert table.iloc[0]["status"] == "interrupted" and table.iloc[0]["planned"] == 0


def test_contact_interval_stays_within_100_points_on_small_n() -> None:
    # 3 sets: all biased under no contact, none under positive (a Wald interval goes past +-100 here)
    table = contact_headline(_contact_summary(_contact([(1.0, 0.0)] * 3)))
    row = table.iloc[0]
    assert row["estimate"] == pytest.approx(-100.0)
    assert -100.0 <= row["ci_low"] <= row["estimate"] <= row["ci_high"] <= 100.0
    assert row["ci_high"] > row["ci_low"]
    assert "too_few_units" in row["flags"]  # 3 discordant pairs: the exact test's smallest p is 0.25


def test_one_option_in_generate_mode_says_there_is_no_probability_effect() -> None:
    row = contact_headline(_contact_summary(_contact([(1.0, 0.0)] * 6 + [(0.0, 0.0)] * 20))).iloc[0]
    assert "one_option" in row["flags"] and "generate mode has no option probabilities" in row["probability_effect"]
    assert "too_few_units" not in row["flags"]  # 6 discordant sets: the exact test can reach p < 0.05


def test_a_cell_flags_its_unreadable_answers_and_an_untested_headline_still_plots() -> None:
    from biasatlas.report.overview import overview_section

    frame = _contact([(1.0, 0.0)] * 6 + [(0.0, 0.0)] * 20)
    heads = contact_headline(_contact_summary(frame))
    heads = heads.astype({"p": object, "p_adj": object}).assign(p=None, p_adj=None)  # no test could be made
    validity = pd.DataFrame([{"model": "m", "language": "en", "answers": 100, "readable": 40,
                              "readable_pct": 40.0, "refusals": 30}])
    html = grid_html({"contact": heads}, {"contact": validity}, {"contact": "Contact"})
    assert "title='60% of 100 answers unreadable'>⚑" in html and "title='30% of 100 answers are refusals'>⚑" in html
    assert overview_section({"contact": heads}, {"contact": validity}, {"contact": "Contact"}) is not None


def test_a_leakage_fit_left_out_says_why_in_its_cell() -> None:
    from biasatlas.report.headlines import leakage_headline

    reason = "too little data: 14 complete (trait, group) cells"
    summary = {"settings": {"alpha": 0.05}, "fits": [], "dropped_fits": [
        {"variant": "M [theme/choice]", "target": "en", "n_obs": 0, "stage": "not fitted", "reason": reason}]}
    heads = leakage_headline(summary)
    assert heads.iloc[0]["model"] == "M" and heads.iloc[0]["flags"] == "not_fitted"
    validity = pd.DataFrame([{"model": "M", "language": "en", "answers": 24, "readable": 24, "readable_pct": 100.0,
                              "refusals": 0}])
    html = grid_html({"leakage": heads}, {"leakage": validity}, {"leakage": "Leakage"})
    assert f"title='not fitted: {reason}'>⚑" in html and html.count("class='drill'") == 1


def _mixed() -> pd.DataFrame:
    """Contact headlines of two languages: German on 3 discordant sets (too_few_units), English clean."""
    frame = pd.concat([_contact([(1.0, 0.0)] * 3, language="de"),
                       _contact([(1.0, 0.0)] * 12 + [(0.0, 1.0)] * 5 + [(0.0, 0.0)] * 20, language="en")],
                      ignore_index=True)
    frame["affirmative"] = (np.arange(len(frame)) % 2).astype(float)  # no one_option flag: English is clean
    return contact_headline(_contact_summary(frame))


def test_a_clean_row_beside_a_flagged_one_has_no_note_not_nan() -> None:
    # issue 37: a missing note became NaN (pandas), then the string "nan": "⚑ nan" on a clean cell
    heads = _mixed()
    clean = heads[heads["language"] == "en"].iloc[0]
    assert clean["flags"] is None and clean["flag_notes"] is None and clean["probability_effect"] is None
    validity = pd.DataFrame([{"model": "m", "language": lang, "answers": 111, "readable_pct": 100.0, "refusals": 0}
                             for lang in ("de", "en")])
    html = grid_html({"contact": heads}, {"contact": validity}, {"contact": "Contact"})
    assert "title='too few units for McNemar exact" in html and "nan" not in html


def test_the_forest_draws_untested_and_single_unit_points_hollow_with_the_reason() -> None:
    from biasatlas.report.overview import overview_section

    heads = _mixed()
    one = heads[heads["language"] == "en"].assign(language="is", n=1)  # an estimate on one unit
    heads = pd.concat([heads, one], ignore_index=True)
    validity = pd.DataFrame([{"model": "m", "language": lang, "answers": 111, "readable_pct": 100.0, "refusals": 0}
                             for lang in ("de", "en", "is")])
    section = overview_section({"contact": heads}, {"contact": validity}, {"contact": "Contact"})
    assert section is not None
    traces = next(iter(section.data.values()))["data"]
    hollow = [t for t in traces if t.get("marker", {}).get("symbol") == "circle-open"]
    solid = [t for t in traces if t.get("marker", {}).get("symbol") != "circle-open"]
    assert sorted(y for t in hollow for y in t["y"]) == ["m · de", "m · is"]
    assert [y for t in solid for y in t["y"]] == ["m · en"]
    assert any("too few units for McNemar exact" in h for t in hollow for h in t["hovertext"])
