"""Progress off a terminal: a timed line (done/total, rate, ETA, failures) and, in an audit, the audit's line."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.progress import CURRENT_AUDIT, AuditProgress, Counts, duration, progress_interval, run_line
from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import Store

LINE = re.compile(r"^contact · fake:slow: (\d+)/(\d+) .*· failed (\d+) · [\d.]+ answers/s · ETA .+ elapsed$")


def _prompts(n: int) -> list[Prompt]:
    return [Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q {i}?"),),
                   options=("Yes", "No"), meta={"i": i}) for i in range(n)]


class _Slow(FakeBackend):
    """Answers after ``first`` seconds, then one answer every ``each`` seconds."""

    def __init__(self, first: float, each: float) -> None:
        super().__init__(name="slow")
        self.first, self.each = first, each

    def _respond(self, requests: Sequence[Request], choice: bool) -> Iterator[Response]:
        time.sleep(self.first)
        for response in super()._respond(requests, choice):
            time.sleep(self.each)
            yield response


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (42.4, "42 s"), (59.6, "1 min 00 s"), (185, "3 min 05 s"), (7620, "2 h 07 min")],
)
def test_durations_read_as_a_person_writes_them(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_a_run_line_has_done_total_rate_eta_and_failures() -> None:
    # 40 cached, 12 asked in 6 s (2 answers/s, 2 of them failed), 48 left: 24 s at that rate
    line = run_line("contact · m", Counts(total=100, cached=40, new=10, failed=2), 6.0)
    assert line == ("contact · m: 52/100 (52 %) · new 10 · cached 40 · failed 2 · 2.00 answers/s · ETA 24 s · "
                    "6 s elapsed")
    assert "ETA unknown" in run_line("x", Counts(total=10), 3.0)  # nothing answered yet: no rate to go by
    assert "ETA 0 s" in run_line("x", Counts(total=10, cached=10), 3.0)


def test_the_audit_line_counts_finished_cells_and_the_running_one() -> None:
    now = [0.0]
    audit = AuditProgress([10, 30, 60], clock=lambda: now[0])
    audit.start_cell(0)
    now[0] = 10.0
    audit.finish_cell(0)
    audit.start_cell(1)
    audit.live = 15
    now[0] = 25.0  # 25 of 100 requests in 25 s: 75 left, 75 s at that pace
    assert audit.line() == "audit: cell 2/3 · 25/100 requests (25 %) · ETA 1 min 15 s at the pace so far · 25 s elapsed"
    audit.live = 99  # a cell's count never exceeds its plan (a stories cell's extraction step comes after it)
    assert "40/100" in audit.line()


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIASATLAS_PROGRESS_INTERVAL", "0.5")
    assert progress_interval() == 0.5
    for bad in ("", "0", "-3", "soon"):
        monkeypatch.setenv("BIASATLAS_PROGRESS_INTERVAL", bad)
        assert progress_interval() == 10.0


def test_off_a_terminal_a_run_prints_a_timed_line_also_while_no_answer_arrives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 0.3 s before the first answer (a long batch), then 6 answers 0.02 s apart; a line every 0.05 s
    totals = run_plan(_prompts(6), _Slow(first=0.3, each=0.02), Store(tmp_path), GenerationSettings(),
                      progress=True, progress_interval=0.05)
    assert totals.new == 6
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    matched = [LINE.match(line) for line in lines]
    assert all(matched), lines
    assert len(lines) >= 4, lines
    assert sum(1 for m in matched if m and m.group(1) == "0") >= 2  # still printed while waiting for the batch
    assert all(m and m.group(2) == "6" and m.group(3) == "0" for m in matched)
    assert "ETA unknown" in lines[0]


def test_without_progress_nothing_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_plan(_prompts(3), _Slow(first=0.2, each=0.0), Store(tmp_path), GenerationSettings(), progress=False,
             progress_interval=0.05)
    assert capsys.readouterr().err == ""


def test_in_an_audit_each_line_is_followed_by_the_audits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = AuditProgress([6, 6])
    audit.start_cell(0)
    token = CURRENT_AUDIT.set(audit)
    try:
        run_plan(_prompts(6), _Slow(first=0.2, each=0.0), Store(tmp_path), GenerationSettings(), progress=True,
                 progress_interval=0.05)
    finally:
        CURRENT_AUDIT.reset(token)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and len(lines) % 2 == 0, lines
    assert all(LINE.match(a) and b.startswith("audit: cell 1/2 · ") for a, b in zip(lines[::2], lines[1::2],
                                                                                   strict=True)), lines
