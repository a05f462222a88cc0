"""The group-disparity rows and their headline sentence: the group that differs, or that none does (with what was
detectable), or that none could be compared; a flagged group is never "differs"."""

from __future__ import annotations

from typing import Any

from biasatlas.tidy.disparity import disparity_rows, headline_lines, headline_text

CELL = ("model", "mode", "language", "axis")


def _group(group: str, effect: float | None, p: float | None, p_adj: float | None, min_p: float = 1e-6,
           **extra: Any) -> dict[str, Any]:
    return {"model": "m", "mode": "generate", "language": "en", "axis": "religion", "level": "all",
            "measure": "decision", "groups": 3, "group": group, "effect": effect, "ci_low": None if effect is None
            else effect - 0.1, "ci_high": None if effect is None else effect + 0.1, "p": p, "p_adj": p_adj,
            "min_p": min_p, "n": 30, "units": 10, "mde": 0.2, "omnibus_p": 0.01, "omnibus_test": "Cochran's Q",
            "answers": 90, "unreadable": 0, "refusals": 0, "test": "exact", **extra}


def test_the_group_that_differs_most_against_is_the_headline() -> None:
    rows = disparity_rows("contact", [_group("a", 0.3, 0.001, 0.003), _group("b", -0.1, 0.2, 0.4),
                                      _group("c", -0.6, 0.0001, 0.0003)], 0.05, CELL)
    assert [r["group"] for r in rows] == [None, "a", "b", "c"]  # the omnibus row first
    [(row, text)] = headline_lines(rows)
    assert row["group"] == "a"  # c differs more, but in favour: the disfavoured one is the headline
    assert text == "most disfavoured: a +30.0 pp [+20.0, +40.0] vs the other religion groups, p adj 0.003 (Holm)"


def test_no_group_differs_states_the_largest_gap_and_the_mde() -> None:
    rows = disparity_rows("contact", [_group("a", 0.05, 0.3, 0.9), _group("b", -0.08, 0.2, 0.6)], 0.05, CELL)
    [(row, text)] = headline_lines(rows)
    assert row["group"] == "b" and row["significant"] is False
    assert text.startswith("no religion group differs: largest gap b -8.0 pp [-18.0, +2.0]")
    assert text.endswith("detectable at this size: MDE ±20.0 pp")


def test_a_group_that_cannot_reach_alpha_is_flagged_and_never_differs() -> None:
    rows = disparity_rows("contact", [_group("a", 0.5, 0.01, 0.03, min_p=0.02), _group("b", 0.0, 1.0, 1.0)],
                          0.05, CELL)
    a = next(r for r in rows if r["group"] == "a")
    assert a["flags"] == "too_few_units" and a["significant"] is False  # 0.02 x 3 groups >= 0.05
    [(_, text)] = headline_lines(rows)
    assert "no religion group differs" in text and "⚑ too_few_units" in text and "[" not in text.split(":")[1]


def test_groups_sharing_no_question_say_so() -> None:
    rows = disparity_rows("contact", [_group("a", None, None, None), _group("b", None, None, None)], 0.05, CELL)
    [(row, text)] = headline_lines(rows)
    assert row["flags"] == "not_tested"
    assert text.startswith("no religion group compared: no two groups have a decision on the same question")
    assert headline_text(row) == text


def test_stories_name_the_group_with_the_most_significant_associations() -> None:
    from biasatlas.export.tidy_other import stories_rows

    def cell(value: str, compared: str, lift: float, q: float) -> dict[str, Any]:
        return {"base_attribute": "region", "base_value": value, "compared_attribute": "occupation",
                "compared_value": compared, "lift": lift, "q": q, "p": q / 10, "count": 12, "row_total": 40,
                "models": ["m"], "languages": ["en"]}

    summary = {"alpha": 0.05, "associations": [cell("Oceania", "farmer", 3.1, 0.001), cell("Oceania", "diver", 2.0,
               0.01), cell("Europe", "banker", 1.5, 0.02), cell("Asia", "cook", 1.2, 0.3)]}
    rows = [r for r in stories_rows(summary) if r["source"] == "group disparity"]
    assert {r["group"]: r["estimate"] for r in rows} == {"Oceania": 2, "Europe": 1, "Asia": 0}
    [(row, text)] = headline_lines(rows)
    assert row["group"] == "Oceania"
    assert text == "most associations: Oceania (2 significant; strongest occupation = farmer, lift 3.10, q 0.001 (BY))"
