"""What every `biasatlas run PROBE` command shares: options, opening a backend, running a plan."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from pydantic import PrivateAttr
from rich.console import Console
from rich.markup import escape as rich_escape

from biasatlas.backends.base import Backend, BackendError, BackendWarning
from biasatlas.backends.options import BackendOptions
from biasatlas.cli.options import RunOptions
from biasatlas.lock import StudyLockedError
from biasatlas.records import GenerationSettings, Prompt
from biasatlas.runner import NOTHING_TO_ASK, RunTotals, run_plan
from biasatlas.store import Store, StoreError

console = Console(stderr=True, soft_wrap=True)  # one error line stays one line when piped

# Options of the analysis and study commands (the run commands' options are in cli/option_table.py).
StudyOpt = Annotated[Path, typer.Option("--study", "-s", help="Study directory.")]
CORRECTIONS = ("bh", "by", "bonferroni", "holm", "none")  # biasatlas.stats.multitest.METHODS
AlphaOpt = Annotated[
    float | None, typer.Option("--alpha", help="Significance level (default: the probe's, see its methods).")
]
CorrectionOpt = Annotated[
    str | None,
    typer.Option("--correction", help=f"Multiple-testing correction: {', '.join(CORRECTIONS)} (default: the probe's)."),
]


def check_analysis_options(alpha: float | None, correction: str | None) -> dict[str, Any]:
    """Validate --alpha / --correction; the ones given, as keyword arguments of a probe's summarise."""
    if alpha is not None and not 0 < alpha < 1:
        fail(f"--alpha {alpha}: must be between 0 and 1 (exclusive)")
    if correction is not None and correction not in CORRECTIONS:
        fail(f"--correction {correction!r}: valid: {', '.join(CORRECTIONS)}")
    return {k: v for k, v in (("alpha", alpha), ("correction", correction)) if v is not None}


def fail(message: str, code: int = 2) -> None:
    """Print one clear error line and exit."""
    # the message is text, not markup: "pip install 'biasatlas[local]'" keeps its brackets
    console.print(f"[bold red]error:[/] {rich_escape(message)}")
    raise typer.Exit(code)


def check_study(study: Path, *, write: bool) -> None:
    """One-line errors for a study path that cannot be used, before anything is written."""
    from biasatlas.store import DB_NAME

    if study.exists() and not study.is_dir():
        fail(f"study path {study} is a file, not a directory")
    db = study / DB_NAME
    if db.exists() and not db.is_file():
        fail(f"{db} is not a file")
    if write:
        target = study if study.exists() else next((p for p in study.parents if p.exists()), Path("."))
        if not os.access(target, os.W_OK) or (db.exists() and not os.access(db, os.W_OK)):
            fail(f"study {study} is read-only: a run cannot store answers there (summary and report still work)")
    if db.exists():
        import sqlite3

        # A truncated or foreign file fails here, before any write. In a directory this process cannot
        # write (an archived study), a WAL database cannot be opened mode=ro (SQLite must create its
        # -shm file): read it as immutable instead, as the store does.
        flag = "mode=ro" if os.access(study, os.W_OK) else "immutable=1"
        try:
            with sqlite3.connect(f"{db.resolve().as_uri()}?{flag}", uri=True) as conn:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            fail(f"{db} is not a readable biasatlas database ({exc})")


def database_error_line(db: Path, exc: Exception) -> str:
    """One line for an error SQLite raised reading a study: damaged pages, or a database it cannot use now."""
    import sqlite3

    detail = " ".join(str(exc).split())[:200]
    if isinstance(exc, sqlite3.OperationalError):  # locked, busy, out of disk: not damage
        return f"cannot use {db}: {detail}"
    return (f"{db} is damaged ({detail}): restore it from a backup, or recover what is readable with: "
            f"sqlite3 {db} .recover")


def require_study(study: Path, *, write: bool, first: str) -> None:
    """:func:`check_study`, and one line naming what to run ``first`` where ``study`` holds no study yet."""
    from biasatlas.store import DB_NAME

    check_study(study, write=write)
    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME}); {first}")


@contextlib.contextmanager
def study_errors(study: Path) -> Iterator[None]:
    """A study the store refuses (newer schema, damaged) or SQLite fails to read mid-command: one line, exit 2."""
    import sqlite3

    from biasatlas.store import DB_NAME

    try:
        yield
    except StoreError as exc:
        fail(str(exc))
    except sqlite3.DatabaseError as exc:
        fail(database_error_line(study / DB_NAME, exc))


