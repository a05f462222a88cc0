"""The open-ended story probe (StereoTales): stories, extracted profiles, associations.

A story prompt gives the protagonist one attribute value ("a person with a low income") and a
situation; everything else about the protagonist comes from the model. An extractor model then
reads each story and returns the protagonist's profile in the closed vocabularies
(:mod:`stories_extract`), and :mod:`biasatlas.stats.associations` mines the associations between
the prompted attribute and the extracted ones.

Store layout: probe ``stories`` holds the stories (one row per generator × prompt × sample),
probe ``stories-extract`` the extractor answers, linked back through ``meta``
(``story_prompt_id``, ``story_sample``, ``generator``), probe ``stories-harm`` the harm ratings.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from biasatlas.probes.stories.extract import (
    Extraction,
    extraction_text,
    json_schema,
    parse_extraction,
    vocabularies,
    vote_profiles,
)
from biasatlas.probes.stories.seeds import UNKNOWN, Seeds, load_seeds
from biasatlas.records import Message, Prompt
from biasatlas.report.html import Section
from biasatlas.stats.associations import AssociationConfig, AssociationResult, jaccard_matrix, mine_associations
from biasatlas.stats.proportions import wilson_interval
from biasatlas.store import Store

NAME = "stories"
TITLE = "Open-ended stories: demographic associations (StereoTales)"
EXTRACT_PROBE = "stories-extract"
TEMPLATE_ID = "story-v1"


# ---- prompts ------------------------------------------------------------------------------


def build_prompts(seeds: Seeds, limit: int | None = None) -> list[Prompt]:
    """One prompt per prompted value × scenario (79 × 36 = 2,844 per language).

    Prompt k pairs value k mod 79 with scenario k mod 36 (coprime counts, so every pair occurs
    once): the first ``limit`` prompts then vary both the attribute and the scenario.
    """
    pairs = _round_robin(seeds)
    scenarios = seeds.scenarios
    total = len(pairs) * len(scenarios)
    order = _interleaved(len(pairs), len(scenarios))
    prompts = []
    for i, j in order[: total if limit is None else limit]:
        dim, value = pairs[i]
        scenario = scenarios[j]
        text = seeds.story_template.format(protagonist=value.prompt, scenario=scenario.text).strip()
        prompts.append(
            Prompt(
                probe=NAME,
                language=seeds.language,
                messages=(Message(role="user", content=text),),
                meta={
                    "base_attribute": dim.key,
                    "base_value": value.key,
                    "scenario_key": scenario.key,
                    "scenario_group": scenario.group,
                    "template_id": TEMPLATE_ID,
                },
            )
        )
    return prompts


def _round_robin(seeds: Seeds) -> list[tuple[Any, Any]]:
    """The prompted (dimension, value) pairs, one value of each dimension in turn."""
    by_dim: dict[str, list[tuple[Any, Any]]] = {}
    for dim, value in seeds.prompted:
        by_dim.setdefault(dim.key, []).append((dim, value))
    out: list[tuple[Any, Any]] = []
    for rank in range(max(len(v) for v in by_dim.values())):
        out.extend(v[rank] for v in by_dim.values() if rank < len(v))
    return out


def _interleaved(n_pairs: int, n_scenarios: int) -> list[tuple[int, int]]:
    """All (pair, scenario) index pairs, ordered so that consecutive ones differ in both."""
    from math import gcd

    if gcd(n_pairs, n_scenarios) == 1:
        return [(k % n_pairs, k % n_scenarios) for k in range(n_pairs * n_scenarios)]
    # not coprime (a seeds folder of another size): shift the scenario every full cycle
    out = []
    for k in range(n_pairs * n_scenarios):
        cycle = k // n_pairs
        out.append((k % n_pairs, (k + cycle) % n_scenarios))
    return out


def is_refusal(text: str | None, markers: Sequence[str]) -> bool:
    """A refusal: a marker phrase near the start of the answer (stories quoting one later are fine)."""
    head = (text or "").strip().lower()[:300]
    return any(m in head for m in markers)


def story_rows(store: Store) -> pd.DataFrame:
    """The stories frame with ``story_id``, ``refusal`` and ``empty`` flags."""
    frame = store.frame(probe=NAME)
    if frame.empty:
        return frame
    frame = frame.copy()
    frame["story_id"] = frame["prompt_id"] + ":" + frame["sample_index"].astype(str)
    markers: dict[str, tuple[str, ...]] = {}
    refusal, empty = [], []
    for lang, text, status in zip(frame["language"], frame["text"], frame["status"], strict=True):
        if lang not in markers:
            markers[lang] = _markers(lang)
        answered = status == "answered"
        empty.append(answered and not str(text or "").strip())
        refusal.append(answered and is_refusal(text, markers[lang]))
    frame["refusal"] = refusal
    frame["empty"] = empty
    return frame


def _markers(language: str) -> tuple[str, ...]:
    english = load_seeds("en").refusal_markers
    try:
        return tuple(dict.fromkeys([*load_seeds(language).refusal_markers, *english]))
    except ValueError:
        return english


def extraction_prompts(stories: pd.DataFrame, template: str | None = None) -> list[Prompt]:
    """One extraction prompt per usable story (answered, not empty, not a refusal)."""
    english = load_seeds("en")
    prompts = []
    usable = stories[(stories["status"] == "answered") & ~stories["refusal"] & ~stories["empty"]]
    for row in usable.itertuples(index=False):
        dims = vocabularies(english, exclude=[str(row.base_attribute)])
        text = extraction_text(template or english.extraction_template, str(row.text), dims)
        prompts.append(
            Prompt(
                probe=EXTRACT_PROBE,
                language=str(row.language),
                messages=(Message(role="user", content=text),),
                meta={
                    "story_prompt_id": row.prompt_id,
                    "story_sample": int(str(row.sample_index)),
                    "generator": row.model,
                    "base_attribute": row.base_attribute,
                    "base_value": row.base_value,
                    "scenario_key": row.scenario_key,
                    # sent as response_format by servers that support JSON schemas
                    "response_schema": json_schema(dims),
                },
            )
        )
    return prompts


# ---- profiles -----------------------------------------------------------------------------


def load_profiles(store: Store) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One voted profile per usable story, and the counts of everything left out or repaired."""
    english = load_seeds("en")
    dims = list(english.dimensions)
    stories = story_rows(store)
    counts: dict[str, Any] = {"stories": {}, "extraction": {}}
    if stories.empty:
        return pd.DataFrame(columns=["model", "language", "story_id", "base_attribute", *dims]), counts
    counts["stories"] = {
        "planned": len(stories),
        "answered": int((stories["status"] == "answered").sum()),
        "failed": int((stories["status"] == "failed").sum()),
        "pending": int((stories["status"] == "pending").sum()),
        "refusals": int(stories["refusal"].sum()),
        "empty": int(stories["empty"].sum()),
    }
    ex = store.frame(probe=EXTRACT_PROBE)
    story_text = dict(zip(stories["story_id"], stories["text"], strict=True))
    status_counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    repairs: Counter[str] = Counter()
    oov: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    unsupported: Counter[str] = Counter()
    per_story: dict[tuple[str, str], list[dict[str, str]]] = {}
    n_extractors: dict[tuple[str, str], int] = {}
    if not ex.empty:
        for row in ex.itertuples(index=False):
            sid = f"{row.story_prompt_id}:{int(str(row.story_sample))}"
            key = (str(row.generator), sid)
            n_extractors[key] = n_extractors.get(key, 0) + 1
            if row.status != "answered":
                status_counts[str(row.status)] += 1
                continue
            dims_x = vocabularies(english, exclude=[str(row.base_attribute)])
            imported = _truthy(getattr(row, "imported", None))
            parsed: Extraction = parse_extraction(
                _cell_text(row.text), dims_x,
                "" if imported else str(story_text.get(sid) or ""),
            )
            status_counts[parsed.status] += 1
            if parsed.reason:
                reasons[parsed.reason] += 1
            for r in parsed.repairs:
                repairs[r.split(" ", 1)[1] if r[:1].isdigit() else r] += 1
            for d in parsed.out_of_vocabulary:
                oov[d] += 1
            for d in parsed.missing:
                missing[d] += 1
            if not imported:
                for d in parsed.unsupported_evidence:
                    unsupported[d] += 1
            per_story.setdefault(key, []).append(parsed.values)
    counts["extraction"] = {
        "answers": dict(status_counts),
        "rejection_reasons": dict(reasons),
        "repairs": dict(repairs),
        "out_of_vocabulary_by_attribute": dict(oov),
        "missing_by_attribute": dict(missing),
        "evidence_not_in_story_by_attribute": dict(unsupported),
        "extractors": sorted(ex["model"].unique().tolist()) if not ex.empty else [],
    }
    rows = []
    usable = stories[(stories["status"] == "answered") & ~stories["refusal"] & ~stories["empty"]]
    no_extraction = 0
    for row in usable.itertuples(index=False):
        key = (str(row.model), str(row.story_id))
        if key not in n_extractors:
            no_extraction += 1
            continue
        voted = vote_profiles(per_story.get(key, []), dims, n_extractors[key])
        voted[str(row.base_attribute)] = str(row.base_value)  # from the prompt, never re-extracted
        rows.append(
            {
                "model": row.model,
                "language": row.language,
                "story_id": row.story_id,
                "base_attribute": row.base_attribute,
                "base_value": row.base_value,
                "scenario_key": row.scenario_key,
                **voted,
            }
        )
    counts["stories"]["usable"] = len(usable)
    counts["stories"]["without_extraction"] = no_extraction
    profiles = pd.DataFrame(rows, columns=["model", "language", "story_id", "base_attribute", "base_value",
                                           "scenario_key", *dims])
    counts["profiles"] = len(profiles)
    return profiles, counts


