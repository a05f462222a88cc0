"""Author–year citations in the report: paper numbers become "Raj et al., 2024", linked to the bibliography.

The code and the docs name the papers by their number in ``shared/papers/`` ("paper 001 Table 3"), which a
reader of a report cannot resolve; ``cite_papers`` rewrites such text for the page and the files, and
``link_citations`` makes every author–year citation in escaped HTML a link to its reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """One entry of the bibliography: its anchor key, how the text cites it, the full reference."""

    key: str
    authors: str
    year: str
    text: str
    number: str = ""  # the paper's number in shared/papers/, where biasatlas implements it
    bibtex: tuple[tuple[str, str], ...] = ()  # the entry's type and fields beyond author, title, year

    @property
    def bib(self) -> str:
        """The reference as a BibTeX entry (venue and DOI only where the paper states them)."""
        fields = dict(self.bibtex)
        kind = fields.pop("type", "misc")
        authors, _, rest = self.text.partition(f" ({self.year}). ")
        title = rest.split(". ")[0].rstrip(".")
        lines = [f"@{kind}{{{self.key},", f"  author = {{{_bib_authors(authors)}}},", f"  title = {{{{{title}}}}},",
                 f"  year = {{{self.year}}},", *(f"  {k} = {{{v}}}," for k, v in fields.items())]
        return "\n".join(lines) + "\n}\n"

    @property
    def cite(self) -> str:
        return f"{self.authors}, {self.year}"


REFERENCES = (
    Reference("cao2024", "Cao et al.", "2024",
              "Cao, Y. T., Sotnikova, A., Zhao, J., Zou, L. X., Rudinger, R., & Daumé III, H. (2024). Multilingual "
              "large language models leak human stereotypes across language boundaries.", "004",
              (("note", "Publication rights licensed to ACM"),)),
    Reference("fagan2025", "Fagan et al.", "2025",
              "Fagan, J. H., Juyaal, R., Yu, A. Y.-M., & Pun, S. (2025). The Biased Samaritan: LLM biases in "
              "perceived kindness.", "003"),
    Reference("ikae2025", "Ikae et al.", "2025",
              "Ikae, C., Rafnsdóttir, G. L., Haraldsdóttir, R. K., & Kurpicz-Briki, M. (2025). Extending the contact "
              "hypothesis: Cross-linguistic evaluation of religion and nationality bias when prompting LLMs in "
              "German and Icelandic.", "000"),
    Reference("lejeune2025", "Le Jeune et al.", "2025",
              "Le Jeune, P., Duchesne, E., Palminteri, S., Xiao, W., Houssin, B., Malézieux, B., & Dora, M. (2025). "
              "StereoTales: Multilingual stereotypes in open-ended LLM generation.", "002",
              (("note", "the StereoTales framework (Giskard)"),)),
    Reference("raj2024", "Raj et al.", "2024",
              "Raj, C., Mukherjee, A., Caliskan, A., Anastasopoulos, A., & Zhu, Z. (2024). Breaking bias, building "
              "bridges: Evaluation and mitigation of social biases in LLMs via contact hypothesis. AAAI/ACM "
              "Conference on AI, Ethics, and Society (AIES).", "001",
              (("type", "inproceedings"),
               ("booktitle", "Proceedings of the AAAI/ACM Conference on AI, Ethics, and Society (AIES)"))),
    Reference("newcombe1998", "Newcombe", "1998",
              "Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial "
              "proportions based on paired data. Statistics in Medicine, 17, 2635–2650.", "",
              (("type", "article"), ("journal", "Statistics in Medicine"), ("volume", "17"),
               ("pages", "2635--2650"))),
    Reference("holm1979", "Holm", "1979",
              "Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of "
              "Statistics, 6, 65–70.", "",
              (("type", "article"), ("journal", "Scandinavian Journal of Statistics"), ("volume", "6"),
               ("pages", "65--70"))),
    Reference("bh1995", "Benjamini & Hochberg", "1995",
              "Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate. Journal of the Royal "
              "Statistical Society B, 57, 289–300.", "",
              (("type", "article"), ("journal", "Journal of the Royal Statistical Society B"), ("volume", "57"),
               ("pages", "289--300"))),
)

_BY_NUMBER = {r.number: r for r in REFERENCES if r.number}

# "paper 001", "papers 000", "Paper 004's"; a bare number only where a table, figure or section of it follows
_PAPER = re.compile(r"\b[Pp]apers? (00[0-4])\b")
_BARE = re.compile(r"(?<![\w./-])(00[0-4])(?=,? (?:Tables?|Figures?|Fig\.|§|section|RQ)\b|,? §)")
_PAPERS_AND = re.compile(r"\b[Pp]apers (00[0-4]) and (00[0-4])\b")


def cite_papers(text: str) -> str:
    """``text`` with paper numbers as author–year citations ("paper 001 Table 3" -> "Raj et al., 2024, Table 3")."""
    text = _PAPERS_AND.sub(lambda m: f"{_BY_NUMBER[m[1]].cite}; {_BY_NUMBER[m[2]].cite}", text)
    text = _PAPER.sub(lambda m: _BY_NUMBER[m[1]].cite, text)
    text = _BARE.sub(lambda m: _BY_NUMBER[m[1]].cite, text)
    # "Raj et al., 2024 Table 3" reads as one citation with a comma before the table
    text = re.sub(r"(et al\., \d{4}|Hochberg, \d{4})(?=\s(?:Tables?|Figures?|§|section)\b)", r"\1,", text)
    text = re.sub(r"(et al\., \d{4})'s\b", r"\1", text)  # "paper 001's (Table 3)" -> "Raj et al., 2024 (Table 3)"
    return text


def _pattern() -> re.Pattern[str]:
    names = "|".join(re.escape(r.authors.replace("&", "&amp;")) for r in REFERENCES)
    # "Raj et al., 2024", "Raj et al. 2024", "Raj et al. (2024)"
    return re.compile(rf"({names})(?:,? (\d{{4}})| \((\d{{4}})\))")


_CITATION = _pattern()
_KEYS = {(r.authors.replace("&", "&amp;"), r.year): r.key for r in REFERENCES}


def link_citations(escaped_html: str) -> str:
    """Escaped HTML with each author–year citation linked to its entry (``#ref-KEY``) in the references."""

    def link(m: re.Match[str]) -> str:
        key = _KEYS.get((m[1], m[2] or m[3]))
        return f"<a class='cite' href='#ref-{key}'>{m[0]}</a>" if key else m[0]

    return _CITATION.sub(link, escaped_html)


def _bib_authors(authors: str) -> str:
    """'Raj, C., Mukherjee, A., & Zhu, Z.' -> 'Raj, C. and Mukherjee, A. and Zhu, Z.'."""
    names = re.findall(r"([^,&]+?, (?:[A-Z][\w.-]*\.? ?)+(?:III)?)(?:,|$| &)", authors.replace("& ", ""))
    return " and ".join(n.strip() for n in names) or authors


def bibtex() -> str:
    """Every reference of the report as a BibTeX file (UTF-8; the papers' texts state no DOI, so none is given)."""
    return "\n".join(r.bib.replace(" & ", " \\& ").replace("–", "--") for r in REFERENCES)
