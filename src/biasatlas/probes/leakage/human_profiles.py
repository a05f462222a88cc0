"""The human stereotype data on its own: Cao et al.'s category check and Figure 1's profile of one group.

**Category check** (Cao et al. 2024, section 3.1): "stereotypes of groups in the first category exhibit an
average correlation score of 0.60 across languages ... the second and third categories ... 0.50 and 0.26".
The paper does not say more; we read it as follows. A group's stereotype in a language is its column of the
human table (the 32 trait poles, as the H matrices of Eq. 1); for each pair of languages that both rated the
group, r is the Pearson correlation of the two columns (``scipy.stats.pearsonr``); a group's score is the mean
r over its language pairs, and a category's score is the mean over its groups that have at least one pair.
Beside r we give what the paper does not (ours): the number of groups and language pairs, and a 95% interval
from Fisher's z over the groups (mean of arctanh of the group scores ± t · SE, back-transformed); one group
alone gets no interval. ``profile="pairs"`` correlates the 16 signed pair scores (right pole − left pole)
instead, a sensitivity check.

**Figure 1** (Cao et al. 2024): the human ABC profile of *Asian people* (group id ``Asian person``) in
English, Russian, Chinese and Hindi, the mean over a language's annotators. Here a profile is one row per
language the tables rate the group in and one column per ABC trait pair, ordered by dimension (Agency,
Beliefs, Communion); a cell is the signed score right pole − left pole, which on the bundled tables equals
the annotators' mean slider position in [-50, 50]. :func:`dimension_profile` averages the pairs of each
dimension.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from biasatlas.probes.leakage.data import CATEGORIES, LANGUAGES, LeakageDataError, groups, trait_pairs
from biasatlas.report.plots import lay_out

Profile = Literal["poles", "pairs"]

FIGURE1_GROUP = "Asian person"  # the paper's Figure 1: "the social group Asian people"
DIMENSIONS: tuple[str, ...] = ("agency", "beliefs", "communion")
#: The category check as printed in Cao et al. 2024, section 3.1 (two decimals).
PAPER_CATEGORY_R: dict[str, float] = {"shared_shared": 0.60, "shared_nonshared": 0.50, "nonshared": 0.26}
CATEGORY_LABELS: dict[str, str] = {"shared_shared": "Shared/Shared", "shared_nonshared": "Shared/Non-shared",
                                   "nonshared": "Non-shared/Non-shared"}
MIN_TRAITS = 3  # a language pair needs at least this many traits rated in both languages to be correlated
LEVEL = 0.95

CHECK_NOTE = (
    "Category check (Cao et al. 2024, section 3.1): for each group and each pair of languages that both rated "
    "it, the Pearson correlation of the group's 32 trait scores; averaged over language pairs, then over the "
    "category's groups. The paper gives only the averages; n and the 95% interval (Fisher z over the groups) "
    "are ours. The bundled tables rate only two non-shared groups in more than one language (migrant worker "
    "in all four, Texan in English and Hindi), so the third category rests on two groups."
)


def signed_profile(table: pd.DataFrame) -> pd.DataFrame:
    """A traits × groups table as 16 trait pairs × groups: right pole − left pole (Table 1's order)."""
    return pd.DataFrame({p.id: table.loc[p.right] - table.loc[p.left] for p in trait_pairs()}).T


def _profiles(human: Mapping[str, pd.DataFrame], profile: Profile) -> dict[str, pd.DataFrame]:
    if profile == "poles":
        return dict(human)
    if profile == "pairs":
        return {lang: signed_profile(table) for lang, table in human.items()}
    raise ValueError(f"profile is 'poles' or 'pairs', got {profile!r}")


def _fisher_interval(r: float, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Fisher-z interval of one Pearson r over n paired values (NaN where n <= 3 or |r| = 1)."""
    if n <= 3 or not -1 < r < 1:
        return (math.nan, math.nan)
    z, half = math.atanh(r), stats.norm.ppf(0.5 + level / 2) / math.sqrt(n - 3)
    return (math.tanh(z - half), math.tanh(z + half))


def pair_correlations(human: Mapping[str, pd.DataFrame], profile: Profile = "poles") -> pd.DataFrame:
    """One row per group and pair of languages that both rated it: r, n traits, p and a Fisher-z 95% CI."""
    tables = _profiles(human, profile)
    langs = [lang for lang in LANGUAGES if lang in tables] + sorted(set(tables) - set(LANGUAGES))
    rows: list[dict[str, Any]] = []
    for group in groups():
        for a, b in itertools.combinations(langs, 2):
            if group.id not in tables[a] or group.id not in tables[b]:
                continue
            x, y = tables[a][group.id], tables[b][group.id]
            both = x.notna() & y.notna()
            n = int(both.sum())
            if n < MIN_TRAITS or x[both].nunique() < 2 or y[both].nunique() < 2:
                continue
            result = stats.pearsonr(x[both].to_numpy(float), y[both].to_numpy(float))
            r = float(result.statistic)
            low, high = _fisher_interval(r, n)
            rows.append({"category": group.category, "group": group.id, "language_a": a, "language_b": b,
                         "r": r, "n_traits": n, "p": float(result.pvalue), "ci_low": low, "ci_high": high})
    columns = ["category", "group", "language_a", "language_b", "r", "n_traits", "p", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def category_check(human: Mapping[str, pd.DataFrame], profile: Profile = "poles",
                   level: float = LEVEL) -> pd.DataFrame:
    """The paper's category check: the mean cross-language correlation per category, with the paper's value.

    Columns: category, r (mean over groups of each group's mean r over its language pairs), n_groups and
    n_pairs (ours), ci_low / ci_high (ours: Fisher z over the groups' scores, t with n_groups − 1 degrees of
    freedom), paper (the published value) and difference (r − paper).
    """
    pairs = pair_correlations(human, profile)
    rows: list[dict[str, Any]] = []
    for category in CATEGORIES:
        sub = pairs[pairs["category"] == category]
        per_group = sub.groupby("group", sort=False)["r"].mean()
        k = len(per_group)
        r = float(per_group.mean()) if k else math.nan
        low = high = math.nan
        if k >= 2:
            z = np.arctanh(np.clip(per_group.to_numpy(float), -0.999999, 0.999999))
            half = float(stats.t.ppf(0.5 + level / 2, k - 1) * z.std(ddof=1) / math.sqrt(k))
            low, high = math.tanh(float(z.mean()) - half), math.tanh(float(z.mean()) + half)
        paper = PAPER_CATEGORY_R[category]
        rows.append({"category": CATEGORY_LABELS[category], "r": r, "n_groups": k, "n_pairs": len(sub),
                     "ci_low": low, "ci_high": high, "paper": paper, "difference": r - paper})
    return pd.DataFrame(rows)


def group_profile(human: Mapping[str, pd.DataFrame], group: str = FIGURE1_GROUP) -> pd.DataFrame:
    """Figure 1's data: languages (rows, those that rated ``group``) × the 16 ABC trait pairs (columns,
    Agency, then Beliefs, then Communion), each cell right pole − left pole, in [-50, 50]."""
    known = {g.id for g in groups()}
    if group not in known:
        raise LeakageDataError(f"unknown group {group!r}: the leakage groups are {', '.join(sorted(known))}")
    order = [p for dim in DIMENSIONS for p in trait_pairs() if p.dimension == dim]
    rows: dict[str, pd.Series] = {}
    for lang in [lang for lang in LANGUAGES if lang in human]:
        column = signed_profile(human[lang])[group] if group in human[lang] else pd.Series(dtype=float)
        if column.notna().any():
            rows[lang] = column.reindex([p.id for p in order])
    frame = pd.DataFrame(rows).T.reindex(columns=[p.id for p in order])
    frame.index.name = "language"
    frame.columns = pd.MultiIndex.from_tuples([(p.dimension, p.id) for p in order], names=["dimension", "pair"])
    return frame.astype(float)


def _pairs_of(profile: pd.DataFrame) -> list[tuple[str, str]]:
    """A profile's (dimension, pair) columns."""
    return [(str(c[0]), str(c[1])) for c in profile.columns.tolist()]


def dimension_profile(human: Mapping[str, pd.DataFrame], group: str = FIGURE1_GROUP) -> pd.DataFrame:
    """Languages × the three ABC dimensions: the mean of each dimension's signed pair scores."""
    profile = group_profile(human, group)
    return profile.T.groupby(level="dimension", sort=False).mean().T.reindex(columns=list(DIMENSIONS))


def figure1_table(human: Mapping[str, pd.DataFrame], group: str = FIGURE1_GROUP) -> pd.DataFrame:
    """Figure 1's data as a flat table: one row per language, one column per trait pair, then the three
    dimension means (columns named ``dimension: pair`` and ``dimension (mean)``)."""
    profile = group_profile(human, group)
    flat = profile.copy()
    flat.columns = [f"{dim}: {pair}" for dim, pair in _pairs_of(profile)]
    means = dimension_profile(human, group).rename(columns=lambda d: f"{d} (mean)")
    return pd.concat([flat, means], axis=1).reset_index()


def profile_figure(human: Mapping[str, pd.DataFrame], group: str = FIGURE1_GROUP) -> Any:
    """Figure 1: one panel per ABC dimension, the group's signed score per trait pair, one line per language."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    profile = group_profile(human, group)
    widths = [max(sum(1 for p in trait_pairs() if p.dimension == d), 1) for d in DIMENSIONS]
    fig, axes = plt.subplots(1, len(DIMENSIONS), figsize=(12, 3.8), squeeze=False, sharey=True,
                             gridspec_kw={"width_ratios": widths})
    for ax, dim in zip(axes[0], DIMENSIONS, strict=True):
        pairs = [pair for d, pair in _pairs_of(profile) if d == dim]
        xs = range(len(pairs))
        for lang in profile.index:
            ax.plot(xs, profile.loc[lang, dim].to_numpy(float), marker="o", linewidth=1.2, label=lang.upper())
        ax.axhline(0, color="grey", linewidth=0.6)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([p.replace("-", "\n", 1) for p in pairs], fontsize=6.5)
        ax.set_ylim(-50, 50)
        ax.set_title(dim.capitalize(), fontsize=9)
    axes[0][0].set_ylabel("left pole ← mean rating → right pole", fontsize=8)
    if len(profile.index):
        axes[0][-1].legend(fontsize=8, loc="upper right")
    else:
        axes[0][1].text(0.5, 0, f"no language rated {group}", ha="center", va="center", color="grey")
    fig.suptitle(f"Human ABC profile of {group} per language", fontsize=10)
    lay_out(fig)
    return fig


def human_profiles_summary(human: Mapping[str, pd.DataFrame], group: str = FIGURE1_GROUP) -> dict[str, Any]:
    """The JSON-ready part of the leakage summary: the category check and Figure 1's data."""
    def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return [{str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                for row in frame.to_dict(orient="records")]

    profile = group_profile(human, group)
    return {
        "category_check": rows(category_check(human)),
        "category_check_note": CHECK_NOTE,
        "figure1": {"group": group, "languages": list(profile.index),
                    "dimensions": {dim: [pair for d, pair in _pairs_of(profile) if d == dim] for dim in DIMENSIONS},
                    "scores": {lang: {pair: (None if math.isnan(v) else float(v)) for (_, pair), v in
                                      zip(_pairs_of(profile), profile.loc[lang].to_numpy(float), strict=True)}
                               for lang in profile.index},
                    "dimension_means": rows(dimension_profile(human, group).reset_index())},
    }
