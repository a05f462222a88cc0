"""The page's tables are written as pandas' ``to_html`` writes them (the rows by a faster writer): the same
markup for flat and two-level headers, escaped cells, empty tables and line breaks."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.report import html


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    return html.page_cells(frame).map(
        lambda v: html.clean(v.replace(html._BREAK, "")).replace("\t", " ").replace("\n", html._BREAK))


def _two_level() -> pd.DataFrame:
    frame = pd.DataFrame([["1", "2", "<b>x</b>"], ["3", "4", "&amp;"]])
    frame.columns = pd.MultiIndex.from_tuples([("model-a", "n"), ("model-a", "% biased"), ("model-b", "n")])
    return frame


FRAMES = {
    "text with markup": pd.DataFrame({"a": ["x<y", "2", "", "a\n b"], "b": ["q\"&'", "4", "–", "<script>"]}),
    "numbers and a missing value": pd.DataFrame({"group": ["Muslims", "Jews"], "n": [12, 3], "p": [0.01, None]}),
    "no rows": pd.DataFrame({"a": [], "b": []}),
    "two-level header": _two_level(),
    "CJK and control characters": pd.DataFrame({"name": ["通义千问\x00", "라마\x07"], "x": ["1", "2"]}),
}


@pytest.mark.parametrize("name", list(FRAMES))
def test_the_markup_is_pandas_to_html(name: str) -> None:
    shown = _shown(FRAMES[name])
    expected = shown.to_html(index=False, escape=True, classes="data display compact", border=0)
    # the page's writer cleans and breaks the cells itself (a line break is <br>, as the page shows it)
    assert html._table_markup(html.page_cells(FRAMES[name])) == expected.replace(html._BREAK, "<br>")


def test_repeated_cells_are_the_same_markup_as_each_alone() -> None:
    frame = pd.DataFrame({"model": ["m<1>", "m<1>", "m2"], "p": [0.0, -0.0, 0.0], "x": [1, 1.0, True]})
    alone = [html._table_markup(html.page_cells(frame.iloc[[i]])) for i in range(3)]
    whole = html._table_markup(html.page_cells(frame))
    rows = [a[a.index("<tbody>"):] for a in alone]
    assert all(r.replace("<tbody>\n", "").replace("  </tbody>\n</table>", "") in whole for r in rows)


def test_a_cell_is_escaped_in_the_page() -> None:
    page = html.table_html(pd.DataFrame({"answer": ["<img src=x onerror=alert(1)>", "ok"]}))
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
