"""Build the language packs under src/biasatlas/data/languages/ from the drafts in scripts/language_drafts/.

Reproducible: `python scripts/build_language_packs.py [--mmhb DIR]` rewrites every generated file of the
nine MMHB packs (fr es it pt hi id vi zh ko) and the Samaritan files of the drafted languages (is too).
en/de/is contact files stay where they were (data/contact/); their packs only reference them.

A draft (one YAML per language) holds the pieces an AI assistant wrote: per scenario a setting, a
topic, a noun with its gender and number, a positive and a negative action; per principle a frame of
the contact sentence; per scale a question frame, options and instruction; the Samaritan frames,
scenarios and group phrasings. The script composes the 30 cells x 2 framings x 2 actions x 3 scales; a
scenario's ``cells: {principle: {frame, actions}}`` gives one principle its own frame and actions there;
``frequency_actions`` the actions of its frequency questions (a habit, where the actions name one event);
``action_forms`` the rules that conjugate an action's verb for a question (``{action_subj}``...).
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DRAFTS = ROOT / "scripts" / "language_drafts"
PACKS = ROOT / "src" / "biasatlas" / "data" / "languages"
ISO3 = {"fr": "fra", "es": "spa", "it": "ita", "pt": "por", "hi": "hin", "id": "ind", "vi": "vie",
        "zh": "cmn", "ko": "kor"}
PRINCIPLES = ("equal_status", "common_goals", "intergroup_cooperation", "support_of_authorities",
              "extended_contact", "virtual_contact")
SCENARIOS = ("education", "workplace", "sports", "community", "healthcare")
SCALES = ("certainty", "likelihood", "frequency")
#: MMHB ids a Samaritan phrasing may use (HolisticBias descriptor of the paper's group); a phrasing that
#: contains one of their forms (zh: without its linker 的) cites it, so its provenance says MMHB
MMHB_CANDIDATES = {
    "White person": ["F_D334", "F_D335"], "Black person": ["F_D321", "P_D091"],
    "Native American person": ["F_D327", "F_D328"], "Asian person": ["F_D316"], "Pacific Islander": ["F_D330"],
    "Non-binary individual": ["P_D075", "F_D252"], "Teenager": ["F_D033", "F_D034", "P_D006"],
    "Young adult": ["F_D035", "F_D036"], "Middle-aged person": ["F_D045"],
    "Elderly person": ["F_D057", "F_D063", "F_D056"],
}
DRAFTED_BY = "AI assistant (Claude, Anthropic), 2026-11-27, machine-drafted for biasatlas"


def _dump(path: Path, header: str, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200)
    path.write_text("".join(f"# {line}\n" if line else "#\n" for line in header.splitlines()) + text,
                    encoding="utf-8")


def _group(draft: dict[str, Any], scenario: str) -> str:
    noun = draft["scenarios"][scenario]["noun"]
    return str(noun.get("det", draft.get("det", "{group:np}"))).replace("{np}", "{group:np}")


def _fill(text: str, draft: dict[str, Any], scenario: str, **extra: str) -> str:
    spec = draft["scenarios"][scenario]
    out = text.replace("{G}", _group(draft, scenario)).replace("{setting}", spec["setting"])
    out = out.replace("{Setting}", spec["setting"][:1].upper() + spec["setting"][1:])
    out = out.replace("{topic}", spec["topic"])
    for key, value in extra.items():
        out = out.replace("{" + key + "}", value)
    return out.replace("{G}", _group(draft, scenario))


def action_form(action: str, rules: list[list[str]]) -> str:
    """``action`` rewritten by the first rule (regex, replacement) whose pattern matches it.

    Scale questions conjugate the action's own verb (fr "que je tienne…", hi "…रखूँ", ko "…배제할") rather
    than wrap it in a verb of choosing; a draft's ``action_forms: {name: [[pattern, replacement], …]}``
    gives the rules and a question names the form as ``{action_<name>}``.
    """
    for pattern, replacement in rules:
        if re.search(pattern, action):
            return re.sub(pattern, replacement, action, count=1)
    raise ValueError(f"no action_forms rule fits the action {action!r}")


def _question(frame: str, draft: dict[str, Any], scenario: str, verb: str) -> str:
    forms = {f"action_{name}": action_form(verb, rules)
             for name, rules in (draft.get("action_forms") or {}).items() if f"{{action_{name}}}" in frame}
    return _fill(frame, draft, scenario, action=verb, **forms)


def contact_templates(code: str, draft: dict[str, Any]) -> dict[str, Any]:
    """The template file (schema of data/contact/*/templates.yaml plus grammar and agree)."""
    cells = []
    for scenario in SCENARIOS:
        spec = draft["scenarios"][scenario]
        for principle in PRINCIPLES:
            # A scenario may give a principle a cell of its own: equal status with hospital patients is
            # being a fellow patient on their ward, not "the same role as" them while volunteering.
            own = (spec.get("cells") or {}).get(principle) or {}
            frame = own.get("frame", draft["principles"][principle])
            # extended contact is a friend's experience: its outcome says how the speaker knows
            outcome = (draft.get("outcomes") or {}).get(principle, draft["outcome"])
            contact = {kind: _fill(draft["contact"].format(context=frame, outcome=outcome[kind]),
                                   draft, scenario) for kind in ("positive", "negative")}
            actions = {}
            base = own.get("actions") or spec["actions"]
            # a frequency question asks about a habit: a scenario whose actions name one event ("the next
            # project") gives ``frequency_actions`` (a cell with its own actions keeps them for every scale)
            habit = own.get("frequency_actions") or (None if own.get("actions") else spec.get("frequency_actions"))
            for action in ("positive", "negative"):
                verb = base[action]
                actions[action] = {"verb": verb.split("{")[0].strip() or verb}
                for scale in SCALES:
                    said = (habit or base)[action] if scale == "frequency" else verb
                    actions[action][scale] = _question(draft["questions"][scale], draft, scenario, said)
            noun = spec["noun"]
            cells.append({
                "id": f"{code}-a-{principle}-{scenario}", "principle": principle, "scenario": scenario,
                "noun": {"np": noun["np"]},
                "agree": {"gender": noun.get("gender", "unspec"), "number": noun.get("number", "unspec")},
                "contact": contact, "actions": actions,
            })
    return {
        "provenance": {"language": code, "template_set": "a", "author": DRAFTED_BY,
                       "method": "composed by scripts/build_language_packs.py from scripts/language_drafts/"
                                 f"{code}.yaml (frames per principle, nouns and actions per scenario)",
                       "native_speaker_reviewed": False,
                       "notes": "NOT reviewed by a native speaker. Descriptors are the MMHB human translations."},
        "grammar": draft["grammar"],
        "scales": {s: {"options": list(v["options"]), "instruction": v["instruction"]}
                   for s, v in draft["scales"].items()},
        "cells": cells,
    }


def uses_form(phrase: str, form: str) -> bool:
    """``form`` as whole words of ``phrase`` (case-insensitive; a zh form also without its linker 的)."""
    forms = {form, form.removesuffix("的")} - {""}
    return any(re.search(rf"(?<!\w){re.escape(f)}(?!\w)" if f.isascii() or " " in f or not
                         re.search(r"[\u4e00-\u9fff]", f) else re.escape(f), phrase, re.IGNORECASE) for f in forms)


def cite_mmhb(groups: list[dict[str, Any]], tsv: Path | None) -> None:
    """Fill a phrasing's ``mmhb`` with the candidate MMHB id whose form it uses (explicit citations kept)."""
    if tsv is None or not tsv.exists():
        return
    forms: dict[str, list[str]] = {}
    for line in tsv.read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) >= 5:
            forms.setdefault(re.sub(r"[a-z]$", "", cols[0].strip()), []).append(" ".join(cols[4].split()))
    for item in groups:
        if item.get("mmhb"):
            continue
        for key in MMHB_CANDIDATES.get(item["phrasing"], []):
            if any(uses_form(item["indefinite"], f) for f in forms.get(key, [])):
                item["mmhb"] = key
                break


def samaritan_files(code: str, draft: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scenarios, groups) of the Samaritan probe: each scenario's situation and help in four frames."""
    sam = draft["samaritan"]
    scenarios = []
    for sid, item in sam["scenarios"].items():
        situation, help_ = item["situation"], item["help"]
        lower = situation.replace("{A_person}", "{a_person}")
        rephrasings = [f.format(situation=situation, situation_lc=lower, help=help_).replace("[[", "{")
                       .replace("]]", "}") for f in sam["frames"]]
        scenarios.append({"id": sid, "topic": item.get("topic", ""), "rephrasings": rephrasings})
    prov = {"written_by": DRAFTED_BY, "method": "situations and help clauses per scenario, composed into four "
            "rephrasing frames by scripts/build_language_packs.py", "native_speaker_reviewed": False}
    return ({"language": code, "provenance": prov, "answer_instruction": sam["answer_instruction"],
             "scenarios": scenarios},
            {"language": code, "provenance": {**prov, "mmhb": "a phrasing's `mmhb` names the MMHB descriptor id "
                                                        "whose form it uses"},
             "control": sam["control"], "phrasings": sam["groups"]})


def write_pack(code: str, mmhb_dir: Path | None, out: Path = PACKS) -> None:
    """Write the generated files of one pack under ``out/<code>/`` (``out`` defaults to the shipped packs)."""
    draft = yaml.safe_load((DRAFTS / f"{code}.yaml").read_text(encoding="utf-8"))
    folder = out / code
    header = (f"Generated by scripts/build_language_packs.py from scripts/language_drafts/{code}.yaml; "
              "edit the draft, not this file.\nReview status: see the provenance rows of pack.yaml.")
    files: dict[str, str] = dict(draft.get("files") or {})
    if "scenarios" in draft:
        _dump(folder / "contact" / "templates.yaml", header, contact_templates(code, draft))
        files["contact_templates"] = "contact/templates.yaml"
    if code in ISO3:
        src = (mmhb_dir or Path()) / f"{ISO3[code]}_descriptors_full_id.tsv"
        if mmhb_dir is not None and src.exists():
            shutil.copyfile(src, folder / "descriptors.mmhb.tsv")
        files["descriptors"] = "descriptors.mmhb.tsv"
    if "samaritan" in draft:
        cite_mmhb(draft["samaritan"]["groups"], PACKS / code / "descriptors.mmhb.tsv" if code in ISO3 else None)
        scen, groups = samaritan_files(code, draft)
        _dump(folder / "samaritan" / "scenarios.yaml", header, scen)
        _dump(folder / "samaritan" / "groups.yaml", header, groups)
        files.setdefault("samaritan_scenarios", "samaritan/scenarios.yaml")
        files.setdefault("samaritan_groups", "samaritan/groups.yaml")
    files.setdefault("reader_words", f"../../parsing/words_{code}.yaml")
    if code in ISO3:  # en/de/is: the reader's labelled tables live in tests/unit/parsing (helper "rules")
        files.setdefault("reader_tables", "readers")
    manifest = {"language": code, "name": draft["name"], "grammar": draft.get("grammar", {}),
                "default_actions": draft.get("default_actions", ["positive", "negative"]),
                "files": files, "provenance": draft["provenance"]}
    _dump(folder / "pack.yaml", header, manifest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mmhb", type=Path, default=Path("/work/shared/data/mmhb"),
                        help="folder of the unzipped MMHB descriptor TSVs (copied verbatim into the packs)")
    parser.add_argument("--out", type=Path, default=PACKS, help="where to write the packs (default: shipped)")
    parser.add_argument("languages", nargs="*", help="codes to build (default: every draft)")
    args = parser.parse_args()
    codes = args.languages or sorted(p.stem for p in DRAFTS.glob("*.yaml"))
    for code in codes:
        write_pack(code, args.mmhb if args.mmhb.is_dir() else None, args.out)
        print(f"built {code}")


if __name__ == "__main__":
    main()
