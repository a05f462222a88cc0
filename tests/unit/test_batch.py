"""Batch files: export (keys and bodies the live backend would use) and import of fake Batch output files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.batch import BatchBackend, export_batch, import_batch
from biasatlas.batch.formats import BadLine, read_output, write_parts
from biasatlas.cli.main import app
from biasatlas.probes import load_probe
from biasatlas.records import GenerationSettings, Message, Prompt, Request
from biasatlas.store import Store

URL = "http://127.0.0.1:9/v1"
runner = CliRunner()


def _contact(
    study: Path, out: Path, *, mode: str = "generate", limit: int = 30, **options: Any
) -> list[dict[str, Any]]:
    probe = load_probe("contact")
    config = probe.config(limit=limit, mode=mode, max_tokens=4)
    opts = OpenAIOptions(base_url=URL, **options)
    result = export_batch(probe, config, "smollm2", opts, study, out, max_lines=100)
    return [json.loads(line) for path in result.files for line in path.read_text().splitlines()]


def _answer(line: dict[str, Any], text: str = "Yes") -> dict[str, Any]:
    """A Batch output line answering an input line: free text, or first-token logprobs for choice bodies."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
    if line["body"].get("logprobs"):
        tops = [{"token": "Yes", "logprob": -0.2}, {"token": " No", "logprob": -1.8}, {"token": "The", "logprob": -4.0}]
        choice["logprobs"] = {"content": [{"token": "Yes", "logprob": -0.2, "top_logprobs": tops}]}
    body = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice],
            "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}
    return {"id": "batch_req_1", "custom_id": line["custom_id"],
            "response": {"status_code": 200, "request_id": "r1", "body": body}, "error": None}


def _write(path: Path, records: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def _statuses(study: Path) -> dict[str, int]:
    with Store(study) as store:
        return {str(k): int(v) for k, v in store.frame("contact")["status"].value_counts().items()}


# ---- export ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["generate", "choice"])
@pytest.mark.parametrize("structured", ["auto", "off"])
def test_lines_hold_the_live_backends_key_and_body(tmp_path: Path, mode: str, structured: str) -> None:
    lines = _contact(tmp_path / "s", tmp_path / "out", mode=mode, structured=structured)
    options = OpenAIOptions.model_validate({"base_url": URL, "structured": structured, "check": False,
                                            "choice_method": "first_token" if mode == "choice" else "auto"})
    live = OpenAIBackend("smollm2", options)
    try:
        probe = load_probe("contact")
        config = probe.config(limit=30, mode=mode, max_tokens=4)
        requests = [Request(prompt=p, settings=probe.settings(config)) for p in probe.plan(config)]
        by_key = {r.cache_key(live.id): r for r in requests}
        assert [line["custom_id"] for line in lines] == list(by_key)  # one line per distinct request, plan order
        for line in lines:
            request = by_key[line["custom_id"]]
            body = live._body(request, choice=mode == "choice")
            if mode == "generate" and structured == "auto":  # the first dialect the live backend tries
                assert line["body"]["response_format"]["type"] == "json_schema"
                assert line["body"]["max_tokens"] == 64
                body = {**body, "response_format": line["body"]["response_format"], "max_tokens": 64}
            assert line["body"] == body
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    finally:
        live.close()


def test_choice_options_one_token_cannot_tell_apart_are_asked_in_generate_mode() -> None:
    prompt = Prompt(probe="x", language="en", messages=(Message(role="user", content="Pick"),),
                    options=("New York", "New Delhi"))
    request = Request(prompt=prompt, settings=GenerationSettings(mode="choice", max_tokens=5))
    backend = BatchBackend("m", OpenAIOptions(base_url=URL), mode="choice")
    body = backend.body(request)
    assert "logprobs" not in body and body["max_tokens"] == 5
    answer = backend.answer(request, 200, {"choices": [{"message": {"content": " New York "}}]})
    assert answer.text == "New York" and "choice_fallback" in answer.info


def test_parts_split_at_max_lines(tmp_path: Path) -> None:
    paths = write_parts(({"n": i} for i in range(25)), tmp_path, 10, stem="x")
    assert [len(p.read_text().splitlines()) for p in paths] == [10, 10, 5]
    with pytest.raises(ValueError):
        write_parts([{"n": 1}], tmp_path, 0)


def test_export_records_the_plan_and_skips_what_the_study_holds(tmp_path: Path) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "a")
    with Store(study) as store:
        run = store.last_run("contact")
        frame = store.frame("contact")
    assert run is not None and run["status"] == "exported" and run["totals"]["pending"] == len(lines) == 30
    assert len(frame) == 30 and (frame["status"] == "pending").all()
    import_batch(study, [_write(tmp_path / "o.jsonl", [_answer(line) for line in lines[:10]])])
    again = _contact(study, tmp_path / "b")
    assert len(again) == 20 and not {x["custom_id"] for x in lines[:10]} & {x["custom_id"] for x in again}


