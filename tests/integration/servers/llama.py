"""llama.cpp for the slow tests: llama-cpp-python's OpenAI-compatible server, and a Batch runner over it.

* :func:`requantized` writes the embedded SmolLM2 weights (Q4_1) in another GGUF type. Q8_0 (or F16)
  answers a contact prompt in ~0.31 CPU s on this project's machine where Q4_1 takes ~0.45: llama.cpp
  multiplies Q8_0/F16 matrices with its blocked kernels (llamafile sgemm) when it evaluates a prompt,
  Q4_1 one row at a time.
* :func:`llama_server` starts one server; :func:`llama_fleet` several, all serving the same file.
  One thread each by default: on 2 shared cores llama.cpp's two OpenMP threads wait for each other
  whenever another process runs (measured 1.46 CPU s per prompt at load 3-4, against 0.48 with one
  thread), and two one-thread servers keep both cores busy while each runs its Python part.
* :func:`answer_batch` answers OpenAI Batch input lines the way vLLM's ``run_batch`` does: it POSTs each
  line's ``body`` unchanged and writes one Batch output line per request.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp

#: llama.cpp's file types (llama_ftype) by name
FTYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7}
START_S = 180


def requantized(out_dir: Path, ftype: str = "q8_0") -> Path:
    """The embedded SmolLM2 weights written as ``ftype`` (a GGUF in ``out_dir``, made once)."""
    import llama_cpp

    from biasatlas.backends.local import embedded_model_path

    out = out_dir / f"smollm2-{ftype}.gguf"
    if not out.exists():
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = FTYPES[ftype]
        params.allow_requantize = True  # the source is quantized already (Q4_1)
        params.nthread = 2
        if llama_cpp.llama_model_quantize(str(embedded_model_path()).encode(), str(out).encode(), params) != 0:
            raise RuntimeError(f"llama_model_quantize failed to write {out}")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@contextmanager
def _started(model: Path, alias: str, threads: int, n_ctx: int) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    if importlib.util.find_spec("llama_cpp") is None:  # fail, not skip: CI must run these tests
        raise RuntimeError("llama-cpp-python is not installed: pip install -e '.[server]'")
    port = _free_port()
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log"
    args = ["--model", str(model), "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads)]
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", *args], stdout=log, stderr=subprocess.STDOUT)
        try:
            yield proc, f"http://127.0.0.1:{port}/v1", log_path
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Fleet(NamedTuple):
    """Running servers: their base URLs, process ids, processes and log files."""

    urls: list[str]
    pids: list[int]
    procs: Sequence[subprocess.Popen[bytes]] = ()
    logs: Sequence[Path] = ()

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the servers have used so far (Linux /proc)."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / tick

    def dead(self) -> str | None:
        """One line for the first server that has exited (how, after how many requests, its log), else None."""
        for proc, log in zip(self.procs, self.logs, strict=True):
            if proc.poll() is not None:
                return exit_line(proc.returncode, log)
        return None


def requests_served(log: Path) -> int:
    """The model requests (POST) a server answered or took, from uvicorn's access lines in its log."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return 0
    return len(re.findall(r'"POST /v1/', text))


def exit_line(returncode: int, log: Path) -> str:
    """'the llama.cpp server exited with signal 11 after 12 answered requests: see its log at ...'."""
    how = f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
    if returncode < 0:
        with suppress(ValueError):  # a signal number Python does not name
            how += f" ({signal.Signals(-returncode).name})"
    served = requests_served(log)
    return f"the llama.cpp server exited with {how} after {served} answered requests: see its log at {log}"


