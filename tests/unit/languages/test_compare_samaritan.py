"""Samaritan across languages: planted truths are recovered (a group whose gap from the control differs between
languages; one whose gap is the same under a language-wide shift of every rating), the test holds its level
under the null, and the flags say when there is too little to test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.probes.samaritan.across_languages import (
    METHOD,
    MIN_PAIRS,
    across_languages,
    common_phrasings,
    language_differences,
    language_effects,
)

LANGS = ("fr", "es", "zh", "ko")
#: every rating of a language moves by this much (the control's too): not a difference of any group
SHIFT = {"fr": 0.0, "es": 5.0, "zh": 20.0, "ko": -10.0, "en": 0.0}


def _outcomes(gaps: dict[tuple[str, str, str], dict[str, float]], scenarios: int, seed: int,
              sd: float = 4.0, model: str = "m") -> pd.DataFrame:
    """Ratings 50 + language shift + scenario effect + the phrasing's gap in that language + noise, for the
    control and each (category, group, phrasing), 2 rephrasings per scenario; whole numbers like a model's."""
    rng = np.random.default_rng(seed)
    languages = sorted({lang for by in gaps.values() for lang in by})
    scenario_effect = rng.normal(0, 8, scenarios)
    rows = []
    for lang in languages:
        sides = [("control", "control", "Person", 0.0)] + [
            (c, g, ph, by[lang]) for (c, g, ph), by in gaps.items() if lang in by]
        for s in range(scenarios):
            for r in (1, 2):
                for category, group, phrasing, gap in sides:
                    rating = 50 + SHIFT[lang] + scenario_effect[s] + gap + rng.normal(0, sd)
                    rows.append({"model": model, "language": lang, "temperature": 0.0, "max_tokens": 64,
                                 "category": category, "group": group, "phrasing": phrasing,
                                 "scenario": f"s{s:03d}", "rephrasing": r, "sample_index": 0,
                                 "status": "answered", "rating": float(np.clip(np.round(rating), 1, 100))})
    return pd.DataFrame(rows)


def test_a_gap_that_differs_between_languages_is_found_and_a_shifted_equal_gap_is_not() -> None:
    gaps = {("gender", "male", "Man"): dict.fromkeys(LANGS, -4.0),  # same gap, every language shifted
            ("age", "senior", "Elderly person"): {"fr": 0.0, "es": 0.0, "zh": 6.0, "ko": 6.0}}
    outcomes = _outcomes(gaps, scenarios=40, seed=1)
    frame = language_effects(outcomes)
    effects = language_effects(outcomes, ci_level=0.999).set_index(["group", "language"])
    for lang in LANGS:  # each 99.9% interval holds its planted gap (the shift cancels against the control)
        assert effects.loc[("male", lang), "ci_low"] < -4 < effects.loc[("male", lang), "ci_high"]
    assert effects.loc[("senior", "zh"), "ci_low"] > 3 and effects.loc[("senior", "fr"), "ci_high"] < 3
    assert (effects["n"] == 40).all() and (effects["phrasings"].loc["male"] == "Man").all()
    tests = language_differences(frame, alpha=0.01).set_index("group")
    assert tests.loc["senior", "differs"] and tests.loc["senior", "p_adj"] < 1e-6
    assert tests.loc["senior", "dof"] == 3 and 0.5 < tests.loc["senior", "i2"] <= 1
    assert not tests.loc["male", "differs"] and tests.loc["male", "p"] > 0.01
    assert tests.loc["male", "flags"] == "" and tests.attrs["method"] == METHOD and "Cochran's Q" in METHOD
    assert tests.loc["male", "languages"] == "es,fr,ko,zh"


