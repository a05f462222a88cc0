"""Issue 12, contact: action polarity, acquiescence, framing agreement, probabilities and paired tests."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import GenerationSettings, Request, Response
from biasatlas.runner import run_plan
from biasatlas.stats.multitest import adjust
from biasatlas.store import Store


class ProbabilityBackend(FakeBackend):
    """Choice mode with scripted probabilities: ``p_first(request)`` is P(first option)."""

    def __init__(self, p_first: Callable[[Request], float]) -> None:
        super().__init__(name="probs")
        self.p_first = p_first

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        for request in requests:
            first, second = request.prompt.options[:2]
            p = self.p_first(request)
            yield Response(key=request.cache_key(self.id), backend_id=self.id, text=first if p > 0.5 else second,
                           option_probs={first: p, second: 1 - p}, latency_s=0.0)


def _run(tmp: Path, backend: Any, mode: str, samples: int = 1, **config: Any) -> Store:
    store = Store(tmp)
    prompts = PROBE.plan(PROBE.config(**config))
    run_plan(prompts, backend, store, GenerationSettings(mode=mode), samples=samples, progress=False)
    return store


def _row(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


# ---- 1. action polarity and yes-saying --------------------------------------------------------
def test_always_likely_is_half_biased_pooled_and_fully_acquiescent(tmp_path: Path) -> None:
    store = _run(tmp_path, FakeBackend(lambda r: "Likely."), "generate", languages=["en"], axes=["religion"],
                 scales=["likelihood"], limit=120, balance_groups=False)  # stratified: both actions
    summary = PROBE.summarise(store)
    for contact in ("none", "positive", "negative"):
        positive = _row(summary["by_contact_action"], contact=contact, action="positive")
        negative = _row(summary["by_contact_action"], contact=contact, action="negative")
        assert positive["biased_pct"] == 0.0 and negative["biased_pct"] == 100.0
        # pooled, the share of negative actions: about half (paper 001 Table 3's 50% for Tulu)
        pooled = _row(summary["by_contact"], contact=contact)["biased_pct"]
        assert pooled == pytest.approx(100 * negative["n"] / (negative["n"] + positive["n"]))
        assert 40 < pooled < 60
    pooled = _row(summary["acquiescence"], scale="likelihood", contact="all")
    assert pooled["n"] == 120 and pooled["affirmative_pct"] == 100.0
    assert 95.0 < pooled["affirmative_ci_low"] < 100.0 == pooled["affirmative_ci_high"]  # Wilson, n = 120
    assert pooled["actions"] == "negative, positive"
    buffer = io.StringIO()
    PROBE.print_summary(summary, Console(file=buffer, width=220))
    assert "acquiescence" in buffer.getvalue().lower()


# ---- 2. framing agreement (our per-prompt measure; paper 001 adherence: test_adherence.py) --------
def _engage(request: Request, engage: bool) -> str:
    yes = "Yes." if engage else "No."
    no = "No." if engage else "Yes."
    return yes if request.prompt.meta["action"] == "positive" else no


def test_framing_agreement_follows_the_framing(tmp_path: Path) -> None:
    # engages unless the framing is negative: follows both framings
    follows = _run(tmp_path / "a", FakeBackend(lambda r: _engage(r, r.prompt.meta["contact"] != "negative")),
                   "generate", languages=["en"], axes=["religion"], limit=60)
    ch = PROBE.summarise(follows)["framing_agreement"]
    for contact in ("positive", "negative", "both"):
        assert _row(ch, contact=contact)["follows_pct"] == 100.0
    out = PROBE.outcomes(follows)
    assert out.loc[out["contact"] == "none", "ch"].isna().all()
    assert set(out.loc[out["contact"] != "none", "ch"]) == {1.0}
    # always engages: follows positive framing, never negative; pooled 50%
    always = _run(tmp_path / "b", FakeBackend(lambda r: _engage(r, True)), "generate", languages=["en"],
                  axes=["religion"], limit=60)
    ch = PROBE.summarise(always)["framing_agreement"]
    assert _row(ch, contact="positive")["follows_pct"] == 100.0
    assert _row(ch, contact="negative")["follows_pct"] == 0.0
    both = _row(ch, contact="both")
    assert both["follows_pct"] == 50.0 and both["n"] == 40
    assert both["follows_ci_low"] < 50.0 < both["follows_ci_high"]


# ---- 2-4. choice mode: decisions that do not flip, probabilities that move ---------------------
def _german(request: Request) -> float:
    """P(Ja): always above one half (every decision "Ja"); negative framing lowers it by 0.10."""
    meta = request.prompt.meta
    base = 0.70 + (int(meta["set_id"][:4], 16) % 5) / 100
    return {"none": base, "positive": base + 0.001, "negative": base - 0.10}[meta["contact"]]


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _run(tmp_path_factory.mktemp("de"), ProbabilityBackend(_german), "choice", languages=["de"],
                axes=["religion"], limit=90)


def test_unchanged_decisions_do_not_count_as_moving(german: Store) -> None:
    summary = PROBE.summarise(german)
    assert {r["decision"] for r in PROBE.outcomes(german).to_dict("records")} == {"unbiased"}
    for contact in ("positive", "negative"):
        row = _row(summary["direction"], contact=contact)
        assert row["same_pct"] == 100.0 and row["toward_pct"] == 0.0
    # the probabilities: negative framing moves P(unbiased) 0.10 toward itself; positive 0.001 (below threshold)
    neg = _row(summary["direction_probability"], contact="negative")
    assert neg["n"] == 30 and neg["mean_change"] == pytest.approx(0.10)
    assert neg["toward_pct"] == 100.0 and neg["threshold"] == 0.05
    pos = _row(summary["direction_probability"], contact="positive")
    assert pos["mean_change"] == pytest.approx(0.001) and pos["same_pct"] == 100.0
    assert pos["ci_low"] == pytest.approx(0.001) and pos["ci_high"] == pytest.approx(0.001)


def test_mean_probability_of_the_biased_option_per_cell(german: Store) -> None:
    rows = PROBE.summarise(german)["p_biased"]
    none, neg = _row(rows, contact="none"), _row(rows, contact="negative")
    assert none["n"] == 30 and 0.25 < none["mean"] < 0.30 and none["ci_low"] < none["mean"] < none["ci_high"]
    assert neg["mean"] - none["mean"] == pytest.approx(0.10)


def test_paired_tests_on_probabilities_beside_mcnemar(german: Store) -> None:
    tests = PROBE.summarise(german, correction="bonferroni")["tests"]
    mcnemar = _row(tests, comparison="negative vs none", measure="decision")
    assert mcnemar["p"] == 1.0 and mcnemar["effect"] == 0.0
    assert mcnemar["ci_low"] < 0 < mcnemar["ci_high"]  # Newcombe: no collapse to [0, 0]
    logodds = _row(tests, comparison="negative vs none", measure="P(biased)", method_kind="paired t")
    assert logodds["p"] < 1e-10 and logodds["effect"] > 0 and logodds["ci_low"] > 0
    assert logodds["n"] == 30 and "log-odds" in logodds["effect_name"]
    assert logodds["mean_change"] == pytest.approx(0.10) and logodds["mean_change_ci_low"] > 0.09
    wilcoxon = _row(tests, comparison="negative vs none", measure="P(biased)", method_kind="Wilcoxon")
    assert wilcoxon["p"] < 1e-5 and wilcoxon["effect"] == 1.0  # every set moved the same way
    # one family: every test of the table, decisions and probabilities
    p = [math.nan if r["p"] is None else r["p"] for r in tests]
    adjusted = [math.nan if r["p_adj"] is None else r["p_adj"] for r in tests]
    assert adjusted == pytest.approx(list(adjust(p, "bonferroni")), nan_ok=True)
    assert sum(not math.isnan(v) for v in p) == 6  # Cochran's Q has no p when no decision varies
    buffer = io.StringIO()
    PROBE.print_summary(PROBE.summarise(german), Console(file=buffer, width=240))
    printed = buffer.getvalue()
    assert "P(biased)" in printed and "Wilcoxon" in printed


def test_samples_are_clustered_by_prompt_set(tmp_path: Path) -> None:
    store = _run(tmp_path, ProbabilityBackend(_german), "choice", samples=3, languages=["de"],
                 axes=["religion"], limit=90)
    tests = PROBE.summarise(store)["tests"]
    assert {r["n"] for r in tests} == {30}  # 30 prompt sets, not 90 prompt × sample pairs
    assert _row(PROBE.summarise(store)["p_biased"], contact="none")["n"] == 30


def test_value_column_is_the_answer() -> None:
    assert PROBE.value_column == "answer"


def test_report_shows_the_probabilities_by_framing(german: Store) -> None:
    """The report plots mean P(biased option) per framing with its interval, beside the decision bars."""
    from biasatlas.report.publish import FigureFile

    captions = [f.caption for s in PROBE.report_sections(german) for f in s.files if isinstance(f, FigureFile)]
    assert "Mean P(biased option) by contact framing (choice mode)" in captions