def open_backend(options: BackendOptions) -> Backend:
    """Build the backend, turning a setup problem into one error line."""
    try:
        return options.open()
    except BackendError as exc:
        fail(str(exc))
        raise  # unreachable; for type checkers


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
    """biasatlas's own warnings (a fleet's server down at setup, an import row) as one line on stderr
    ("warning: ..."); other warnings as Python shows them."""
    from biasatlas.probes.contact.balance import GroupBalanceWarning
    from biasatlas.probes.contact.grammar import ContactImportWarning

    if issubclass(category, BackendWarning | ContactImportWarning | GroupBalanceWarning):
        sys.stderr.write(f"warning: {message}\n")
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def show_progress(opts: RunOptions) -> bool:
    """--progress/--no-progress if given, else on: rich's bar on a terminal, a timed line off one
    (``biasatlas.progress``: a log file shows how a long run is going)."""
    return default_progress(opts.progress)


def default_progress(given: bool | None) -> bool:
    """The --progress/--no-progress flag if given, else on (a bar on a terminal, else a line every 10 s)."""
    return True if given is None else given


def check_judge_model(opts: RunOptions) -> None:
    """``--judge-model`` (with its own server options) checked as the answering model is, before anything is
    asked (exit 2 naming it); where it is asked, and a judge that is the model under test, said in one line."""
    if opts.reader not in ("judge", "both") or opts.judge is None:
        return
    from biasatlas.audit.models import check_model
    from biasatlas.reading_step import judge_notes, same_model

    try:
        check_model(opts.judge)
    except BackendError as exc:
        fail(f"--judge-model {opts.judge_model}: {exc}")
    for note in judge_notes(opts.judge, [opts.backend], "--judge-base-url"):
        console.print(f"[yellow]note[/]: {rich_escape(note)}")
    if same_model(opts.judge, opts.backend):
        sys.stderr.write(f"warning: the judge {opts.judge.model} is the model under test: it reads its own "
                         "answers; a judge of another family reads them without its blind spots\n")


def run_probe_command(name: str, opts: RunOptions, **specific: Any) -> list[RunTotals]:
    """What every `biasatlas run PROBE` does: validate, plan (or print the plan), run, report totals."""
    from biasatlas.probes import load_probe
    from biasatlas.probes.base import CLI_COMMAND, ProbeConfigError

    CLI_COMMAND.set(resume_command())
    check_study(opts.study, write=True)  # --plan-only too: it fails on what the run would fail on
    probe = load_probe(name)
    try:
        config = probe.config(**opts.probe_values(), **specific)
        check_models(opts.backend, config)  # every model before anything is asked (a stories extractor too)
        check_judge_model(opts)
        if opts.plan_only:
            prompts = probe.plan(config)
            if not prompts:  # the run's own check (Probe.run), word for word
                raise ProbeConfigError("the plan is empty: nothing to ask (check the filters)")
            print_plan(probe.plan_summary(prompts, config))
            return []
        from biasatlas.reading_step import check_reader  # issue 27: the judge reader

        problem = check_reader(name, opts.reader)
        if problem:
            fail(problem)
        with named_model(opts) as backend:
            totals = probe.run(config, backend, opts.study, progress=show_progress(opts), on_totals=print_totals)
        judged = judge_step(name, opts, progress=show_progress(opts), on_totals=print_totals)
        totals = totals if judged is None else [*totals, judged]
    except ProbeConfigError as exc:
        fail(str(exc))
    except BackendError as exc:
        fail(str(exc))
    except StoreError as exc:
        fail(str(exc))
    except StudyLockedError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted(opts.study)
    if totals and not any(t.status == "stopped" for t in totals):
        from biasatlas.report.disparity import print_run_headline

        print_run_headline(name, opts.study, console)  # which group is treated worse, as the study now stands
    finish(totals)
    if totals:
        from biasatlas.cli.headlines import next_steps

        for line in next_steps(opts.study):  # what to read next: every table, then the report
            console.print(line, markup=False, highlight=False)
    return totals


def check_models(backend: BackendOptions, config: Any) -> None:
    """What a run checks when it opens its models (the model, and a stories run's extractors), without loading
    one or contacting a server: the run's BackendError, with its message (``audit.models.check_model``)."""
    from biasatlas.audit.models import check_model

    specs = [backend.model]
    if getattr(config, "extract", False):  # stories: the extraction step opens each extractor
        specs.extend(getattr(config, "extractors", None) or [])
    for spec in dict.fromkeys(specs):
        check_model(backend if spec == backend.model else backend.model_copy(update={"model": spec}))


class _NotedOptions(BackendOptions):
    """Backend options that note the id of every model opened with these very options (copies share the note;
    a copy with other options, such as another extractor, is not noted). The model is not kept open."""

    _noted: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        self._noted.setdefault("spec", self.model_dump_json())
        self._noted.setdefault("ids", set())

    def open(self) -> Backend:
        backend = super().open()
        if self.model_dump_json() == self._noted["spec"]:
            self._noted["ids"].add(str(backend.id))
        return backend

    @property
    def opened_ids(self) -> set[str]:
        return set(self._noted["ids"])


