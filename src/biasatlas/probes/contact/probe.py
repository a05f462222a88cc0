"""The contact-hypothesis probe (Raj et al. 2024; Ikae et al. for German and Icelandic).

A prompt set asks whether "I" should / am likely to / mostly engage with a group, under no,
positive and negative contact framing. Biased = refusing to engage (paper 001, Table 2).
This module wires the stages together: ``plan`` (configuration, prompt sets), ``importer``
(published datasets), ``read`` (answers to decisions), ``analysis``, ``summary`` and ``report``.
The functions other code imports from here are re-exported from those modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from biasatlas.datafiles import DataFileError
from biasatlas.probes.base import Probe, ProbeConfig, ProbeConfigError, plan_summary
from biasatlas.probes.contact.data import NAME, languages
from biasatlas.probes.contact.data import languages as shipped_languages
from biasatlas.probes.contact.plan import (
    FACTORS,
    ContactConfig,
    build_prompts,
    compose,
    config_languages,
    draw_prompt_sets,
    limit_imported,
    select_descriptors,
)
from biasatlas.probes.contact.read import DECISIONS, decide, load_outcomes, outcomes, parse_row
from biasatlas.probes.contact.summary import print_summary, summarise
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.report.html import Section
    from biasatlas.store import Store

__all__ = [
    "DECISIONS", "FACTORS", "NAME", "PROBE", "TITLE", "ContactConfig", "ContactProbe",
    "build_prompts", "compose", "decide", "draw_prompt_sets", "languages", "load_outcomes", "outcomes", "parse_row",
    "print_summary", "report_sections", "select_descriptors", "summarise",
]

TITLE = "Contact-hypothesis probe"
DEFAULT_MAX_TOKENS = 10


def report_sections(store: Any) -> list[Section]:
    """Tables, a bar chart by contact and an axis × scenario heatmap."""
    from biasatlas.probes.contact import report as contact_report

    return contact_report.sections(store)


def _import_options(config: ContactConfig) -> dict[str, Any]:
    """What the run options say about an imported dataset: scale, the action and axis of rows without such
    a column, which templates to keep (--action, --axis, --scenario, --principle), row order, answer suffix
    and HolisticBias version. Options an import cannot use are refused with one line."""
    given = config.model_fields_set
    if "template_set" in given:
        raise ProbeConfigError("--template-set: not used with --templates (the imported file is the template set)")
    if "hb_version" in given and config.descriptors is not None:
        raise ProbeConfigError("--holistic-bias-version: not used with --descriptors (the descriptors come from "
                               "that file)")
    # one --scale overrides the scale read from each question's wording
    if "scales" in given and len(config.scales) > 1:
        raise ProbeConfigError(f"--scale {','.join(config.scales)}: an imported dataset takes one --scale (it "
                               f"overrides the scale read from each question), or none")
    scale = config.scales[0] if "scales" in given else None
    keep: dict[str, list[str]] = {}
    action = axis = None
    if config.actions is not None:
        if len(config.actions) > 1 and _rows_without(config, "action"):
            raise ProbeConfigError("--action: a sheet of three rows per template takes one action for the rows "
                                   "without an action column: give --action positive or --action negative")
        action = config.actions[0] if len(config.actions) == 1 else None
        keep["action"] = list(config.actions)
    if config.axes:
        if len(config.axes) > 1 and _rows_without(config, "axis"):
            name = config.templates.name if config.templates else "the sheet"
            raise ProbeConfigError(f"--axis {','.join(config.axes)}: {name} has no axis column; give one --axis "
                                   f"for its rows")
        axis = config.axes[0] if len(config.axes) == 1 else None
        keep["axis"] = list(config.axes)
    for field, values in (("scenario", config.scenarios), ("principle", config.principles)):
        if values:
            keep[field] = list(values)
    return {"scale": scale, "action": action, "axis": axis, "row_order": config.import_row_order,
            "suffix": config.import_suffix, "keep": keep, "hb_version": config.hb_version}


def _rows_without(config: ContactConfig, field: str) -> bool:
    """Whether the imported file is a three-rows-per-template sheet without a column for ``field``."""
    from biasatlas.probes.contact.importer import ROW_COLUMNS, detect_format, read_table

    assert config.templates is not None
    table = read_table(config.templates)
    if (config.import_format or detect_format(table)) != "rows":
        return False
    return not any(str(c).strip().lower() in ROW_COLUMNS[field] for c in table.columns)


class ContactProbe(Probe):
    """Contact-hypothesis prompt sets (none / positive / negative framing) in en, de and is."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = TITLE
    config_model: ClassVar[type[ProbeConfig]] = ContactConfig
    factors: ClassVar[tuple[str, ...]] = FACTORS
    languages: ClassVar[tuple[str, ...]] = tuple(shipped_languages())
    default_languages: ClassVar[tuple[str, ...]] = ("en",)
    modes: ClassVar[tuple[str, ...]] = ("choice", "generate")
    value_column: ClassVar[str | None] = "answer"

    def config(self, **values: Any) -> ProbeConfig:
        """As :meth:`Probe.config`; ``design="paper"`` first sets what the paper fixes (:mod:`.design`)."""
        if values.get("design") == "paper":
            from biasatlas.probes.contact.design import apply

            values, _ = apply(values)
        return super().config(**values)

    def plan(self, config: ProbeConfig) -> list[Prompt]:
        """Our templates' prompt sets, or an imported dataset's (``templates``); ``limit`` applied."""
        config = cast(ContactConfig, config)
        try:
            if config.templates is None:
                return build_prompts(config)
            from biasatlas.probes.contact.importer import import_dataset

            langs = config_languages(config)
            if len(langs) > 1:
                raise ProbeConfigError(f"--lang {','.join(langs)}: an imported dataset (--templates) has one language")
            prompts = import_dataset(config.templates, config.descriptors, fmt=config.import_format,
                                     language=langs[0], **_import_options(config))
        except ProbeConfigError:
            raise
        except (ValueError, DataFileError) as exc:
            raise ProbeConfigError(str(exc)) from None
        return limit_imported(prompts, config.limit, config.seed)

    def settings(self, config: ProbeConfig) -> GenerationSettings:
        """Choice mode by default; generate: 10 tokens, greedy."""
        return GenerationSettings(
            mode=self.mode_of(config),  # type: ignore[arg-type]
            max_tokens=DEFAULT_MAX_TOKENS if config.max_tokens is None else config.max_tokens,
            temperature=0.0 if config.temperature is None else config.temperature,
            seed=config.seed,
        )

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        """Sizes and factor counts (a factor an imported prompt lacks is left out), and the prompt sets."""
        summary = plan_summary(prompts, self.factors, self.samples(config), probe=self.name, mode=self.mode_of(config))
        for factor, counts in list(summary["factors"].items()):
            counts.pop("None", None)  # an imported dataset's prompts have no scenario or principle
            if not counts:
                del summary["factors"][factor]
        summary["prompt_sets"] = len({p.meta["set_id"] for p in prompts})
        if isinstance(config, ContactConfig) and config.templates is None:  # our templates: groups per language
            from biasatlas.probes.contact.wording import plan_note

            summary["groups"] = {lang: plan_note(lang, config.hb_version, config.axes)
                                 for lang in config_languages(config)}
        if isinstance(config, ContactConfig) and config.design is not None:
            from biasatlas.probes.contact.design import plan_block

            settings = self.settings(config)
            summary["design"] = plan_block(config, prompts, self.samples(config), settings.mode, settings.max_tokens)
        return summary

    def outcomes(self, store: Store) -> pd.DataFrame:
        return load_outcomes(store)

    def summarise(self, store: Store, **analysis: Any) -> dict[str, Any]:
        """See :func:`biasatlas.probes.contact.summary.summarise` (``alpha``, ``correction``)."""
        return summarise(store, **analysis)

    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        print_summary(summary, console)

    def report_sections(self, store: Store) -> list[Section]:
        return report_sections(store)


PROBE = ContactProbe()
