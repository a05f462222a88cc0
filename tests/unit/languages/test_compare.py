"""Across languages: planted truths are recovered (a group whose effect differs between languages, one whose
does not, under languages that differ in their overall bias), and the test holds its level under the null."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.contact.across_languages import (
    METHOD,
    across_languages,
    effects_by_language,
    language_differences,
    relative_effects,
)

LANGS = ("fr", "es", "zh", "ko")


def _frame(rates: dict[str, dict[str, float]], n: int, seed: int, model: str = "m") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"model": model, "descriptor": g, "group": f"{g}-{lang}", "language": lang, "biased": float(b)}
            for g, by_lang in rates.items() for lang, p in by_lang.items() for b in rng.random(n) < p]
    return pd.DataFrame(rows)


def _with_language_shift(special: dict[str, dict[str, float]], n: int, seed: int) -> pd.DataFrame:
    """Thirty ordinary groups whose biased share is the language's own (fr/es 0.2, zh/ko 0.6), plus ``special``.

    (A group's effect is relative to the other groups of its language, so a planted group moves the
    others' effects by 1/(groups − 1) of its own: with 30 groups, by 0.01.)"""
    base = {"fr": 0.2, "es": 0.2, "zh": 0.6, "ko": 0.6}
    rates = {f"P_D1{i:02d}": dict(base) for i in range(30)}
    rates.update({g: {lang: base[lang] + d for lang, d in shift.items()} for g, shift in special.items()})
    return _frame(rates, n, seed)


def test_shares_per_language_have_wilson_intervals() -> None:
    frame = _frame({"P_D002": {"fr": 0.1, "zh": 0.6}}, n=300, seed=1)
    effects = effects_by_language(frame).set_index("language")
    assert (effects["n"] == 300).all()
    assert effects.loc["fr", "ci_low"] < 0.1 < effects.loc["fr", "ci_high"]
    assert effects.loc["zh", "ci_low"] < 0.6 < effects.loc["zh", "ci_high"]


def test_a_planted_difference_is_found_and_a_language_wide_shift_is_not() -> None:
    # P_D001: +0.25 over its language everywhere (same effect, though zh/ko are more biased overall);
    # P_D002: +0.3 in zh and ko only (its effect differs between languages)
    frame = _with_language_shift({"P_D001": dict.fromkeys(LANGS, 0.25),
                                  "P_D002": {"fr": 0.0, "es": 0.0, "zh": 0.3, "ko": 0.3}}, n=300, seed=1)
    effects = relative_effects(frame).set_index(["group", "language"])
    d1 = effects.loc["P_D001"]
    # the truth: its rate minus the mean rate of the 31 other groups (equal n), P_D002 among them
    truth = {lang: 0.25 - (0.3 if lang in ("zh", "ko") else 0.0) / 31 for lang in LANGS}
    assert all(d1.loc[lang, "effect_ci_low"] < truth[lang] < d1.loc[lang, "effect_ci_high"] for lang in LANGS), d1
    d2 = effects.loc["P_D002"]
    assert d2.loc["fr", "effect_ci_low"] < -0.25 / 31 < d2.loc["fr", "effect_ci_high"]
    assert d2.loc["zh", "effect_ci_low"] > 0.15
    assert effects.loc[("P_D002", "zh"), "label"] == "P_D002-zh"
    tests = language_differences(frame).set_index("group")
    assert tests.loc["P_D002", "differs"] and tests.loc["P_D002", "p_adj"] < 1e-6
    assert not tests.loc["P_D001", "differs"] and tests.loc["P_D001", "dof"] == 3
    assert not tests.drop(index=["P_D001", "P_D002"])["differs"].any()  # the language-wide shift is not a finding
    assert tests.attrs["method"] == METHOD and "Cochran's Q" in METHOD
    assert 0 < tests.loc["P_D002", "i2"] <= 1 and (tests["i2"] >= 0).all()  # I² is a share, never below 0


def test_level_under_the_null() -> None:
    # 120 groups with no effect anywhere, under a language-wide shift: about 5% raw p below 0.05
    frame = _with_language_shift({f"g{i}": dict.fromkeys(LANGS, 0.0) for i in range(120)}, n=60, seed=7)
    tests = language_differences(frame)
    share = float((tests["p"] < 0.05).mean())
    assert 0.01 <= share <= 0.10, share
    assert tests["differs"].sum() <= 2  # after Benjamini-Hochberg


def test_one_language_groups_and_answers_that_never_vary() -> None:
    frame = pd.DataFrame({"descriptor": ["a", "a", "b", "b", "b", "b", "c", "c"],
                          "language": ["fr", "fr", "fr", "fr", "zh", "zh", "fr", "zh"],
                          "biased": [0.0] * 8})
    tests = language_differences(frame).set_index("group")
    assert "a" not in tests.index  # asked in one language: nothing to compare
    assert tests.loc["b", "model"] == "all" and tests.loc["b", "p"] == 1.0
    assert tests.loc["b", "flags"] == "one_option; few_answers"
    assert "no variation" in tests.loc["b", "flag_notes"] and "few answers: 2" in tests.loc["b", "flag_notes"]
    assert not tests.loc["b", "differs"]
    with pytest.raises(ValueError, match="lacks"):
        language_differences(frame.drop(columns="biased"))


def test_the_summary_block_only_for_two_or_more_languages() -> None:
    one = _frame({"P_D001": {"fr": 0.2}, "P_D002": {"fr": 0.3}}, n=20, seed=3)
    assert across_languages(one) is None
    two = _with_language_shift({"P_D002": {"fr": 0.0, "es": 0.0, "zh": 0.3, "ko": 0.3}}, n=80, seed=3)
    block = across_languages(two)
    assert block is not None and block["method"] == METHOD
    assert {r["language"] for r in block["effects"]} == set(LANGS)
    assert {r["group"] for r in block["tests"]} >= {"P_D002"}
    assert all(isinstance(r["flags"], str) for r in block["tests"])


def _stored(n_questions: int, samples: int, copies: int, seed: int, modes: tuple[str, ...] = ("generate",),
            groups: int = 6) -> pd.DataFrame:
    """Rows as the store holds them: ``copies`` prompts of one text share each stored answer (its key), and
    each question has ``samples`` samples (a key each); two groups, two languages, one row per prompt."""
    rng = np.random.default_rng(seed)
    rows = []
    for mode in modes:
        for lang in ("fr", "zh"):
            for g in range(groups):
                for q in range(n_questions):
                    text = f"{mode}-{lang}-{g}-{q}"
                    for s in range(samples):
                        answer = float(rng.random() < 0.4)
                        for c in range(copies):
                            rows.append({"model": "m", "mode": mode, "descriptor": f"P_D{g:03d}", "language": lang,
                                         "group": f"g{g}", "prompt_id": f"{text}-{c}", "sample_index": s,
                                         "key": f"{text}-s{s}", "messages_json": text, "biased": answer})
    return pd.DataFrame(rows)


def test_a_shared_answer_and_the_samples_of_a_question_are_one_unit() -> None:
    # six prompts share each stored answer (the MMHB no-contact question), three samples a question: 12 units
    frame = _stored(n_questions=12, samples=3, copies=6, seed=2)
    effects = relative_effects(frame)
    assert (effects["n"] == 12).all() and (effects["n_rest"] == 60).all()
    tests = language_differences(frame)
    assert (tests["n"] == 24).all()
    assert "unit" in METHOD and "question" in METHOD


def test_the_samples_of_a_question_give_its_majority_and_a_tie_is_left_out() -> None:
    rows = [{"descriptor": "a", "language": lang, "messages_json": f"{lang}{q}", "sample_index": s,
             "key": f"{lang}{q}{s}", "biased": b}
            for lang in ("fr", "zh") for q, answers in enumerate([(1, 1, 0), (0, 0, 1), (1, 0, None), (1, 0)])
            for s, b in enumerate(answers)]
    rows += [{"descriptor": "b", "language": lang, "messages_json": f"b{lang}", "sample_index": 0,
              "key": f"b{lang}", "biased": 0.0} for lang in ("fr", "zh")]
    effects = effects_by_language(pd.DataFrame(rows)).set_index(["group", "language"])
    # question 0: biased (2 of 3); 1: unbiased; 2 and 3: a tie of the readable samples, left out
    assert effects.loc[("a", "fr"), "n"] == 2 and effects.loc[("a", "fr"), "k"] == 1


def test_modes_are_never_pooled() -> None:
    frame = _stored(n_questions=15, samples=1, copies=1, seed=4, modes=("choice", "generate"))
    tests = language_differences(frame)
    assert set(tests["mode"]) == {"choice", "generate"} and len(tests) == 12
    assert (tests["n"] == 30).all()
    effects = relative_effects(frame)
    assert (effects["n_rest"] == 75).all()
    block = across_languages(frame)
    assert block is not None and {r["mode"] for r in block["tests"]} == {"choice", "generate"}


def test_rows_without_a_text_are_questions_of_their_own() -> None:
    frame = _stored(n_questions=12, samples=1, copies=1, seed=5).assign(messages_json=None, key=None)
    assert (effects_by_language(frame)["n"] == 12).all()
