"""Checking filled study sheets against the study's key, and the score of the human study (Table 5, kappa).

Several files may be given: each annotator may fill a copy of the sheet. Rows of one pair in several files are
merged per rating cell; a cell rated differently in two files is a conflict. Every problem is collected and told
in one line (:class:`~biasatlas.probes.debias.human_study.StudySheetError`): a missing column, a sheet id this
study did not draw (another study's sheet), a pair id the sheet does not hold, a pair repeated in one file, a
rating that is not one of the scale's, a cell left empty in every file, ratings of two different draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.probes.debias.human_study import (
    ANNOTATORS,
    COLUMNS_OF_TABLE,
    CRITERIA,
    PAPER,
    RATING_COLUMNS,
    RATINGS,
    StudySheetError,
)

if TYPE_CHECKING:
    import pandas as pd

SHOWN = 5  # problems told one by one; the rest counted
REQUIRED = ("sheet_id", "pair_id", *RATING_COLUMNS)


def _cell(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def check_sheets(known: dict[str, dict[str, Any]], files: list[tuple[str, pd.DataFrame]]) -> tuple[
        dict[str, Any], dict[str, dict[str, str]]]:
    """The key of the sheet the files fill and every pair's ratings (pair id -> column -> A/B/both/neither);
    ``known``: the study's keys by sheet id. StudySheetError lists each problem."""
    problems: list[str] = []
    given: dict[str, dict[str, tuple[str, str]]] = {}  # pair -> column -> (rating, where it was given)
    drawn: set[str] = set()
    for name, frame in files:
        missing = [c for c in REQUIRED if c not in frame.columns]
        if missing:
            problems.append(f"{name}: lacks the column(s) {', '.join(missing)} (draw the sheet with "
                            "`debias-study sheet`)")
            continue
        if frame.empty:
            problems.append(f"{name}: no rows")
            continue
        first_line: dict[str, int] = {}
        for i, row in enumerate(frame[list(REQUIRED)].itertuples(index=False)):
            line, cells = i + 2, dict(zip(REQUIRED, row, strict=True))  # line 1 is the header
            where = f"{name} line {line}"
            sheet, pair = _cell(cells["sheet_id"]), _cell(cells["pair_id"])
            if sheet not in known:
                problems.append(f"{where}: sheet_id {sheet!r} is not a sheet of this study (drawn from another "
                                "study, or never drawn)")
                continue
            drawn.add(sheet)
            if pair not in known[sheet]["pairs"]:
                problems.append(f"{where}: pair_id {pair!r} is not in sheet {sheet}")
                continue
            if pair in first_line:
                problems.append(f"{where}: pair_id {pair} repeats line {first_line[pair]}")
                continue
            first_line[pair] = line
            for column in RATING_COLUMNS:
                text = _cell(cells[column])
                if not text:
                    continue
                rating = RATINGS.get(text.casefold())
                if rating is None:
                    problems.append(f"{where} (pair {pair}): {column} {text!r} is not one of: A, B, both, neither")
                    continue
                before = given.setdefault(pair, {}).get(column)
                if before is not None and before[0] != rating:
                    problems.append(f"{where} (pair {pair}): {column} is {rating} here but {before[0]} in "
                                    f"{before[1]}")
                    continue
                given[pair][column] = (rating, where)
    if len(drawn) > 1:
        problems.append(f"the files fill {len(drawn)} different sheets ({', '.join(sorted(drawn))}): score each "
                        "sheet on its own")
    if not problems and not drawn:
        problems.append("no row to score")
    if not problems:
        unrated = [c for c in RATING_COLUMNS if not any(c in cells for cells in given.values())]
        if unrated:  # a whole annotator's columns empty: their copy was left out, most likely
            problems.append(f"{', '.join(unrated)}: empty in every file (give each annotator's copy)")
        for pair in sorted(given):
            empty = [c for c in RATING_COLUMNS if c not in given[pair] and c not in unrated]
            if empty:
                problems.append(f"pair {pair}: {', '.join(empty)} not rated in any file")
        for pair in sorted(set(known[next(iter(drawn))]["pairs"]) - set(given)) if drawn else []:
            problems.append(f"pair {pair}: not rated in any file")
    if problems:
        shown = "; ".join(problems[:SHOWN]) + (f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN
                                               else "")
        raise StudySheetError(f"{len(problems)} problem(s) in the sheet(s): {shown}")
    key = known[next(iter(drawn))]
    return key, {pair: {c: v[0] for c, v in cells.items()} for pair, cells in given.items()}


