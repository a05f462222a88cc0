"""An archived (read-only) study can be summarised and reported, as a user who cannot write to it.

As root, chmod does not stop writes, so the commands run as `nobody` through util-linux's setpriv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store

BIASATLAS = str(Path(sys.executable).with_name("biasatlas"))


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user can read (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="biasatlas-ro-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot act as a user without write access")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BIASATLAS, *args]
    else:
        command = [BIASATLAS, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd="/",
                          env={**os.environ, "HOME": "/tmp", "COLUMNS": "300"})


@pytest.mark.slow
def test_summary_and_report_of_a_read_only_study(shared_dir: Path) -> None:
    study = shared_dir / "study"
    probe = load_probe("contact")
    prompts = probe.plan(probe.config(languages=["de"], axes=["religion"], limit=30))
    with Store(study) as store:
        run_plan(prompts, FakeBackend(lambda r: "Ja.", name="m"), store, GenerationSettings(mode="generate"),
                 progress=False)
    for path in [study, *study.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o444)
    if os.geteuid() != 0:
        study.chmod(0o555)
    before = sorted(p.name for p in study.iterdir())
    out_dir = shared_dir / "out"
    out_dir.mkdir()
    out_dir.chmod(0o777)

    summary = _as_nobody("summary", "--study", str(study), "--json")
    assert summary.returncode == 0, summary.stderr
    assert '"contact"' in summary.stdout
    report = _as_nobody("report", "--study", str(study), "--out", str(out_dir / "r.html"))
    assert report.returncode == 0, report.stderr
    assert (out_dir / "r.html").stat().st_size > 0
    refused = _as_nobody("report", "--study", str(study))  # into the read-only study: one line, exit 2
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert sorted(p.name for p in study.iterdir()) == before  # nothing written into the study
