"""Interactive figures: axis titles with units, hovers with estimate, interval, n and p (issue 28)."""

from __future__ import annotations

import pandas as pd

from biasatlas.report.plots import heatmap_figure, interval_figure

ROWS = pd.DataFrame({
    "model": ["a", "a", "b", "b"], "contact": ["none", "positive", "none", "positive"],
    "pct": [40.0, 25.0, 50.0, 55.0], "low": [30.0, 15.0, 40.0, 45.0], "high": [50.0, 35.0, 60.0, 65.0],
    "n": [60, 60, 58, 60], "p": [0.2, 0.01, 0.5, 0.03],
})


def test_bars_with_intervals_have_axis_titles_and_a_full_hover() -> None:
    fig = interval_figure(ROWS, category="contact", estimate="pct", low="low", high="high", n="n", p="p",
                          panel="model", x_title="Contact framing", y_title="Biased answers (%)", unit="%")
    assert fig.layout.yaxis.title.text == "Biased answers (%)" and fig.layout.xaxis.title.text == "Contact framing"
    assert [a.text for a in fig.layout.annotations] == ["a", "b"]  # one panel per model
    hover = fig.data[0].hovertext[1]
    assert "estimate: 25%" in hover and "95% CI: [15, 35]%" in hover and "n: 60" in hover and "p: 0.01" in hover
    bars = fig.data[1]
    assert list(bars.error_y.array) == [10.0, 10.0] and list(bars.error_y.arrayminus) == [10.0, 10.0]


def test_study_text_is_escaped_in_labels_and_hovers() -> None:
    rows = ROWS.assign(contact=["<b>x</b>", "y", "z", "w"])
    fig = interval_figure(rows, category="contact", estimate="pct", low="low", high="high", x_title="c",
                          y_title="v (%)")
    assert "&lt;b&gt;x&lt;/b&gt;" in fig.data[0].x and "<b>x</b>" not in fig.data[0].hovertext[0]


def test_a_forest_is_horizontal_with_the_estimate_axis_titled() -> None:
    fig = interval_figure(ROWS, category=["model", "contact"], estimate="pct", low="low", high="high", n="n",
                          x_title="Bias score (points)", y_title="Group", horizontal=True)
    assert fig.layout.xaxis.title.text == "Bias score (points)" and fig.layout.yaxis.title.text == "Group"
    assert fig.data[0].y[0] == "a · none"


def test_heatmap_hover_names_both_keys_the_value_and_n() -> None:
    grid = pd.DataFrame([[10.0, float("nan")]], index=["religion"], columns=["work", "home"])
    counts = pd.DataFrame([[12, 0]], index=["religion"], columns=["work", "home"])
    fig = heatmap_figure([("m", grid, counts)], x_title="Scenario", y_title="Axis", z_title="Biased (%)",
                         zmin=0, zmax=100)
    assert fig.layout.xaxis.title.text == "Scenario" and fig.layout.yaxis.title.text == "Axis"
    assert fig.data[0].hovertext[0][0] == "Axis: religion<br>Scenario: work<br>Biased (%): 10<br>n: 12"
    assert fig.data[0].z[0][1] is None


def test_the_overview_forest_has_axis_units_and_the_estimate_in_its_hover() -> None:
    from biasatlas.report.overview import _forest

    table = pd.DataFrame({
        "probe": ["Contact", "Contact", "Samaritan"], "model": ["a", "b", "a"], "language": ["de", "de", "en"],
        "measure": ["Δ % biased, positive − no contact"] * 2 + ["largest gap: male − control rating (1 of 3 groups)"],
        "estimate": [12.5, -4.0, 6.2], "ci_low": [2.0, -15.0, 1.0], "ci_high": [22.0, 7.0, 11.4],
        "test": ["McNemar"] * 2 + ["paired t"], "n": [40, 40, 12], "p": [0.02, 0.6, 0.03],
        "p_adj": [0.04, 0.6, 0.03], "significant": [True, False, True], "flags": [None, None, "one_option"],
    })
    fig = _forest(table)
    assert fig.layout.xaxis.title.text == "Δ % biased, positive − no contact (percentage points, 95% CI)"
    assert fig.layout.xaxis2.title.text == "largest gap: male − control rating (rating points, 95% CI)"
    assert fig.layout.yaxis.title.text == fig.layout.yaxis2.title.text == "Model · language"
    assert "estimate 12.5 points [95% CI 2, 22]" in fig.data[0].hovertext[0]
    assert "n 40, p 0.02" in fig.data[0].hovertext[0]
    assert "⚑ one_option" in fig.data[1].hovertext[0]  # a flagged headline says so in its hover


