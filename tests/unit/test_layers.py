"""The package's layers run one way: a module may import its own layer or a lower one, never a higher one.

Layers, highest first (see ``docs/architecture.md``, "Layers")::

    5 interface   cli/, api.py, the package root (__init__.py)
    4 workflows   audit/, batch/, export/, controls/, pack_review/, reading_step.py, reading_audit.py, study.py,
                  report/'s assembly
    3 probes      probes/
    2 analysis    readers/, tidy/, report/'s primitives, languages/ (the packs), stats/, parsing/, validity.py,
                  terminal.py
    1 execution   backends/, runner.py, planning.py, progress.py
    0 foundation  store.py, store_sql.py, records.py, decodings.py, lock.py, display.py, datafiles.py,
                  held_warnings.py, table_files.py, and the root's ``__version__``

``report/`` is split: its *primitives* render what they are given (a section, a table, a figure, a cell, a file)
and a probe may use them; its *assembly* composes a study's report out of the probes (it loads them, reads
their summaries) and sits above them. Every import counts: module-level, function-local and ``TYPE_CHECKING``
ones. An edge that cannot be moved yet is listed in ``KNOWN_EXCEPTIONS`` with its reason; the test fails on a
new upward edge and on a listed one that no longer occurs, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "biasatlas"

INTERFACE, WORKFLOWS, PROBES, ANALYSIS, EXECUTION, FOUNDATION = 5, 4, 3, 2, 1, 0
NAMES = {INTERFACE: "interface", WORKFLOWS: "workflows", PROBES: "probes", ANALYSIS: "analysis",
         EXECUTION: "execution", FOUNDATION: "foundation"}

#: the first name under ``biasatlas`` -> its layer (``report`` is split below)
TOP = {
    "cli": INTERFACE, "api": INTERFACE,
    "audit": WORKFLOWS, "batch": WORKFLOWS, "export": WORKFLOWS, "controls": WORKFLOWS, "reading_step": WORKFLOWS,
    "reading_audit": WORKFLOWS, "pack_review": WORKFLOWS, "study": WORKFLOWS,
    "probes": PROBES,
    "readers": ANALYSIS, "tidy": ANALYSIS, "languages": ANALYSIS, "stats": ANALYSIS, "parsing": ANALYSIS,
    "validity": ANALYSIS, "terminal": ANALYSIS,
    "backends": EXECUTION, "runner": EXECUTION, "planning": EXECUTION, "progress": EXECUTION,
    "store": FOUNDATION, "store_sql": FOUNDATION, "records": FOUNDATION, "decodings": FOUNDATION,
    "lock": FOUNDATION, "display": FOUNDATION, "datafiles": FOUNDATION, "held_warnings": FOUNDATION,
    "table_files": FOUNDATION,
}

#: report/'s primitives: they render what they are given; a probe may import them
REPORT_PRIMITIVES = {
    "assets", "cache", "cells", "citations", "compare", "disparity_block", "figure_fonts", "flags", "html", "latex",
    "paper", "plots", "publish", "reading_failures", "table_data",
}
#: report/'s assembly: a study's report composed out of the probes
REPORT_ASSEMBLY = {"answers", "build", "checks", "disparity", "headlines", "metadata", "methods_doc", "overview",
                   "reading"}

#: (importer, imported) -> why the upward edge is still there
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    """The layer of a module of the package; an unclassified one fails the test."""
    if module == "biasatlas":
        return INTERFACE
    if module == "biasatlas.__version__":
        return FOUNDATION
    parts = module.split(".")
    if parts[1] == "report":
        if len(parts) == 2 or parts[2] in REPORT_PRIMITIVES or parts[2] == "methods":
            return ANALYSIS
        if parts[2] in REPORT_ASSEMBLY:
            return WORKFLOWS
    if parts[1] in TOP:
        return TOP[parts[1]]
    raise AssertionError(f"{module}: in no layer; add it to TOP (or report/'s lists) in tests/unit/test_layers.py")


def _target(base: str, name: str | None) -> str:
    """The module ``from base import name`` reaches: the submodule where there is one, else ``base``."""
    if base == "biasatlas" and name == "__version__":
        return "biasatlas.__version__"
    if name is not None and f"{base}.{name}" in MODULES:
        return f"{base}.{name}"
    return base


def imports(module: str, path: Path) -> set[str]:
    """Every module of the package that ``module`` imports, anywhere in it."""
    found = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "biasatlas"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            if base.split(".")[0] == "biasatlas":
                found |= {_target(base, a.name) for a in node.names}
    return found


def upward_edges() -> set[tuple[str, str]]:
    return {(module, target) for module, path in MODULES.items() for target in imports(module, path)
            if layer(target) > layer(module)}


def test_no_module_imports_a_higher_layer() -> None:
    new = sorted(upward_edges() - set(KNOWN_EXCEPTIONS))
    assert not new, "imports from a lower layer to a higher one:\n" + "\n".join(
        f"  {a} ({NAMES[layer(a)]}) -> {b} ({NAMES[layer(b)]})" for a, b in new)


def test_known_exceptions_still_occur() -> None:
    gone = sorted(set(KNOWN_EXCEPTIONS) - upward_edges())
    assert not gone, "fixed, so take them out of KNOWN_EXCEPTIONS:\n" + "\n".join(f"  {a} -> {b}" for a, b in gone)


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer(module)
