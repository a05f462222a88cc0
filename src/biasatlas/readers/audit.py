"""The human reading audit: a stratified sample of read answers to label by hand, and its score.

``sample`` draws answers of free text (choice-mode answers are read from probabilities, not text) stratified by
probe x language x the reader's label (unreadable and refusal included): each stratum gets an equal share of ``n``
(the small ones all they have, the rest shared out again), drawn with ``seed``. A person fills ``human_label``.
``score`` checks the file against the study, compares the human's labels with the reader's current ones and
stores the result in the study (a run of ``readers.audit`` whose totals hold it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.readers import JUDGED_PROBES

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.store import Store

AUDIT_PROBE = "readers.audit"
REFUSAL, UNREADABLE = "refusal", "unreadable"
COLUMNS = ["sample_id", "probe", "language", "model", "group", "prompt_id", "answer_key", "sample_index", "reader",
           "reader_label", "allowed_labels", "question", "answer", "human_label"]
GUIDE = """# Labelling guide for {csv}

Fill `human_label` in every row with what the answer says, as a careful reader would (not what the reader read):

- contact: one of the question's two options, exactly as listed in `allowed_labels` (e.g. `Yes` / `No`,
  `Likely` / `Unlikely`), `refusal` (the answer declines to answer) or `unreadable` (no single option: it hedges,
  names both, or answers another question);
- samaritan: the rating the answer commits to, a whole number from 1 to 100, or `refusal`, or `unreadable`.

Keep every other column as it is. Score the file with `biasatlas readers score --study STUDY {csv}`.
"""


class AuditError(ValueError):
    """A labels file that cannot be scored: the message names the row and the problem."""


def _label(probe: str, value: Any, reason: Any, options: tuple[str, ...]) -> str:
    """The reader's label of one answer, in the words a human labels with."""
    missing = value is None or (isinstance(value, float) and value != value)
    if missing:
        return REFUSAL if "refus" in str(reason or "") else UNREADABLE
    if probe == "contact":
        return options[0] if value == "affirmative" else options[1]
    return f"{float(value):g}"


def _allowed(probe: str, options: tuple[str, ...]) -> str:
    if probe == "contact":
        return " | ".join([*options[:2], REFUSAL, UNREADABLE])
    return f"1-100 | {REFUSAL} | {UNREADABLE}"


def read_answers(store: Store) -> pd.DataFrame:
    """Every answer of free text of the judged probes with its reader, the reader's label and its stratum."""
    import pandas as pd

    from biasatlas.probes import load_probe
    from biasatlas.readers.labels import question_text

    parts = []
    present = {r[0] for r in store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()}
    for name in JUDGED_PROBES:
        if name not in present:
            continue
        out = load_probe(name).outcomes(store)
        if out.empty or "reader" not in out.columns:
            continue
        out = out[out["reader"].isin(["rules", "judge"])]
        value, reason = ("answer", "reason") if name == "contact" else ("rating", "parse_reason")
        labels = [_label(name, v, r, tuple(o)) for v, r, o in zip(out[value], out[reason], out["options"],
                                                                   strict=True)]
        model = out["model_id"] if "model_id" in out.columns else out["model"]
        parts.append(pd.DataFrame({
            "probe": name, "language": out["language"].astype(str), "model": model.astype(str),
            "group": out["group"].astype(str) if "group" in out.columns else "",
            "prompt_id": out["prompt_id"], "answer_key": out["key"], "sample_index": out["sample_index"].astype(int),
            "reader": out["reader"], "reader_label": labels,
            "allowed_labels": [_allowed(name, tuple(o)) for o in out["options"]],
            "question": out["messages_json"].map(question_text), "answer": out["text"].astype(str),
            "stratum": [lab if name == "contact" or lab in (REFUSAL, UNREADABLE) else "rating" for lab in labels],
        }))
    if not parts:
        return pd.DataFrame(columns=[*COLUMNS, "stratum"])
    frame = pd.concat(parts, ignore_index=True)
    # contact's options differ by scale ("Yes"/"Likely"): its strata are the reader's label on the closed set
    frame.loc[frame["probe"] == "contact", "stratum"] = [
        s if s in (REFUSAL, UNREADABLE) else ("affirmative" if s == a.split(" | ")[0] else "negative")
        for s, a in zip(frame.loc[frame["probe"] == "contact", "stratum"],
                        frame.loc[frame["probe"] == "contact", "allowed_labels"], strict=True)]
    return frame


