"""An audit's `adapter` is checked by --plan-only: a LoRA folder, on a local model (not /etc, not a fake)."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.audit.models import check_model
from biasatlas.backends.base import BackendError
from biasatlas.backends.options import BackendOptions


@pytest.mark.parametrize("adapter", ["/etc", "/nonexistent/lora"])
def test_a_folder_that_is_no_lora_adapter_is_refused(adapter: str) -> None:
    with pytest.raises(BackendError, match="adapter"):
        check_model(BackendOptions(model="local:/nonexistent.gguf", adapter=adapter))


def test_an_adapter_on_a_fake_or_http_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "adapter_config.json").write_text("{}")
    for model in ("fake:a", "openai:gpt-4o-mini"):
        with pytest.raises(BackendError, match="local model only"):
            check_model(BackendOptions(model=model, adapter=str(tmp_path)))
