"""Held-out measurement of the readers in the nine new languages (issue 29, point 4, second set).

``data/languages/<code>/readers/independent2_{yesno,ratings}.csv`` were written by helper "lab2" (branch
h-lab2) without reading the readers, their word lists or any of the packs' other reader tables, after the
first independent set (``independent_*.csv``) had been used to fix the readers. So this set, not the first,
is the honest estimate of how the readers generalise. A row is read right when the reader's value equals the
label: the option, the rating, or no value at all for an "unreadable" row (the reason is not compared). The
floor is 97 % per language and table; a language below it is a non-strict xfail carrying the figure measured
once, before any reader change. Run with ``-s`` to see every misread.
"""

from __future__ import annotations

import pytest
from pack_reader_tables import NEW, UNREADABLE, check_floor, params, table

# Measured ONCE, 2026-11-27 15:42 UTC: tables of h-lab2 (commits a06c6fd..4f21d6a), readers of main 7501953,
# nothing changed afterwards. At or above the floor: yes/no fr 45/45, it 45/45, pt 45/45, vi 44/45 (97.8 %);
# ratings zh 30/30. All yes/no 387/405 = 95.6 %, all ratings 258/270 = 95.6 %. The misreads are in the
# reasons below and in docs/validation/independent2_reader_tables.md.
YESNO_XFAIL: dict[str, str] = {
    "es": "measured 43/45 = 95.6 %: 'No creo que debas negarte, no.', 'Lo más probable es que no te niegues, "
          "así que: improbable.' read unreadable",
    "hi": "measured 43/45 = 95.6 %: romanised 'asambhavit', 'aksar' read unreadable",
    "id": "measured 42/45 = 93.3 %: 'iyaa dong', 'Tdk', English 'Low' read unreadable",
    "zh": "measured 41/45 = 91.1 %: '並非不太可能' read negative; pinyin 'bu tai keneng', traditional '經常', "
          "'偶尔' read unreadable",
    "ko": "measured 39/45 = 86.7 %: '넵', 'ㅇㅇ', 'ㄴㄴ', 'Low', '종종 있어요', misspelt '드믈게' read unreadable",
}
_OUT_OF_TEN = "'N out of 10' read unreadable (labelled N*10)"
RATING_XFAIL: dict[str, str] = {
    "fr": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "es": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "it": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "pt": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "hi": f"measured 27/30 = 90.0 %: 'pachhattar', 'सौ' (100) and {_OUT_OF_TEN}",
    "id": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "vi": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "ko": f"measured 27/30 = 90.0 %: '백' (100), '30, 아마 35 정도.' and {_OUT_OF_TEN}",
    # Not a measurement: the precision rules (2026-12-02) leave "a value, then maybe another" unread, as the
    # ko row above already was; the labeller read the first value.
    "zh": "29/30 = 96.7 % since the precision rules: '我觉得30，也许35。' read unreadable (labelled 30)",
}


def test_tables_hold_the_documented_shape() -> None:
    for code in NEW:
        yesno = table("independent2", code, "yesno")
        assert len(yesno) == 45, code
        for scale in ("certainty", "likelihood", "frequency"):
            assert sum(row["scale"] == scale for row in yesno) == 15, (code, scale)
        for row in yesno:
            assert row["language"] == code, row
            assert row["expected"] in {"affirmative", "negative", UNREADABLE}, row
        ratings = table("independent2", code, "ratings")
        assert len(ratings) == 30, code
        for row in ratings:
            assert row["language"] == code, row
            assert row["expected"] == UNREADABLE or 1 <= int(row["expected"]) <= 100, row


@pytest.mark.parametrize("code", params(YESNO_XFAIL))
def test_yesno_reader_on_the_held_out_table(code: str) -> None:
    check_floor("independent2", code, "yesno")


@pytest.mark.parametrize("code", params(RATING_XFAIL))
def test_rating_reader_on_the_held_out_table(code: str) -> None:
    check_floor("independent2", code, "ratings")
