"""A missing extra is one line naming the pip command, before any loading starts."""

from __future__ import annotations

import importlib.util

import pytest
import typer

from biasatlas.backends import extras
from biasatlas.backends.base import BackendError


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
