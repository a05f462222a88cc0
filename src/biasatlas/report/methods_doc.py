"""A probe's full methods text (``docs/methods/<probe>.md``) rendered into its report section.

The markdown is rendered with raw HTML off (markup in the text is shown as text), links reduced to their
text (a report reader has no docs folder to follow them into), images to their alt text, headings moved
below the section's own, paper numbers made author–year citations linked to the references.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from biasatlas.report.citations import cite_papers, link_citations

#: where the methods texts are: the docs folder of the source checkout biasatlas runs from
METHODS_DIR = Path(__file__).resolve().parents[3] / "docs" / "methods"


def methods_text(probe: str, directory: Path = METHODS_DIR) -> str | None:
    """The markdown of ``probe``'s methods, or None where the checkout has none (e.g. an installed wheel)."""
    path = directory / f"{probe}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


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


def methods_block(probe: str, directory: Path = METHODS_DIR) -> str | None:
    """The probe's methods as a block of its section: a collapsible 'Methods in full', or None."""
    text = methods_text(probe, directory)
    if text is None:
        return None
    return (f"<details class='methods-full' id='methods-{probe}'><summary>Methods in full: design, scoring, "
            f"statistics and every deviation from the papers</summary>{render_markdown(text)}</details>")
