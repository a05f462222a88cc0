"""Report tables as LaTeX that compiles with pdflatex as it is: escaped text, booktabs, wrapping columns, labels.

A file needs ``\\usepackage[T1]{fontenc}``, ``booktabs``, ``array``, ``graphicx`` and ``pdflscape`` in the
paper's preamble (all in Debian's texlive-latex-base/-recommended); every file says so in its first line. A table
fits the text width of a plain ``article`` by construction: a tabular wider than ``\\linewidth`` is scaled to it,
one much wider is set in landscape, long text wraps with break points in long words, long tables come in parts.
Text is escaped for pdflatex:
TeX's special characters become their macros, mathematical signs (Δ − × ± ≤ …) math-mode macros, and a
character pdflatex's T1/TS1 encodings cannot typeset (e.g. CJK text in a model's answer) a ``?`` — the
CSV copy keeps the text whole.
"""

from __future__ import annotations

import re
import unicodedata

import pandas as pd

#: rows per table: a longer table is cut into parts of this many rows (each a float that fits a page)
PART_ROWS = 30
#: kept for callers written before the parts: a table longer than this was a longtable
LONG_ROWS = PART_ROWS

PREAMBLE = ("% needs \\usepackage[T1]{fontenc}, booktabs, array, graphicx and pdflscape; numeric columns hold "
            "plain numbers (siunitx's S column takes them)\n")

#: the most columns a table may have with its estimates split into numeric columns
SPLIT_COLUMNS = 14
#: the text width of a plain article (10 pt, letter or A4) in pt, for the layout estimate
TEXT_WIDTH_PT = 345.0
#: an estimate of one character's width at \\small, and of a column's padding (2 \\tabcolsep), in pt
CHAR_PT, PAD_PT = 4.6, 12.0
#: a table estimated wider than this many text widths is set in landscape (pdflscape)
LANDSCAPE = 1.5
#: inside a wrapping column, a run of characters longer than this gets break points (ids, URLs)
LONG_WORD = 11
_BREAK = "\ue001"

_ASCII = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
}
_SIGNS = {
    "Δ": r"$\Delta$", "δ": r"$\delta$", "−": r"$-$", "×": r"$\times$", "±": r"$\pm$", "≤": r"$\leq$",
    "≥": r"$\geq$", "≠": r"$\neq$", "≈": r"$\approx$", "→": r"$\rightarrow$", "←": r"$\leftarrow$",
    "∞": r"$\infty$", "·": r"$\cdot$", "√": r"$\surd$", "α": r"$\alpha$", "β": r"$\beta$", "χ": r"$\chi$",
    "μ": r"$\mu$", "σ": r"$\sigma$", "ρ": r"$\rho$", "τ": r"$\tau$", "κ": r"$\kappa$", "ε": r"$\varepsilon$",
    "η": r"$\eta$", "λ": r"$\lambda$", "π": r"$\pi$", "φ": r"$\varphi$", "ω": r"$\omega$", "²": r"$^2$",
    "…": r"\ldots{}", "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "„": ",,",
    "•": r"\textbullet{}", "€": r"\texteuro{}", "°": r"\textdegree{}", "§": r"\S{}", "¶": r"\P{}",
    "\u00a0": "~", "⚑": "", "«": r"\guillemotleft{}", "»": r"\guillemotright{}", "©": r"\textcopyright{}",
}
# Latin letters pdflatex's T1 encoding lacks (ħ, ĸ, ŀ, ŉ, ŧ, ſ and their capitals)
_NOT_T1 = {0x126, 0x127, 0x138, 0x13F, 0x140, 0x149, 0x166, 0x167, 0x17F}


def _typesettable(code: int) -> bool:
    """Latin-1 letters and Latin Extended-A (Icelandic, German, Nordic, Central European) that T1 has."""
    return (0xC0 <= code <= 0xFF and code not in (0xD7, 0xF7)) or (0x100 <= code <= 0x17F and code not in _NOT_T1)


