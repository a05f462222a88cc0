"""The contact summary: --alpha / --correction, the tidy outcomes of the Probe object, the printed tables."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE, summarise
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _script(request: Request) -> str:
    """Refuses to engage under negative contact for half the groups; engages otherwise."""
    meta = request.prompt.meta
    refuse = meta["contact"] == "negative" and len(meta["descriptor"]) % 2 == 0
    engage = not refuse
    if meta["action"] == "negative":
        return "No." if engage else "Yes."
    return "Yes." if engage else "No."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    config = PROBE.config(languages=["en", "de"], axes=["religion"], scales=["all"], limit=180,
                          balance_groups=False)  # the stratified draw: every scale and action in 180 prompts
    with Store(tmp_path_factory.mktemp("contact")) as store:
        run_plan(PROBE.plan(config), FakeBackend(_script), store, GenerationSettings(mode="generate"),
                 progress=False)
        yield store


def test_outcomes_are_tidy(store: Store) -> None:
    out = PROBE.outcomes(store)
    assert len(out) == 180
    assert {"language", "scale", "contact", "action", "scenario", "principle", "axis", "decision"} <= set(out)
    assert set(out["language"]) == {"en", "de"}


def test_correction_is_applied_and_alpha_recorded(store: Store) -> None:
    bh = summarise(store)
    bonferroni = PROBE.summarise(store, correction="bonferroni", alpha=0.01)
    assert bh["analysis"] == {"alpha": 0.05, "correction": "bh"}
    assert bonferroni["analysis"] == {"alpha": 0.01, "correction": "bonferroni"}
    n_tests = sum(r["p"] is not None for r in bh["tests"])
    assert n_tests > 1
    for a, b in zip(bh["tests"], bonferroni["tests"], strict=True):
        assert a["p"] == b["p"] and b["correction"] == "bonferroni"
        if a["p"] is not None:
            assert b["p_adj"] == pytest.approx(min(1.0, a["p"] * n_tests))
            assert a["p"] <= a["p_adj"] * (1 + 1e-12) and a["p_adj"] <= b["p_adj"] * (1 + 1e-12)
    # everything but the tests is the same analysis (across languages: the same effects, tests at alpha)
    varies = ("tests", "analysis", "statistics", "across_languages", "reading_failures")  # tests at alpha
    assert {k: v for k, v in bh.items() if k not in varies} == {k: v for k, v in bonferroni.items() if k not in varies}
    assert bh["across_languages"]["effects"] == bonferroni["across_languages"]["effects"]
    assert bonferroni["across_languages"]["alpha"] == 0.01
    assert bonferroni["reading_failures"]["alpha"] == 0.01


@pytest.mark.parametrize(("options", "message"), [({"alpha": 1.5}, "alpha 1.5"),
                                                  ({"correction": "fdr"}, "correction 'fdr': valid: bh")])
def test_bad_analysis_options(store: Store, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        summarise(store, **options)  # type: ignore[arg-type]


def test_printed_tests_mark_significance_at_alpha(store: Store) -> None:
    def printed(**options: object) -> str:
        buffer = io.StringIO()
        PROBE.print_summary(PROBE.summarise(store, **options), Console(file=buffer, width=200))
        return buffer.getvalue()

    strict = printed(alpha=1e-300, correction="holm")
    assert "p adj: Holm" in strict and "* p adj < 1e-300" in strict
    assert " *" not in strict.split("Contact effect")[1].split("effect:")[0]
    loose = printed(alpha=0.99)
    assert "Benjamini-Hochberg" in loose and " *" in loose.split("Contact effect")[1]
