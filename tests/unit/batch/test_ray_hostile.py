"""`batch run` on hostile input: a non-UTF-8 file, a line of 100,000 nested brackets, any bytes at all. Each bad
line is an unreadable line of its own, named and counted; every other line is still asked. No Ray is started."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasatlas.batch.formats import BadLine, OutputLine, read_output
from biasatlas.batch.ray_asker import output_record
from biasatlas.batch.ray_engine import answered_ids
from biasatlas.batch.work import work_list

DEEP = b"[" * 100_000 + b"]" * 100_000  # past any JSON parser's stack


def line(custom_id: str, text: str) -> bytes:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": text}]}}).encode()


def test_a_non_utf8_file_and_a_deeply_nested_line_are_lines_of_their_own(tmp_path: Path) -> None:
    latin = tmp_path / "a.jsonl"
    latin.write_bytes("Größe über alles\n".encode("latin-1") + line("k1", "q1") + b"\n")
    deep = tmp_path / "b.jsonl"
    deep.write_bytes(line("k2", "q2") + b"\n" + DEEP + b"\n" + b'{"custom_id": "k3", "body": ' + DEEP + b"}\n"
                     + line("k4", "q4") + b"\n")
    work = work_list([latin, deep])
    assert [i.custom_id for i in work.items] == ["k1", "k2", "k4"]
    assert work.lines == 6 and len(work.unreadable) == 3
    assert work.unreadable[0] == f"{latin}:1: not UTF-8"
    assert work.unreadable[1] == f"{deep}:2: not a batch input line (JSON nested too deeply)"
    assert work.unreadable[2].startswith(f"{deep}:3: ")


def test_a_deeply_nested_answer_line_is_a_bad_line_not_the_end_of_the_file(tmp_path: Path) -> None:
    out = tmp_path / "answers"
    out.mkdir()
    good = json.dumps(output_record("k1", {"choices": []}, None)).encode()
    string_body = json.dumps({"custom_id": "k2", "response": {"status_code": 200, "body": DEEP.decode()}}).encode()
    (out / "ray-1.jsonl").write_bytes(DEEP + b"\n" + b"\xff\xfe\n" + good + b"\n" + string_body + b"\n")
    lines = list(read_output(out / "ray-1.jsonl"))
    assert [type(x) for x in lines] == [BadLine, BadLine, OutputLine, OutputLine]
    assert "nested too deeply" in str(lines[0]) and "not UTF-8" in str(lines[1])
    assert answered_ids(out) == {"k1", "k2"}  # the rerun skips them, and reads past the bad lines


# ---- property: whatever bytes a line holds, the job reads on; each good line is asked, each bad one named -----
junk = st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b) | st.sampled_from(
    [DEEP, b"\xff", b"[]", b"{}", b'{"custom_id": ""}', b'{"custom_id": "x", "body": 3}', b"null", b"1e999999"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(st.booleans(), junk), min_size=1, max_size=12))
def test_any_line_is_read_or_named_never_the_end_of_the_job(tmp_path_factory: Any,
                                                            lines: list[tuple[bool, bytes]]) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    raw = [line(f"k{i}", f"q{i}") if good else bad for i, (good, bad) in enumerate(lines)]
    path = tmp / "a.jsonl"
    path.write_bytes(b"\n".join(raw) + b"\n")
    work = work_list([path])  # never raises
    good_ids = {f"k{i}" for i, (good, _) in enumerate(lines) if good}
    assert {i.custom_id for i in work.items} == good_ids
    numbered = Counter(re.match(r"(.*?):(\d+): ", u).group(2) for u in work.unreadable)  # type: ignore[union-attr]
    assert set(numbered.values()) <= {1}  # "PATH:LINE: why": each bad line named once
    assert work.lines == len(work.items) + sum(len(i.also) for i in work.items) + work.accounted
