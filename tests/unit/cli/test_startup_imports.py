"""The CLI starts light: importing its commands and every probe module loads no pandas, scipy, statsmodels,
pyarrow or torch (1.5-2 s and ~190 MB per command on this 2-core machine; they are imported where a command
needs them). A probe whose summary imported its analysis at module level made every CLI start that slow."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "scipy", "statsmodels", "pyarrow", "torch")


def test_cli_and_probe_modules_import_no_heavy_library() -> None:
    code = (
        "import sys, biasatlas.cli.main\n"
        "from biasatlas.probes import PROBE_MODULES, load_probe\n"
        "for name in PROBE_MODULES: load_probe(name)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