def test_export_after_a_partial_import_completes_when_its_answers_come(tmp_path: Path) -> None:
    # docs/scale.md: an expired batch's output is imported, the plan exported again (only what is
    # missing), and the new files' answers imported: then no run of the plan is left unfinished.
    from biasatlas.cli.pending import unfinished_runs

    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "a")
    import_batch(study, [_write(tmp_path / "o1.jsonl", [_answer(line) for line in lines[:10]])])
    again = _contact(study, tmp_path / "b")
    result = import_batch(study, [_write(tmp_path / "o2.jsonl", [_answer(line) for line in again])])
    assert result.answers == 20 and sorted(result.runs) == [1, 2]
    with Store(study) as store:
        statuses = dict(store.conn.execute("SELECT run_id, status FROM runs").fetchall())
        newest = store.last_run("contact")
        assert unfinished_runs(store) == []
    assert statuses == {1: "complete", 2: "complete"}
    assert newest is not None and newest["totals"]["pending"] == 0 and newest["totals"]["new"] == 20


# ---- import ------------------------------------------------------------------------------------
def test_import_stores_every_answer_once_and_twice_stores_nothing(tmp_path: Path) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "in")
    out = _write(tmp_path / "out.jsonl", [_answer(line) for line in lines])
    first = import_batch(study, [out])
    assert (first.answers, first.errors, first.unknown, first.already, first.bad) == (30, 0, 0, 0, [])
    with Store(study) as store:
        counts = (store.response_count(), store.error_count())
        run = store.last_run("contact")
    assert run is not None and run["status"] == "complete" and run["totals"]["new"] == 30
    second = import_batch(study, [out])
    assert (second.answers, second.errors, second.already) == (0, 0, 30)
    with Store(study) as store:
        assert (store.response_count(), store.error_count()) == counts
    assert _statuses(study) == {"answered": 30}


def test_any_order_and_partial_files(tmp_path: Path) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "in")
    answers = [_answer(line) for line in lines]
    late = _write(tmp_path / "late.jsonl", answers[20:][::-1])
    early = _write(tmp_path / "early.jsonl", answers[:20][::-1])
    assert import_batch(study, [late]).answers == 10
    assert _statuses(study) == {"pending": 20, "answered": 10}
    assert import_batch(study, [early, late]).answers == 20
    assert _statuses(study) == {"answered": 30}


def test_bad_input_unknown_ids_truncated_line_errors_and_duplicates(tmp_path: Path) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "in")
    other = _contact(tmp_path / "other", tmp_path / "in2", mode="choice")  # another study's plan
    records = [_answer(line) for line in lines[:26]]
    records.append(_answer(lines[0]))  # a duplicate of line 1
    records.append({"id": "b", "custom_id": lines[26]["custom_id"], "response": None,
                    "error": {"code": "batch_expired", "message": "This request could not be executed"}})
    records.append({"id": "c", "custom_id": lines[27]["custom_id"],
                    "response": {"status_code": 500, "body": {"error": {"message": "server exploded"}}}})
    records.append({"id": "d", "custom_id": lines[28]["custom_id"],
                    "response": {"status_code": 200, "body": {"choices": []}}})
    records += [_answer(line) for line in other[:3]]
    truncated = json.dumps(_answer(lines[29]))[:70]  # the file ends mid-line
    path = _write(tmp_path / "out.jsonl", records, tail=truncated)
    result = import_batch(study, [path])
    assert result.answers == 26 and result.duplicates == 1
    assert result.errors == 3 and result.unknown == 3 and len(result.unknown_ids) == 3
    assert [(b.path, b.number) for b in result.bad] == [(path, len(records) + 1)]
    assert "truncated" in result.bad[0].reason
    assert _statuses(study) == {"answered": 26, "failed": 3, "pending": 1}
    with Store(study) as store:
        errors = [row[0] for row in store.conn.execute("SELECT error FROM errors ORDER BY error_id")]
        assert store.cached_keys(x["custom_id"] for x in other) == set()  # never stored
    assert "batch_expired" in errors[0] and errors[1].startswith("http_500: server exploded")
    assert errors[2].startswith("malformed")
    again = import_batch(study, [path])  # the same errors are not stored twice
    assert (again.answers, again.errors, again.already) == (0, 0, 30)  # 26 answers, the duplicate, 3 errors
    # a retried batch answers the failed and the missing requests
    fixed = _write(tmp_path / "retry.jsonl", [_answer(line) for line in lines[26:]])
    assert import_batch(study, [fixed]).answers == 4
    assert _statuses(study) == {"answered": 30}
    with Store(study) as store:
        assert store.error_count() == 3


