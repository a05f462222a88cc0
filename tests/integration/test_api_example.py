"""The example of docs/api.md runs as written, on the embedded model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _example_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/api.md has no python example"
    return "\n".join(blocks)


@pytest.mark.slow
def test_api_example_runs(tmp_path: Path) -> None:
    namespace: dict[str, object] = {"study_dir": str(tmp_path / "api-demo")}
    exec(compile(_example_code(), str(DOC), "exec"), namespace)
    assert (tmp_path / "api-demo" / "report.html").exists()
    assert (tmp_path / "api-demo" / "biasatlas.db").exists()


def test_api_exports() -> None:
    import biasatlas

    assert set(biasatlas.__all__) >= {"plan", "run", "open_study", "Study", "probe_names", "__version__"}
    assert "contact" in biasatlas.probe_names()
    import biasatlas.probes.stories.harm  # the subpackage is not shadowed
