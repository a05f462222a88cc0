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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.readers import JUDGED_PROBES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from biasatlas.store import Store

AUDIT_PROBE = "readers.audit"
REFUSAL, UNREADABLE = "refusal", "unreadable"
COLUMNS = ["sample_id", "probe", "language", "model", "group", "prompt_id", "answer_key", "sample_index", "reader",
           "reader_label", "allowed_labels", "question", "answer", "human_label"]
#: the columns :func:`check_labels` reads (the rest are there for the person labelling)
SCORED_COLUMNS = ("sample_id", "probe", "prompt_id", "model", "sample_index", "answer_key", "human_label")
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
        options = [tuple(o) for o in _py(out["options"])]
        labels = [_label(name, v, r, o) for v, r, o in zip(_py(out[value]), _py(out[reason]), options, strict=True)]
        messages = _py(out["messages_json"])
        questions = {m: question_text(m) for m in set(messages)}  # a prompt's question is read once
        model = out["model_id"] if "model_id" in out.columns else out["model"]
        parts.append(pd.DataFrame({
            "probe": name, "language": out["language"].astype(str), "model": model.astype(str),
            "group": out["group"].astype(str) if "group" in out.columns else "",
            "prompt_id": out["prompt_id"], "answer_key": out["key"], "sample_index": out["sample_index"].astype(int),
            "reader": out["reader"], "reader_label": labels,
            "allowed_labels": [_allowed(name, o) for o in options],
            "question": [questions[m] for m in messages], "answer": out["text"].astype(str),
            "stratum": [lab if name == "contact" or lab in (REFUSAL, UNREADABLE) else "rating" for lab in labels],
        }))
    if not parts:
        return pd.DataFrame(columns=[*COLUMNS, "stratum"])
    frame = pd.concat(parts, ignore_index=True)
    # contact's options differ by scale ("Yes"/"Likely"): its strata are the reader's label on the closed set
    contact = frame["probe"] == "contact"
    frame.loc[contact, "stratum"] = [
        s if s in (REFUSAL, UNREADABLE) else ("affirmative" if s == a.split(" | ")[0] else "negative")
        for s, a in zip(_py(frame.loc[contact, "stratum"]), _py(frame.loc[contact, "allowed_labels"]), strict=True)]
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


