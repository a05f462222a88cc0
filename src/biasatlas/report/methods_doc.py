"""A probe's full methods text rendered into its report section, for a reader of the report.

The text ships with the package (``biasatlas/report/methods/<probe>.md``, read through importlib.resources,
so an installed wheel's report has it too); in the source tree those files are the project's methods pages.
Before rendering, what only a developer can use is taken out (:func:`for_readers`): issue numbers, paths of
the source tree and its tests, the numbers of the papers' files, and sections that report one particular run.
The markdown is rendered with raw HTML off (markup in the text is shown as text), links reduced to their
text, images to their alt text, headings moved below the section's own, paper numbers made author–year
citations linked to the references.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from biasatlas.report.citations import cite_papers, link_citations

#: sections of a methods page that report one run's figures (another study's numbers): not in a report
RUN_SECTIONS = re.compile(r"^(#+) On the embedded model\b")

#: a code span that names a path, a module file or a shell recipe (each code span is matched whole, in order)
_DEVELOPER_CODE = re.compile(r"/|\.py\b|\.csv\b|PYTHONPATH|^`\w+\.\w+`$")

_DROPS: list[tuple[re.Pattern[str], Any]] = [
    # "(issue 25)", "(checked by the review of issue 25 ...)": a developer's reference, with its parenthesis
    (re.compile(r" ?\((?:[^()]|\([^()]*\))*?\b[Ii]ssues? \d+(?:[^()]|\([^()]*\))*\)"), ""),
    (re.compile(r"\b(?:Until|Before|Since|After) issue \d+[^.]*\.\s*"), ""),
    (re.compile(r"\b[Ii]ssues? \d+:?\s*"), ""),
    (re.compile(r"^Code: .*?\)\.\s*", re.M | re.S), ""),  # the opening "Code: src/... (modules)." sentence
    # a link or a path to another page of the docs: its name, for a reader without the docs folder
    (re.compile(r"\[(?:docs/)?([\w-]+)\.md\]\([^)]*\)"), r"the biasatlas guide “\1”"),
    (re.compile(r"`?\bdocs/([\w-]+)\.md`?"), r"the biasatlas guide “\1”"),
    # paths of the source tree, its tests and the papers' files, and module names in code format
    (re.compile(r"`[^`]*`"), lambda m: "" if _DEVELOPER_CODE.search(m[0]) else m[0]),
    (re.compile(r"\b(?:src|tests|benchmarks|shared)/[\w./*-]+"), ""),
    (re.compile(r"\b([Pp]apers?) (00\d)/(00\d)\b"), r"papers \2 and \3"),
]
_TIDY: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\(\s*[,;]\s*"), "("),
    (re.compile(r"\s*[,;]\s*\)"), ")"),
    (re.compile(r" ?\(\s*\)"), ""),
    (re.compile(r"\(\s+"), "("),
    (re.compile(r"[ \t]+([,.;:])"), r"\1"),
    (re.compile(r"(?<=\S)[ \t]{2,}"), " "),  # not a line's indent: it nests a list
]


def for_readers(text: str) -> str:
    """The methods markdown without what only a developer can use (see the module's docstring)."""
    kept, drop_level = [], 0
    for line in text.splitlines():
        heading = re.match(r"^(#+) ", line)
        if heading and drop_level and len(heading[1]) <= drop_level:
            drop_level = 0
        run = RUN_SECTIONS.match(line)
        if run:
            drop_level = len(run[1])
        if not drop_level:
            kept.append(line)
    out = "\n".join(kept)
    for pattern, repl in _DROPS + _TIDY:
        out = pattern.sub(repl, out)
    return out


def methods_text(probe: str, directory: Path | None = None) -> str | None:
    """The markdown of ``probe``'s methods (the package's copy, or ``directory``'s), or None where none is."""
    if directory is not None:
        path = directory / f"{probe}.md"
        return path.read_text(encoding="utf-8") if path.is_file() else None
    source = resources.files("biasatlas.report").joinpath("methods", f"{probe}.md")
    return source.read_text(encoding="utf-8") if source.is_file() else None


@cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str, *, top_level: int = 3) -> str:
    """Safe HTML of ``text``: no raw HTML, no links or images, ``#`` headings start at ``<h{top_level}>``."""
    from markdown_it.token import Token

    md = _parser()
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + top_level - 1)}"
        if token.type != "inline" or not token.children:
            continue
        children = []
        for child in token.children:
            if child.type in ("link_open", "link_close"):
                continue  # keep the link's text, drop the target
            if child.type == "image":
                children.append(Token("text", "", 0, content=child.content))
                continue
            if child.type == "text":
                child.content = cite_papers(child.content)
            children.append(child)
        token.children = children
    return link_citations(md.renderer.render(tokens, md.options, {}))


def methods_block(probe: str, directory: Path | None = None) -> str | None:
    """The probe's methods as a block of its section: a collapsible 'Methods in full', or None."""
    text = methods_text(probe, directory)
    if text is None:
        return None
    text = for_readers(text)
    return (f"<details class='methods-full' id='methods-{probe}'><summary>Methods in full: design, scoring, "
            f"statistics and every deviation from the papers</summary>{render_markdown(text)}</details>")
