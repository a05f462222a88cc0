"""Issue 25, point 8: which aggregation reproduces the published human tables.

Planted truth: raw per-annotator ratings built so that their means are the published Hindi table, with the
rater counts the published table implies (immigrant: 1 rater, every cell one pole 0 and whole numbers; Asian
person: 4 raters, quarters), every other group 5 or more, and two groups the published table leaves out, with 2
and 3 raters. `--min-raters 1 --nonshared all` (the old help's advice) adds those two groups' 64 cells;
`--min-raters 5 --nonshared all` loses immigrant and Asian person (64 cells); the published exceptions
(`--as-published`) bring them back.
"""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.leakage.data import trait_pairs
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.ratings import PUBLISHED_EXCEPTIONS, aggregate

runner = CliRunner()
FEW = {"immigrant": 1, "Asian person": 4}  # the published Hindi table's groups under five raters
UNPUBLISHED = {"muscovite": 2, "Puerto Rican": 3}  # missing in the published Hindi table


def _split(n: int, left: float, right: float) -> list[float] | None:
    """n slider scores whose mean pole strengths are (left, right), or None if none fit in [-50, 50]."""
    if left == 0 and right == 0:
        return [0.0] * n
    for negative in range(n + 1):
        if (left > 0) != (negative > 0) or (right > 0) != (negative < n):
            continue
        low = -n * left / negative if negative else 0.0
        high = n * right / (n - negative) if negative < n else 0.0
        if low >= -50 and high <= 50:
            return [low] * negative + [high] * (n - negative)
    return None


def _planted(table: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """Annotators ``{name: {group id: {pair: score}}}`` whose aggregation is ``table``."""
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    for group in table.columns[table.notna().all()]:
        for n in ([FEW[group]] if group in FEW else range(5, 40)):
            scores = {p.key: _split(n, table.loc[p.left, group], table.loc[p.right, group]) for p in trait_pairs()}
            if all(s is not None for s in scores.values()):
                break
        else:
            raise AssertionError(f"no rater count fits {group}")
        for i in range(n):
            ratings.setdefault(f"{group}-{i}", {})[group] = {k: s[i] for k, s in scores.items() if s is not None}
    for group, n in UNPUBLISHED.items():  # rated by too few, left out (999) of the published table
        for i in range(n):
            ratings[f"{group}-{i}"] = {group: {p.key: 10.0 for p in trait_pairs()}}
    return ratings


def _differing(table: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    return (table.isna() != published.isna()) | ((table - published).abs() > 1e-9)


@pytest.fixture(scope="module")
def published_hi() -> pd.DataFrame:
    return load_human(languages=("hi",))["hi"]


def test_min_raters_five_nonshared_all_misses_two_published_hindi_groups(published_hi: pd.DataFrame) -> None:
    ratings = _planted(published_hi)
    assert all(published_hi[g].isna().all() for g in UNPUBLISHED)
    every = _differing(aggregate(ratings, language="hi", min_raters=1, nonshared="all").table, published_hi)
    assert sorted(every.columns[every.any()]) == sorted(UNPUBLISHED)  # the old help's advice adds cells
    five = aggregate(ratings, language="hi", min_raters=5, nonshared="all").table
    differ = _differing(five, published_hi)
    assert sorted(differ.columns[differ.any()]) == ["Asian person", "immigrant"]
    assert int(differ.sum().sum()) == 64
    assert sorted(PUBLISHED_EXCEPTIONS["hi"]) == ["Asian person", "immigrant"]
    assert all(not PUBLISHED_EXCEPTIONS.get(lang) for lang in ("en", "ru", "zh"))
    published = aggregate(ratings, language="hi", min_raters=5, nonshared="all",
                          keep_groups=PUBLISHED_EXCEPTIONS["hi"]).table
    pd.testing.assert_frame_equal(published, published_hi, check_names=False, atol=1e-9, rtol=0)


def test_cli_as_published_reproduces_the_hindi_table(published_hi: pd.DataFrame, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    path = tmp_path / "hi.json"
    path.write_text(json.dumps(_planted(published_hi)), encoding="utf-8")
    out = tmp_path / "aggregated_data_HI.csv"
    result = runner.invoke(app, ["leakage", "aggregate", str(path), "--lang", "hi", "--out", str(out),
                                 "--as-published"])
    assert result.exit_code == 0, result.output
    assert "immigrant" in result.output and "Asian person" in result.output  # the exceptions are named
    written = load_human(tmp_path, languages=("hi",))["hi"]
    pd.testing.assert_frame_equal(written, published_hi, check_names=False, atol=1e-8, rtol=0)
    clash = runner.invoke(app, ["leakage", "aggregate", str(path), "--lang", "hi", "--out", str(out),
                                "--as-published", "--min-raters", "1"])
    assert clash.exit_code == 2


def test_the_help_no_longer_says_min_raters_one_reproduces_the_published_tables() -> None:
    result = runner.invoke(app, ["leakage", "aggregate", "--help"], env={"COLUMNS": "200"})
    text = " ".join(result.output.split())
    assert "--min-raters 1 --nonshared all` reproduces" not in text
    assert "--as-published" in text
