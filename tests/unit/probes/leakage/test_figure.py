"""Cao et al.'s Figure 2 as drawn: human source languages on the left, model targets on the right, one panel per
model variant, a line from source to target per flow, its width growing with the coefficient."""

from __future__ import annotations

import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.probes.leakage.figure import flows_figure


def _flows() -> pd.DataFrame:
    return pd.DataFrame([
        {"variant": "m1", "source": "en", "target": "hi", "estimate": 0.30},
        {"variant": "m1", "source": "zh", "target": "ru", "estimate": 0.10},
        {"variant": "m2", "source": "ru", "target": "en", "estimate": 0.20},
    ])


def _texts(ax) -> dict[str, tuple[float, float, str]]:  # type: ignore[no-untyped-def]
    return {t.get_text(): (*t.get_position(), t.get_horizontalalignment()) for t in ax.texts}


def test_humans_on_the_left_models_on_the_right_every_language_one_row() -> None:
    fig = flows_figure(_flows(), ["m1", "m2"])
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["m1", "m2"]
    for ax in panels:
        texts = _texts(ax)
        rows = []
        for lang in LANGUAGES:
            hx, hy, h_align = texts[f"human {lang.upper()}"]
            mx, my, m_align = texts[f"model {lang.upper()}"]
            assert hx < mx and hy == my and (h_align, m_align) == ("right", "left")
            rows.append(hy)
        assert rows == sorted(rows, reverse=True)  # the paper's order, top to bottom


def test_a_line_per_flow_from_its_source_to_its_target_wider_when_larger() -> None:
    fig = flows_figure(_flows(), ["m1", "m2"])
    m1, m2 = (ax for ax in fig.axes if ax.get_title())
    y = {lang: _texts(m1)[f"human {lang.upper()}"][1] for lang in LANGUAGES}
    lines = {(round(line.get_ydata()[0]), round(line.get_ydata()[1])): line for line in m1.lines}
    assert set(lines) == {(y["en"], y["hi"]), (y["zh"], y["ru"])}
    en_hi, zh_ru = lines[(y["en"], y["hi"])], lines[(y["zh"], y["ru"])]
    assert list(en_hi.get_xdata()) == [0.02, 0.98]  # from the human side to the model side
    assert en_hi.get_linewidth() > zh_ru.get_linewidth()
    assert "0.3" in _texts(m1) and "0.1" in _texts(m1) and "0.2" not in _texts(m1)
    assert len(m2.lines) == 1 and "0.2" in _texts(m2)


def test_a_panel_without_flows_says_so() -> None:
    fig = flows_figure(_flows(), ["m1", "m3"])
    empty = next(ax for ax in fig.axes if ax.get_title() == "m3")
    assert not empty.lines and "no significant flow" in _texts(empty)
