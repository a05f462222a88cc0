"""Batch files end to end against a real llama.cpp server (llama-cpp-python's, the ``server`` extra).

``batch export`` of a contact plan -> every line answered by the server (a helper that POSTs each
body and writes the OpenAI Batch output format, as vLLM's ``run_batch`` would) -> ``batch import``:
nothing lost, nothing stored twice, and the summary equals that of a live run of the same plan.
The servers are the session's shared pair (tests/integration/conftest.py): the embedded SmolLM2 weights
as Q8_0, one thread each (faster here than Q4_1 on two: tests/integration/servers/llama.py); the Batch
lines are answered by both, and the live run asks both as a fleet (the same model: the same cache
keys). The 2,000-line plan through export and import is ``test_batch_2000.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from biasatlas.store import Store

pytestmark = pytest.mark.slow

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
#: Prompts of the plan (whole contact sets of 3), each answered twice (batch and live): CI runs 99 (201 until
#: the suite outgrew its budget; the round trip's checks need no more).
#: The 2,000-prompt round trip without a live run is test_batch_2000.py.
PROMPTS = int(os.environ.get("BIASATLAS_BATCH_PROMPTS", "99"))



def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIASATLAS, *args], capture_output=True, text=True, timeout=900)


def summary(study: Path) -> dict[str, Any]:
    out = cli("summary", "--study", str(study), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["contact"]
    return {k: v for k, v in data.items() if k != "last_run"}  # run ids, dates and timings differ


def test_batch_export_llama_import_equals_a_live_run(
    tmp_path: Path, llama_servers: ModuleType, llama_pair: Any
) -> None:
    llama = llama_servers
    plan = ["--limit", str(PROMPTS), "--mode", "choice", "--max-tokens", "4", "--http", "choice_method=first_token"]
    batch_study, live_study, files = tmp_path / "batch", tmp_path / "live", tmp_path / "files"
    # the session's two shared servers, as a fleet: the batch study and the live one name the same model
    model = ["--model", "openai:smollm2", "--fleet", "llama-pair"]
    for url in llama_pair.urls:
        model += ["--base-url", url]
    started = time.perf_counter()
    out = cli("batch", "export", "contact", "--study", str(batch_study), *model, "--out", str(files),
              "--max-lines", "40", *plan)  # 3 files
    assert out.returncode == 0, out.stderr
    inputs = sorted(files.glob("*.jsonl"))
    exported = [json.loads(x)["custom_id"] for p in inputs for x in p.read_text().splitlines()]
    assert len(inputs) == -(-len(exported) // 40) > 1 and len(set(exported)) == len(exported)
    # a Batch runner may spread the lines over several servers of the model: both shared ones answer
    answered = llama.answer_batch(llama_pair.urls, inputs, tmp_path / "output.jsonl")
    batch_s = time.perf_counter() - started
    out = cli("batch", "import", "--study", str(batch_study), str(tmp_path / "output.jsonl"), "--json")
    assert out.returncode == 0, out.stderr
    counts = json.loads(out.stdout)
    started = time.perf_counter()
    live = cli("run", "contact", "--study", str(live_study), *model, "--concurrency", "8", *plan)
    live_s = time.perf_counter() - started
    assert live.returncode == 0, live.stderr
    print(f"\n{PROMPTS} contact prompts, {len(exported)} batch lines: export + answers {batch_s:.0f} s, "
          f"live run {live_s:.0f} s")
    assert answered == len(exported)
    assert counts["answers"] == len(exported) and counts["errors"] == counts["unknown"] == 0
    assert counts["bad_lines"] == [] and counts["duplicates"] == counts["already"] == 0
    with Store(batch_study) as b, Store(live_study) as lv:
        frame_b, frame_l = b.frame("contact"), lv.frame("contact")
        stored = [r[0] for r in b.conn.execute("SELECT key FROM responses")]
        assert b.error_count() == 0
    assert len(frame_b) == PROMPTS and (frame_b["status"] == "answered").all()  # 0 lost
    assert len(stored) == len(set(stored)) == len(exported)  # 0 duplicated
    assert set(frame_b["key"]) == set(frame_l["key"])  # the same cache keys as the live run
    assert summary(batch_study) == summary(live_study)
    again = cli("batch", "import", "--study", str(batch_study), str(tmp_path / "output.jsonl"), "--json")
    assert json.loads(again.stdout)["already"] == len(exported)  # idempotent
