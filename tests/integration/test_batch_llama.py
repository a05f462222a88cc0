"""Batch files end to end against a real llama.cpp server (llama-cpp-python's, the ``server`` extra).

``batch export`` of a contact plan -> every line answered by the server (a helper that POSTs each
body and writes the OpenAI Batch output format, as vLLM's ``run_batch`` would) -> ``batch import``:
nothing lost, nothing stored twice, and the summary equals that of a live run of the same plan.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import pytest

from biasatlas.store import Store

pytestmark = pytest.mark.slow

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
#: Prompts of the plan (whole contact sets of 3). The issue asks for 2,000; llama-cpp-python's server
#: spends ~0.5-0.7 CPU s per contact prompt here (measured: 150 prompts, choice mode 0.73 CPU s,
#: generate 0.52 CPU s each, under load), so 2,001 prompts answered twice (batch and live) would take
#: ~20 minutes of CI's 2 cores. CI runs 201; BIASATLAS_BATCH_PROMPTS=2001 runs the full plan.
PROMPTS = int(os.environ.get("BIASATLAS_BATCH_PROMPTS", "201"))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIASATLAS, *args], capture_output=True, text=True, timeout=900)


async def _answer_lines(root: str, lines: list[dict[str, Any]], concurrency: int) -> list[dict[str, Any]]:
    """POST every line's body to the server (root + the line's url), as a Batch runner would."""
    gate = asyncio.Semaphore(concurrency)
    timeout = aiohttp.ClientTimeout(total=300)

    async def one(session: aiohttp.ClientSession, line: dict[str, Any]) -> dict[str, Any]:
        async with gate, session.post(root + line["url"], json=line["body"]) as resp:
            body = await resp.json(content_type=None)
            return {"id": f"batch_req_{line['custom_id'][:8]}", "custom_id": line["custom_id"],
                    "response": {"status_code": resp.status, "request_id": "", "body": body}, "error": None}

    async with aiohttp.ClientSession(timeout=timeout) as session:
        return await asyncio.gather(*(one(session, line) for line in lines))


def answer_batch(base_url: str, inputs: list[Path], output: Path, concurrency: int = 8) -> int:
    """Answer every line of the Batch input files into one Batch output file; the number of lines."""
    root = base_url.removesuffix("/v1")
    lines = [json.loads(x) for path in inputs for x in path.read_text().splitlines()]
    results = asyncio.run(_answer_lines(root, lines, concurrency))
    output.write_text("".join(json.dumps(r) + "\n" for r in results))
    return len(results)


def summary(study: Path) -> dict[str, Any]:
    out = cli("summary", "--study", str(study), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["contact"]
    return {k: v for k, v in data.items() if k != "last_run"}  # run ids, dates and timings differ


def test_batch_export_llama_import_equals_a_live_run(tmp_path: Path) -> None:
    from biasatlas.backends.local import embedded_model_path

    server = _load("test_llama_cpp_http").llama_server
    plan = ["--limit", str(PROMPTS), "--mode", "choice", "--max-tokens", "4", "--http", "choice_method=first_token"]
    batch_study, live_study, files = tmp_path / "batch", tmp_path / "live", tmp_path / "files"
    with server(embedded_model_path()) as url:
        model = ["--model", "openai:smollm2", "--base-url", url]
        started = time.perf_counter()
        out = cli("batch", "export", "contact", "--study", str(batch_study), *model, "--out", str(files),
                  "--max-lines", "500", *plan)
        assert out.returncode == 0, out.stderr
        inputs = sorted(files.glob("*.jsonl"))
        exported = [json.loads(x)["custom_id"] for p in inputs for x in p.read_text().splitlines()]
        assert len(inputs) == -(-len(exported) // 500) and len(set(exported)) == len(exported)
        answered = answer_batch(url, inputs, tmp_path / "output.jsonl")
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
