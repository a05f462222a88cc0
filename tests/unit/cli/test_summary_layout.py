"""`summary` at 80 columns: the headline first, every line within 80 characters, no number cut, one title."""

from __future__ import annotations

import io
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.terminal import FitTable, WrappingConsole

runner = CliRunner()


def _check_80(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines, text
    too_long = [line for line in lines if cell_len(line.rstrip()) > 80]
    assert not too_long, "\n".join(too_long)
    assert "…" not in text  # rich's mark of a cut cell
    return lines


def test_a_two_model_summary_fits_80_columns_with_the_headline_first(tmp_path: Path) -> None:
    for model in ("fake:a", "fake:b?biased=Muslims"):
        result = runner.invoke(app, ["run", "contact", "--model", model, "--lang", "de", "--axis", "religion",
                                     "--limit", "84", "--no-progress", "--study", str(tmp_path)])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["summary", "--study", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = _check_80(result.stdout)
    # the constant factors once, in the title; the headline within the first 10 lines
    title = " ".join(" ".join(lines[:2]).split())
    assert lines[0].startswith("Study ") and "mode choice · language de" in title
    assert any(line.startswith("  headline: ") for line in lines[:10]), "\n".join(lines[:12])
    assert any(line.startswith("  group disparity: ") for line in lines[:10])
    first_table = next(i for i, line in enumerate(lines) if line.startswith("─"))
    assert first_table > 3 and any("Not significant" in line or "significant" in line for line in lines[:first_table])
    # no table repeats a column that is constant in the study
    header_lines = [line for line in lines if line.lstrip().startswith("model ")]
    assert header_lines and not any(" mode " in line or " lang " in line for line in header_lines)
    assert "paper 001" not in result.stdout and "Raj et al., 2024" in result.stdout  # author–year names


def test_a_wide_table_folds_or_goes_row_by_row_and_never_cuts_a_number() -> None:
    numbers = ["0.0123", "[-11.4, +11.4]", "3.6e-05", "51.9 [45.2, 58.6]", "1.75e-14 *", "210"]
    rows = [[f"model-{i}", "positive vs none", *numbers] for i in range(3)]
    table = FitTable("Wide", ["model", "comparison", "p", "95% CI", "p adj", "biased %", "q", "n"], rows,
                     text=frozenset({"model", "comparison"}))
    for width in (40, 60, 80, 200):
        out = io.StringIO()
        Console(file=out, width=width).print(table)
        text = out.getvalue()
        assert all(cell_len(line.rstrip()) <= width for line in text.splitlines()), text
        assert all(number in text for number in numbers) and "…" not in text


def test_any_rich_table_a_probe_prints_is_fitted_and_names_papers_author_year() -> None:
    from rich.table import Table

    table = Table(title="Adherence (paper 001 Table 3)")
    for column in ("model", "mode", "group", "n", "mean [95% CI]", "p adj (BH)"):
        table.add_column(column, justify="left" if column in ("model", "mode", "group") else "right")
    for group in ("Muslims", "Jehovah's Witnesses"):
        table.add_row("local:smollm2@b179c9523d0e", "choice", group, "210", "0.512 [0.431, 0.593]", "2e-33 *")
    out = io.StringIO()
    WrappingConsole(file=out, width=80).print(table)
    text = out.getvalue()
    _check_80(text)
    title = " ".join(" ".join(text.splitlines()[:3]).split())
    assert "Raj et al., 2024, Table 3" in title and "model local:smollm2@b179c9523d0e · mode choice" in title
    rows = [line for line in text.splitlines() if " 210 " in line]
    assert len(rows) == 2 and all("0.512 [0.431, 0.593]" in r and "2e-33 *" in r and "choice" not in r for r in rows)
