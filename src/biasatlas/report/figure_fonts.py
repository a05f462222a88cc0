"""The fonts and the saving of the static (matplotlib) figures: CJK, Devanagari and emoji labels drawn with a
font that has their glyphs, and each figure laid out and saved as SVG and PDF with as few draws as it needs."""

from __future__ import annotations

import io
from typing import Any

#: installed fonts that hold CJK glyphs and symbols, in order of preference (Debian: fonts-noto-cjk, fonts-symbola);
#: matplotlib's DejaVu Sans comes first, and each character is drawn by the first font that has it
FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK KR", "Source Han Sans", "Noto Sans SC",
                  "WenQuanYi Zen Hei", "Droid Sans Fallback", "Lohit Devanagari", "Noto Sans Devanagari", "Symbola",
                  "Noto Emoji")
BASE_FONT = "DejaVu Sans"
#: the SVG and PDF margin around the figure's tight box (matplotlib's savefig.pad_inches default)
PAD_INCHES = 0.1


def figure_fonts() -> list[str]:
    """The font families of the SVG/PDF figures: DejaVu Sans, then every installed font of FALLBACK_FONTS.

    Without any of them (no CJK font installed) DejaVu Sans alone: the figure is still made, and characters
    it lacks are drawn as boxes (matplotlib warns once per glyph).
    """
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    # a fallback font missing from matplotlib's list: look on the disk once per list (a walk of the font folders)
    if not set(FALLBACK_FONTS) <= installed and id(font_manager.fontManager.ttflist) not in _LOOKED_FOR_NEW_FONTS:
        _add_new_fonts(font_manager)
        _LOOKED_FOR_NEW_FONTS.add(id(font_manager.fontManager.ttflist))
        installed = {f.name for f in font_manager.fontManager.ttflist}
    return [BASE_FONT, *(name for name in FALLBACK_FONTS if name in installed)]


_LOOKED_FOR_NEW_FONTS: set[int] = set()
_BASE_CHARACTERS: dict[str, frozenset[int]] = {}


def _add_new_fonts(font_manager: Any) -> None:
    """Fonts installed after matplotlib cached its font list (it reads the system's fonts once): added here."""
    known = {f.fname for f in font_manager.fontManager.ttflist}
    for path in font_manager.findSystemFonts():
        if path not in known and any(k in path for k in ("CJK", "Symbola", "wqy", "DroidSansFallback",
                                                                 "Devanagari", "lohit")):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a font file FreeType cannot read: left out
                continue


def _base_characters() -> frozenset[int]:
    """The code points DejaVu Sans draws (read from the font once)."""
    from matplotlib import font_manager

    path = font_manager.findfont(BASE_FONT, fallback_to_default=True)
    if path not in _BASE_CHARACTERS:
        _BASE_CHARACTERS[path] = frozenset(font_manager.get_font(path).get_charmap())
    return _BASE_CHARACTERS[path]


def lay_out(figure: Any) -> None:
    """``figure.tight_layout()`` measured in the fonts it will be drawn with (:func:`use_figure_fonts`): laid
    out in DejaVu Sans alone, a Devanagari or CJK label would be measured as boxes (and warned of, per glyph)."""
    use_figure_fonts(figure)
    figure.tight_layout()


def use_figure_fonts(figure: Any) -> None:
    """Every sans-serif text of a matplotlib ``figure`` (titles, ticks, legends: model names) that holds a
    character DejaVu Sans lacks in :func:`figure_fonts`, so that a CJK or emoji model name is drawn with a font
    that has its glyphs. Texts DejaVu Sans draws whole keep it alone: resolving six font families for each of a
    large figure's hundreds of tick labels, at every draw, was a third of the figure's cost."""
    from matplotlib.text import Text

    families = figure_fonts()
    if len(families) == 1:
        return  # nothing to fall back to
    drawn = _base_characters()
    for text in figure.findobj(Text):
        family = text.get_fontfamily()
        if family and family[0] in ("sans-serif", BASE_FONT) and any(
                ord(c) not in drawn for c in text.get_text() if not c.isspace()):
            text.set_fontfamily(families)


def save_vector(figure: Any) -> dict[str, bytes]:
    """``figure`` as SVG and PDF bytes, cropped to its tight box (as ``bbox_inches="tight"``) measured once for
    both: savefig's "tight" draws the figure once more per format only to measure it. The figure is closed."""
    import matplotlib.pyplot as plt

    use_figure_fonts(figure)  # CJK and emoji model names drawn, not boxes
    files = {}
    try:
        figure.draw_without_rendering()
        box = figure.get_tightbbox(figure.canvas.get_renderer()).padded(PAD_INCHES)
        for fmt in ("svg", "pdf"):
            buf = io.BytesIO()
            # no timestamp, so the same study gives the same bytes
            figure.savefig(buf, format=fmt, bbox_inches=box, metadata={"Date": None})
            files[fmt] = buf.getvalue()
    finally:
        plt.close(figure)
    return files