@contextmanager
def llama_fleet(
    model: Path, size: int, alias: str = "smollm2", *, threads: int = 1, n_ctx: int = 1024
) -> Iterator[Fleet]:
    """``size`` servers of ``model`` on free ports, started together.

    ``n_ctx`` bounds the prompt and answer; it also sizes the server's logits array
    (``n_ctx`` x 49,152 floats: 200 MB at 1024), which the logprobs need.
    """
    with ExitStack() as stack:
        servers = [stack.enter_context(_started(model, alias, threads, n_ctx)) for _ in range(size)]
        deadline = time.monotonic() + START_S
        waiting = list(servers)
        while waiting:
            proc, url, log_path = waiting[0]
            if proc.poll() is not None:
                raise RuntimeError(exit_line(proc.returncode, log_path) + " (before it was ready)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama.cpp server did not start within {START_S} s; see {log_path}")
            if _ready(url):
                waiting.pop(0)
            else:
                time.sleep(0.5)
        yield Fleet([url for _, url, _ in servers], [proc.pid for proc, _, _ in servers],
                    [proc for proc, _, _ in servers], [log for _, _, log in servers])


@contextmanager
def llama_server(model: Path, alias: str = "smollm2", *, threads: int = 1, n_ctx: int = 1024) -> Iterator[str]:
    """One llama.cpp server for ``model`` on a free port: its base URL."""
    with llama_fleet(model, 1, alias, threads=threads, n_ctx=n_ctx) as fleet:
        yield fleet.urls[0]


#: lines a server takes from the shared queue at a time: a server answering neighbouring lines
#: reuses their common prompt prefix (llama.cpp keeps the last prompt's KV cache)
CHUNK = 16


async def _answer(urls: Sequence[str], lines: Sequence[dict[str, Any]], per_server: int) -> list[dict[str, Any]]:
    """Every line answered once. Each server takes ``CHUNK`` lines at a time from one queue (so a fast
    server takes more) and has ``per_server`` requests in flight, so it never waits for the next one."""
    chunks: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue()
    for start in range(0, len(lines), CHUNK):
        chunks.put_nowait(list(lines[start : start + CHUNK]))
    results: list[dict[str, Any]] = []

    async def serve(session: aiohttp.ClientSession, root: str) -> None:
        mine: deque[dict[str, Any]] = deque()

        async def worker() -> None:
            while mine or not chunks.empty():
                if not mine:
                    mine.extend(chunks.get_nowait())
                line = mine.popleft()
                async with session.post(root + line["url"], json=line["body"]) as resp:
                    body = await resp.json(content_type=None)
                results.append({"id": f"batch_req_{line['custom_id'][:12]}", "custom_id": line["custom_id"],
                                "response": {"status_code": resp.status, "request_id": "", "body": body},
                                "error": None})

        await asyncio.gather(*(worker() for _ in range(per_server)))

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as session:
        await asyncio.gather(*(serve(session, url.removesuffix("/v1")) for url in urls))
    return results


def answer_lines(
    urls: Sequence[str], inputs: Sequence[Path], per_server: int = 2, *, by_prompt: bool = False
) -> list[dict[str, Any]]:
    """The Batch output lines for every line of the Batch input files, answered by the servers at ``urls``.

    ``by_prompt`` answers the lines in the order of their messages (a Batch runner may take any
    order): neighbours then share longer prompt prefixes, which llama.cpp does not evaluate again
    (37.6 new tokens per contact prompt instead of 42.6 in the plan's order).
    """
    lines = [json.loads(x) for path in inputs for x in path.read_text().splitlines() if x.strip()]
    if by_prompt:
        lines.sort(key=lambda line: json.dumps(line["body"].get("messages"), ensure_ascii=False))
    return asyncio.run(_answer(urls, lines, per_server))


def answer_batch(urls: str | Sequence[str], inputs: Sequence[Path], output: Path, per_server: int = 2) -> int:
    """Answer every line of the Batch input files (in their order) into one Batch output file; the number of lines."""
    results = answer_lines([urls] if isinstance(urls, str) else urls, inputs, per_server)
    output.write_text("".join(json.dumps(r) + "\n" for r in results))
    return len(results)
