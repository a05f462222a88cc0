"""The answers behind a probe: choice-mode answers show P(option) per answer (issue 28)."""

from __future__ import annotations

import json

import pandas as pd

from biasatlas.report.answers import answers_frame


def _outcomes(texts: list[str | None], probs: list[dict[str, float] | None]) -> pd.DataFrame:
    messages = json.dumps([{"role": "user", "content": "Ja oder Nein?"}])
    return pd.DataFrame({"model": "m", "language": "de", "messages_json": messages, "text": texts,
                         "option_probs": probs, "answer": ["affirmative"] * len(texts)})


def test_choice_mode_answers_show_the_probability_of_each_option() -> None:
    frame = answers_frame(_outcomes(["Ja", "Nein"], [{"Ja": 0.731, "Nein": 0.269}, {"Ja": 0.1, "Nein": 0.9}]),
                          (), "answer")
    assert frame["answer"].tolist() == ["Ja", "Nein"]
    assert frame["P(option)"].tolist() == ["Ja 0.731 · Nein 0.269", "Ja 0.100 · Nein 0.900"]
    assert list(frame.columns).index("P(option)") == list(frame.columns).index("answer") + 1


def test_an_answer_with_probabilities_and_no_text_shows_them() -> None:
    frame = answers_frame(_outcomes([None], [{"Yes": 0.5, "No": 0.5}]), (), "answer")
    assert frame["P(option)"].tolist() == ["Yes 0.500 · No 0.500"]
    assert frame["answer"].tolist() == [""]


def test_generate_mode_has_no_probability_column_and_a_mixed_study_shows_none_as_missing() -> None:
    generate = answers_frame(_outcomes(["Ja, sicher.", "Nein."], [None, None]), (), "answer")
    assert "P(option)" not in generate.columns
    mixed = answers_frame(_outcomes(["Ja, sicher.", "Ja"], [None, {"Ja": 0.6, "Nein": 0.4}]), (), "answer")
    assert mixed["P(option)"].tolist()[1] == "Ja 0.600 · Nein 0.400" and pd.isna(mixed["P(option)"].tolist()[0])


def test_the_answer_sits_next_to_its_prompt_and_what_was_read_from_it() -> None:
    outcomes = _outcomes(["Ja"], [{"Ja": 0.6, "Nein": 0.4}]).assign(scale="certainty", reason="")
    frame = answers_frame(outcomes, ("scale",), "answer")
    assert list(frame.columns) == ["model", "language", "prompt", "answer", "P(option)", "parsed", "reason", "scale"]


def test_rules_judge_disagreements_are_a_column_of_the_answers_table() -> None:
    """Issue 27: with a judge reader the answers table names the reader and lists each disagreement."""
    import pandas as pd

    from biasatlas.report.answers import answers_frame

    outcomes = pd.DataFrame({
        "model": ["m"] * 3, "language": ["en"] * 3, "text": ["Yes.", "Hmm, maybe not.", "No."],
        "answer": ["affirmative", "negative", "negative"], "reason": [None, None, None],
        "reader": ["rules", "judge", "rules"], "rules_label": ["affirmative", "unclear", "negative"],
        "judge_label": [None, "negative", "negative"],
    })
    frame = answers_frame(outcomes, (), "answer")
    assert list(frame["reader"]) == ["rules", "judge", "rules"]
    assert list(frame["rules vs judge"]) == ["", "rules: unclear · judge: negative", ""]
    assert "rules vs judge" not in answers_frame(outcomes.drop(columns=["judge_label"]), (), "answer")


def test_the_answers_carry_group_and_prompt_set_with_a_sets_framings_together() -> None:
    import pandas as pd

    from biasatlas.report.answers import answers_frame

    outcomes = pd.DataFrame({
        "model": ["m"] * 6, "language": ["en"] * 6, "group": ["Jews", "Muslims"] * 3,
        "set_id": ["s1", "s2"] * 3, "contact": ["negative", "negative", "none", "none", "positive", "positive"],
        "text": ["a", "b", "c", "d", "e", "f"], "answer": ["yes"] * 6})
    frame = answers_frame(outcomes, ("contact",), "answer")
    assert {"group", "prompt_set"} <= set(frame.columns)
    assert frame["prompt_set"].tolist() == ["s1", "s1", "s1", "s2", "s2", "s2"]
    assert frame["contact"].tolist()[:3] == ["none", "positive", "negative"]
    assert frame[frame["prompt_set"] == "s1"]["group"].unique().tolist() == ["Jews"]