def _shares(estimates: list[float], lows: list[float], highs: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"model": ["local:smollm2@b179c9523d0e"] * len(estimates), "language": ["de"] * len(estimates),
                         "contact": ["none", "positive", "negative"][: len(estimates)], "est": estimates,
                         "lo": lows, "hi": highs, "n": [30] * len(estimates)})


def test_an_all_zero_chart_says_so_in_words_and_its_axis_starts_at_zero() -> None:
    frame = _shares([0.0, 0.0], [0.0, 0.0], [11.4, 11.4])
    figure = interval_figure(frame, category="language", group="contact", panel="model", estimate="est",
                             low="lo", high="hi", n="n", unit="%", y_range=(0, 100), x_title="Language",
                             y_title="Biased answers (%)").to_dict()
    assert any(a["text"].startswith("all 0%") for a in figure["layout"]["annotations"])
    assert figure["layout"]["yaxis"]["range"] == [0, 100]


def test_probability_intervals_stay_in_the_scale_points_are_dodged_and_ticks_use_short_names() -> None:
    frame = _shares([0.02, 0.5, 0.97], [-0.05, 0.4, 0.9], [0.09, 0.6, 1.04])  # t intervals leaving [0, 1]
    figure = interval_figure(frame, category=["model", "language"], group="contact", estimate="est", low="lo",
                             high="hi", n="n", kind="point", x_title="Model · language",
                             y_title="Mean P(biased option)").to_dict()
    assert figure["layout"]["scattermode"] == "group"
    assert figure["layout"]["yaxis"]["range"][0] == 0
    for trace in figure["data"]:
        est, plus, minus = trace["y"][0], trace["error_y"]["array"][0], trace["error_y"]["arrayminus"][0]
        assert est - minus >= 0 and est + plus <= 1
        assert trace["x"] == ["smollm2 · de"]
    first = figure["data"][0]
    assert first["error_y"]["arrayminus"][0] > 0  # Wilson at 2% of 30 still has a lower arm, never below 0
    assert "Wilson" in figure["layout"]["yaxis"]["title"]["text"]


def test_a_point_carries_the_answers_filter_of_its_row() -> None:
    """A click on a point filters the answers by the point's own row, in the answers table's words."""
    import json

    from biasatlas.report.html import Section
    from biasatlas.report.plots import disparity_forest, interval_figure

    frame = pd.DataFrame({"unit": ["m1", "m1", "m2"], "language": ["en", "de", "en"], "scale": ["certainty"] * 3,
                          "contact": ["none", "positive", "none"], "pct": [10.0, 20.0, 30.0],
                          "low": [5.0, 15.0, 25.0], "high": [15.0, 25.0, 35.0]})
    fig = interval_figure(frame, category="language", group="contact", panel="unit", estimate="pct", low="low",
                          high="high", x_title="x", y_title="y", drill={"unit": "Model", "language": "Language",
                                                                        "contact": "Contact", "absent": "Nothing"})
    points = [(json.loads(c), y) for trace in fig.data for c, y in zip(trace.customdata, trace.y, strict=True)]
    assert ({"Model": "m2", "Language": "en", "Contact": "none"}, 30.0) in points
    assert ({"Model": "m1", "Language": "de", "Contact": "positive"}, 20.0) in points
    assert len(points) == 3
    plain = interval_figure(frame, category="language", estimate="pct", low="low", high="high", x_title="x",
                            y_title="y")
    assert all(trace.customdata is None for trace in plain.data)

    rows = [{"model": "m", "mode": "choice", "language": "en", "axis": "religion", "group": g, "estimate": e,
             "ci_low": e - 0.1, "ci_high": e + 0.1, "n": 40, "p_adj": 0.5, "significant": False, "flags": "",
             "measure": "decision"} for g, e in (("Jews", 0.2), ("Buddhists", -0.1))]
    forest = disparity_forest(rows, drill=True)
    filters = {json.loads(c)["Group"]: json.loads(c) for trace in forest.data for c in trace.customdata}
    assert filters["Jews"] == {"Model": "m", "Language": "en", "Group": "Jews"}
    assert all(trace.customdata is None for trace in disparity_forest(rows).data)

    section = Section("s")
    section.add_plot(fig, "c", drill="contact")
    assert "data-drill-probe='contact'" in section.blocks[-1]
    section.add_plot(plain, "c")
    assert "data-drill-probe" not in section.blocks[-1]
