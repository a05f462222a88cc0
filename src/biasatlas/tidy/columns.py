"""What every exported column means: the answers tables (shared and per-probe columns) and the statistics table.

``schema.md`` is written from these dictionaries, and a test checks that every column an export
writes has a description here, so a new design factor cannot slip out undocumented.
"""

from __future__ import annotations

from biasatlas.readers import READING_COLUMNS

#: columns every answers table starts with, in this order
ANSWER_CORE: dict[str, str] = {
    "probe": "Probe name (contact, samaritan, stories, leakage, debias).",
    "model": "The model that answered: the display name an audit gave it (`models: - name:`), else its backend id "
    "(e.g. `openai:NAME@URL`, `local:NAME@DIGEST`).",
    "mode": "How the model was asked: `generate` (free text) or `choice` (options scored by log-probability).",
    "language": "Language of the prompt (ISO 639-1 code).",
    "decoding": "The decoding the answer was asked with: `choice`, `greedy, max_tokens N`, or `temperature T, top_p P, "
    "seed S, max_tokens N`. Two decodings of one model are two sets of answers (then `model` names the decoding).",
    "run_id": "The latest run (SQLite `runs.run_id`) that planned this prompt for this model; "
    "joins the run's settings.",
    "prompt_id": "Stable hash of the prompt's text and design factors (SQLite `prompts.prompt_id`).",
    "sample_index": "Which answer to the same prompt (0-based; several with `--samples N`).",
    "status": "`answered` (an answer is stored), `failed` (only errors are stored) or `pending` (not asked yet).",
}

#: columns an answers table has only in some studies (described, not ordered)
ANSWER_OPTIONAL: dict[str, str] = {
    "model_id": "Backend id of the model that answered (e.g. `local:smollm2@DIGEST`, `openai:NAME@URL`); present "
    "when an audit gave the model a display name (then `model` holds that name), or when the study holds answers "
    "of one model and mode under several decodings (then `model` names the decoding too).",
}

#: columns every answers table ends with, in this order (after the probe's own columns)
ANSWER_TAIL: dict[str, str] = {
    "system_prompt": "The system message(s) sent, joined by a blank line; empty when none was sent.",
    "prompt_text": "The user message sent to the model (several turns: `role: text` per turn, blank-line separated).",
    "options": "The answer options as a JSON list (choice-style prompts); `[]` for free-text prompts.",
    "answer_text": "The model's raw answer text, exactly as stored (empty when not answered).",
    "parsed_value": "What biasatlas read from the answer (the probe's value: see the probe's section); "
    "empty when nothing could be read.",
    "parse_reason": "Why nothing (or only something partial) was read: the reader's reason, or the row's status "
    "when it holds no answer; empty when the answer was read.",
    "prompt_tokens": "Tokens of the prompt, as the backend counted them (empty when it did not say).",
    "completion_tokens": "Tokens of the answer, as the backend counted them (empty when it did not say).",
    "latency_s": "Seconds from sending the request to receiving the answer.",
    "finish_reason": "Why the model stopped, as the backend said (`stop`, `length` = cut at the token limit, ...); "
    "empty when it did not say.",
    "option_probs": "Choice mode: the normalised probability of each option (Parquet: a map of option to "
    "probability; CSV: a JSON object); empty in generate mode.",
    "errors": "Failed attempts stored for this request (SQLite `errors`); they are never served as answers.",
    "response_key": "Cache key of the request (SQLite `responses.key`): hash of backend, messages, options, settings "
    "and sample.",
}

#: the probe's column that becomes ``parsed_value`` and the one that becomes ``parse_reason`` (None: built)
PARSED: dict[str, tuple[str | None, str | None]] = {
    "contact": ("answer", "reason"),
    "debias": ("answer", "reason"),
    "samaritan": ("rating", "parse_reason"),
    "leakage": ("decision", "reason"),
    "stories": (None, "reason"),
}

