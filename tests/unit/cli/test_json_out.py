"""``summary --json`` writes its JSON as it is encoded, in parts, and byte for byte what ``json.dumps`` gives."""

from __future__ import annotations

import io
import json
import math
from datetime import date
from pathlib import Path

from biasatlas.cli import json_out


def _value() -> dict[str, object]:
    return {"contact": {"tests": [{"p": 0.01 * i, "group": "Muslims", "note": "通义千问 · ü", "n": i}
                                  for i in range(20_000)],
                        "nan": math.nan, "when": date(2026, 12, 4), "path": Path("/tmp/s"), "none": None},
            "unfinished_runs": []}


class Counting(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def write(self, text: str) -> int:
        self.writes.append(len(text))
        return super().write(text)


def test_the_output_is_json_dumps_written_in_parts() -> None:
    value = _value()
    stream = Counting()
    json_out.write_json(value, stream)
    contact = value["contact"]
    assert isinstance(contact, dict)
    expected = json.dumps({**value, "contact": {**contact, "nan": None}}, indent=2, ensure_ascii=False,
                          default=str) + "\n"
    assert stream.getvalue() == expected  # a NaN is null (valid JSON), all else as json.dumps writes it
    assert len(stream.writes) > 1 and max(stream.writes) < len(expected) / 2  # never the whole text at once


def test_numbers_keys_and_odd_values_as_the_standard_encoder_writes_them() -> None:
    import numpy as np

    value = {"f": np.float64(0.1), "i": np.int64(3), "b": np.bool_(True), "big": 2**70, 1: "one", None: 0,
             2.5: [], "t": (1, 2), "e": {}, "s": "\u2028\x00\"", "deep": [[[[{"x": [0.25, 1e16]}]]]]}
    stream = io.StringIO()
    json_out.write_json(value, stream)
    assert stream.getvalue() == json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n"


def test_a_tiny_float_is_the_same_number() -> None:
    stream = io.StringIO()
    json_out.write_json({"p": [1.5e-05, 3.2e-300, 5e-324]}, stream)
    assert json.loads(stream.getvalue()) == {"p": [1.5e-05, 3.2e-300, 5e-324]}


def test_a_binary_stdout_gets_the_same_bytes(tmp_path: Path) -> None:
    value = _value()
    with (tmp_path / "out.json").open("w", encoding="utf-8") as fh:
        fh.write("")  # text written before the JSON stays before it
        json_out.write_json(value, fh)
    stream = io.StringIO()
    json_out.write_json(value, stream)
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == stream.getvalue()


def test_summary_json_of_a_study_is_the_same_json_in_parts(monkeypatch, tmp_path: Path) -> None:
    import random

    from typer.testing import CliRunner

    from biasatlas.backends.fake import FakeBackend
    from biasatlas.cli.main import app
    from biasatlas.probes import load_probe
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    rng = random.Random(1)
    contact = load_probe("contact")
    prompts = contact.plan(contact.config(languages=["en"], axes=["religion"], limit=6))
    with Store(tmp_path / "s") as store:
        run_plan(prompts, FakeBackend(lambda r: rng.choice(["Yes.", "No."]), name="m"), store,
                 GenerationSettings(mode="generate"), progress=False)
    whole = CliRunner().invoke(app, ["summary", "--study", str(tmp_path / "s"), "--json"])
    monkeypatch.setattr(json_out, "STREAMED_LEVELS", 6)
    parts = CliRunner().invoke(app, ["summary", "--study", str(tmp_path / "s"), "--json"])
    assert whole.exit_code == parts.exit_code == 0, parts.output
    assert parts.stdout == whole.stdout and parts.stdout.endswith("}\n")
    assert json.loads(parts.stdout)["contact"]["tests"]
