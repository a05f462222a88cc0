"""Planted-null studies on the real plans (issue 37): what the level tests and null_level_simulation.py run.

A study's frame is shaped like the probes' ``outcomes``: one row per prompt x sample x mode of a language
pack's default plan (contact: one axis, the shared no-contact questions included; Samaritan: every category),
with the real cache key of each row (``Request.cache_key``: two prompts of one text share it). Under the null
every distinct stored answer (key) gets its own random answer, independent of group and framing:

* contact: each question (one text in one mode) has a propensity drawn from a Beta around its language's
  share (languages differ: a language-wide shift is not a finding), each of its samples is biased with that
  propensity, and one answer in ten is unreadable (no decision);
* Samaritan: each question has a random level (normal, sd 8 points) around its language's (shifted by
  language), each sample adds noise (sd 6), the rating is rounded to a whole number in 1-100, and one in
  twenty is unreadable.

Samples of one question therefore agree more than chance: counted as units they would inflate the level.
Each study draws everything afresh (``numpy`` ``default_rng(seed)``); the plan is built once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from biasatlas.probes.contact.data import languages as contact_languages
from biasatlas.probes.contact.plan import ContactConfig
from biasatlas.probes.contact.plan import build_prompts as contact_prompts
from biasatlas.probes.samaritan.data import CATEGORIES
from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS, default_temperature
from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts
from biasatlas.records import GenerationSettings, Prompt, Request

LANGUAGES = tuple(sorted(contact_languages()))
#: the contact axis simulated: asked in all twelve languages (de and is: paper 000's religions)
CONTACT_AXIS = "religion"
MODES = {1: ("generate",), 2: ("choice", "generate")}
BACKEND = "null-model"
UNREADABLE_CONTACT = 0.10
UNREADABLE_SAMARITAN = 0.05


@dataclass(frozen=True)
class NullPlan:
    """A study's rows (``frame``, no answers yet) and, per row, the index of its stored answer (``answer``);
    per stored answer, its question (``question``), language (``language``) and first row (``first``)."""

    frame: pd.DataFrame
    answer: np.ndarray
    question: np.ndarray
    language: np.ndarray
    first: np.ndarray

    def planted(self, column: str, value: str, language: str) -> np.ndarray:
        """Per stored answer: whether it answers a prompt of ``column`` == ``value`` in ``language``."""
        rows = self.frame.iloc[self.first]
        return ((rows[column] == value) & (rows["language"] == language)).to_numpy()

    @property
    def keys(self) -> int:
        return len(self.question)


def _coded(frame: pd.DataFrame, question: pd.Series) -> NullPlan:
    answer, keys = pd.factorize(frame["key"])
    first = pd.Series(np.arange(len(frame))).groupby(answer).first().to_numpy()
    q_codes = pd.factorize(question.iloc[first])[0]
    lang_codes = np.array([LANGUAGES.index(lang) for lang in frame["language"].iloc[first]])
    assert len(keys) == len(first)
    return NullPlan(frame, answer, q_codes, lang_codes, first)


@cache
def _contact_language(language: str) -> tuple[Prompt, ...]:
    return tuple(contact_prompts(ContactConfig(languages=[language], axes=[CONTACT_AXIS])))


def contact_plan(languages: tuple[str, ...], samples: int, modes: int) -> NullPlan:
    """The contact rows of ``languages``' default plans on :data:`CONTACT_AXIS`, ``samples`` samples, in
    ``modes`` modes (1: generate; 2: choice and generate)."""
    rows = []
    for mode in MODES[modes]:
        settings = GenerationSettings(mode=mode)
        for language in languages:
            for p in _contact_language(language):
                meta, text = p.meta, p.messages[0].content
                for s in range(samples):
                    rows.append((mode, language, meta["descriptor"], meta["group"], meta["set_id"], meta["contact"],
                                 meta["action"], meta["scale"], p.id, text, s,
                                 Request(prompt=p, settings=settings, sample_index=s).cache_key(BACKEND)))
    frame = pd.DataFrame(rows, columns=["mode", "language", "descriptor", "group", "set_id", "contact", "action",
                                        "scale", "prompt_id", "messages_json", "sample_index", "key"])
    frame.insert(0, "model", BACKEND)
    frame["status"] = "answered"
    return _coded(frame, frame["mode"] + "\n" + frame["messages_json"])


def contact_study(plan: NullPlan, seed: int, planted: np.ndarray | None = None, shift: float = 0.0) -> pd.DataFrame:
    """One null study: ``biased`` (1.0, 0.0, NaN unreadable) for every row, a fresh draw per seed; the stored
    answers marked ``planted`` (:meth:`NullPlan.planted`) are biased ``shift`` more often (a planted effect)."""
    rng = np.random.default_rng(seed)
    share = 0.2 + 0.4 * np.arange(len(LANGUAGES)) / (len(LANGUAGES) - 1)  # language-wide shifts
    n_questions = int(plan.question.max()) + 1
    q_language = np.zeros(n_questions, dtype=int)
    q_language[plan.question] = plan.language
    m = share[q_language]
    propensity = rng.beta(2 * m, 2 * (1 - m))  # samples of one question agree more than chance
    p = propensity[plan.question]
    if planted is not None:
        p = np.clip(p + shift * planted, 0, 1)
    biased = (rng.random(plan.keys) < p).astype(float)
    biased[rng.random(plan.keys) < UNREADABLE_CONTACT] = np.nan
    return plan.frame.assign(biased=biased[plan.answer])


@cache
def _samaritan_language(language: str, temperature: float) -> tuple[Prompt, ...]:
    return tuple(samaritan_prompts(CATEGORIES, language, temperature=temperature, max_tokens=DEFAULT_MAX_TOKENS))


def samaritan_plan(languages: tuple[str, ...], samples: int) -> NullPlan:
    """The Samaritan rows of ``languages``' default plans (every category) with ``samples`` samples at the
    probe's default decoding (temperature 0 for one sample, 1 for several)."""
    temperature = default_temperature(samples)
    settings = GenerationSettings(mode="generate", max_tokens=DEFAULT_MAX_TOKENS, temperature=temperature)
    rows = []
    for language in languages:
        for p in _samaritan_language(language, temperature):
            meta = p.meta
            for s in range(samples):
                rows.append((language, meta["category"], meta["group"], meta["phrasing"], meta["scenario"],
                             meta["rephrasing"], p.messages[0].content, s,
                             Request(prompt=p, settings=settings, sample_index=s).cache_key(BACKEND)))
    frame = pd.DataFrame(rows, columns=["language", "category", "group", "phrasing", "scenario", "rephrasing",
                                        "messages_json", "sample_index", "key"])
    frame.insert(0, "model", BACKEND)
    frame["temperature"], frame["max_tokens"] = float(temperature), DEFAULT_MAX_TOKENS
    frame["mode"], frame["status"], frame["parse_reason"] = "generate", "answered", None
    return _coded(frame, frame["messages_json"])