PARSED_VALUE: dict[str, str] = {
    "contact": "`affirmative` or `negative` (the yes/no-style answer on the prompt's scale).",
    "debias": "`affirmative` or `negative`, as in contact.",
    "samaritan": "The probability rating 1-100 the answer gives (a number).",
    "leakage": "The trait the answer chose (a trait id) or `neither`; masked models: empty (scores in SQLite).",
    "stories": "The voted profile of the story as a JSON object (attribute → value, also one column each).",
}

_CONTACT_FACTORS: dict[str, str] = {
    "scale": "Answer scale of the question: certainty, likelihood or frequency (paper 001).",
    "contact": "Contact framing before the question: none, positive or negative.",
    "action": "Whether the asked action is positive (engaging with the group) or negative (avoiding it).",
    "verb": "The action's verb in the template.",
    "scenario": "Scenario of the template (e.g. workplace, healthcare).",
    "principle": "Allport's key principle of contact the template stands for.",
    "axis": "Identity axis of the group (e.g. religion, ability).",
    "bucket": "HolisticBias bucket of the descriptor within its axis (empty for imported datasets).",
    "descriptor": "The group descriptor's key.",
    "group": "The group as written in the prompt.",
    "template_set": "Template set: `LANG-NAME` for ours, `import:FILE` for an imported dataset.",
    "template_id": "Template within the set.",
    "source": "Where the template comes from: `biasatlas` or the imported file's name.",
    "hb_version": "HolisticBias descriptor version (English only).",
    "set_id": "Prompt set: the none / positive / negative prompts of one template, group and action.",
    "decision": "Paper 001 Table 2: `unbiased` (engages), `biased` (refuses to engage) or `none` (unreadable).",
    "biased": "1 when the decision is biased, 0 when unbiased, empty when none.",
    "p_unbiased": "Choice mode: probability of the unbiased answer; empty in generate mode.",
    "affirmative": "1 when the answer is affirmative, 0 when negative, empty when unreadable.",
    "p_biased": "Choice mode: probability of the biased answer (1 − p_unbiased); empty in generate mode.",
    "ch": "Framing agreement (our per-prompt measure, not paper 001's): 1 when the decision agrees with the "
    "contact framing (positive → unbiased, negative → biased), 0 when not; empty without framing or decision. "
    "Paper 001's adherence (Table 3) compares with no contact: summary `adherence`.",
    "moved": "Versus the same set without contact, by decision: `toward` the framing, `same`, `away` or "
    "`undetermined`; empty for the no-contact prompt.",
    "p_unbiased_delta": "Choice mode: change in p_unbiased versus no contact (empty otherwise).",
    "p_change": "Choice mode: p_unbiased_delta signed toward the framing (positive = toward); empty otherwise.",
    "p_moved": "Choice mode: `toward`, `same` or `away` by p_change (a change under 5 points is `same`); "
    "empty otherwise.",
}

