"""Cao et al.'s category check and Figure 1's data, on the bundled human tables and on planted ones."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.leakage import human_profiles as hp
from biasatlas.probes.leakage.data import LANGUAGES, LeakageDataError, group_ids, trait_ids, trait_pairs
from biasatlas.probes.leakage.human import load_human

# Tolerance against the paper's two-decimal values: 0.05 (r is printed to two decimals, and the paper does not
# say whether it correlated the 32 poles or the 16 pairs, nor how it averaged). The third category is outside
# it on the bundled tables (0.355 against 0.26): only two non-shared groups are rated in more than one
# language there, and the paper's figure may rest on ratings not in the published tables (see the methods).
TOLERANCE = 0.05
MEASURED_NONSHARED = 0.355


@pytest.fixture(scope="module")
def human() -> dict[str, pd.DataFrame]:
    return load_human()


def _by_category(frame: pd.DataFrame) -> dict[str, pd.Series]:
    labels = {label: key for key, label in hp.CATEGORY_LABELS.items()}
    return {labels[row["category"]]: row for _, row in frame.iterrows()}


def test_category_check_reproduces_the_papers_first_two_categories(human: dict[str, pd.DataFrame]) -> None:
    check = _by_category(hp.category_check(human))
    for category in ("shared_shared", "shared_nonshared"):
        row = check[category]
        assert abs(row["r"] - hp.PAPER_CATEGORY_R[category]) <= TOLERANCE, (category, row["r"])
        assert row["paper"] == hp.PAPER_CATEGORY_R[category]
        assert row["ci_low"] < row["r"] < row["ci_high"]
    assert check["shared_shared"]["n_groups"] == 10 and check["shared_shared"]["n_pairs"] == 60
    assert check["shared_nonshared"]["n_groups"] == 8 and check["shared_nonshared"]["n_pairs"] == 48


def test_category_check_third_category_is_lowest_but_off_the_paper(human: dict[str, pd.DataFrame]) -> None:
    check = _by_category(hp.category_check(human))
    r = [check[c]["r"] for c in ("shared_shared", "shared_nonshared", "nonshared")]
    assert r[0] > r[1] > r[2]  # the paper's ordering: 0.60 > 0.50 > 0.26
    third = check["nonshared"]
    assert third["r"] == pytest.approx(MEASURED_NONSHARED, abs=0.005)
    assert third["difference"] == pytest.approx(MEASURED_NONSHARED - 0.26, abs=0.005)
    assert (third["n_groups"], third["n_pairs"]) == (2, 7)  # migrant worker (6 pairs), Texan (en-hi)


def test_pairs_profile_is_a_different_reading(human: dict[str, pd.DataFrame]) -> None:
    poles = _by_category(hp.category_check(human, profile="poles"))
    pairs = _by_category(hp.category_check(human, profile="pairs"))
    assert pairs["shared_shared"]["r"] == pytest.approx(0.699, abs=0.005)
    assert pairs["nonshared"]["r"] == pytest.approx(0.255, abs=0.005)
    assert poles["shared_shared"]["r"] != pytest.approx(pairs["shared_shared"]["r"], abs=0.01)
    with pytest.raises(ValueError):
        hp.category_check(human, profile="traits")  # type: ignore[arg-type]


def _planted(opposed: bool) -> dict[str, pd.DataFrame]:
    """Two languages; every group has the same random profile in both, or its mirror image in the second."""
    rng = np.random.default_rng(7)
    signed = rng.uniform(-40, 40, size=(16, len(group_ids())))
    second = -signed if opposed else signed

    def table(scores: np.ndarray) -> pd.DataFrame:
        rows = {}
        for i, pair in enumerate(trait_pairs()):
            rows[pair.left] = np.maximum(-scores[i], 0)
            rows[pair.right] = np.maximum(scores[i], 0)
        return pd.DataFrame(rows, index=list(group_ids())).T.reindex(list(trait_ids()))

    return {"en": table(signed), "ru": table(second)}


@pytest.mark.parametrize("profile", ["poles", "pairs"])
def test_planted_identical_profiles_give_r_one(profile: hp.Profile) -> None:
    check = hp.category_check(_planted(opposed=False), profile=profile)
    assert np.allclose(check["r"], 1.0)
    assert (check["n_pairs"] == check["n_groups"]).all()  # one language pair per group


def test_planted_opposed_profiles_give_r_minus_one() -> None:
    check = hp.category_check(_planted(opposed=True), profile="pairs")
    assert np.allclose(check["r"], -1.0)
    pairs = hp.pair_correlations(_planted(opposed=True), profile="pairs")
    assert len(pairs) == len(group_ids()) and np.allclose(pairs["r"], -1.0)
    assert (pairs["n_traits"] == 16).all()


def test_planted_opposed_poles_are_strongly_negative() -> None:
    # Mirroring the signed scores swaps each pair's two poles: the 32-pole profiles anti-correlate too.
    check = hp.category_check(_planted(opposed=True), profile="poles")
    assert (check["r"] < -0.5).all()


def test_fisher_interval_of_one_pair() -> None:
    pairs = hp.pair_correlations(load_human())
    row = pairs.iloc[0]
    z, half = np.arctanh(row["r"]), 1.959964 / np.sqrt(row["n_traits"] - 3)
    assert row["ci_low"] == pytest.approx(np.tanh(z - half), abs=1e-4)
    assert row["ci_high"] == pytest.approx(np.tanh(z + half), abs=1e-4)


def test_figure1_layout_languages_by_dimensions(human: dict[str, pd.DataFrame]) -> None:
    assert hp.FIGURE1_GROUP == "Asian person"
    profile = hp.group_profile(human)
    assert list(profile.index) == list(LANGUAGES)  # EN, RU, ZH, HI as in the paper's Figure 1
    assert list(profile.columns.get_level_values("dimension").unique()) == list(hp.DIMENSIONS)
    assert profile.shape == (4, 16)
    assert profile.notna().all().all()
    assert ((profile >= -50) & (profile <= 50)).all().all()
    en = human["en"]["Asian person"]
    assert profile.loc["en", ("agency", "poor-wealthy")] == pytest.approx(en["wealthy"] - en["poor"])
    dims = hp.dimension_profile(human)
    assert list(dims.index) == list(LANGUAGES) and list(dims.columns) == list(hp.DIMENSIONS)
    # Section 4.2.1: Asian people are perceived more positively in English than in Russian.
    assert dims.loc["en", "agency"] > dims.loc["ru", "agency"]
    assert dims.loc["en", "communion"] > dims.loc["ru", "communion"]


def test_figure1_group_is_selectable(human: dict[str, pd.DataFrame]) -> None:
    texan = hp.group_profile(human, "Texan")
    assert list(texan.index) == ["en", "hi"]  # a non-shared group: only the languages that rated it
    with pytest.raises(LeakageDataError):
        hp.group_profile(human, "Martian")
    table = hp.figure1_table(human, "woman")
    assert table["language"].tolist() == list(LANGUAGES)
    assert "agency (mean)" in table.columns and "communion: cold-warm" in table.columns


def test_summary_part_is_json_ready_and_figure_draws(human: dict[str, pd.DataFrame]) -> None:
    part = hp.human_profiles_summary(human)
    json.dumps(part)
    assert [row["paper"] for row in part["category_check"]] == [0.60, 0.50, 0.26]
    assert part["figure1"]["group"] == "Asian person" and part["figure1"]["languages"] == list(LANGUAGES)
    assert len(part["figure1"]["scores"]["hi"]) == 16
    fig = hp.profile_figure(human)
    assert len(fig.axes) == 3
    empty = hp.human_profiles_summary({})
    assert all(row["r"] is None for row in empty["category_check"]) and empty["figure1"]["languages"] == []
    hp.profile_figure({})


def test_summary_and_report_carry_the_check_and_figure1(human: dict[str, pd.DataFrame],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from biasatlas.probes.leakage import report
    from biasatlas.probes.leakage.analysis import Analysis
    from biasatlas.probes.leakage.summary import summary_from

    cells = pd.DataFrame([{"variant": "m [theme/choice]", "lang": "en", "group": g, "trait": t, "score": 0.0}
                          for g in group_ids() for t in trait_ids()])
    analysis = Analysis(frame=pd.DataFrame(), choices=pd.DataFrame(), cells=cells, human=human,
                        settings={"alpha": 0.05, "correction": "bh"})
    summary = summary_from(analysis)
    assert summary["human_profiles"]["figure1"]["group"] == "Asian person"
    assert [row["paper"] for row in summary["human_profiles"]["category_check"]] == [0.60, 0.50, 0.26]
    monkeypatch.setattr(report, "study_design", lambda store: "ours")
    monkeypatch.setattr(report, "analyse", lambda store, design: analysis)
    monkeypatch.setattr(report, "coverage", lambda a: pd.DataFrame([{"variant": "m [theme/choice]", "lang": "en"}]))
    monkeypatch.setattr(report, "finder_all", lambda a, v, lang: pd.DataFrame())
    _ours, cao = report.report_sections(None)  # type: ignore[arg-type]
    import html as entities
    import re

    html = entities.unescape(re.sub(r"<[^>]+>", "", "\n".join(cao.blocks)))
    assert "As in Cao et al., 2024, Figure 1" in html and "category check" in html
    assert "Shared/Non-shared" in html and "0.26" in html