def _cell_text(value: Any) -> str | None:
    """A frame cell as text (NaN/None -> None)."""
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _truthy(value: Any) -> bool:
    """A meta flag read back from the frame (absent -> NaN)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return False
    return bool(value)


# ---- analysis -----------------------------------------------------------------------------


def associations(
    profiles: pd.DataFrame, per_language: bool = False, config: AssociationConfig | None = None
) -> AssociationResult:
    """The two-step association analysis, per model (and per language)."""
    dims = list(load_seeds("en").dimensions)
    by = ("model", "language") if per_language else ("model",)
    return mine_associations(profiles, dims, by=by, config=config)


def distributions(profiles: pd.DataFrame) -> pd.DataFrame:
    """Share of each extracted value per model × language × attribute (prompted attribute excluded)."""
    dims = list(load_seeds("en").dimensions)
    parts = []
    for dim in dims:
        sub = profiles[profiles["base_attribute"] != dim]
        if sub.empty:
            continue
        counts = sub.groupby(["model", "language", dim]).size().rename("count").reset_index()
        counts = counts.rename(columns={dim: "value"})
        counts["attribute"] = dim
        totals = counts.groupby(["model", "language"])["count"].transform("sum")
        counts["n"] = totals
        counts["share"] = counts["count"] / totals
        parts.append(counts)
    if not parts:
        return pd.DataFrame(columns=["model", "language", "attribute", "value", "count", "n", "share"])
    out = pd.concat(parts, ignore_index=True)
    return out[["model", "language", "attribute", "value", "count", "n", "share"]]


def association_records(result: AssociationResult, limit: int | None = None) -> list[dict[str, Any]]:
    frame = result.associations if limit is None else result.associations.head(limit)
    return json.loads(frame.to_json(orient="records"))


def language_sets(result: AssociationResult) -> dict[str, set[tuple[str, ...]]]:
    """Per language, the associations (A, a, B, b) that hold there for at least one model."""
    cells = result.cells
    if cells.empty or "language" not in cells.columns:
        return {}
    held = cells[cells["association"]]
    return {
        str(lang): {tuple(map(str, k)) for k in g[["base_attribute", "base_value", "compared_attribute",
                                                   "compared_value"]].itertuples(index=False)}
        for lang, g in held.groupby("language")
    }


def summarise(
    store: Store,
    config: AssociationConfig | None = None,
    groups: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """Counts, refusal rate (Wilson CI), association tables globally and per language."""
    from biasatlas.probes.stories import harm as stories_harm

    profiles, counts = load_profiles(store)
    out: dict[str, Any] = {"counts": counts}
    answered = counts.get("stories", {}).get("answered", 0)
    if answered:
        refusals = counts["stories"]["refusals"]
        lo, hi = wilson_interval(refusals, answered)
        out["refusal_rate"] = {"n": answered, "refusals": refusals, "rate": refusals / answered,
                               "ci95": [lo, hi], "method": "Wilson score interval"}
    if profiles.empty:
        out["associations"] = []
        return out
    unknown = {
        dim: float((profiles.loc[profiles["base_attribute"] != dim, dim] == UNKNOWN).mean())
        for dim in load_seeds("en").dimensions
        if (profiles["base_attribute"] != dim).any()
    }
    out["unknown_rate_by_attribute"] = unknown
    config = config or AssociationConfig()
    glob = associations(profiles, False, config)
    out["method"] = _method_text(config)
    out["tables"] = _table_counts(glob)
    out["associations"] = association_records(glob)
    if profiles["language"].nunique() > 1:
        per = associations(profiles, True, config)
        out["per_language"] = {"tables": _table_counts(per), "associations": association_records(per)}
        sets = language_sets(per)
        if sets:
            out["per_language"]["jaccard"] = jaccard_matrix(sets).round(4).to_dict()
        labels = harm_labels_for(store)
        if len(labels):
            out["per_language"]["specificity"] = stories_harm.language_specificity(per.associations, labels, groups)
    harm = stories_harm.summarise_harm(store)
    if harm:
        out["harm"] = harm
    return out


def harm_labels_for(store: Store) -> pd.Series:
    """Harmful/benign per association: human ratings when the study has them, else LLM judges."""
    from biasatlas.probes.stories import harm as stories_harm

    human = stories_harm.human_ratings(store.dir)
    if not human.empty:
        return stories_harm.harm_labels(human)
    llm, _ = stories_harm.llm_ratings(store)
    return stories_harm.harm_labels(llm)


def _table_counts(result: AssociationResult) -> dict[str, Any]:
    t = result.tables
    if t.empty:
        return {"tested": 0}
    return {
        "tested": len(t),
        "significant_bh": int(t["significant"].sum()),
        "kept_medium_or_large": int(t["kept"].sum()),
        "p_methods": t["p_method"].value_counts().to_dict(),
        "significant_cells_by": len(result.cells),
        "associations_lift_ge_min": len(result.associations),
        "slices": result.slices,
        "stories": result.n_stories,
    }


def _method_text(config: AssociationConfig) -> str:
    return (
        "Per generator model (and per language): contingency tables of the prompted attribute A against "
        "each extracted attribute B, unknown/other values and rows with fewer than "
        f"{config.min_row_total} stories removed; Fisher-Freeman-Halton exact test (scipy Monte Carlo, "
        f"seed {config.seed}, {config.resamples:,} resamples; strategy '{config.strategy}': asymptotic "
        "chi-square screen and sequential Monte Carlo that stops once the BH decision is certain), "
        f"Benjamini-Hochberg across B for each A at alpha {config.alpha}; bias-corrected Cramér's V "
        f"(Bergsma), tables with effect {'/'.join(config.effects)} kept; one-sided Fisher test per cell, "
        f"Benjamini-Yekutieli across the table's cells, lift >= {config.min_lift}."
    )


def print_summary(summary: dict[str, Any], console: Console) -> None:
    counts = summary.get("counts", {})
    st = counts.get("stories", {})
    console.print(
        f"stories: {st.get('answered', 0)} answered of {st.get('planned', 0)} planned "
        f"({st.get('failed', 0)} failed, {st.get('pending', 0)} pending), {st.get('refusals', 0)} refusals, "
        f"{st.get('empty', 0)} empty, {counts.get('profiles', 0)} profiles"
    )
    ex = counts.get("extraction", {})
    if ex:
        console.print(f"extraction answers: {ex.get('answers', {})}; rejected because: "
                      f"{ex.get('rejection_reasons', {})}")
        if ex.get("out_of_vocabulary_by_attribute"):
            console.print(f"out-of-vocabulary values (set to unknown): {ex['out_of_vocabulary_by_attribute']}")
    if "refusal_rate" in summary:
        r = summary["refusal_rate"]
        console.print(f"refusal rate {r['rate']:.1%} (95% CI {r['ci95'][0]:.1%}–{r['ci95'][1]:.1%}, n={r['n']})")
    if "tables" in summary:
        console.print(f"tables: {summary['tables']}")
    print_associations(summary.get("associations", []), console, "Associations (per model, all languages)")
    if "per_language" in summary:
        print_associations(summary["per_language"]["associations"], console, "Associations per language")


def print_associations(records: list[dict[str, Any]], console: Console, title: str, limit: int = 40) -> None:
    if not records:
        console.print(f"{title}: none")
        return
    table = Table(title=f"{title} ({len(records)}; top {min(limit, len(records))})")
    for col in ("A = a", "B = b", "count", "fraction", "lift", "p", "q (BY)", "V", "models", "languages"):
        table.add_column(col)
    for r in records[:limit]:
        table.add_row(
            f"{r['base_attribute']} = {r['base_value']}",
            f"{r['compared_attribute']} = {r['compared_value']}",
            str(r["count"]),
            f"{r['fraction']:.2f}",
            f"{r['lift']:.2f}",
            f"{r['p']:.2e}",
            f"{r['q']:.2e}",
            f"{r['cramers_v']:.3f}",
            ", ".join(r.get("models") or []),
            ", ".join(r.get("languages") or []),
        )
    console.print(table)


def report_sections(store: Store) -> list[Section]:
    """Association tables (sortable), distributions per model and language, Jaccard heatmap."""
    from biasatlas.probes.stories import harm as stories_harm

    profiles, counts = load_profiles(store)
    section = Section(TITLE)
    st = counts.get("stories", {})
    section.add_text(
        f"{st.get('answered', 0)} stories answered ({st.get('refusals', 0)} refusals, {st.get('empty', 0)} empty, "
        f"{st.get('failed', 0)} failed); {counts.get('profiles', 0)} stories with an extracted profile. "
        f"Extraction answers: {counts.get('extraction', {}).get('answers', {})}."
    )
    if profiles.empty:
        section.add_text("No extracted profiles yet: run the extraction step.")
        return [section]
    config = AssociationConfig()
    glob = associations(profiles, False, config)
    section.methods = _method_text(config)
    frame = glob.associations.copy()
    for col in ("models", "languages"):
        if col in frame.columns:
            frame[col] = frame[col].map(lambda v: ", ".join(v) if isinstance(v, list) else "")
    section.add_table(frame, "Associations A = a → B = b (per model, all languages pooled)", sortable=True)
    if not glob.tables.empty:
        section.add_table(glob.tables, "Every contingency table tested (per model)", sortable=True)
    dist = distributions(profiles)
    if not dist.empty:
        known = dist[dist["value"] != UNKNOWN]
        pivot = known.pivot_table(index=["attribute", "value"], columns=["model", "language"], values="share")
        section.add_table(pivot.reset_index().round(3), "Share of each extracted value per model and language "
                          "(unknown included in the denominator)", sortable=True)
    sections = [section]
    if profiles["language"].nunique() > 1:
        per = associations(profiles, True, config)
        lang = Section("Stories: language specificity")
        sets = language_sets(per)
        if sets:
            jac = jaccard_matrix(sets)
            lang.add_figure(_heatmap(jac), "Jaccard similarity of association sets between languages")
        lang.add_table(_flatten(per.associations), "Associations per language", sortable=True)
        sections.append(lang)
    sections.extend(stories_harm.report_sections(store))
    return sections


def _flatten(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in ("models", "languages"):
        if col in out.columns:
            out[col] = out[col].map(lambda v: ", ".join(v) if isinstance(v, list) else "")
    return out


def _heatmap(matrix: pd.DataFrame) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1 + 0.6 * len(matrix), 0.8 + 0.6 * len(matrix)))
    im = ax.imshow(matrix.to_numpy(dtype=float), vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=45)
    ax.set_yticks(range(len(matrix)), matrix.index)
    for i in range(len(matrix)):
        for j in range(len(matrix)):
            value = float(matrix.to_numpy(dtype=float)[i, j])
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", color="w", fontsize=7)
    fig.colorbar(im, ax=ax, fraction=0.046)
    return fig