@contextlib.contextmanager
def named_model(opts: RunOptions) -> Iterator[BackendOptions]:
    """The backend options a run uses; with ``--name``, every run it makes with that model is tagged with the
    name (``config["display_name"]``, as an audit tags its models), also when it stops or is interrupted."""
    if opts.name is None:
        yield opts.backend
        return
    from biasatlas.audit.execute import last_run_id, tag_runs

    noted = _NotedOptions(**opts.backend.model_dump())
    before = last_run_id(opts.study)
    try:
        yield noted
    finally:
        for backend_id in sorted(noted.opened_ids):
            tag_runs(opts.study, before, backend_id, opts.name)


# Exit codes of a run (documented in the README): 0 every prompt answered; 3 finished, but some prompts
# failed (run again to retry them); 4 stopped early (a fatal error class or a sustained failure rate);
# 130 interrupted (Ctrl-C or SIGTERM); 2 a usage or setup error.
EXIT_FAILURES = 3
EXIT_STOPPED = 4
EXIT_INTERRUPTED = 130


def resume_command() -> str:
    """The command line that resumes this run (the same command: it asks only what is missing)."""
    import shlex

    from biasatlas.records import scrub_text

    # credentials scrubbed, as in the study (a --base-url http://user:password@host/v1)
    return " ".join(shlex.quote(scrub_text(a)) for a in ["biasatlas", *sys.argv[1:]])


def finish(totals: Sequence[RunTotals]) -> None:
    """Exit non-zero, with one line and the resume command, unless every step answered everything."""
    stopped = [t for t in totals if t.status == "stopped"]
    failed = sum(t.failed + t.pending for t in totals)
    if stopped:
        reason = stopped[0].info.get("stop_reason", "the backend kept failing")
        console.print(f"[bold red]stopped[/]: {reason}; {failed} prompts not answered. Resume: {resume_command()}")
        raise typer.Exit(EXIT_STOPPED)
    if failed:
        console.print(f"[bold yellow]finished with failures[/]: {failed} prompts not answered. "
                      f"Resume: {resume_command()}")
        raise typer.Exit(EXIT_FAILURES)


def interrupted(study: Path) -> None:
    """Ctrl-C: every finished answer is stored; say so, and how to resume; exit 130."""
    from biasatlas.cli.interrupts import interrupted_told

    count = "every finished answer is"
    try:
        with Store(study, readonly=True) as store:
            count = f"{store.response_count()} answers are"
    except Exception:
        pass
    console.print(f"[yellow]interrupted[/]: {count} stored in {study}. Resume: {resume_command()}")
    interrupted_told()
    raise typer.Exit(EXIT_INTERRUPTED)


def print_totals(totals: RunTotals) -> None:
    """One line of totals after a run, with HTTP usage and notes."""
    nothing = " (nothing to ask: every answer was in the study)" if totals.status == NOTHING_TO_ASK else ""
    console.print(
        f"run {totals.run_id}{nothing}: planned {totals.planned}, cached {totals.cached}, new {totals.new}, "
        f"failed {totals.failed}, pending {totals.pending} in {totals.seconds:.1f} s"
    )
    if totals.info.get("http"):
        from biasatlas.backends.http.usage import format_stats

        console.print(f"http: {format_stats(totals.info['http'])}")
    if totals.info.get("fleet"):
        from biasatlas.backends.http.usage import format_fleet

        console.print(format_fleet(totals.info["fleet"]))
    if totals.info.get("choice_fallback"):
        console.print(f"[yellow]note[/]: {totals.info['choice_fallback']}")


def print_plan(plan: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(plan, indent=2, ensure_ascii=False) + "\n")


def execute(
    prompts: Sequence[Prompt],
    backend: Backend,
    study: Path,
    settings: GenerationSettings,
    *,
    samples: int = 1,
    config: dict[str, Any] | None = None,
    progress: bool | None = None,
) -> RunTotals:
    """Run a plan into the study (extra steps: judges, debias evaluation); Ctrl-C keeps every answer, exits 130."""
    from biasatlas.lock import study_writer

    if not prompts:
        fail("the plan is empty: nothing to ask (check the filters)")
    progress = default_progress(progress)
    check_study(study, write=True)
    store: Store | None = None
    try:
        with study_writer(study):
            store = Store(study)
            totals = run_plan(prompts, backend, store, settings, samples=samples, config=config,
                              progress=progress)
    except KeyboardInterrupt:
        interrupted(study)
        raise
    except StoreError as exc:
        fail(str(exc))
        raise
    finally:
        backend.close()
        if store is not None:
            store.close()
    print_totals(totals)
    if totals.status == "stopped":
        finish([totals])
    return totals


def judge_step(probe: str, opts: RunOptions, *, progress: bool = False,
               on_totals: Callable[[RunTotals], None] | None = None) -> RunTotals | None:
    """`biasatlas run`'s judge step: the judge is opened with its own options (``--judge-model`` and its
    ``--judge-*`` server options), never the answering model's."""
    from biasatlas.reading_step import run_reading

    judge = opts.judge if opts.reader in ("judge", "both") else None
    return run_reading(probe, opts.study, opts.reader, judge, progress=progress, on_totals=on_totals)
