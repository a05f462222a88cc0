"""Batch files: a plan's requests as OpenAI Batch input JSONL, and the Batch output stored back.

The same files run on the OpenAI Batch API, on vLLM's ``run_batch`` entrypoint and in a Ray Data
pipeline over vLLM (docs/scale.md). ``custom_id`` is the request's cache key, so importing is
idempotent and any order of lines, files or partial files stores each answer once.
"""

from biasatlas.batch.bodies import BatchBackend
from biasatlas.batch.export import ExportResult, export_batch
from biasatlas.batch.importer import ImportResult, import_batch

__all__ = ["BatchBackend", "ExportResult", "ImportResult", "export_batch", "import_batch"]