def kappa_text(k: dict[str, Any]) -> str:
    """Cohen's kappa with its interval and n, or why there is none."""
    if k.get("kappa") is None:
        return f"kappa undefined on {k['n']} pairs (an annotator gave one label only)"
    low, high = k["kappa_ci"]
    return f"kappa {k['kappa']:.2f} [95% CI {low:.2f}, {high:.2f}], n = {k['n']}, {k['agreement_pct']}% agree"


def deblind(rating: str, a_side: str) -> str:
    """An A/B rating as Table 5's column: the side A or B stands for, both good, both bad."""
    if rating == "A":
        return a_side
    if rating == "B":
        return "after" if a_side == "before" else "before"
    return "both good" if rating == "both" else "both bad"


def _kappa(first: list[str], second: list[str]) -> dict[str, Any]:
    """Cohen's kappa with statsmodels' asymptotic interval, the interval clipped to kappa's range [-1, 1]."""
    from biasatlas.readers.agreement import kappa

    out = kappa(first, second)
    if out.get("kappa_ci"):
        out["kappa_ci"] = [max(-1.0, out["kappa_ci"][0]), min(1.0, out["kappa_ci"][1])]
    return out


def _counts(labels: list[str]) -> dict[str, int]:
    return {c: sum(1 for lab in labels if lab == c) for c in COLUMNS_OF_TABLE}


def score(key: dict[str, Any], ratings: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Table 5's counts per criterion (each annotator's, and where both agree) and Cohen's kappa between the two
    annotators per criterion and over both criteria, on the de-blinded labels."""
    pairs = sorted(ratings)
    side = {p: key["pairs"][p]["a"] for p in pairs}
    labels = {(c, a): [deblind(ratings[p][f"{c}_{a}"], side[p]) for p in pairs] for c in CRITERIA
              for a in ANNOTATORS}
    statistic = ("Cohen's kappa, asymptotic 95% CI (statsmodels cohens_kappa; clipped to [-1, 1]), on the "
                 "de-blinded labels")
    criteria: dict[str, Any] = {}
    for c in CRITERIA:
        first, second = labels[c, ANNOTATORS[0]], labels[c, ANNOTATORS[1]]
        agreed = [x for x, y in zip(first, second, strict=True) if x == y]
        criteria[c] = {f"annotator_{a}": _counts(labels[c, a]) for a in ANNOTATORS}
        criteria[c].update(agreed=_counts(agreed), disagreed=len(pairs) - len(agreed),
                           kappa={**_kappa(first, second), "statistic": statistic})
    pooled_first = [x for c in CRITERIA for x in labels[c, ANNOTATORS[0]]]
    pooled_second = [x for c in CRITERIA for x in labels[c, ANNOTATORS[1]]]
    return {
        "sheet_id": key["sheet_id"], "setting": key["setting"], "before_model": key["before_model"],
        "after_model": key["after_model"], "seed": key["seed"], "n_drawn": key["n"], "n": len(pairs),
        "scale": "per pair and criterion: A, B, both (both good) or neither (both bad), read back as Table 5's "
                 "columns: before, after, both good, both bad",
        "criteria": criteria,
        "kappa_pooled": {**_kappa(pooled_first, pooled_second), "statistic": statistic,
                         "on": "both criteria's ratings together (the paper reports one kappa)"},
        "paper": PAPER,
    }
