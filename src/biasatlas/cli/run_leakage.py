"""`biasatlas run leakage` and the `biasatlas leakage aggregate | fit | export` commands."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from biasatlas.cli.app import app, run_app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    StudyOpt,
    check_analysis_options,
    fail,
    run_probe_command,
)
from biasatlas.cli.options import RunOptions, run_options
from biasatlas.cli.outputs import check_output_dir, check_output_file
from biasatlas.store import Store

# The probe (pandas, statsmodels) is imported inside the commands: every CLI command imports this module.

MIN_CELLS_PER_TRAIT = 5  # = biasatlas.probes.leakage.model.MIN_CELLS_PER_TRAIT (kept light: no pandas here)

leakage_app = typer.Typer(help="Stereotype leakage: human tables, leakage fits, matrices.", no_args_is_help=True)
app.add_typer(leakage_app, name="leakage")

GroupsOpt = Annotated[str | None, typer.Option("--groups", help="Comma-separated group ids (default: all 30).")]
OrdersOpt = Annotated[
    Literal["both", "one"], typer.Option("--orders", help="Present each trait pair in both orders or one.")
]
DesignOpt = Annotated[
    Literal["ours", "paper"],
    typer.Option("--design", help="How the study is analysed: ours (complete cases, BH) or paper (Cao et al.: "
                 "missing cells 0, uncorrected p < 0.05, monolingual controls, Table 3)."),
]
MonoForOpt = Annotated[
    str | None,
    typer.Option("--mono-for", metavar="LANG", help="This model is LANG's monolingual control (LM_tgt of Eq. 1): "
                 "asked in LANG only, used as the control of the paper design's fits, not fitted itself."),
]


def _language(value: str) -> str:
    from biasatlas.probes.leakage.data import LeakageDataError, check_language

    try:
        return check_language(value)
    except LeakageDataError as exc:
        fail(f"--lang: {exc}")
        raise


@run_app.command("leakage")
@run_options(named=True)
def run_leakage(groups: GroupsOpt = None, orders: OrdersOpt = "both", design: DesignOpt = "ours",
                mono_for: MonoForOpt = None, *, opts: RunOptions) -> None:
    """Ask a model the leakage probe's prompts (theme choice for generative models; ILPS templates for
    `masked:PATH` / `span:PATH` models: a masked model's ILPS uses pseudo-log-likelihoods, not the paper's
    SeT) and store the answers in the study.

    Defaults: every language (en, ru, zh, hi); --mode choice (one score per prompt; --samples only with
    --mode generate, default 10 there, at --temperature 1.0); --max-tokens 12. --limit N is split evenly
    over the languages and draws whole comparisons (both orders of a trait pair for one group) or, for
    masked models, whole templates with their neutral baseline. --design paper: summary and report fit as
    Cao et al. did (every missing cell 0, so the non-shared groups are estimated; a flow at uncorrected
    p < 0.05; each language's --mono-for model as the monolingual control; their Table 3).
    """
    from biasatlas.probes.leakage.plan import method_for_model

    run_probe_command("leakage", opts, groups=groups, orders=orders, method=method_for_model(opts.backend.model),
                      design=design, mono_for=mono_for)


# ---- leakage aggregate ---------------------------------------------------------------------------------------
@leakage_app.command("aggregate")
def aggregate_cmd(
    ratings: Annotated[Path, typer.Argument(help="Per-annotator ratings JSON: {annotator: {group: {'l - r': s}}}.")],
    lang: Annotated[str, typer.Option("--lang", help="Language of the ratings (en, ru, zh, hi).")],
    out: Annotated[Path, typer.Option("--out", help="Output CSV (the shared tables' layout; 999 = missing).")],
    min_raters: Annotated[
        int | None,
        typer.Option("--min-raters", min=1, help="Fewer raters -> missing cell (default 5, as in Cao et al., 2024)."),
    ] = None,
    nonshared: Annotated[
        Literal["home", "all"] | None,
        typer.Option("--nonshared", help="home (default): a non-shared group counts only in its home language "
                     "(Cao et al., 2024, §3.2); all: in any language that rated it (the published tables)."),
    ] = None,
    keep_group: Annotated[
        list[str] | None,
        typer.Option("--keep-group", metavar="GROUP", help="Keep this group (id) at any number of raters; repeatable."),
    ] = None,
    as_published: Annotated[
        bool, typer.Option("--as-published", help="The published table of --lang: --min-raters 5 --nonshared all, "
                           "plus the groups it keeps with fewer raters (hi: immigrant, Asian person).")
    ] = False,
    name_map: Annotated[
        Path | None, typer.Option("--name-map", help="JSON/YAML {name in ratings: group id}, added to the defaults.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on group names not among the 30 (default: skip them, warn).")
    ] = False,
) -> None:
    """Aggregate raw per-annotator ratings into a traits × groups table of mean pole strengths.

    Defaults follow the design of Cao et al., 2024: at least 5 raters per cell, non-shared groups only in their home
    language. The published tables keep non-shared groups wherever rated: `--min-raters 5 --nonshared all`
    reproduces en, ru and zh; the Hindi table also keeps two groups with fewer raters (immigrant: 1, Asian
    person: 4), which `--as-published` adds. The missing cells are listed with why; group names not among
    the 30 are skipped with a warning (--strict: an error).
    """
    from biasatlas.probes.leakage.data import LeakageDataError
    from biasatlas.probes.leakage.human import write_table
    from biasatlas.probes.leakage.ratings import MIN_RATERS, PUBLISHED_EXCEPTIONS, aggregate_file

    lang = _language(lang)
    keep = list(keep_group or [])
    if as_published:
        if min_raters not in (None, MIN_RATERS) or nonshared not in (None, "all"):
            fail(f"--as-published is --min-raters {MIN_RATERS} --nonshared all; leave out --min-raters/--nonshared")
        keep += [g for g in PUBLISHED_EXCEPTIONS[lang] if g not in keep]
        nonshared = "all"
    min_raters = MIN_RATERS if min_raters is None else min_raters
    nonshared = nonshared or "home"
    check_output_file(out, replace=True)  # rewrites its own table; a study's database or any SQLite file, never
    try:
        result = aggregate_file(ratings, language=lang, min_raters=min_raters, nonshared=nonshared,
                                name_map_path=name_map, strict=strict, keep_groups=keep)
    except LeakageDataError as exc:
        fail(str(exc))
        raise
    write_table(result.table, out)
    err = Console(stderr=True, soft_wrap=True)
    warning = result.skipped_warning()
    if warning:
        err.print(f"[bold yellow]warning:[/] {warning}")
    rated = result.raters[result.raters > 0]
    table = result.table
    err.print(
        f"{out}: {int(table.notna().sum().sum())} of {table.size} cells from {len(rated)} rated groups "
        f"(raters per group: min {int(rated.min()) if len(rated) else 0}, "
        f"max {int(rated.max()) if len(rated) else 0}); min raters {min_raters}, non-shared groups: {nonshared}"
    )
    if keep:
        counts = ", ".join(f"{g} (raters: {int(result.raters.get(g, 0))})" for g in keep)
        err.print(f"kept at any number of raters{' (as published)' if as_published else ''}: {counts}")
    if not result.missing.empty:
        missing = Table(title=f"Missing cells ({lang}) and why")
        for col in ("group", "category", "missing cells", "raters", "reason"):
            missing.add_column(col)
        for row in result.missing.to_dict(orient="records"):
            missing.add_row(str(row["group"]), str(row["category"]), str(row["missing_cells"]), str(row["raters"]),
                            str(row["reason"]))
        err.print(missing)


# ---- leakage fit -----------------------------------------------------------------------------------------------
def _parse_mono(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        match = re.fullmatch(r"\s*(\w+)\s*=\s*(.+)", value)
        if not match:
            fail(f"--mono takes LANG=SOURCE (a CSV matrix or a model of the study), got {value!r}")
            raise AssertionError  # unreachable
        out[match.group(1)] = match.group(2).strip()
    return out


def _has_leakage_prompts(store: Store) -> bool:
    row = store.conn.execute("SELECT 1 FROM prompts WHERE probe = ? LIMIT 1", ("leakage",)).fetchone()
    return row is not None


def _open_study(study: Path) -> Store:
    """The study, if it exists and holds leakage prompts; else one error line."""
    from biasatlas.cli.common import require_study

    require_study(study, write=False, first="run `biasatlas run leakage` first")
    store = Store(study)
    if not _has_leakage_prompts(store):
        store.close()
        fail(f"the study {study} holds no leakage answers; run `biasatlas run leakage` first")
    return store


@leakage_app.command("fit")
def fit_cmd(
    study: StudyOpt,
    human: Annotated[
        Path | None, typer.Option("--human", help="Directory of aggregated_data_{EN,RU,ZH,HI}.csv (default: bundled).")
    ] = None,
    zero_fill: Annotated[
        bool, typer.Option("--zero-fill", help="Replicate the paper's code: every missing human cell counts as 0.")
    ] = False,
    keep_nonshared: Annotated[
        bool,
        typer.Option("--keep-nonshared", help="Keep the non-shared groups complete cases drop: a language that did "
                     "not rate such a group counts 0 there, with a missing-indicator term per source."),
    ] = False,
    min_cells: Annotated[
        int | None,
        typer.Option("--min-cells", min=1, help="Fewest complete cells a fit needs (default: 20 per fixed effect, "
                     "100 for the four human terms and the intercept)."),
    ] = None,
    min_cells_per_trait: Annotated[
        int, typer.Option("--min-cells-per-trait", min=1, help="Traits with fewer complete cells are left out.")
    ] = MIN_CELLS_PER_TRAIT,
    mono: Annotated[
        list[str] | None, typer.Option("--mono", help="LANG=CSV or LANG=MODEL: monolingual model scores (repeatable).")
    ] = None,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    design: Annotated[
        Literal["ours", "paper"] | None,
        typer.Option("--design", help="ours: complete cases, BH; paper: Cao et al.'s fit (missing cells 0, "
                     "uncorrected p, the --mono-for controls). Default: the study's (run leakage --design)."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Model's top traits per group for the finder.")] = 5,
    figure: Annotated[Path | None, typer.Option("--figure", help="Write the flows figure (PNG) here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Fit the leakage model per model and target language; print coefficients, flows and examples.

    Defaults: --alpha 0.05 (flows, and the coefficients' 1 - alpha CIs), --correction bh over each model's
    cross-language human coefficients (source != target). A fit needs --min-cells complete cells (default 20
    per fixed effect) in at least 5 traits with --min-cells-per-trait (5) cells each. Optimizers are tried in
    turn (statsmodels' BFGS → L-BFGS → CG, then Powell, then Nelder-Mead) and the one that converged is shown;
    fits none converges on, or singular ones, are printed with their warnings and left out of the flows.
    Masked models' scores are PLL-ILPS (pseudo-log-likelihoods), not the paper's SeT. --design paper (default:
    the study's design): every missing cell 0, no correction (a flow at p < --alpha), each language's --mono-for
    run as its control (--mono overrides), and the paper's Table 3.
    """
    if zero_fill and keep_nonshared:
        fail("--zero-fill and --keep-nonshared exclude each other: choose one way to fill missing human cells")
    analysis_opts = check_analysis_options(alpha, correction)
    from biasatlas.probes.leakage.analysis import analyse
    from biasatlas.probes.leakage.data import LeakageDataError
    from biasatlas.probes.leakage.design import study_design
    from biasatlas.probes.leakage.figure import flows_figure
    from biasatlas.probes.leakage.probe import PROBE
    from biasatlas.probes.leakage.summary import summary_from

    parsed_mono = _parse_mono(mono)
    store = _open_study(study)
    try:
        chosen = design or study_design(store)
        analysis = analyse(store, human_dir=human, zero_fill=zero_fill, keep_nonshared=keep_nonshared,
                           design=chosen, mono=parsed_mono, top_k=top_k, min_cells=min_cells,
                           min_cells_per_trait=min_cells_per_trait, **analysis_opts)
    except (LeakageDataError, ValueError) as exc:
        fail(str(exc))
        raise
    finally:
        store.close()
    if not analysis.variants:
        fail(f"the study {study} holds no leakage answers yet")
    if figure is not None:
        fig = flows_figure(analysis.flows, analysis.subjects)
        figure.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(figure, dpi=120, bbox_inches="tight")
    summary = summary_from(analysis)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    PROBE.print_summary(summary, Console())


# ---- leakage export --------------------------------------------------------------------------------------------
@leakage_app.command("export")
def export_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("--out", help="Directory for one CSV per model and language.")],
) -> None:
    """Write each model's association matrices in the human tables' layout (usable as --mono input)."""
    from biasatlas.probes.leakage.data import LANGUAGES
    from biasatlas.probes.leakage.human import write_table
    from biasatlas.probes.leakage.scores import association_cells, matrix

    check_output_dir(out)
    store = _open_study(study)
    try:
        cells = association_cells(store.frame(probe="leakage"))
    finally:
        store.close()
    if cells.empty:
        fail(f"the study {study} holds no leakage answers yet")
    table = Table(title="Exported matrices")
    table.add_column("file")
    table.add_column("cells")
    for variant in sorted(cells["variant"].unique()):
        for lang in LANGUAGES:
            m = matrix(cells, variant, lang)
            if m.notna().sum().sum() == 0:
                continue
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", variant).strip("_") + f"_{lang.upper()}.csv"
            write_table(m, out / name)
            table.add_row(str(out / name), str(int(m.notna().sum().sum())))
    Console().print(table)
