"""What `audit --plan-only` prints under its table: one warning per real problem (the worst first), the other
notes once each (not once per model); the MDE of every test cell and the power assumptions stay in ``--json``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: fewer units than this per test: the plan cannot detect any effect a study would care about
FEW_UNITS = 3


def _where(row: Any, cell: dict[str, Any]) -> str:
    extra = " ".join(str(cell[k]) for k in ("scale", "category") if k in cell)
    return f"{row.probe} / {row.language}" + (f" / {extra}" if extra else "")


def power_warnings(rows: Sequence[Any]) -> list[str]:
    """The test cells of the plan that can detect no effect (no MDE, or fewer than FEW_UNITS units), merged over
    the models and the categories that share the problem; the fewest units first."""
    problems: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        for c in (r.power or {}).get("cells", []):
            if "mde" in c and int(c.get("n") or 0) >= FEW_UNITS:
                continue
            why = c.get("why_none") or f"MDE {c.get('mde_text')}"
            key = (r.probe, r.language, c.get("scale"), int(c.get("n") or 0), c.get("unit"), c.get("test"), why)
            found = problems.setdefault(key, {"models": [], "parts": [], "row": r, "cell": c})
            found["models"] = list(dict.fromkeys([*found["models"], r.model]))
            if c.get("category") is not None:
                found["parts"] = list(dict.fromkeys([*found["parts"], str(c["category"])]))
    lines = []
    for (probe, language, scale, n, unit, test, why), found in sorted(problems.items(), key=lambda kv: kv[0][3]):
        where = f"{probe} / {language}" + (f" / {scale}" if scale else "")
        parts = f" / {', '.join(found['parts'])}" if found["parts"] else ""
        per = " per category" if found["parts"] else ""
        models = ", ".join(found["models"])
        lines.append(f"{where}{parts}: {n} {unit}{'s' if n != 1 else ''}{per}: no effect detectable ({test}: "
                     f"{why}); raise --limit (models: {models})")
    return lines


def group_warnings(notes: Sequence[str]) -> list[str]:
    """The group-power lines (one per probe x language x axis) where no group difference is detectable."""
    return [n.removeprefix("group power: ") for n in notes if n.startswith("group power: ") and "none detectable" in n]


def terminal_notes(rows: Sequence[Any], notes: Sequence[str]) -> tuple[list[str], list[str], int]:
    """(warnings, the other notes once each, how many notes only ``--json`` shows)."""
    warnings = [*power_warnings(rows), *group_warnings(notes)]
    shown: list[str] = []
    tokenizers: dict[str, list[str]] = {}
    hidden = 0
    for note in notes:
        if note.startswith(("power: ", "power assumptions", "group power")):
            hidden += 1  # the MDE of each cell and the assumptions: --json (the problems are the warnings above)
            continue
        model, sep, by = note.partition(": tokens counted with ")
        if sep:  # one line per model: one for all
            tokenizers.setdefault(by, []).append(model)
            continue
        shown.append(note)
    shown += [f"tokens counted with {by} ({', '.join(models)})" for by, models in tokenizers.items()]
    return warnings, list(dict.fromkeys(shown)), hidden
