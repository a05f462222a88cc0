"""An audit with no fakes: the embedded SmolLM2 (local) and a real llama.cpp server serving the same weights
(the session's shared server), x contact, samaritan and leakage x English and German (leakage has no German:
left out), tiny limits, into one study and one report; the same file again asks nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from biasatlas.audit import display_names
from biasatlas.store import Store

pytestmark = pytest.mark.slow

BIASATLAS = str(Path(sys.executable).with_name("biasatlas"))
SERVED = "smollm2"  # the name the session's shared llama.cpp servers answer to


def audit_file(folder: Path, url: str) -> Path:
    data: dict[str, Any] = {
        "title": "SmolLM2 two ways",
        "models": [
            {"name": "SmolLM2 (transformers)", "model": "smollm2"},
            {"name": "SmolLM2 (llama.cpp)", "model": f"openai:{SERVED}", "base_url": url, "concurrency": 2,
             "http": {"price_prompt": 0.1, "price_completion": 0.4}},
        ],
        "probes": {
            "contact": {"axes": ["religion"], "limit": 3},
            "samaritan": {"categories": ["age"], "limit": 4, "max_tokens": 8},
            "leakage": {"limit": 2},
        },
        "languages": ["en", "de"],
    }
    path = folder / "audit.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIASATLAS, *args], capture_output=True, text=True, timeout=900)


def test_two_models_three_probes_two_languages(llama_url: str, tmp_path: Path) -> None:
    served = llama_url
    path = audit_file(tmp_path, served)
    study = tmp_path / "study"
    cells = [("contact", "en"), ("contact", "de"), ("samaritan", "en"), ("samaritan", "de"), ("leakage", "en")]

    plan = cli("audit", str(path), "--study", str(study), "--plan-only", "--json")
    assert plan.returncode == 0, plan.stderr
    before = json.loads(plan.stdout)
    assert not study.exists()
    assert [(c["probe"], c["language"]) for c in before["cells"]] == cells * 2
    assert all(c["cached"] == 0 and c["to_ask"] == c["requests"] > 0 for c in before["cells"])
    served_cells = [c for c in before["cells"] if c["model"] == "SmolLM2 (llama.cpp)"]
    assert all(c["cost_usd"] > 0 for c in served_cells)
    assert "leakage has no data in de: those cells are left out" in before["notes"]

    run = cli("audit", str(path), "--study", str(study))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr

    report = (study / "report.html").read_text(encoding="utf-8")
    with Store(study) as store:
        names = display_names(store)
        runs = store.runs()
        frames = {probe: store.frame(probe) for probe in ("contact", "samaritan", "leakage")}
    assert sorted(names.values()) == ["SmolLM2 (llama.cpp)", "SmolLM2 (transformers)"]
    local_id = next(i for i, n in names.items() if n == "SmolLM2 (transformers)")
    served_id = next(i for i, n in names.items() if n == "SmolLM2 (llama.cpp)")
    assert local_id.startswith("local:smollm2@") and served_id.startswith(f"openai:{SERVED}@{served}")
    assert len(runs) == 10
    for probe, frame in frames.items():
        assert set(frame["model_id"]) == {local_id, served_id}, probe  # both models answered every probe
        assert set(frame["model"]) == set(names.values()), probe  # shown by their display names
        assert (frame["status"] == "answered").all(), probe
    assert set(frames["contact"]["language"]) == {"en", "de"} == set(frames["samaritan"]["language"])
    assert local_id in report and served_id in report  # both models in the one report (runs table)
    assert "SmolLM2 (llama.cpp)" in report and "SmolLM2 (transformers)" in report

    again = cli("audit", str(path), "--study", str(study), "--plan-only", "--json")
    assert again.returncode == 0, again.stderr
    after = json.loads(again.stdout)
    assert all(c["to_ask"] == 0 and c["cached"] == c["requests"] for c in after["cells"])
    assert all(c["seconds"] == 0 for c in after["cells"])  # the measured pace is known, nothing left to ask