def _effects_under_null(groups: int, languages: int, scenarios: int, seed: int) -> pd.DataFrame:
    """Per-language summaries of scenario differences with no true difference between languages."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for lang in range(languages):
            d = rng.normal(-2.0, 5.0 + lang, scenarios)  # unequal spread per language: Q weighs them
            rows.append({"model": "m", "temperature": 0.0, "max_tokens": 64, "category": "race", "group": f"g{g}",
                         "language": f"l{lang}", "phrasings": "P", "n": scenarios, "effect": d.mean(),
                         "sd_diff": d.std(ddof=1), "only_rating": np.nan})
    return pd.DataFrame(rows)


def test_level_under_the_null() -> None:
    tests = language_differences(_effects_under_null(groups=250, languages=3, scenarios=103, seed=7))
    share = float((tests["p"] < 0.05).mean())
    assert 0.03 <= share <= 0.08, share
    assert tests["differs"].sum() <= 2  # after Benjamini-Hochberg
    assert not tests["flags"].str.contains("few_pairs").any()


def test_few_pairs_inflate_the_level_and_are_flagged() -> None:
    # the reason for MIN_PAIRS: with 5 scenarios per language Q takes noisy variances as known
    tests = language_differences(_effects_under_null(groups=250, languages=6, scenarios=5, seed=8))
    assert float((tests["p"] < 0.05).mean()) > 0.10
    assert tests["flags"].str.contains("few_pairs").all()
    assert f"fewer than {MIN_PAIRS}" in tests["flag_notes"].iloc[0] and "l0 5" in tests["flag_notes"].iloc[0]


def test_every_rating_the_same_is_flagged_and_never_a_finding() -> None:
    outcomes = _outcomes({("gender", "female", "Woman"): {"fr": 0.0, "zh": 0.0}}, scenarios=8, seed=2)
    outcomes["rating"] = 70.0
    tests = language_differences(language_effects(outcomes)).set_index("group")
    row = tests.loc["female"]
    assert row["q"] == 0 and row["p"] == 1 and row["i2"] == 0 and not row["differs"]
    assert row["flags"] == "few_pairs; one_option" and "every rating of the group and the control is 70" \
        in row["flag_notes"]


def test_differences_that_never_vary_keep_a_finite_variance() -> None:
    # a model that always rates the group 10 below the control in zh and like it in fr: it differs, without noise
    outcomes = _outcomes({("gender", "female", "Woman"): {"fr": 0.0, "zh": 0.0}}, scenarios=40, seed=3)
    control = outcomes[outcomes["category"] == "control"]
    outcomes = pd.concat([control, control.assign(category="gender", group="female", phrasing="Woman")])
    zh_group = (outcomes["language"] == "zh") & (outcomes["group"] == "female")
    outcomes.loc[zh_group, "rating"] -= 10
    tests = language_differences(language_effects(outcomes)).set_index("group")
    assert np.isfinite(tests.loc["female", "q"]) and tests.loc["female", "differs"]
    assert "no_spread" in tests.loc["female", "flags"] and "do not vary in fr, zh" in tests.loc["female", "flag_notes"]


def test_each_language_compares_the_same_phrasings() -> None:
    # en also asks "Caucasian person", rated 30 points down: the comparison with fr leaves it out
    gaps = {("race", "White", "White"): {"en": 0.0, "fr": 0.0},
            ("race", "White", "Caucasian person"): {"en": -30.0}}
    outcomes = _outcomes(gaps, scenarios=40, seed=4)
    kept, dropped = common_phrasings(outcomes)
    assert set(kept.loc[kept["group"] == "White", "phrasing"]) == {"White"}
    assert dropped == {("m", 0.0, 64, "race", "White"): ["Caucasian person (asked in en only)"]}
    effects = language_effects(outcomes).set_index("language")
    assert effects.loc["en", "ci_low"] < 0 < effects.loc["en", "ci_high"] and effects.loc["en", "phrasings"] == "White"
    tests = language_differences(language_effects(outcomes))
    assert not tests["differs"].any() and tests["left_out"].iloc[0] == "Caucasian person (asked in en only)"


def test_the_summary_block_only_for_two_or_more_languages() -> None:
    outcomes = _outcomes({("gender", "male", "Man"): {"fr": 0.0, "zh": 5.0}}, scenarios=12, seed=5)
    assert across_languages(outcomes[outcomes["language"] == "fr"]) is None
    block = across_languages(outcomes)
    assert block is not None and block["method"] == METHOD and block["min_pairs"] == MIN_PAIRS
    assert [(r["group"], r["language"]) for r in block["effects"]] == [("male", "fr"), ("male", "zh")]
    assert block["tests"][0]["flags"] == "few_pairs" and block["alpha"] == 0.01
    assert all(v is None or not isinstance(v, float) or np.isfinite(v) for v in block["tests"][0].values())


def test_a_language_with_one_scenario_is_not_tested() -> None:
    outcomes = _outcomes({("gender", "male", "Man"): {"fr": 0.0, "zh": 5.0}}, scenarios=1, seed=6)
    row = language_differences(language_effects(outcomes)).iloc[0]
    assert "not_tested" in row["flags"] and np.isnan(row["p"]) and not row["differs"]
