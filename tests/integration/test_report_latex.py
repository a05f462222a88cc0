"""Every LaTeX table of a built report compiles with pdflatex as it is (issue 28).

pdflatex comes from Debian's texlive-latex-base and texlive-latex-recommended (scripts/setup.sh --dev); in
CI a missing pdflatex fails the test. The study's answers hold what breaks LaTeX: TeX specials, Δ − × ±,
a bare '<', CJK text, control characters, 300-character answers.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.report.build import build_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

ANSWERS = [
    "Yes.", "No & never_ever 100% {really} $5 #1 ~^\\", "Δ − × ± ≥ < > | 汉字 🙂\x00",
    "Absolutely not. " * 20, "I can't answer that.\n\nIt depends.", "„Ja“ – Þú ert á Íslandi…",
]
RATINGS = ["I'd say 70.", "80", "About 60-70 & more.", "<b>55</b> Δ", "No idea."]

DOCUMENT = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs,array,longtable}
\usepackage[a4paper,margin=1cm,landscape]{geometry}
\begin{document}
%s
\end{document}
"""


@pytest.mark.slow
def test_every_tex_of_a_report_compiles_with_pdflatex(tmp_path: Path) -> None:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs pdflatex (scripts/setup.sh --dev installs texlive-latex-base/-recommended)")
        pytest.skip("pdflatex not installed")
    rng = random.Random(5)
    study = tmp_path / "study"
    with Store(study) as store:
        for model in ("alpha", "beta"):
            contact = load_probe("contact")
            prompts = contact.plan(contact.config(languages=["en", "de"], axes=["religion"], limit=40))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(ANSWERS), name=model), store,
                     GenerationSettings(mode="generate"), progress=False)
            samaritan = load_probe("samaritan")
            prompts = samaritan.plan(samaritan.config(languages=["en"], categories=["gender"], limit=20))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(RATINGS), name=model), store,
                     GenerationSettings(mode="generate"), progress=False)
        build_report(store, study)
    files = sorted((study / "report_files").glob("*.tex"))
    assert len(files) > 10
    labels = [f.read_text(encoding="utf-8").count("\\label{") for f in files]
    assert labels == [1] * len(files)
    # one document inputs every table: one pdflatex run, and an error names the file it is in
    body = "\n\\clearpage\n".join(f"\\input{{{f.name}}}" for f in files)
    (study / "report_files" / "all.tex").write_text(DOCUMENT % body, encoding="utf-8")
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "all.tex"],
                          cwd=study / "report_files", capture_output=True, text=True, timeout=120)
    log = done.stdout
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert done.returncode == 0 and errors == [], log[-3000:]
    assert "Missing character" not in (study / "report_files" / "all.log").read_text(errors="replace")