def allocate(sizes: dict[Any, int], n: int) -> dict[Any, int]:
    """An equal share of ``n`` per stratum, capped at its size; what a small stratum cannot take is shared again."""
    take = dict.fromkeys(sizes, 0)
    left = min(n, sum(sizes.values()))
    while left > 0:
        open_ = sorted(k for k in sizes if take[k] < sizes[k])
        share, extra = divmod(left, len(open_))
        for i, key in enumerate(open_):
            add = min(share + (1 if i < extra else 0), sizes[key] - take[key])
            take[key] += add
            left -= add
    return take


def sample(store: Store, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` answers (or all there are) stratified by probe x language x reader label, seeded; ``human_label`` empty."""
    import numpy as np
    import pandas as pd

    frame = read_answers(store)
    if frame.empty:
        return frame[COLUMNS]
    strata = frame.groupby(["probe", "language", "stratum"], sort=True).groups
    take = allocate({k: len(v) for k, v in strata.items()}, n)
    rng = np.random.default_rng(seed)
    picked = [idx for key, rows in strata.items() for idx in rng.choice(np.asarray(rows), take[key], replace=False)]
    out = frame.loc[sorted(picked)].copy()
    out = out.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # shuffled: no order to guess labels from
    out["sample_id"] = range(1, len(out) + 1)
    out["human_label"] = ""
    return pd.DataFrame(out[COLUMNS])


def guide_path(path: Path) -> Path:
    """Where the labelling guide of the sample ``path`` goes: beside it, ``PATH.md``."""
    return path.with_name(path.name + ".md")


def write_sample(frame: pd.DataFrame, path: Path) -> Path:
    """The sample as CSV (spreadsheet-safe) and its labelling guide beside it (``PATH.md``); the guide's path."""
    from biasatlas.export.write import to_csv

    to_csv(frame, path)
    guide = guide_path(path)
    guide.write_text(GUIDE.format(csv=path.name), encoding="utf-8")
    return guide


def _human(probe: str, given: str, allowed: str) -> str | None:
    """The human's label in the reader's words, or None when it is not one of the allowed labels."""
    text = given.strip()
    if text.casefold() in (REFUSAL, UNREADABLE):
        return text.casefold()
    if probe == "contact":
        options = [o.strip() for o in allowed.split(" | ")[:2]]
        found = [o for o in options if o.casefold() == text.casefold()]
        return found[0] if found else None
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return f"{value:g}" if 1 <= value <= 100 else None


def _class(probe: str, label: str, allowed: str) -> str:
    """A label's class: contact affirmative / negative (its scale's first or second option), samaritan rating."""
    if label in (REFUSAL, UNREADABLE):
        return label
    if probe == "contact":
        return "affirmative" if label == allowed.split(" | ")[0].strip() else "negative"
    return "rating"


def check_labels(store: Store, labels: pd.DataFrame) -> pd.DataFrame:
    """The labelled rows joined with the study's current reading, each with the key of the answer it labels
    (``answer_key``: the scoring counts an answer once); AuditError names each problem found."""
    # answer_key may be missing (a file cut down by hand): the study's key of the answer the row names is used
    required = ["sample_id", "probe", "prompt_id", "sample_index", "model", "human_label"]
    missing = [c for c in required if c not in labels.columns]
    if missing:
        raise AuditError(f"the labels file lacks the column(s) {', '.join(missing)} (draw it with `readers sample`)")
    if labels.empty:
        raise AuditError("the labels file has no rows")
    problems: list[str] = []
    answers = read_answers(store)
    # each stratum's answers in the study: the weights of the study-level accuracy (readers.scoring)
    sizes = answers.groupby(["probe", "language", "stratum"])["answer_key"].nunique().to_dict()
    current = answers.set_index(["probe", "prompt_id", "model", "sample_index"])
    rows = []
    answer_of_id: dict[str, str] = {}  # sample_id -> answer key: one id names one answer (a copied row is fine)
    for line, row in enumerate(labels.to_dict("records"), start=2):  # line 1 is the header
        where = f"line {line} (sample_id {row['sample_id']})"
        key = (str(row["probe"]), str(row["prompt_id"]), str(row["model"]), int(row["sample_index"]))
        if key not in current.index:
            problems.append(f"{where}: no such answer in the study (probe, prompt_id, model, sample_index)")
            continue
        found = current.loc[[key]].iloc[0]
        answer = str(found["answer_key"])
        given_key = row.get("answer_key")
        given_key = given_key.strip() if isinstance(given_key, str) else ""  # an empty cell (or NaN): the study's
        if given_key and given_key != answer:
            problems.append(f"{where}: answer_key {given_key} is not the key of that answer in the study ({answer})")
            continue
        if answer_of_id.setdefault(str(row["sample_id"]), answer) != answer:
            problems.append(f"{where}: sample_id {row['sample_id']} names two different answers")
            continue
        given = row["human_label"]
        if not isinstance(given, str) or not given.strip():
            problems.append(f"{where}: human_label is empty")
            continue
        human = _human(key[0], given, str(found["allowed_labels"]))
        if human is None:
            problems.append(f"{where}: human_label {given!r} is not one of: {found['allowed_labels']}")
            continue
        rows.append({"probe": key[0], "answer_key": answer, "sample_id": str(row["sample_id"]),
                     "language": found["language"], "group": found["group"],
                     "reader": found["reader"], "reader_label": found["reader_label"], "human_label": human,
                     "reader_class": found["stratum"],
                     "stratum_size": int(sizes[(key[0], found["language"], found["stratum"])]),
                     "human_class": _class(key[0], human, str(found["allowed_labels"]))})
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise AuditError(f"{len(problems)} problem(s) in the labels file: {shown}")
    import pandas as pd

    return pd.DataFrame(rows)


def file_digest(path: Path) -> str:
    """The sha256 of a labels file (which file a stored score came from)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def store_score(store: Store, result: dict[str, Any], source: str, digest: str) -> int:
    """Record the score as a finished run of ``readers.audit`` (its totals' ``info["audit"]``); the run id."""
    from biasatlas import __version__
    from biasatlas.runner import RunTotals

    config = {"labels_file": source, "sha256": digest}
    run_id = store.start_run(AUDIT_PROBE, "human", config, __version__, planned=0)
    totals = RunTotals(run_id=run_id, status="done", info={"audit": result})
    store.finish_run(run_id, "done", totals.as_dict())
    return run_id


def stored_score(store: Store) -> dict[str, Any] | None:
    """The latest stored audit result, or None when no human check was made."""
    row = store.conn.execute("SELECT totals_json FROM runs WHERE probe = ? AND status = 'done' "
                             "ORDER BY run_id DESC LIMIT 1", (AUDIT_PROBE,)).fetchone()
    if row is None:
        return None
    audit = (json.loads(row[0] or "{}").get("info") or {}).get("audit")
    return audit if isinstance(audit, dict) else None


def validity_lines(store: Store, probe: str, outcomes: pd.DataFrame | None = None) -> list[str]:
    """The report's line per language of ``probe``: the human check of the reading, or that none was made."""
    languages = sorted({str(x) for x in outcomes["language"]}) if outcomes is not None and not outcomes.empty else []
    checked = {(c["probe"], c["language"]): c for c in (stored_score(store) or {}).get("by_probe_language", [])}
    lines = []
    for language in sorted(set(languages) | {lang for p, lang in checked if p == probe}):
        cell = checked.get((probe, language))
        if cell is None:
            lines.append(f"{probe}, {language}: no human check of the reading was made")
        elif cell.get("study_level"):  # the study's figure: the sample's strata weighted by their sizes
            study = cell["study_level"]
            low, high = study["ci"]
            lines.append(f"{probe}, {language}: reading checked on {cell['n']} human-labelled answers: "
                         f"{study['accuracy_pct']:.1f}% [95% CI {100 * low:.1f}, {100 * high:.1f}] of the study's "
                         f"answers read as the human read them (study-level, strata weighted by size; sample "
                         f"accuracy {cell['accuracy_pct']:.1f}%)")
        else:
            low, high = cell["ci"]
            lines.append(f"{probe}, {language}: reading checked on {cell['n']} human-labelled answers: "
                         f"{cell['accuracy_pct']:.1f}% [95% CI {100 * low:.1f}, {100 * high:.1f}] of the sample "
                         "read as the human read them")
    return lines