def escape(text: str) -> str:
    """``text`` as pdflatex typesets it: specials escaped, signs as macros, line breaks spaces."""
    out = []
    for char in unicodedata.normalize("NFC", text):
        code = ord(char)
        if char == _BREAK:
            out.append("\\allowbreak{}")
        elif char in _ASCII:
            out.append(_ASCII[char])
        elif char in _SIGNS:
            out.append(_SIGNS[char])
        elif char in "\r\n\t":
            out.append(" ")
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code < 0x20 or 0x7F <= code < 0xA0 or unicodedata.category(char) in ("Cf", "Mn"):
            continue  # control and format characters, combining marks NFC could not fold
        elif _typesettable(code):
            out.append(char)
        else:
            out.append("?")
    # a run of spaces is one space in TeX anyway; '--' from a dash next to a hyphen stays readable
    return re.sub(r" {2,}", " ", "".join(out))


def _number(value: object) -> str | None:
    """A number as plain digits (siunitx-friendly), 4 significant digits for a float; None for other values."""
    if isinstance(value, bool):
        return None
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        value = value.item()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "--" if value != value else f"{value:.4g}"
    return None


def _breakable(text: str) -> str:
    """Break points inside long runs of characters, so a wrapping column never runs over its width."""
    def cut(m: re.Match[str]) -> str:
        word = m[0]
        return _BREAK.join(word[i:i + LONG_WORD // 2] for i in range(0, len(word), LONG_WORD // 2))

    return re.sub(rf"\S{{{LONG_WORD + 1},}}", cut, text)


def _cell(value: object, p_value: bool = False, names: dict[str, str] | None = None) -> str:
    from biasatlas.report.cells import cell_text, display_text
    from biasatlas.report.table_data import display_text as short

    if p_value:  # the one p format of every display (3 significant digits, a floor, never "0")
        text = display_text(value, True)
        if text is not None and text != cell_text(value):
            # the floor as math ("$<1e-300$"), not the text-mode "\textless{}"
            return f"${text.replace(' ', '')}$" if text.startswith("< ") else escape(text)
    number = _number(value)
    if number is not None:
        return number
    text = cell_text(value)
    return "--" if text is None else escape(_breakable(short(text, names or {})))


def _spec(texts: list[str], numeric: bool) -> tuple[str, float]:
    """``r`` for numbers, ``l`` for short text, a wrapping ``p{}`` column (ragged right) for long text; with
    the column's estimated width in pt."""
    longest = max((len(t) for t in texts), default=0)
    if numeric:
        return "r", longest * CHAR_PT + PAD_PT
    if longest <= 24:
        return "l", longest * CHAR_PT + PAD_PT
    width = min(5.0, max(2.2, longest / 14))
    return f">{{\\raggedright\\arraybackslash}}p{{{width:.1f}cm}}", width * 28.45 + PAD_PT


def _head(name: str, heads: list[str]) -> str:
    """A split estimate column's header: ``low``, ``high``, ``n`` after the estimate's own."""
    from biasatlas.report.table_data import SPLIT

    for suffix, short in zip(SPLIT, ("low", "high", "n"), strict=True):
        if name.endswith(suffix) and name[: -len(suffix)] in heads:
            return short
    return name


def latex_table(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs table with a caption and ``\\label{label}`` that fits the text width of a plain article.

    Estimate cells become numeric columns (estimate, low, high, n), text columns of one value move into the
    caption, model ids show their short names; two-level columns get a header per model. The tabular is
    scaled down to the text width where it is wider, set in landscape where much wider, and cut into parts
    of ``PART_ROWS`` rows (one ``\\label``, on the first).
    """
    from biasatlas.report.cells import is_p_column
    from biasatlas.report.table_data import constant_columns, short_models, split_estimates

    split = split_estimates(frame)
    # numbers in their own columns where the table stays readable; a wide side-by-side table keeps one
    # "estimate [low, high] (n)" cell each (its CSV copy has the numeric columns)
    frame, constants = constant_columns(split if split.shape[1] <= SPLIT_COLUMNS else frame)
    columns = list(frame.columns)
    two_level = isinstance(frame.columns, pd.MultiIndex)
    raw = [str(c[-1]) if two_level else str(c) for c in columns]
    tops = [" · ".join(str(p) for p in c[:-1] if str(p)) for c in columns] if two_level else []
    texts = [str(v) for row in frame.itertuples(index=False, name=None) for v in row if isinstance(v, str)]
    names = short_models(texts + tops + [caption, constants])
    heads = [_head(h, raw) for h in raw]
    p_columns = [is_p_column(c) for c in columns]
    memo: dict[tuple[object, ...], str] = {}  # a side-by-side table repeats its values: each written once

    def cell(value: object, p_value: bool) -> str:
        try:
            key = (type(value), value, p_value)
            if key not in memo:
                memo[key] = _cell(value, p_value, names)
            return memo[key]
        except TypeError:  # an unhashable value
            return _cell(value, p_value, names)

    cells = [[cell(v, p_columns[i]) for i, v in enumerate(row)] for row in frame.itertuples(index=False, name=None)]
    specs, width = [], 0.0
    for i, column in enumerate(columns):
        series = frame[column]
        numeric = series.dtype.kind in "iuf" and not pd.api.types.is_bool_dtype(series)
        spec, pt = _spec([heads[i], *(r[i] for r in cells)], numeric)
        specs.append(spec)
        width += pt
    head_lines = [r"\toprule"]
    if two_level:
        head_lines += _model_header([display_text_of(t, names) for t in tops])
    head_lines += [" & ".join(escape(h) for h in heads) + r" \\", r"\midrule"]
    body = [" & ".join(row) + r" \\" for row in cells]
    spec = "".join(specs) or "l"
    text = caption + (f" {constants}" if constants else "")
    parts = [body[i:i + PART_ROWS] for i in range(0, len(body), PART_ROWS)] or [[]]
    wide = width > LANDSCAPE * TEXT_WIDTH_PT
    out = [PREAMBLE]
    for k, part in enumerate(parts):
        cap = escape(display_text_of(text, names))
        if len(parts) > 1:
            cap += f" (part {k + 1} of {len(parts)})"
        out.append(("\\begin{landscape}\n" if wide else "") + "\\begin{table}[htbp]\n\\centering\n\\small\n"
                   + f"\\caption{{{cap}}}" + (f"\\label{{{label}}}" if k == 0 else "") + "\n"
                   # scaled to the text width only where it is wider (box 0: TeX's scratch box)
                   + f"\\sbox0{{\\begin{{tabular}}{{{spec}}}\n" + "\n".join([*head_lines, *part, r"\bottomrule"])
                   + "\n\\end{tabular}}%\n\\ifdim\\wd0>\\linewidth\\resizebox{\\linewidth}{!}{\\usebox0}"
                   + "\\else\\usebox0\\fi\n\\end{table}\n" + ("\\end{landscape}\n" if wide else ""))
    return "".join(out)


def display_text_of(text: str, names: dict[str, str]) -> str:
    """``text`` with the model ids of ``names`` shortened (see report.table_data)."""
    from biasatlas.report.table_data import display_text

    return display_text(text, names)


def _model_header(tops: list[str]) -> list[str]:
    """The header line of two-level columns: each model over its columns, with a rule under it."""
    groups: list[tuple[str, int]] = []
    for top in tops:
        if groups and groups[-1][0] == top:
            groups[-1] = (top, groups[-1][1] + 1)
        else:
            groups.append((top, 1))
    parts, rules, start = [], [], 1
    for top, span in groups:
        parts.append(f"\\multicolumn{{{span}}}{{c}}{{{escape(top)}}}" if top else " & ".join([""] * span))
        if top:
            rules.append(f"\\cmidrule(lr){{{start}-{start + span - 1}}}")
        start += span
    return [" & ".join(parts) + r" \\", " ".join(rules)]


def label_for(stem: str) -> str:
    """A ``\\label`` key from a file's stem (``tab:03-02-contact-…``): letters, digits, '-' and ':' only."""
    return "tab:" + re.sub(r"[^A-Za-z0-9-]+", "-", stem).strip("-")
