"""The headline lines a researcher reads first: per probe x model x language, the group disparity, the probe's
own headline test, and one sentence saying what is significant (the headline, or a cell of the tables below).

``summary`` prints them before any table; ``audit`` ends with them. Every number comes from the probes'
statistics rows (the rows the export and the report's overview read); nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

Row = dict[str, Any]
#: the factors that name a headline's cell (one block of lines each)
CELL = ("model", "mode", "language")
#: flags under which a row's p and interval are not a finding (stats.quality.Quality.blocks_interval)
BLOCKING = ("not_tested", "too_few_units", "not_fitted", "not_converged")
#: the corrections as the tables name them
CORRECTIONS = {"bh": "BH", "by": "BY", "bonferroni": "Bonferroni", "holm": "Holm", "none": "raw p"}


def _missing(value: Any) -> bool:
    return value is None or value != value


def _blocked(row: Row) -> bool:
    return any(code in str(row.get("flags") or "") for code in BLOCKING)


def _cell(row: Row) -> tuple[str, ...]:
    return tuple("" if _missing(row.get(k)) else str(row.get(k)) for k in CELL)


def _scale(row: Row) -> tuple[float, str]:
    """Shares in percentage points (as the group-disparity lines); other estimates as they are."""
    estimand = str(row.get("estimand") or "")
    return (100.0, " pp") if "proportion" in estimand or "share" in estimand else (1.0, "")


def _num(value: Any, scale: float = 1.0, sign: bool = True) -> str:
    if _missing(value):
        return "–"
    number = scale * float(value)
    return f"{number:+.1f}" if scale != 1.0 else (f"{number:+.3g}" if sign else f"{number:.3g}")


def headline_text(row: Row) -> str:
    """One probe headline test in words: what it compares, its estimate [CI], n, the adjusted p and flags."""
    from biasatlas.report.cells import format_p

    scale, unit = _scale(row)
    what = str(row.get("comparison") or row.get("group") or row.get("test"))
    where = ", ".join(str(row[k]) for k in ("scale", "category") if row.get(k))
    what += f" ({where})" if where else ""
    interval = "" if _blocked(row) or _missing(row.get("ci_low")) else (
        f" [{_num(row.get('ci_low'), scale)}, {_num(row.get('ci_high'), scale)}]")
    flags = f" ⚑ {row['flags']}" if row.get("flags") else ""
    correction = f" ({CORRECTIONS.get(str(row['correction']), row['correction'])})" if row.get("correction") else ""
    return (f"{what}: {_num(row.get('estimate'), scale)}{unit}{interval}, n {row.get('n')}, "
            f"p adj {format_p(row.get('p_adj'))}{correction}{flags} — {row.get('test')}")


def verdict_sentence(headlines: Sequence[Row], others: Sequence[Row]) -> str:
    """The one plain sentence under a cell's headline: significant or not, joined with what the tables show."""
    from biasatlas.report.cells import format_p

    found = [r for r in others if r.get("significant") and not _blocked(r) and not _missing(r.get("p_adj"))]
    found.sort(key=lambda r: float(r["p_adj"]))
    if any(r.get("significant") and not _blocked(r) for r in headlines):
        return "The headline test is significant" + (f"; so are {len(found)} more tests below." if found else ".")
    if headlines and all(_blocked(r) for r in headlines):
        head = f"Not a finding (⚑ {headlines[0].get('flags')}: the test could not decide)"
    else:
        head = "Not significant" if headlines else "No headline test"
    mdes = [r for r in headlines if not _missing(r.get("mde"))]
    if mdes:
        scale, unit = _scale(mdes[0])
        head += f" (smallest effect detectable at 80% power: ±{abs(scale * float(mdes[0]['mde'])):.3g}{unit})"
    elif headlines and headlines[0].get("mde_note"):
        head += f" (no detectable effect to state: {headlines[0]['mde_note']})"
    if not found:
        return f"{head}; no other test in the tables below is significant either."
    first = found[0]
    where = " ".join(str(first[k]) for k in ("comparison", "measure", "scale", "group") if first.get(k))
    return (f"{head}; but {len(found)} other test{'s' if len(found) > 1 else ''} below "
            f"{'are' if len(found) > 1 else 'is'} (p adj < {first.get('alpha') or 0.05:g}), the smallest "
            f"p adj {format_p(first['p_adj'])}: {where}, {first.get('test')}.")


def headline_blocks(name: str, title: str, statistics: Iterable[Row], constant: dict[str, str]
                    ) -> list[tuple[str, list[str]]]:
    """Per model x mode x language of one probe: the block's label and its lines (see the module)."""
    from biasatlas.tidy.disparity import SOURCE, headline_lines

    rows = list(statistics)
    group_all: dict[tuple[str, ...], list[str]] = {}
    for r, text in headline_lines(rows):
        group_all.setdefault(_cell(r), []).append(text)
    cells = list(dict.fromkeys([*group_all, *(_cell(r) for r in rows if r.get("headline"))]))
    blocks = []
    for cell in cells:
        label = " · ".join(v for k, v in zip(CELL, cell, strict=True) if v and constant.get(k) != v)
        heads = [r for r in rows if r.get("headline") and _cell(r) == cell]
        others = [r for r in rows if _cell(r) == cell and not r.get("headline") and r.get("source") != SOURCE]
        lines = [f"group disparity: {text}" for text in group_all.get(cell, [])]
        for r in heads:
            lines.append(f"headline: {headline_text(r)}")
            lines += [f"⚑ {note}" for note in str(r.get("flag_notes") or "").split(" | ") if note]
        if heads:
            lines.append(verdict_sentence(heads, others))
        blocks.append((f"{title}" + (f" · {label}" if label else ""), lines))
    return blocks


def print_headlines(result: dict[str, dict[str, Any]], console: Console, constant: dict[str, str]) -> int:
    """The headline block of every probe of ``result`` (probe name -> its summary); the lines printed."""
    from biasatlas.probes import load_probe

    printed = 0
    for name, data in result.items():
        for label, lines in headline_blocks(name, load_probe(name).title, data.get("statistics") or [], constant):
            if not lines:
                continue
            console.print(Text(label, style="bold"))
            for line in lines:
                print_indented(line, console)
            printed += 1
    return printed


def print_indented(line: str, console: Console, indent: int = 2) -> None:
    """``line`` wrapped at the console's width (at spaces: a number is never split), each line indented."""
    for part in Text(line).wrap(console, max(20, console.width - indent)):
        console.print(Text(" " * indent) + part, no_wrap=True, overflow="ignore", crop=False)


def title_line(study: Any, constant: dict[str, str]) -> str:
    """The summary's first line: the study and the factors it holds one value of (never repeated below)."""
    factors = " · ".join(f"{k} {v}" for k, v in constant.items())
    return f"Study {study}" + (f" — {factors}" if factors else "")


def next_steps(study: Any, report: Any = None) -> list[str]:
    """What to do next: the summary's command, then the report (``report``: its file, once written)."""
    import shlex

    quoted = shlex.quote(str(study))
    page = shlex.quote(str(report if report is not None else f"{study}/report.html"))
    make = "" if report is not None else f"biasatlas report --study {quoted}, then "
    return [f"next: biasatlas summary --study {quoted}   (every table, with n and intervals)",
            f"      {make}open {page}"]