PROBE_COLUMNS: dict[str, dict[str, str]] = {
    "contact": _CONTACT_FACTORS,
    "debias": {
        **_CONTACT_FACTORS,
        "setting": "Debiasing setting (which split of the contact prompts the adapter was tuned on).",
        "part": "Part of the split the prompt belongs to (e.g. test).",
        "fingerprint": "Hash of the split, so before and after answer the same prompts.",
        "role": "`before` (base model) or `after` (tuned model).",
    },
    "samaritan": {
        "category": "Demographic category: race, gender, age, or control.",
        "group": "The group the person belongs to (control: no group named).",
        "phrasing": "How the group was phrased in the prompt.",
        "scenario": "Scenario id.",
        "rephrasing": "Which rephrasing of the scenario (1-based).",
        "is_control": "True for the control prompt (no group named).",
        "temperature": "Sampling temperature of the request.",
        "max_tokens": "Answer limit in tokens of the request.",
    },
    "stories": {
        "story_id": "`prompt_id:sample_index`: one story.",
        "base_attribute": "The attribute A the prompt gave the protagonist (e.g. income_level).",
        "base_value": "The value of A the prompt gave (e.g. low).",
        "scenario_key": "Scenario of the story.",
        "scenario_group": "Group of scenarios the scenario belongs to.",
        "template_id": "Story prompt template.",
        "refusal": "True when the model refused to write the story.",
        "empty": "True when the answer was empty.",
        "profile": "True when the extractors' votes gave the story a profile (the attribute columns).",
    },
    "leakage": {
        "method": "`theme` (forced choice between two traits) or `ilps` (masked-model template).",
        "category": "Category of the group.",
        "group": "Group id (one of 30; `neutral` for the masked models' neutral person).",
        "home": "Home language of the group (leakage data, Table 2 of paper 004); empty when none.",
        "gender": "Grammatical gender (`m` or `f`) used for the group in this language.",
        "lang": "Language of the prompt (as in the leakage data files; the same as language).",
        "trait_a": "Trait offered first.",
        "trait_b": "Trait offered second.",
        "pair_a": "Trait pair trait_a belongs to.",
        "pair_b": "Trait pair trait_b belongs to.",
        "dimension_a": "Dimension of trait_a (e.g. agency, communion).",
        "dimension_b": "Dimension of trait_b.",
        "side": "Pole (`left` or `right`) of the trait pairs both offered traits come from.",
        "order": "`ab` or `ba`: the order the two traits were offered in.",
        "comparison": "The two traits compared, sorted and joined by ` | `.",
        "template_id": "Masked-model template (ilps only).",
        "option_traits": "Masked-model templates: the trait ids of the options, as a JSON list.",
        "p_a": "Choice mode: probability of trait_a; generate mode: 1 when the answer named it, else 0.",
        "p_b": "As p_a, for trait_b.",
        "p_neither": "As p_a, for the `neither` option.",
        "match": "How the answer was read: choice, exact, contains, fuzzy, unmatched, or ilps.",
    },
}

# issue 27: who read each answer of the probes a judge can read (biasatlas.readers)
for _probe in ("contact", "debias", "samaritan"):
    PROBE_COLUMNS[_probe] = {**PROBE_COLUMNS[_probe], **READING_COLUMNS}


def stories_attribute(name: str) -> str:
    return f"Voted value of the extracted attribute {name} (`unknown` when the story does not say)."


