"""Who read an answer, and how well: a judge model beside the rule readers, and a human reading audit.

- :mod:`~biasatlas.readers.labels`: the closed label sets per probe and scale, and the judge's prompts per language.
- :mod:`~biasatlas.readers.judge`: which answers a judge reads, asking it (its answers are stored and cached like
  any model answer), its labels, and the reading recorded for a probe (rules, judge or both).
- :mod:`~biasatlas.readers.merge`: the rules' outcomes with the judge's labels merged in, and a ``reader`` column.
- :mod:`~biasatlas.readers.agreement`: rules-vs-judge agreement (Cohen's kappa with its CI) and the disagreements.
- :mod:`~biasatlas.reading_audit` (above the readers: it reads the probes' outcomes): the human reading audit (a
  stratified sample to label, its score).

Nothing here imports pandas, scipy or statsmodels at import time (the CLI starts without them).
"""

from __future__ import annotations

#: the readers a run can ask for (``--reader``)
READERS = ("rules", "judge", "both")
#: the probes whose answers are free text a judge can read (stories and leakage have readers of their own)
JUDGED_PROBES = ("contact", "samaritan")
#: the outcomes column naming the reader of each answer's label
READER_COLUMN = "reader"

#: what the reading columns of a judged probe's outcomes (and exports) mean
READING_COLUMNS: dict[str, str] = {
    READER_COLUMN: "Who produced the answer's label: `rules` (the rule reader), `judge` (a judge model, see "
    "`docs/reading.md`) or `probability` (choice mode: the most probable option); empty when not answered.",
    "rules_label": "What the rule reader read, on the judge's closed set: the option (`affirmative`/`negative`) or "
    "rating, `refusal` or `unclear`; empty for choice-mode and unanswered rows.",
    "judge_label": "What the judge model read (same set as rules_label); empty where no judge read the answer.",
}
