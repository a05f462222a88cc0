"""The batch route on Ray Data (issue 31): a 2,000-line contact export answered by `batch run --engine ray`.

A local Ray with 2 workers, two stub servers (tests/integration/servers/openai_stub.py, answers derived
from the prompt) as the study's fleet. The first `batch run` is killed mid-way (its servers answer
slowly, and fail 5% of the attempts, so the actors retry); the rerun asks only what the output lacks;
every line is then answered exactly once in the output files; `batch import` stores them, and the
study equals a live run of the same plan on the same fleet (the same keys, the same answers).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from biasatlas.store import Store

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="the [ray] extra (scripts/setup.sh --dev installs it)")

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
PROMPTS = int(os.environ.get("BIASATLAS_RAY_PROMPTS", "2001"))
PLAN = ["--limit", str(PROMPTS), "--mode", "choice", "--max-tokens", "4", "--http", "choice_method=first_token"]


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BIASATLAS, *args], capture_output=True, text=True, timeout=timeout)


def answered_lines(out: Path) -> Counter[str]:
    """custom_id -> how many answer lines (status 200) the output files hold for it."""
    seen: Counter[str] = Counter()
    for path in out.glob("*.jsonl"):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:  # the line the kill cut
                continue
            if (line.get("response") or {}).get("status_code") == 200:
                seen[line["custom_id"]] += 1
    return seen


def test_ray_batch_run_killed_and_rerun_equals_a_live_run(tmp_path: Path, openai_stub: ModuleType) -> None:
    study, live_study, files, out = (tmp_path / n for n in ("study", "live", "files", "answers"))
    fleet = ["--model", "openai:stub-model", "--fleet", "stubs"]
    slow = [openai_stub.start_stub("--delay", "0.03", "--faults", "0.05", "--seed", str(i)) for i in (1, 2)]
    fast = [openai_stub.start_stub() for _ in range(2)]
    try:
        model = fleet + [x for s in fast for x in ("--base-url", s.url)]
        exported = cli("batch", "export", "contact", "--study", str(study), *model, "--out", str(files),
                       "--max-lines", "500", *PLAN)
        assert exported.returncode == 0, exported.stderr
        ids = [json.loads(x)["custom_id"] for p in sorted(files.glob("*.jsonl")) for x in p.read_text().splitlines()]
        assert len(ids) == len(set(ids)) == PROMPTS

        # 1. killed mid-way: a new session, so the kill takes the driver and the Ray processes it started
        urls = [x for s in slow for x in ("--base-url", s.url)]
        job = subprocess.Popen([BIASATLAS, "batch", "run", "--engine", "ray", "--in", str(files), "--out", str(out),
                                *urls, "--actors", "2", "--concurrency", "8"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 240
        while len(answered_lines(out)) < PROMPTS // 4 and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.5)
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate(timeout=60)
        # Ray's own processes (raylet, GCS, workers) run in sessions of their own: a kill -9 of the driver
        # leaves them, as it would on a user's machine; `ray stop` is how a user ends them
        subprocess.run([str(Path(sys.executable).parent / "ray"), "stop", "--force"], capture_output=True, timeout=120)
        first = answered_lines(out)
        assert PROMPTS // 4 <= len(first) < PROMPTS, f"not killed mid-way: {len(first)} of {PROMPTS} answered"

        # 2. the rerun asks only the missing lines, on the fast servers
        started = time.perf_counter()
        rerun = cli("batch", "run", "--engine", "ray", "--in", str(files), "--out", str(out),
                    *(x for s in fast for x in ("--base-url", s.url)), "--actors", "2", "--json")
        ray_s = time.perf_counter() - started
        assert rerun.returncode == 0, rerun.stderr
        counts = json.loads(rerun.stdout[rerun.stdout.index("{"):])
        assert counts["skipped"] == len(first) and counts["answered"] == PROMPTS - len(first)
        assert counts["errors"] == counts["unreadable"] == 0 and counts["address"] == "local"
        every = answered_lines(out)
        assert set(every) == set(ids) and set(every.values()) == {1}  # every line answered exactly once
        assert sum(s.stats()["requests"] for s in fast) == PROMPTS - len(first)  # only the missing lines asked

        # 3. import: every prompt answered; the run record says the answers came through Ray
        imported = cli("batch", "import", "--study", str(study), *map(str, sorted(out.glob("*.jsonl"))), "--json")
        assert imported.returncode == 0, imported.stderr
        result = json.loads(imported.stdout[imported.stdout.index("{"):])
        assert result["answers"] == PROMPTS and result["unknown"] == 0
        assert result["via"] and result["via"][0]["engine"] == "ray"
        assert result["via"][0]["endpoints"] == [s.url for s in fast]

        # 4. a live run of the same plan on the same fleet: the same keys and the same answers
        started = time.perf_counter()
        live = cli("run", "contact", "--study", str(live_study), *model, "--concurrency", "16", *PLAN)
        live_s = time.perf_counter() - started
        assert live.returncode == 0, live.stderr
        with Store(study) as b, Store(live_study) as lv:
            runs = b.conn.execute("SELECT totals_json FROM runs").fetchall()
            frame_b, frame_l = b.frame("contact"), lv.frame("contact")
        via = [i.get("via") for r in runs for i in json.loads(r[0] or "{}").get("info", {}).get("imports", [])]
        assert any(v and v[0]["engine"] == "ray" for v in via)
        columns = ["key", "text", "option_probs"]
        merged = frame_b[columns].merge(frame_l[columns], on="key", suffixes=("_ray", "_live"))
        assert len(merged) == len(frame_b) == len(frame_l) == PROMPTS
        assert (merged["text_ray"] == merged["text_live"]).all()
        assert (merged["option_probs_ray"] == merged["option_probs_live"]).all()
        print(f"\nray rerun: {counts['answered']} lines in {ray_s:.1f} s ({counts['answered'] / ray_s:.0f} lines/s, "
              f"Ray start included); live run: {PROMPTS} prompts in {live_s:.1f} s; load {os.getloadavg()[0]:.1f}")
    finally:
        for server in slow + fast:
            server.stop()



def test_ray_batch_run_sigterm_is_one_line_exit_130_and_leaves_no_process(tmp_path: Path,
                                                                           openai_stub: ModuleType) -> None:
    """SIGTERM mid-job: the interrupted line with the resume command, exit 130; only the command's own lines on
    the terminal (Ray's banner and logs in ``ray.log``); no Ray process outlives the command."""
    import psutil

    files, out = tmp_path / "files", tmp_path / "answers"
    files.mkdir()
    (files / "batch-00001.jsonl").write_text("".join(
        json.dumps({"custom_id": f"k{i}", "method": "POST", "url": "/v1/chat/completions",
                    "body": {"model": "stub-model", "messages": [{"role": "user", "content": f"q{i}"}],
                             "max_tokens": 4}}) + "\n" for i in range(200)), encoding="utf-8")
    slow = openai_stub.start_stub("--delay", "0.2")
    try:
        started = time.perf_counter()
        job = subprocess.Popen([BIASATLAS, "batch", "run", "--engine", "ray", "--in", str(files), "--out", str(out),
                                "--base-url", slow.url, "--actors", "2", "--concurrency", "4"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        ray_processes: list[psutil.Process] = []
        while len(answered_lines(out)) < 8 and time.monotonic() < started + 240 and job.poll() is None:
            ray_processes = psutil.Process(job.pid).children(recursive=True) or ray_processes
            time.sleep(0.2)
        assert job.poll() is None, job.communicate()
        job.send_signal(signal.SIGTERM)
        _, stderr = job.communicate(timeout=60)
        seconds = time.perf_counter() - started
    finally:
        slow.stop()
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert job.returncode == 130, stderr
    assert lines and lines[-1].startswith("interrupted: ") and "Resume: biasatlas batch run --engine ray" in lines[-1]
    assert all(x.startswith(("ray: ", "interrupted: ")) for x in lines), stderr  # nothing of Ray's
    assert (out / "ray.log").stat().st_size > 0  # Ray's start and Ray Data's lines, in its log
    assert ray_processes, "Ray's processes were not seen"
    assert not [p for p in ray_processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    print(f"\nray SIGTERM: {len(answered_lines(out))} lines answered, ended in {seconds:.1f} s; "
          f"load {os.getloadavg()[0]:.1f}")
