"""`batch run --engine ray-vllm`: the lines handed to Ray Data's own vLLM stage on a GPU cluster.

``ray.data.llm.build_processor`` with a ``vLLMEngineProcessorConfig`` runs vLLM replicas inside the Ray
job (no server): each line's chat body becomes the stage's ``messages`` and ``sampling_params``, and
its generated text comes back as a chat-completion body in the Batch output format, which ``batch
import`` reads like any other. Only generate-mode lines can go this way: choice mode needs the
first token's ``top_logprobs`` in OpenAI's shape, which this stage does not return (use ``--engine
ray`` with vLLM servers for those). This route needs GPUs and ``ray[llm]`` with vLLM: the project's
CI has neither, so only the mapping below is tested (docs/scale.md says so).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from biasatlas.batch.ray_engine import RayRun, answered_ids
from biasatlas.batch.work import work_list

#: body fields that become vLLM sampling parameters (same names in vLLM's SamplingParams)
SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty")


def to_stage_row(line: dict[str, Any]) -> dict[str, Any]:
    """A batch input line as the vLLM stage's row: ``messages`` and ``sampling_params`` (ValueError if it can't be)."""
    body = line.get("body") or {}
    if body.get("logprobs") or body.get("top_logprobs"):
        raise ValueError(f"line {line.get('custom_id')}: choice-mode lines (log-probabilities) cannot go through "
                         "the vLLM stage; use --engine ray with vLLM's OpenAI-compatible servers")
    if body.get("response_format"):
        raise ValueError(f"line {line.get('custom_id')}: structured answers need a server: use --engine ray")
    sampling = {k: body[k] for k in SAMPLING_FIELDS if body.get(k) is not None}
    return {"custom_id": line["custom_id"], "model": body.get("model"), "messages": body["messages"],
            "sampling_params": sampling}


def to_output_line(row: dict[str, Any]) -> dict[str, Any]:
    """The stage's output row as a Batch output line holding a chat-completion body."""
    line_id = f"batch_req_{uuid.uuid4().hex}"
    body = {
        "id": line_id, "object": "chat.completion", "model": row.get("model"),
        "choices": [{"index": 0, "finish_reason": row.get("finish_reason") or "stop",
                     "message": {"role": "assistant", "content": row.get("generated_text") or ""}}],
        "usage": {"prompt_tokens": int(row.get("num_input_tokens") or 0),
                  "completion_tokens": int(row.get("num_generated_tokens") or 0)},
    }
    return {"id": line_id, "custom_id": row["custom_id"],
            "response": {"status_code": 200, "request_id": line_id, "body": body}, "error": None}


def run_vllm(inputs: list[Path], out: Path, model_source: str, *, address: str | None = None,
             replicas: int = 1, batch_size: int = 64) -> RayRun:
    """Answer the generate-mode lines of ``inputs`` not answered in ``out`` with Ray Data's vLLM stage."""
    try:
        import ray
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig
    except ImportError as exc:
        raise ImportError("--engine ray-vllm needs Ray Data's LLM stage and vLLM: pip install 'ray[llm]' "
                          f"on a GPU cluster ({exc})") from exc
    started = time.perf_counter()
    work = work_list(inputs, frozenset(answered_ids(out)))  # each request once (batch.work)
    todo = [{**to_stage_row(json.loads(item.text)), "also": item.row()["also"]} for item in work.items]
    run = RayRun(lines=work.lines, skipped=work.skipped, unreadable=len(work.unreadable),
                 duplicates=work.duplicates, shared=work.shared, conflicts=list(work.conflicts),
                 address=address or "local", endpoints=[f"vllm:{model_source}"], unreadable_lines=list(work.unreadable))
    if todo:
        from biasatlas.batch.ray_session import ray_session

        config = vLLMEngineProcessorConfig(model_source=model_source, concurrency=replicas, batch_size=batch_size)
        processor = build_processor(
            config,
            preprocess=lambda row: {"messages": row["messages"], "sampling_params": row["sampling_params"]},
            postprocess=lambda row: {**row},
        )
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"ray-vllm-{uuid.uuid4().hex[:12]}.jsonl"
        with ray_session(address, None, out), path.open("a", encoding="utf-8") as handle:
            for row in processor(ray.data.from_items(todo)).iter_rows():
                others = json.loads(str(row.get("also") or "[]"))
                for custom_id in [row["custom_id"], *others]:  # the answer under every id asking this body
                    handle.write(json.dumps(to_output_line({**row, "custom_id": custom_id}), ensure_ascii=False)
                                 + "\n")
                    handle.flush()
                    run.answered += 1
        run.files = [path.name]
    run.seconds = time.perf_counter() - started
    return run
