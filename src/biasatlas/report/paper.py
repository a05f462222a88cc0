"""The paper set of a report: a short LaTeX document of its main tables, and a BibTeX file of its references.

``report_files/paper.tex`` inputs each section's first table that fits one page (the headline tests, the
validity table, each probe's main table) into a plain ``article``; ``references.bib`` holds every reference
the report cites.
Both compile with pdflatex and bibtex as they are: ``pdflatex paper && bibtex paper && pdflatex paper``.
"""

from __future__ import annotations

from pathlib import Path

from biasatlas.report.citations import bibtex
from biasatlas.report.latex import escape

DOCUMENT = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs,array,graphicx,pdflscape}
\title{%s}
\date{}
\begin{document}
\maketitle
%s
\nocite{*}
\bibliographystyle{plain}
\bibliography{references}
\end{document}
"""


def write_paper(directory: Path, stems: list[str], title: str) -> list[Path]:
    """Write ``paper.tex`` (the tables ``stems``, in order) and ``references.bib`` into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    bib = directory / "references.bib"
    bib.write_text(bibtex(), encoding="utf-8")
    paper = directory / "paper.tex"
    body = "\n".join(f"\\input{{{stem}.tex}}\n\\clearpage" for stem in stems)
    paper.write_text(DOCUMENT % (escape(title), body), encoding="utf-8")
    return [paper, bib]
