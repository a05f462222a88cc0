"""A Samaritan judge whose tokenizer splits numbers into digits: "63" is "6" then "3", and "6" is a label too.
Scored option by option without an end, "6" always outscores "63" (P("6") >= P("6") P("3" | "6")), and the first
token can only be a digit: either way the judge could only say 1-9. The judge generates its label instead and it
is read whole."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.readers import judge
from biasatlas.records import GenerationSettings, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import Store

MEANT = "63"


class DigitSplittingJudge(FakeBackend):
    """Means "63" for every answer; its choice scores are those of a model that tokenizes digit by digit."""

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        for request in requests:
            self.calls.append(request)
            # each digit of what it means has probability 0.9; anything else next to none
            probs = {o: 0.9 ** len(o) if MEANT.startswith(o) else 1e-6 for o in request.prompt.options}
            total = sum(probs.values())
            probs = {o: p / total for o, p in probs.items()}
            best = max(probs, key=probs.__getitem__)
            yield Response(key=request.cache_key(self.id), backend_id=self.id, text=best, option_probs=probs,
                           latency_s=0.0)


def test_a_digit_splitting_judge_says_63_not_6(tmp_path: Path) -> None:
    with Store(tmp_path / "study") as store:
        config = PROBE.config(languages=["en"], limit=1, mode="generate")
        run_plan(PROBE.plan(config), FakeBackend(lambda r: "Hard to say, it depends.", name="answers"), store,
                 GenerationSettings(mode="generate"), progress=False)
        scripted = DigitSplittingJudge(lambda r: MEANT, name="digits")
        judge.run_judge(store, "samaritan", scripted, "judge")
        labels = judge.judge_labels(store, "samaritan", scripted.id)
    assert scripted.calls and labels
    assert set(labels.values()) == {MEANT}
    assert {r.settings.mode for r in scripted.calls} == {"generate"}


def test_a_contact_judge_still_chooses_by_probability() -> None:
    from biasatlas.readers.labels import label_set

    for language in ("en", "de", "fr", "is"):
        assert judge.judge_settings([label_set("contact", language, ("Yes", "No")).options]).mode == "choice"
    assert judge.judge_settings([label_set("samaritan", "en").options]).mode == "generate"