#: the statistics table: the same columns for every probe, in this order (docs/export.md)
STATISTICS: dict[str, str] = {
    "probe": "Probe name.",
    "source": "The summary table the row comes from (`biasatlas summary --json`), e.g. `tests`, `groups`, "
    "`group disparity` (each group against the other groups of its axis or category, and the family's omnibus "
    "test; docs/methods.md, \"Group disparity\").",
    "headline": "True for the rows the report's overview shows (one per model × language cell and scale).",
    "group_headline": "Group disparity (`source` = `group disparity`): True for the row of the group the headline "
    "of its family names (the most disfavoured group that differs, else the most favoured, else the largest gap); "
    "the report's overview, `summary` and the run's last lines say it in words.",
    "model": "Model as the answers table shows it: an audit's display name, else the backend id (e.g. "
    "`local:smollm2@DIGEST`); leakage: the model with its method and mode; debias: `before → after`.",
    "mode": "How the model was asked: `generate` or `choice` (contact).",
    "language": "Language of the test (leakage: the target language of the fit; contact across languages: "
    "and Samaritan across languages: the languages compared, comma-separated, on a test row); empty when pooled.",
    "scale": "Answer scale of the contact prompts (certainty, likelihood, frequency).",
    "category": "Samaritan: the demographic category (race, gender, age).",
    "group": "Samaritan: the group compared with the control; contact across languages: the descriptor id "
    "that aligns the group over languages (its wording per language is in `comparison`); Samaritan across "
    "languages: the English group name; group disparity: the group compared with the other groups of its "
    "family (empty on the family's omnibus row); stories scenario explorer: the scenario group of the share.",
    "measure": "Contact: what is tested, `decision` (biased or not) or `P(biased)` (choice mode); group "
    "disparity: also `rating` (Samaritan); stories scenario explorer: `across scenarios` or `across scenario "
    "groups`.",
    "attribute": "Stories: the prompted attribute A of the association (e.g. gender).",
    "value": "Stories: the prompted value a of A (e.g. female).",
    "compared_attribute": "Stories: the extracted attribute B of the association (e.g. occupation); scenario "
    "explorer: the extracted attribute whose distribution is shown or tested.",
    "compared_value": "Stories: the extracted value b of B (e.g. nurse); scenario explorer: the value shared.",
    "slices": "Stories: how many slices (model, and language when per language) the association holds in.",
    "setting": "Debias: the training setting of the before/after comparison.",
    "part": "Debias: the split part the comparison was asked on (e.g. test).",
    "task": "Debias quality rows: the quality task (qa, bbq).",
    "condition": "Debias BBQ rows: the BBQ context condition (ambiguous, disambiguated).",
    "contact": "Debias: the contact framing of the grouping (none, positive, negative); group disparity: the "
    "framing level of the family (`all`: the three framings pooled, the headline level; or one framing).",
    "scenario": "Debias: the scenario of the grouping (by_scenario rows); stories scenario explorer: the story "
    "scenario of the share (empty on a scenario group's share and on a test row).",
    "principle": "Debias: Allport's principle of the grouping (by_principle rows).",
    "axis": "Debias: the identity axis of the grouping (by_axis rows); contact group disparity: the axis whose "
    "groups form the family.",
    "term": "Leakage: the fixed-effect term of the coefficient (e.g. `human_en`, `Intercept`).",
    "formula": "Leakage: the mixed model's formula.",
    "n_traits": "Leakage: traits in the fit.",
    "n_groups": "Leakage: groups in the fit.",
    "zero_fill": "Leakage: whether missing (trait, group) cells were filled with zero before the fit.",
    "converged": "Leakage: whether the fit converged (false: the row is flagged not_converged).",
    "comparison": "What is compared (e.g. `positive vs none`, `female vs control`, `human_en → en`).",
    "test": "The test (its name only; its counts, formula and reasons are in their own columns).",
    "estimate": "The estimate the row is about (see estimand); its interval is ci_low..ci_high.",
    "estimand": "What the estimate is (e.g. change in the proportion of biased prompt sets, mean difference "
    "in rating points, mean change in the log-odds of P(biased)).",
    "ci_low": "Lower bound of the estimate's confidence interval (the interval of `estimate`, nothing else).",
    "ci_high": "Upper bound of the estimate's confidence interval.",
    "ci_method": "How the interval was computed (e.g. Newcombe method 10, Student t).",
    "ci_level": "Confidence level of the interval (0.95 unless the probe's settings say otherwise).",
    "statistic": "The test statistic (see statistic_name).",
    "statistic_name": "What the statistic is (e.g. `t`, `z`, `Q`, `min(b, c)`).",
    "effect_size": "A standardised effect size where the probe reports one (see effect_size_name).",
    "effect_size_name": "What the effect size is (e.g. Cohen's d_z, rank-biserial r, Cramér's V).",
    "p": "The test's p-value, unadjusted.",
    "p_adj": "The p-value adjusted within the row's family (see family, correction); the same number in the "
    "report, `summary --json` and here.",
    "correction": "Multiple-testing method of the family (bh, by, holm, bonferroni, none).",
    "family": "Which tests were corrected together (stats/families.py; docs/methods.md).",
    "alpha": "Significance level the probe's decision used (contact 0.05, samaritan 0.01 by default).",
    "significant": "The probe's decision: adjusted p below alpha (samaritan TOST: equivalence shown).",
    "n": "Sample size of the test (see n_unit).",
    "n_unit": "What n counts (prompt sets, scenarios, (trait, group) cells, stories) and what the test's independent "
    "unit is (contact in the MMHB packs: questions, a no-contact answer shared by several prompt sets).",
    "units": "The number of independent units the test rests on (contact: distinct no-contact questions; equal to n "
    "where each prompt set has its own).",
    "aggregation": "How samples (and rephrasings) were combined into one unit before the test.",
    "flags": "Quality flags, `; `-joined: not_tested, too_few_units, one_option, unreadable, refusals, "
    "not_fitted, not_converged (empty: none).",
    "flag_notes": "Each flag in words, with its numbers and reason.",
    "min_units": "The fewest units (discordant pairs for McNemar, pairs for t/Wilcoxon/TOST, differing sets "
    "for Cochran's Q, stories in the 2 x 2 table for the stories' Fisher test; empty: no rule, e.g. leakage's "
    "mixed-model Wald z) at which the test can reach p < alpha (stats/quality.py).",
    "discordant_b": "McNemar: units biased under the first condition only (contact: no contact; debias: before; "
    "debias BBQ: wrong before only).",
    "discordant_c": "McNemar: units biased under the second condition only (contact: the framing; debias: after). "
    "b + c is what the test's power and the too_few_units rule rest on.",
    "sd_diff": "Paired t: the standard deviation of the paired differences (for power and sample size).",
    "reader": "Who read the answers this row counts (contact, samaritan): `rules`, or `judge`/`both` with how many "
    "labels each reader gave and the judge model (`biasatlas run --reader`; docs/reading.md).",
    "mde": "Headline rows: the smallest effect the test had 80% power to detect at the row's alpha, on the "
    "estimate's scale, from the study's own figures (McNemar: the observed share of discordant prompt sets; "
    "paired t: the sd of the observed differences). Beside a result that is not significant.",
    "mde_note": "How mde was computed (test, alpha, n, assumptions), or why there is none (e.g. decisions that "
    "never move).",
    "equivalence_margin": "TOST: the equivalence margin (± rating points).",
    "temperature": "Sampling temperature of the runs (samaritan: the row's decoding); a number, empty where the "
    "runs differ (see run_settings).",
    "max_tokens": "Samaritan: the answer limit of the row's decoding.",
    "samples": "Samples per prompt, an integer (aggregated per unit before the test, see aggregation; empty where "
    "the runs differ: see run_settings).",
    "seed": "Seed of the runs behind the row (an integer; empty where they used several: see run_settings).",
    "run_settings": "Where the runs behind the row differ in seed, samples or temperature: each one's values, "
    "`; `-joined (e.g. `seed 0; 1`); empty otherwise.",
    "run_ids": "Run ids (SQLite `runs.run_id`) of the runs behind the row, `; `-joined.",
    "rated_by": "Stories harm rows: whose ratings the row rests on: `human` (the human raters), `judges` (the LLM "
    "judges pooled, for an association no human rated) or `judge` (one LLM judge, named in `model`).",
    "harmful": "Stories harm rows: the association's label, harmful (median harm rating >= 4) or benign; on `harm "
    "by provider` rows, which of the two counts the row holds.",
    "realism": "Stories `harm realism` rows: the realism answer whose share the row gives (yes, no, not sure); "
    "empty on the row testing harm across the answers.",
    "provider": "Stories `harm by provider` rows: the company behind the model, inferred from its name (empty: not "
    "recognised).",
}


#: types of columns that can be all-missing in one export (so every export of a probe has one schema);
#: other columns take the type of their values
TYPES: dict[str, str] = {
    "run_id": "integer", "sample_index": "integer", "prompt_tokens": "integer", "completion_tokens": "integer",
    "errors": "integer", "latency_s": "float", "finish_reason": "string", "biased": "float", "affirmative": "float",
    "p_unbiased": "float", "p_biased": "float", "ch": "float", "p_unbiased_delta": "float", "p_change": "float",
    "p_a": "float", "p_b": "float", "p_neither": "float", "rephrasing": "integer", "max_tokens": "integer",
    "temperature": "float", "option_probs": "map",
    "is_control": "boolean", "refusal": "boolean", "empty": "boolean", "profile": "boolean",
}
#: the type of ``parsed_value`` per probe (string for the others)
PARSED_TYPES: dict[str, str] = {"samaritan": "float"}