def test_a_file_cut_inside_a_utf8_character_is_a_truncated_line(tmp_path: Path) -> None:
    # vLLM and OpenAI write answers as UTF-8 (not ASCII escapes): a download that stops inside a
    # character is still a truncated line, not a file of another encoding.
    whole = json.dumps({"custom_id": "k", "response": {"status_code": 200, "body": {"text": "Gänseblümchen"}}},
                       ensure_ascii=False).encode()
    path = tmp_path / "out.jsonl"
    path.write_bytes(whole + b"\n" + whole[: whole.index("ü".encode()) + 1])
    lines = list(read_output(path))
    assert len(lines) == 2 and not isinstance(lines[0], BadLine) and lines[0].custom_id == "k"
    assert isinstance(lines[1], BadLine) and str(lines[1]).startswith(f"{path}:2: truncated line")
    path.write_bytes(b"\xff\xfe{}\n")  # not UTF-8 at all, and whole
    assert [str(x) for x in read_output(path)] == [f"{path}:1: not UTF-8"]


def test_choice_answers_read_as_the_live_backend_reads_them(tmp_path: Path) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "in", mode="choice")
    records = [_answer(line) for line in lines]
    records[0]["response"]["body"]["choices"][0].pop("logprobs")  # a server that gives no logprobs
    result = import_batch(study, [_write(tmp_path / "o.jsonl", records)])
    assert (result.answers, result.errors) == (29, 1)
    with Store(study) as store:
        frame = store.frame("contact")
        error = store.conn.execute("SELECT error FROM errors").fetchone()[0]
    assert "logprobs" in error
    answered = frame[frame["status"] == "answered"]
    assert len(answered) == 29
    for probs in answered["option_probs"]:  # "Yes" and " No" among the top tokens, "The" is neither
        assert probs["Yes"] == pytest.approx(1 / (1 + math.exp(-1.6))) and probs["No"] < 0.2
    with Store(study) as store:
        assert load_probe("contact").summarise(store)  # the summary works on imported answers


