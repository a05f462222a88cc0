"""A CJK or emoji model name in the SVG/PDF figures is drawn with a font that has its glyphs, not as boxes (each
character checked against the fonts the figure resolves to, and the SVG's glyphs named by their font); with
no CJK font installed the figure is still made."""

from __future__ import annotations

import re
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

from biasatlas.report import plots
from biasatlas.report.publish import render_figure

NAME = "通义千问-7B · 라마 · ラマ"


def cjk_installed() -> bool:
    return len(plots.figure_fonts()) > 1 and any("CJK" in f or "Han" in f for f in plots.figure_fonts())


def figure() -> object:
    fig, ax = plt.subplots()
    ax.set_title(NAME)
    ax.set_xticks([0, 1], [NAME, "gpt-4o"])
    return fig


@pytest.mark.skipif(not cjk_installed(), reason="no CJK font (scripts/setup.sh --dev installs fonts-noto-cjk)")
def test_a_cjk_model_name_is_drawn_with_fonts_that_have_its_glyphs() -> None:
    fig = figure()
    plots.use_figure_fonts(fig)
    title = fig.axes[0].title  # type: ignore[attr-defined]
    paths = font_manager.fontManager._find_fonts_by_props(title.get_fontproperties())
    fonts = [FT2Font(str(p)) for p in paths]
    missing = [c for c in NAME if c.strip() and not any(f.get_char_index(ord(c)) for f in fonts)]
    assert missing == [], f"no font of {title.get_fontfamily()} has {missing}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)" for a box
        files = render_figure(fig, "a CJK model name")
    glyph_fonts = {m.decode() for m in re.findall(rb'<path id="([A-Za-z]+)', files.svg)}
    assert any("CJK" in f for f in glyph_fonts), glyph_fonts  # the name's characters come from the CJK font
    assert b"NotoSansCJK" in files.pdf or b"SourceHan" in files.pdf or b"CJK" in files.pdf


def test_without_a_cjk_font_the_figure_is_still_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(font_manager.fontManager, "ttflist",
                        [f for f in font_manager.fontManager.ttflist if f.name == plots.BASE_FONT])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])  # none installed either
    assert plots.figure_fonts() == [plots.BASE_FONT]
    fig = figure()
    plots.use_figure_fonts(fig)
    assert fig.axes[0].title.get_fontfamily() == ["sans-serif"]  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the boxes' warnings
        files = render_figure(fig, "no CJK font")
    assert files.svg.startswith(b"<?xml") and files.pdf.startswith(b"%PDF")


@pytest.mark.skipif(not cjk_installed(), reason="no CJK font (scripts/setup.sh --dev installs fonts-noto-cjk)")
def test_fonts_installed_after_matplotlib_cached_its_font_list_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(font_manager.fontManager, "ttflist",  # the cache of a matplotlib run before the install
                        [f for f in font_manager.fontManager.ttflist if f.name == plots.BASE_FONT])
    assert any("CJK" in f for f in plots.figure_fonts())


#: a Hindi pack's group names (Devanagari): the figures of a Hindi study label groups with them
HINDI = "मुसलमान · बौद्ध · हिंदू"


def devanagari_installed() -> bool:
    return any("Devanagari" in f for f in plots.figure_fonts())


@pytest.mark.skipif(not devanagari_installed() and not __import__("os").environ.get("CI"),
                    reason="no Devanagari font (scripts/setup.sh --dev installs fonts-lohit-deva)")
def test_a_hindi_group_name_is_drawn_with_a_devanagari_font() -> None:
    fig, ax = plt.subplots()
    ax.set_title(HINDI)
    ax.set_yticks([0, 1], [HINDI, "Muslims"])
    plots.use_figure_fonts(fig)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)": a box where a letter should be
        files = render_figure(fig, "a Hindi group name")
    glyph_fonts = {m.decode() for m in re.findall(rb'<path id="([A-Za-z]+)', files.svg)}
    assert any("Lohit" in f or "Devanagari" in f for f in glyph_fonts), glyph_fonts


@pytest.mark.skipif(not devanagari_installed() and not __import__("os").environ.get("CI"),
                    reason="no Devanagari font (scripts/setup.sh --dev installs fonts-lohit-deva)")
def test_a_probe_figure_laid_out_with_hindi_names_warns_of_no_missing_glyph() -> None:
    """A probe's static figure lays itself out (tight_layout) before it is saved: the layout must already use
    the fallback fonts, or matplotlib warns of a box for every Devanagari letter and measures them wrong."""
    import pandas as pd

    from biasatlas.probes.contact import report_languages

    part = pd.DataFrame({"name": [HINDI, "Muslims"], "language": ["hi", "en"], "effect": [0.1, 0.05],
                         "effect_ci_low": [0.0, -0.02], "effect_ci_high": [0.2, 0.12]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = report_languages._static(part)
        render_figure(fig, "across languages")
    plt.close(fig)


def test_a_label_dejavu_sans_draws_whole_keeps_it_alone() -> None:
    """Six font families resolved for each of hundreds of ASCII tick labels, at every draw, cost a third of a
    large figure's time: only a text with a character DejaVu Sans lacks gets the fallback fonts."""
    fig, ax = plt.subplots()
    ax.set_title("local:smollm2 · de · certainty − 0.1")
    ax.set_xticks([0, 1], [NAME, "gpt-4o"])
    plots.use_figure_fonts(fig)
    assert ax.title.get_fontfamily() == ["sans-serif"]
    assert [t.get_fontfamily() for t in ax.get_xticklabels()][1] == ["sans-serif"]
    if cjk_installed():
        assert ax.get_xticklabels()[0].get_fontfamily() == plots.figure_fonts()
    plt.close(fig)


def test_saving_svg_and_pdf_measures_the_tight_box_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """savefig(bbox_inches="tight") draws a figure once more per format only to measure it: the box is measured
    once for both (3 draws, not 4), and the files are still cropped to it."""
    from matplotlib.figure import Figure

    draws = [0]
    draw = Figure.draw

    def counted(self: Figure, renderer: object) -> None:
        draws[0] += 1
        draw(self, renderer)

    monkeypatch.setattr(Figure, "draw", counted)
    fig, ax = plt.subplots(figsize=(8, 6))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x")
    files = render_figure(fig, "counted")
    assert draws[0] == 3
    width = float(re.search(rb'<svg[^>]*width="([0-9.]+)pt"', files.svg).group(1))  # type: ignore[union-attr]
    assert width < 8 * 72 * 0.97  # cropped to the axes and labels (a bare 8-inch figure is 576 pt)
    assert files.pdf.startswith(b"%PDF")
