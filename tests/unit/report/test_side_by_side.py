"""A report of a two-model study (fake models, every probe): models side by side, headers for people.

Every table of every section is checked in the page and in report_files/ (CSV, LaTeX): no header is a
raw column name (``ci_low``, ``p_adj``, ``toward_count``), and each model has its own column group in
the headline tables that readers compare models on.
"""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes import load_probe
from biasatlas.probes.debias import evaluate
from biasatlas.probes.debias.data import unbiased_answer
from biasatlas.probes.debias.splits import build_split
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.plan import build_prompts as leakage_prompts
from biasatlas.probes.stories.extract_step import extraction_prompts
from biasatlas.probes.stories.plan import build_prompts as story_prompts
from biasatlas.probes.stories.read import story_rows
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.build import build_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

MODELS = ("fake:alpha", "fake:beta")
SNAKE = re.compile(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b|^\('")  # snake_case, or a tuple shown raw
HUMAN_EN = load_human(None)["en"]
AGE = {"low": "young_adult", "middle": "adult", "high": "senior"}


def _follows_en_humans(request: Request) -> str:
    meta = request.prompt.meta
    first = HUMAN_EN.at[meta["trait_a"], meta["group"]] >= HUMAN_EN.at[meta["trait_b"], meta["group"]]
    return request.prompt.options[0 if first == (meta["order"] == "ab") else 1]


def _story(request: Request) -> str:
    return f"A story about {request.prompt.meta['base_value']} income, sample {request.sample_index}."


def _extract(request: Request) -> str:
    text = request.prompt.messages[-1].content
    value = next(v for k, v in AGE.items() if f"about {k} income" in text)
    return json.dumps({"age": {"value": value, "evidence": "story"}})


def _always_first(request: Request) -> str:
    return request.prompt.options[0]


def _unbiased(request: Request) -> str:
    return unbiased_answer(request.prompt)


def _make_study(path: Path) -> None:
    rng = random.Random(7)
    yes_no = ["Yes.", "No.", "Absolutely not.", "I can't answer that.", "Probably not."]
    ratings = ["I'd say 70.", "80", "About 60-70.", "No idea.", "55"]
    leakage = leakage_prompts(["en", "ru"], group_names=["woman", "man", "gay man", "lesbian", "single mother",
                                                         "housewife"], orders="one")
    stories = [p for p in story_prompts(load_seeds("en")) if p.meta["base_attribute"] == "income_level"]
    with Store(path) as store:
        for i, name in enumerate(m.split(":")[1] for m in MODELS):
            contact = load_probe("contact")
            prompts = contact.plan(contact.config(languages=["en", "de"], axes=["religion"], limit=40))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(yes_no), name=name), store,
                     GenerationSettings(mode="generate"), progress=False)
            samaritan = load_probe("samaritan")
            prompts = samaritan.plan(samaritan.config(languages=["en"], categories=["gender"], limit=30))
            run_plan(prompts, FakeBackend(lambda r: rng.choice(ratings), name=name), store,
                     GenerationSettings(mode="generate"), progress=False)
            run_plan(stories, FakeBackend(_story, name=name), store, GenerationSettings(max_tokens=50),
                     progress=False)
            run_plan(leakage, FakeBackend(_follows_en_humans, name=name), store, GenerationSettings(mode="choice"),
                     progress=False)
            # a debiasing comparison of each model in one setting (their own splits)
            split = build_split("cross-scenario", limit=60 + 30 * i, seed=0)
            base = f"base-{name}"
            for role, side, script in (("before", base, _always_first), ("after", f"{base}+lora", _unbiased)):
                cfg = evaluate.run_config(role, "cross-scenario", "test", split.fingerprint(), base, None, "en")
                run_plan(split.test, FakeBackend(script, name=side), store, GenerationSettings(mode="choice"),
                         config=cfg, progress=False)
        for extractor in ("x1", "x2"):
            run_plan(extraction_prompts(story_rows(store)), FakeBackend(_extract, name=extractor), store,
                     GenerationSettings(max_tokens=200), progress=False)
        build_report(store, path)


