"""``--design paper`` for the stories probe: what StereoTales (Le Jeune et al., 2025) fixed.

Every story prompt (79 attribute values × 36 scenarios) in the paper's ten languages, one story a prompt (about
650k stories from 23 models × 30k prompts), and every story read by an ensemble of three extractors whose
majority vote makes its profile. What it cannot set: the paper names neither its three extractor models (the
user gives three) nor its generation settings beyond "a short narrative (~200 words)"; ours stay
``--temperature 1.0`` and ``--max-tokens 2048``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biasatlas.probes.base import ProbeConfigError
from biasatlas.records import Prompt

PAPER = "Le Jeune et al., 2025 (StereoTales)"
PAPER_LANGUAGES = ("en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh")
PAPER_EXTRACTORS = 3
#: the paper's count: "~2800 story generation prompts" a language, "30k prompts" in all
PAPER_PROMPTS = "~2,800"
UNSTATED = ("not stated by the paper: its three extractor models (give three --extractor) and its generation "
            "settings beyond a ~200-word story (ours: --temperature 1.0, --max-tokens 2048)")


def _refuse(option: str, given: Any, wanted: str) -> ProbeConfigError:
    return ProbeConfigError(f"--design paper: {option} {given} differs from the paper's design ({wanted}); "
                            f"leave {option} out, or run without --design")


def apply(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The config values with the paper's design set, and one line per value; a value given otherwise is refused."""
    out = dict(values)
    languages = values.get("languages")
    if languages:
        given = languages.split(",") if isinstance(languages, str) else list(languages)
        if sorted(given) != sorted(PAPER_LANGUAGES):
            raise _refuse("--lang", ",".join(given), ",".join(PAPER_LANGUAGES))
    if values.get("samples") not in (None, 1):
        raise _refuse("--samples", values["samples"], "1 story a prompt")
    if values.get("extract") is False:
        raise _refuse("--no-extract", "", f"{PAPER_EXTRACTORS} extractors and their majority vote")
    extractors = list(values.get("extractors") or [])
    if len(extractors) != PAPER_EXTRACTORS:
        shown = ",".join(extractors) if extractors else "(none: the generator extracts its own)"
        raise ProbeConfigError(f"--design paper: --extractor {shown}: the paper reads every story with an ensemble "
                               f"of {PAPER_EXTRACTORS} models and keeps their majority vote; give "
                               f"{PAPER_EXTRACTORS} --extractor models (the paper does not name its own)")
    out.update(languages=list(PAPER_LANGUAGES), samples=1, extractors=extractors)
    said = [f"the paper: {PAPER}", f"--lang {','.join(PAPER_LANGUAGES)}", "--samples 1",
            f"extraction: {', '.join(extractors)}, majority vote of the readable extractions", UNSTATED]
    return out, said


def plan_block(config: Any, prompts: Sequence[Prompt]) -> dict[str, Any]:
    """The ``design`` entry of ``--plan-only``: the paper's counts beside ours and what cannot be matched."""
    from biasatlas.probes.stories.seeds import load_seeds

    per_language = {}
    for language in PAPER_LANGUAGES:
        seeds = load_seeds(language)
        per_language[language] = len(seeds.prompted) * len(seeds.scenarios)
    ours = max(per_language.values())
    _, said = apply({"extractors": list(config.extractors or [])[:PAPER_EXTRACTORS]
                     or ["extractor"] * PAPER_EXTRACTORS})
    return {
        "name": "paper", "paper": PAPER, "set": said, "limited": config.limit is not None,
        "prompts_per_language": {"ours": ours, "paper": PAPER_PROMPTS},
        "design_prompts": sum(per_language.values()), "asked_prompts": len(prompts),
        "extractors": list(config.extractors or []),
        "why": "79 attribute values × 36 scenarios = 2,844 prompts a language (the paper: ~2,800), "
               f"{sum(per_language.values()):,} in its ten languages (the paper: 30k)",
    }