def write_sample(frame: pd.DataFrame, path: Path) -> Path:
    """The sample as CSV (spreadsheet-safe) and its labelling guide beside it (``PATH.md``); the guide's path."""
    from biasatlas.table_files import to_csv_with_guide

    return to_csv_with_guide(frame, path, GUIDE.format(csv=path.name))


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
    (``answer_key``: the scoring counts an answer once); AuditError names each problem found.

    Column-wise: one join with the study, and each distinct label text read once (a file has a few label
    texts per scale, however many rows): a 504,000-row file is checked in seconds, where a row-by-row lookup
    took ~1.7 ms a row.
    """
    import numpy as np
    import pandas as pd

    # answer_key may be missing (a file cut down by hand): the study's key of the answer the row names is used
    required = ["sample_id", "probe", "prompt_id", "sample_index", "model", "human_label"]
    missing = [c for c in required if c not in labels.columns]
    if missing:
        raise AuditError(f"the labels file lacks the column(s) {', '.join(missing)} (draw it with `readers sample`)")
    if labels.empty:
        raise AuditError("the labels file has no rows")
    answers = read_answers(store)
    # each stratum's answers in the study: the weights of the study-level accuracy (readers.scoring)
    sizes = answers.groupby(["probe", "language", "stratum"])["answer_key"].nunique().rename("stratum_size")
    ident = ["probe", "prompt_id", "model", "sample_index"]
    study = answers.drop_duplicates(ident, keep="first")  # the first answer a key names, as a lookup takes it
    study = study.merge(sizes.reset_index(), on=["probe", "language", "stratum"], how="left")
    study = study[[*ident, "answer_key", "language", "group", "reader", "reader_label", "stratum", "allowed_labels",
                   "stratum_size"]].astype({"prompt_id": str, "model": str})
    rows = pd.DataFrame({
        "sample_id": labels["sample_id"].astype(str).to_numpy(),
        "probe": labels["probe"].astype(str).to_numpy(), "prompt_id": labels["prompt_id"].astype(str).to_numpy(),
        "model": labels["model"].astype(str).to_numpy(),
        "sample_index": pd.to_numeric(labels["sample_index"], errors="coerce").fillna(-1).astype(int).to_numpy(),
    })
    joined = rows.merge(study, on=ident, how="left", sort=False, validate="many_to_one")  # keeps the file's order
    given = _py(labels["human_label"])  # kept as given (a number or NaN in a frame built in code is no label)
    given_key = (_each_distinct(lambda v: v.strip() if isinstance(v, str) else "", _py(labels["answer_key"]))
                 if "answer_key" in labels.columns else np.full(len(rows), "", dtype=object))
    answer = _py(joined["answer_key"].astype(str))
    allowed = _py(joined["allowed_labels"].astype(str))
    # one problem a line, the first that applies, in this order
    problem = np.zeros(len(rows), dtype=np.int8)
    found = joined["answer_key"].notna().to_numpy()
    problem[~found] = NO_ANSWER
    problem[(problem == 0) & (given_key != "") & (given_key != answer)] = OTHER_KEY
    passed = problem == 0  # one id names one answer (a copied row is fine): the id's first row says which
    first = joined.loc[passed, "answer_key"].groupby(joined.loc[passed, "sample_id"], sort=False).transform("first")
    problem[np.flatnonzero(passed)[(first != joined.loc[passed, "answer_key"]).to_numpy()]] = TWO_ANSWERS
    filled = _each_distinct(lambda g: isinstance(g, str) and bool(g.strip()), given).astype(bool)
    problem[(problem == 0) & ~filled] = EMPTY
    todo = problem == 0
    human = np.full(len(rows), None, dtype=object)
    human[todo] = _each_distinct(_human, _py(joined["probe"])[todo], given[todo], allowed[todo])
    problem[todo & pd.isna(human)] = NOT_ALLOWED
    if problem.any():
        lines = np.flatnonzero(problem)
        shown_ids = labels["sample_id"].to_numpy()
        texts = {NO_ANSWER: lambda i: "no such answer in the study (probe, prompt_id, model, sample_index)",
                 OTHER_KEY: lambda i: f"answer_key {given_key[i]} is not the key of that answer in the study "
                                      f"({answer[i]})",
                 TWO_ANSWERS: lambda i: f"sample_id {shown_ids[i]} names two different answers",
                 EMPTY: lambda i: "human_label is empty",
                 NOT_ALLOWED: lambda i: f"human_label {given[i]!r} is not one of: {allowed[i]}"}
        listed = [f"line {i + 2} (sample_id {shown_ids[i]}): {texts[int(problem[i])](i)}"  # line 1: the header
                  for i in lines[:5]]
        shown = "; ".join(listed) + (f"; and {len(lines) - 5} more" if len(lines) > 5 else "")
        raise AuditError(f"{len(lines)} problem(s) in the labels file: {shown}")
    classes = _each_distinct(_class, _py(joined["probe"]), human, allowed)
    out = joined.assign(human_label=human, reader_class=joined["stratum"], human_class=classes,
                        stratum_size=joined["stratum_size"].astype(int))
    return pd.DataFrame(out[["probe", "answer_key", "sample_id", "language", "group", "reader", "reader_label",
                             "human_label", "reader_class", "stratum_size", "human_class"]])


#: what is wrong with a labels file's line (0: nothing)
NO_ANSWER, OTHER_KEY, TWO_ANSWERS, EMPTY, NOT_ALLOWED = 1, 2, 3, 4, 5


def _each_distinct(func: Callable[..., Any], *columns: np.ndarray) -> np.ndarray:
    """``func`` of each row's values, called once per distinct combination (a file repeats a few label texts)."""
    import numpy as np
    import pandas as pd

    n = len(columns[0])
    if not n:
        return np.empty(0, dtype=object)
    combined = np.zeros(n, dtype=np.int64)
    for column in columns:  # one code per distinct combination, renumbered after each column (never overflows)
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        combined, _ = pd.factorize(combined * len(uniques) + codes)
    _, first = np.unique(combined, return_index=True)  # code k is first met at first[k]
    values = np.empty(len(first), dtype=object)
    values[:] = [func(*(column[i] for column in columns)) for i in first]
    return values[combined]


def _py(column: pd.Series) -> np.ndarray:
    """The column as Python objects: iterating a pandas string column itself costs ~7 µs a cell, this ~0.3."""
    return column.to_numpy(dtype=object)


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