class _Tables(HTMLParser):
    """Every table of the page: its caption-bearing div's drill spec, header rows and first body row."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._caption = ""
        self._in: str | None = None
        self._row: list[str] = []
        self._text = ""
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and a.get("class") == "table":
            self.tables.append({"drill": a.get("data-drill"), "caption": "", "head": [], "body": [], "spans": []})
        elif tag == "p" and a.get("class") == "caption" and self.tables:
            self._in = "caption"
            self._text = ""
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td"):
            self._in, self._text = tag, ""
            self._span = int(a.get("colspan") or 1)

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._in == "caption":
            if self.tables and not self.tables[-1]["caption"]:
                self.tables[-1]["caption"] = self._text
            self._in = None
        elif tag in ("th", "td") and self._in == tag:
            self._row.append((tag, self._text.strip(), self._span))
            self._in = None
        elif tag == "tr" and self.tables and self._row:
            kind = "head" if all(t == "th" for t, _, _ in self._row) else "body"
            self.tables[-1][kind].append([text for _, text, _ in self._row])
            if kind == "head":
                self.tables[-1]["spans"].append([span for _, _, span in self._row])


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("two-models") / "study"
    _make_study(path)
    return path


@pytest.fixture(scope="module")
def tables(study: Path) -> list[dict]:
    parser = _Tables()
    parser.feed((study / "report.html").read_text(encoding="utf-8"))
    return [t for t in parser.tables if t["head"]]


def test_no_header_in_the_page_is_a_raw_column_name(tables: list[dict]) -> None:
    assert len(tables) > 20
    raw = {(t["caption"][:50], h) for t in tables for row in t["head"] for h in row if SNAKE.search(h)}
    assert raw == set()


def test_no_header_in_the_files_is_a_raw_column_name(study: Path) -> None:
    files = sorted((study / "report_files").glob("*.csv"))
    assert len(files) > 20
    for csv in files:
        header = list(pd.read_csv(csv, nrows=0).columns)
        assert not [h for h in header if SNAKE.search(h)], csv.name
        tex = csv.with_suffix(".tex").read_text(encoding="utf-8")
        heads = tex.split("\\midrule")[0].split("\\toprule")[-1]
        assert not SNAKE.search(heads.replace("\\_", "_")), csv.name


# The tables a reader compares models on, by a word of their caption.
HEADLINES = {
    "contact": "By contact framing, models side by side",
    "contact tests": "Paired tests of the contact effect on prompt sets, models side by side",
    "samaritan": "Helpfulness rating (Fagan et al., 2025, eq. 1) per group and bias score vs the control",
    "stories": "Associations A = a → B = b with models side by side",
    "stories shares": "Share of each extracted value per language, models side by side",
    "leakage": "Leakage model coefficients, model variants side by side",
    "debias": "cross-scenario (test prompts) — By contact (Raj et al., 2024, Figure 4), base models side by side",
}


@pytest.mark.parametrize("key", list(HEADLINES))
def test_each_model_has_its_own_columns_in_the_headline_tables(tables: list[dict], key: str) -> None:
    found = [t for t in tables if t["caption"].startswith(HEADLINES[key])]
    assert len(found) == 1, [t["caption"][:60] for t in tables]
    table = found[0]
    top = table["head"][0]
    # one header cell per model (spanning its columns), in the same order everywhere
    models = [h for h in top if h]
    expected = {"leakage": [f"{m} [theme/choice]" for m in MODELS], "debias": ["fake:base-alpha", "fake:base-beta"]}
    if key.startswith("contact"):  # the debiasing runs are contact runs too (choice mode)
        assert models == sorted(models) and set(MODELS) <= set(models)
    else:
        assert models == expected.get(key, list(MODELS))
    assert len(table["head"]) == 2 and table["body"]
    # every model's column group holds values (a dash is a cell the model has no answers for)
    assert top[0] == ""  # above the design cell's columns
    start = table["spans"][0][0]
    for model, width in zip(top[1:], table["spans"][0][1:], strict=True):
        cells = [c for row in table["body"] for c in row[start:start + width]]
        assert any(c != "–" for c in cells), model
        start += width
    if key != "debias":  # debias has no answers table to open
        spec = json.loads(table["drill"])
        assert set(MODELS) <= set(spec["models"].values())


def test_one_model_study_keeps_flat_tables(tmp_path: Path) -> None:
    rng = random.Random(1)
    with Store(tmp_path) as store:
        contact = load_probe("contact")
        prompts = contact.plan(contact.config(languages=["en"], axes=["religion"], limit=20))
        run_plan(prompts, FakeBackend(lambda r: rng.choice(["Yes.", "No."]), name="solo"), store,
                 GenerationSettings(mode="generate"), progress=False)
        build_report(store, tmp_path)
    parser = _Tables()
    parser.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    by_contact = next(t for t in parser.tables if t["caption"].startswith(HEADLINES["contact"]))
    assert len(by_contact["head"]) == 1 and by_contact["head"][0][0] == "Model"
    assert {row[0] for row in by_contact["body"]} == {"fake:solo"}