def samaritan_study(plan: NullPlan, seed: int, planted: np.ndarray | None = None, shift: float = 0.0) -> pd.DataFrame:
    """One null study: a ``rating`` (whole number 1-100, NaN unreadable) for every row, fresh per seed; the
    stored answers marked ``planted`` are rated ``shift`` points higher (a planted effect)."""
    rng = np.random.default_rng(seed)
    by_language = np.linspace(-10, 10, len(LANGUAGES))  # language-wide shifts
    n_questions = int(plan.question.max()) + 1
    q_language = np.zeros(n_questions, dtype=int)
    q_language[plan.question] = plan.language
    level = 55 + by_language[q_language] + rng.normal(0, 8, n_questions)
    raw = level[plan.question] + rng.normal(0, 6, plan.keys) + (0.0 if planted is None else shift * planted)
    rating = np.clip(np.rint(raw), 1, 100)
    rating[rng.random(plan.keys) < UNREADABLE_SAMARITAN] = np.nan
    return plan.frame.assign(rating=rating[plan.answer])


def binomial_interval(alpha: float, studies: int) -> tuple[float, float]:
    """The central 95% range of the rejection rate over ``studies`` independent studies at level ``alpha``."""
    from scipy.stats import binom

    low, high = binom.interval(0.95, studies, alpha)
    return float(low) / studies, float(high) / studies


def free_plans() -> None:
    """Drop the cached plans (a module's teardown): held for a worker's whole session they slow every later
    garbage collection."""
    _contact_language.cache_clear()
    _samaritan_language.cache_clear()
