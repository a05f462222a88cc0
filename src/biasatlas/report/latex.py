"""Report tables as LaTeX that compiles with pdflatex as it is: escaped text, booktabs, wrapping columns, labels.

A file needs ``\\usepackage[T1]{fontenc}``, ``booktabs``, ``array`` and (tables over ``LONG_ROWS`` rows)
``longtable`` in the paper's preamble; every file says so in its first line. Text is escaped for pdflatex:
TeX's special characters become their macros, mathematical signs (Δ − × ± ≤ …) math-mode macros, and a
character pdflatex's T1/TS1 encodings cannot typeset (e.g. CJK text in a model's answer) a ``?`` — the
CSV copy keeps the text whole.
"""

from __future__ import annotations

import re
import unicodedata

import pandas as pd

#: tables with more rows than this are a ``longtable`` (a float cannot break across pages)
LONG_ROWS = 40

PREAMBLE = "% needs \\usepackage[T1]{fontenc}, booktabs, array and longtable\n"

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
    "\u00a0": "~", "«": r"\guillemotleft{}", "»": r"\guillemotright{}", "©": r"\textcopyright{}",
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
        if char in _ASCII:
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
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"${value}$" if value < 0 else str(value)
    if isinstance(value, float):
        if value != value:
            return "--"
        text = f"{value:.4g}"
        return f"${text}$" if value < 0 or "e" in text else text
    return None


def _cell(value: object, p_value: bool = False) -> str:
    from biasatlas.report.cells import cell_text, display_text

    if p_value:  # the one p format of every display (3 significant digits, a floor, never "0")
        text = display_text(value, True)
        if text is not None and text != cell_text(value):
            return f"${text.replace('< ', '<')}$" if "e" in text else text
    number = _number(value)
    if number is not None:
        return number
    text = cell_text(value)
    return "--" if text is None else escape(text)


def _spec(texts: list[str], numeric: bool) -> str:
    """``r`` for numbers, ``l`` for short text, a wrapping ``p{}`` column (ragged right) for long text."""
    if numeric:
        return "r"
    longest = max((len(t) for t in texts), default=0)
    if longest <= 24:
        return "l"
    width = min(7.0, max(2.2, longest / 14))
    return f">{{\\raggedright\\arraybackslash}}p{{{width:.1f}cm}}"


def latex_table(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs table with a caption and ``\\label{label}``; two-level columns get a header per model."""
    columns = list(frame.columns)
    two_level = isinstance(frame.columns, pd.MultiIndex)
    heads = [str(c[-1]) if two_level else str(c) for c in columns]
    from biasatlas.report.cells import is_p_column

    p_columns = [is_p_column(c) for c in columns]
    cells = [[_cell(v, p_columns[i]) for i, v in enumerate(row)] for row in frame.itertuples(index=False, name=None)]
    specs = []
    for i, column in enumerate(columns):
        series = frame[column]
        numeric = series.dtype.kind in "iuf" and not pd.api.types.is_bool_dtype(series)
        specs.append(_spec([heads[i], *(r[i] for r in cells)] if not numeric else [], numeric))
    lines = [r"\toprule"]
    if two_level:
        groups: list[tuple[str, int]] = []
        for column in columns:
            top = " · ".join(str(p) for p in column[:-1] if str(p))
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
        lines += [" & ".join(parts) + r" \\", " ".join(rules)]
    lines += [" & ".join(escape(h) for h in heads) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in cells]
    lines.append(r"\bottomrule")
    cap = f"\\caption{{{escape(caption)}}}\\label{{{label}}}"
    spec = "".join(specs) or "l"
    if len(cells) > LONG_ROWS:
        return (f"{PREAMBLE}\\begin{{longtable}}{{{spec}}}\n{cap}\\\\\n" + "\n".join(lines)
                + "\n\\end{longtable}\n")
    return (f"{PREAMBLE}\\begin{{table}}[ht]\n\\centering\n\\small\n{cap}\n\\begin{{tabular}}{{{spec}}}\n"
            + "\n".join(lines) + "\n\\end{tabular}\n\\end{table}\n")


def label_for(stem: str) -> str:
    """A ``\\label`` key from a file's stem (``tab:03-02-contact-…``): letters, digits, '-' and ':' only."""
    return "tab:" + re.sub(r"[^A-Za-z0-9-]+", "-", stem).strip("-")