# ---- CLI ---------------------------------------------------------------------------------------
def test_cli_export_import_and_one_line_errors(tmp_path: Path) -> None:
    study, out = tmp_path / "s", tmp_path / "files"
    args = ["batch", "export", "contact", "--study", str(study), "--model", "openai:smollm2", "--base-url", URL,
            "--out", str(out), "--limit", "12", "--max-lines", "5", "--set", "scales=certainty,likelihood",
            "--http", "price_prompt=100", "--http", "price_completion=200"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "exported 12 requests in 3 files" in done.output and "batch price" in done.output
    files = sorted(out.glob("*.jsonl"))
    lines = [json.loads(x) for f in files for x in f.read_text().splitlines()]
    with Store(study) as store:
        run = store.last_run("contact")
    assert run is not None and run["config"]["config"]["scales"] == ["certainty", "likelihood"]
    batch = run["totals"]["info"]["batch"]
    assert batch["cost_usd_live"] > 0.01
    assert batch["cost_usd_batch"] == pytest.approx(batch["cost_usd_live"] / 2, abs=2e-6)
    answers = _write(tmp_path / "o.jsonl", [_answer(line) for line in lines], tail='{"custom_id": "x", "resp')
    done = runner.invoke(app, ["batch", "import", "--study", str(study), str(answers)])
    assert done.exit_code == 0, done.output
    assert f"{answers}:13: truncated line" in done.output and "12 answers" in done.output
    # the lines counted are every line read, and the parts add up to them (12 answers + 1 unreadable)
    assert "read 13 lines: 12 answers and 0 errors stored," in done.output and "1 unreadable" in done.output
    done = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["contact"]["items"] == {"answered": 12}
    done = runner.invoke(app, ["report", "--study", str(study), "--no-files"])
    assert done.exit_code == 0 and (study / "report.html").is_file(), done.output
    done = runner.invoke(app, ["batch", "import", "--study", str(study), str(files[0])])  # an input file
    assert done.exit_code == 0 and "not an answer: import the output file" in done.output
    assert "more unreadable lines" not in done.output  # 5 lines, each named
    for bad, message in (
        (["--model", "smollm2"], "use openai:NAME"),
        (["--set", "nope=1"], "--set 'nope=1'"),
        (["--max-lines", "0"], "--max-lines 0"),
    ):
        done = runner.invoke(app, [*args, *bad])
        assert done.exit_code == 2 and message in done.output, done.output
    done = runner.invoke(app, ["batch", "export", "stories", "--study", str(study), "--model", "openai:m",
                               "--out", str(out)])
    assert done.exit_code == 2 and "more than one step" in done.output


def test_a_fleets_batch_lines_carry_the_fleets_key(tmp_path: Path) -> None:
    """A batch of a fleet (--fleet, one or more --base-url) is keyed as the live fleet is: by the fleet's name,
    not by a server (it used to fall back to OpenAI's URL: answers no live run of the fleet would find)."""
    study, out = tmp_path / "s", tmp_path / "files"
    args = ["batch", "export", "contact", "--study", str(study), "--model", "openai:smollm2", "--fleet", "pool",
            "--base-url", URL, "--base-url", "http://127.0.0.1:10/v1", "--out", str(out), "--limit", "6",
            "--mode", "choice"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    lines = [json.loads(x) for f in sorted(out.glob("*.jsonl")) for x in f.read_text().splitlines()]
    options = OpenAIOptions.model_validate({"endpoints": [URL, "http://127.0.0.1:10/v1"], "fleet": "pool",
                                            "check": False, "choice_method": "first_token"})
    live = OpenAIBackend("smollm2", options)
    try:
        assert live.id.startswith("openai:smollm2@fleet:pool")
        probe = load_probe("contact")
        config = probe.config(limit=6, mode="choice")
        keys = {Request(prompt=p, settings=probe.settings(config)).cache_key(live.id) for p in probe.plan(config)}
        assert lines and {line["custom_id"] for line in lines} == keys
    finally:
        live.close()
    with Store(study) as store:
        run = store.last_run("contact")
    assert run is not None and run["config"]["backend"]["fleet"] == "pool"
    # and the fleet's answers are the study's: import finds the export (all 6 were 'unknown' before)
    imported = import_batch(study, [_write(tmp_path / "out.jsonl", [_answer(line) for line in lines])])
    assert (imported.answers, imported.unknown, imported.errors) == (6, 0, 0)
    assert _statuses(study) == {"answered": 6}


def test_two_studies_exporting_into_one_folder_do_not_overwrite_each_other(tmp_path: Path) -> None:
    """Run numbers are per study: both studies' first export is run 1, and its files must not replace the other's."""
    out = tmp_path / "files"
    first = _contact(tmp_path / "a", out, limit=12)
    second = _contact(tmp_path / "b", out, mode="choice", limit=9)
    written = [json.loads(x) for f in sorted(out.glob("*.jsonl")) for x in f.read_text().splitlines()]
    assert len(written) == len(first) + len(second)
    assert {line["custom_id"] for line in written} == {line["custom_id"] for line in first + second}


@pytest.mark.parametrize(("unknown", "said"), [(1, "1 line names a request"), (2, "2 lines name requests")])
def test_cli_counts_unknown_lines_in_words_that_agree(tmp_path: Path, unknown: int, said: str) -> None:
    study, out = tmp_path / "s", tmp_path / "files"
    lines = _contact(study, out, limit=4)
    strangers = [{**_answer(lines[0]), "custom_id": f"{k:040x}"} for k in range(unknown)]
    answers = _write(tmp_path / "o.jsonl", [_answer(line) for line in lines] + strangers)
    done = runner.invoke(app, ["batch", "import", "--study", str(study), str(answers)])
    assert done.exit_code == 0, done.output
    assert f"warning: {said} no batch export of this study wrote" in " ".join(done.output.split())
    assert f"{unknown} unknown" in done.output and f"{len(lines)} answers" in done.output


@pytest.mark.parametrize("message", [None, {"role": "assistant", "content": None},
                                     {"role": "assistant", "content": {"text": "Yes"}}])
def test_an_answer_line_without_text_is_an_error_not_an_empty_answer(tmp_path: Path, message: Any) -> None:
    study = tmp_path / "s"
    lines = _contact(study, tmp_path / "in", limit=3, structured="off")
    records = [_answer(line) for line in lines]
    records[1]["response"]["body"]["choices"][0]["message"] = message
    result = import_batch(study, [_write(tmp_path / "out.jsonl", records)])
    assert (result.answers, result.errors) == (2, 1)
    assert _statuses(study) == {"answered": 2, "failed": 1}
    with Store(study) as store:
        (error,) = [row[0] for row in store.conn.execute("SELECT error FROM errors")]
    assert error.startswith("malformed") and "text" in error
