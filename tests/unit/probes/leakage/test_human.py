"""Human stereotype tables: loading (999 = missing) and writing them in the shared layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.probes.leakage.data import LeakageDataError
from biasatlas.probes.leakage.human import load_human, load_table


def test_bundled_tables_keep_missing_cells_missing() -> None:
    human = load_human()
    assert set(human) == {"en", "ru", "zh", "hi"}
    en = human["en"]
    assert en.shape == (32, 30)
    assert en.loc["powerless", "woman"] == 8
    assert en.loc["powerful", "man"] == pytest.approx(30.42857143)
    # VDV soldiers were rated by no English annotator: 999 in the file, NaN here, never 0.
    assert en["VDV soldier"].isna().all()
    assert int(en.isna().sum().sum()) == 8 * 32
    assert not (en == 999).any().any()


def test_bad_table_file_names_the_cell(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("Traits,woman\npowerless,8\nsleepy,3\n")
    with pytest.raises(LeakageDataError, match=r"unknown traits \['sleepy'\]"):
        load_table(path)
    path.write_text("Traits,woman\npowerless,80\n")
    with pytest.raises(LeakageDataError, match=r"value 80(\.0)? at powerless × woman is outside"):
        load_table(path)
