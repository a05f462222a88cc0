"""A local model is loaded only when a request needs it: a fully cached run loads nothing (issue 28).

No model is loaded here: ``LocalBackend._load`` is replaced, by a recorder that lets a fake answer in
its place, or by one that fails the test if the model is loaded at all.
"""

from __future__ import annotations

import json
import struct
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from biasatlas.backends.base import BackendError
from biasatlas.backends.fake import FakeBackend
from biasatlas.backends.local import LocalBackend, identify, locate
from biasatlas.backends.local.models import LocalOptions
from biasatlas.cli.main import app
from biasatlas.records import Request, Response
from biasatlas.store import Store

runner = CliRunner()
REFUSED = "test: the model was loaded"


def _tiny_gguf(folder: Path) -> Path:
    """A GGUF file with a header and nothing else: enough to be located and hashed, not to be loaded."""
    path = folder / "tiny.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    return path


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every model load, recorded; the "loaded" model answers as a fake backend with the local id would."""
    seen: list[str] = []

    def load(self: LocalBackend) -> None:
        seen.append(self.spec)
        # what describe() and close() read of a loaded model
        self.model, self.device = SimpleNamespace(dtype="torch.float32"), "cpu"
        self._can_reuse_prefix, self._prefix_cache = False, OrderedDict()

    def answer(self: LocalBackend, requests: Sequence[Request]) -> Iterator[Response]:
        assert self.loaded, "asked before it was loaded"
        fake = FakeBackend()
        fake.id = self.id
        return fake.score_choices(requests)

    monkeypatch.setattr(LocalBackend, "_load", load)
    monkeypatch.setattr(LocalBackend, "score_choices", answer)
    return seen


def _refuse_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: LocalBackend) -> None:
        raise BackendError(REFUSED)

    monkeypatch.setattr(LocalBackend, "_load", refuse)


def _run(model: Path, study: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["run", "contact", "--model", str(model), "--lang", "de", "--axis", "religion",
                                 "--limit", "2", "--study", str(study), "--no-progress"])
    return result.exit_code, result.output


def test_a_file_model_is_named_described_and_closed_without_loading(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_loading(monkeypatch)
    gguf = _tiny_gguf(tmp_path)
    backend = LocalBackend(str(gguf))
    assert backend.loaded is False
    assert backend.id == identify(locate(str(gguf)), LocalOptions()).id  # the id a loaded model has
    described = backend.describe()
    assert described["weights_sha256"] == backend.identity.weights_digest
    assert (described["device"], described["loaded_dtype"], described["reuse_prefix"]) == (None, None, None)
    backend.close()
    assert backend.loaded is False


def test_the_model_is_loaded_on_first_use_of_what_loading_makes(tmp_path: Path, loads: list[str]) -> None:
    backend = LocalBackend(str(_tiny_gguf(tmp_path)))
    assert loads == []
    with pytest.raises(AttributeError, match="tokenizer"):
        _ = backend.tokenizer  # the recorder makes no tokenizer: what matters is that it tried to load
    assert loads == [backend.spec] and backend.loaded is True
    assert backend.describe()["device"] == "cpu"
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = backend.no_such_thing  # any other missing attribute is an ordinary AttributeError, no load
    assert loads == [backend.spec]


def test_a_cached_rerun_loads_no_model_and_is_recorded_as_nothing_to_ask(
    tmp_path: Path, loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf, study = _tiny_gguf(tmp_path), tmp_path / "study"
    code, output = _run(gguf, study)
    assert code == 0, output
    assert len(loads) == 1  # the first run had questions to ask: it loaded the model, once
    _refuse_loading(monkeypatch)
    code, output = _run(gguf, study)
    assert code == 0, output
    assert REFUSED not in output
    with Store(study) as store:
        runs = store.runs()
    assert list(runs["status"]) == ["complete", "nothing to ask"]
    first, second = (json.loads(c) for c in runs["config_json"])
    assert runs["backend_id"].iloc[0] == runs["backend_id"].iloc[1]
    assert second["backend"]["weights_sha256"] == first["backend"]["weights_sha256"]
    totals = json.loads(runs["totals_json"].iloc[1])
    assert totals["new"] == 0 and totals["cached"] == totals["planned"] > 0


def test_a_model_that_cannot_load_fails_before_its_run_is_recorded(tmp_path: Path, loads: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    gguf, study = _tiny_gguf(tmp_path), tmp_path / "study"
    assert _run(gguf, study)[0] == 0
    with Store(study) as store:  # one answer forgotten: the rerun has a question to ask
        store.conn.execute("DELETE FROM responses WHERE rowid = (SELECT MAX(rowid) FROM responses)")
        store.conn.commit()
    _refuse_loading(monkeypatch)
    code, output = _run(gguf, study)
    assert code == 2 and REFUSED in output
    with Store(study) as store:
        assert list(store.runs()["status"]) == ["complete"]


def test_the_file_types_named_without_gguf_are_the_librarys_names() -> None:
    import gguf

    from biasatlas.backends.local.backend import FILE_TYPES

    assert {v: gguf.LlamaFileType(v).name.removeprefix("MOSTLY_") for v in FILE_TYPES} == FILE_TYPES
