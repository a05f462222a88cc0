"""Independent measurement of the readers in the nine new languages (issue 29, point 4).

``data/languages/<code>/readers/independent_{yesno,ratings}.csv`` were written by helper L1 (branch
h-labeller, docs/validation/independent_reader_tables.md) without reading the readers, their word lists or
the packs' other tables, while helper "readers3" wrote the rules without reading them. A row is read right
when the reader's value equals the label: the option, the rating, or no value at all for an "unreadable"
row (the reason is not compared). The floor is 97 % per language and table; a language below it is a
non-strict xfail carrying its figure. Run with ``-s`` to see every misread.
"""

from __future__ import annotations

import pytest
from pack_reader_tables import NEW, UNREADABLE, check_floor, params, table

# The figures on record (docs/readers.md). FIRST measurement, the honest generalisation estimate: 2026-11-27
# 15:01 UTC, tables of h-labeller c3fbc19, readers of h-readers3 1dc16a4 (written without reading the tables):
#   yes/no  fr 81/90 90.0 %, es 80/90 88.9 %, it 77/90 85.6 %, pt 82/90 91.1 %, hi 78/90 86.7 %,
#           id 79/90 87.8 %, vi 80/90 88.9 %, zh 79/90 87.8 %, ko 73/90 81.1 %   (709/810 = 87.5 %)
#   ratings fr 47/50 94 %, es 46/50 92 %, it 49/50 98 %, pt 45/50 90 %, hi 48/50 96 %, id 47/50 94 %,
#           vi 46/50 92 %, zh 48/50 96 %, ko 48/50 96 %                          (424/450 = 94.2 %)
# AFTER the misread classes were fixed in general (paraphrases of degree, colloquial/polite/romanised
# yes-no, choices named after both options, apology + correction, years, times, money, values per case,
# approximate decades, inline list numbers, spoken short numbers): yes/no 801/810 (every language >= 97.8 %),
# ratings 450/450 -- no longer independent. The 9 yes/no rows still read otherwise are 8 words cut by the
# token limit ("Probab", "Thấ", "높"), which L1 labels as the option they begin and issue 27's independent
# labeller as unreadable (the readers keep them unreadable: never a guess), and "De temps en temps, mais
# pas régulièrement." (a hedge, read as "not regularly"). No language is below the floor.
YESNO_XFAIL: dict[str, str] = {}
RATING_XFAIL: dict[str, str] = {}


def test_tables_hold_the_documented_labels() -> None:
    for code in NEW:
        for row in table("independent", code, "yesno"):
            assert row["scale"] in {"certainty", "likelihood", "frequency"} and row["language"] == code, row
            assert row["expected"] in {"affirmative", "negative", UNREADABLE}, row
        for row in table("independent", code, "ratings"):
            assert row["expected"] == UNREADABLE or 1 <= float(row["expected"]) <= 100, row


@pytest.mark.parametrize("code", params(YESNO_XFAIL))
def test_yesno_reader_on_the_independent_table(code: str) -> None:
    check_floor("independent", code, "yesno")


@pytest.mark.parametrize("code", params(RATING_XFAIL))
def test_rating_reader_on_the_independent_table(code: str) -> None:
    check_floor("independent", code, "ratings")
