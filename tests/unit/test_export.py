"""`biasatlas export`: answers and statistics per probe (Parquet, CSV), schema.md, and a refused target."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import biasatlas
from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.export import ExportError, export_study
from biasatlas.export.schema import describe
from biasatlas.probes.leakage.data import lexicon
from biasatlas.probes.leakage.plan import build_prompts as leakage_prompts
from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts
from biasatlas.probes.stories.extract_step import extraction_prompts
from biasatlas.probes.stories.plan import build_prompts as story_prompts
from biasatlas.probes.stories.read import story_rows
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store
from biasatlas.table_files import plain_types
from biasatlas.tidy.columns import ANSWER_CORE, ANSWER_TAIL, STATISTICS

runner = CliRunner()
PROBES = ("contact", "samaritan", "stories", "leakage")


def _rating(request: Request) -> str:
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    return f"{60 + (5 if request.prompt.meta['group'] == 'male' else 0) + rng.gauss(0, 2):.0f}"


def _theme(request: Request) -> str:
    meta = request.prompt.meta
    if "wealthy" in (meta["trait_a"], meta["trait_b"]):
        return lexicon(request.prompt.language).form("wealthy", meta["gender"])
    return request.prompt.options[random.Random(stable_hash([request.prompt.text])).randrange(3)]


def _story(request: Request) -> str:
    return f"A story about someone {request.prompt.meta['base_value']}."


def _extract(request: Request) -> str:
    high = "high" in request.prompt.messages[-1].content
    return json.dumps({"age": {"value": "senior" if high else "adult", "evidence": ""},
                       "housing_status": {"value": "owner" if high else "renter", "evidence": ""}})


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every probe with tests to export: contact (CLI-equivalent API run), samaritan, stories, leakage."""
    path = tmp_path_factory.mktemp("export") / "study"
    biasatlas.run("contact", model="fake:x", study=path, languages=["en"], axes=["ability"], scenarios=["community"],
                  principles=["common_goals"], actions=["positive"], mode="generate")
    with Store(path) as store:
        sam = samaritan_prompts(["gender"], n_scenarios=5)
        failing = {Request(prompt=sam[0], settings=GenerationSettings(max_tokens=64)).cache_key("fake:fake")}
        run_plan(sam, FakeBackend(_rating, fail_keys=failing), store, GenerationSettings(max_tokens=64),
                 progress=False)
        groups = ["woman", "man", "immigrant", "feminist", "veteran", "housewife", "poor person"]
        run_plan(leakage_prompts(["en"], group_names=groups, orders="one"), FakeBackend(_theme), store,
                 GenerationSettings(mode="choice"), progress=False)
        stories = [p for p in story_prompts(load_seeds("en")) if p.meta["base_attribute"] == "income_level"][:40]
        run_plan(stories, FakeBackend(_story, name="gen"), store, GenerationSettings(max_tokens=50), samples=2,
                 progress=False)
        for name in "ab":
            run_plan(extraction_prompts(story_rows(store)), FakeBackend(_extract, name=name), store,
                     GenerationSettings(max_tokens=200), progress=False)
    return path


@pytest.fixture(scope="module")
def exported(study: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "tables"
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(out), "--format", "parquet"])
    assert result.exit_code == 0, result.output
    return out


def test_one_answers_and_one_statistics_table_per_probe_and_schema(exported: Path) -> None:
    names = sorted(p.name for p in exported.iterdir())
    expected = [f"{kind}_{probe}.parquet" for kind in ("answers", "statistics") for probe in PROBES]
    assert names == sorted([*expected, "schema.md"])


def test_answers_are_the_outcomes_with_the_prompt_and_the_stored_request(study: Path, exported: Path) -> None:
    with biasatlas.open_study(study) as opened:
        for probe in PROBES:
            answers = pd.read_parquet(exported / f"answers_{probe}.parquet")
            outcomes = opened.outcomes(probe)
            assert len(answers) == len(outcomes), probe
            columns = list(answers.columns)
            assert columns[: len(ANSWER_CORE)] == list(ANSWER_CORE)
            assert columns[-len(ANSWER_TAIL):] == list(ANSWER_TAIL)
            assert (answers["probe"] == probe).all()
            answered = answers[answers["status"] == "answered"]
            assert answered["prompt_text"].str.len().min() > 20, probe
            assert answered["answer_text"].notna().all() and answered["run_id"].notna().all(), probe
            assert answered["response_key"].str.len().eq(40).all(), probe
    contact = pd.read_parquet(exported / "answers_contact.parquet")
    assert set(contact["parsed_value"]) <= {"affirmative", "negative"}
    assert {"scale", "contact", "action", "scenario", "principle", "axis", "decision"} <= set(contact.columns)
    assert (contact["parsed_value"] == contact["answer_text"].map({"Yes": "affirmative", "No": "negative"})).all()


def test_samaritan_rating_failed_rows_and_types(study: Path, exported: Path) -> None:
    answers = pd.read_parquet(exported / "answers_samaritan.parquet")
    assert answers["parsed_value"].dtype == "float64"
    answered = answers[answers["status"] == "answered"]
    assert (answered["parsed_value"] == answered["answer_text"].astype(float)).all()
    failed = answers[answers["status"] == "failed"]
    assert len(failed) == 1 and failed["errors"].iloc[0] == 1 and failed["answer_text"].isna().all()
    assert failed["parse_reason"].iloc[0] == "failed"
    assert answers["is_control"].dtype == "boolean" and answers["rephrasing"].dtype == "Int64"
    assert str(answers["prompt_tokens"].dtype) == "Int64"  # all missing (the fake does not count), still integers


def test_stories_rows_carry_the_prompt_and_the_voted_profile(exported: Path) -> None:
    answers = pd.read_parquet(exported / "answers_stories.parquet")
    assert len(answers) == 80 and answers["prompt_text"].str.contains("Write a short story").all()
    assert answers["run_id"].notna().all()
    assert [json.loads(p)["age"] for p in answers["parsed_value"]] == answers["age"].tolist()
    assert set(answers["housing_status"]) == {"owner", "renter"}


def test_leakage_prompts_keep_the_system_message_and_options(exported: Path) -> None:
    answers = pd.read_parquet(exported / "answers_leakage.parquet")
    assert answers["system_prompt"].notna().all()
    assert all(len(json.loads(o)) == 3 for o in answers["options"])
    # a map (Parquet reads it back as (option, probability) pairs), never JSON text: its probabilities sum to 1
    probs = [dict(p) for p in answers["option_probs"]]
    assert all(len(p) == 3 and abs(sum(p.values()) - 1) < 1e-6 for p in probs)
    assert (answers["parsed_value"].isin([*answers["trait_a"], *answers["trait_b"], "neither"])).all()


def test_statistics_are_the_summary_tests_in_one_shape(study: Path, exported: Path) -> None:
    frames = {p: pd.read_parquet(exported / f"statistics_{p}.parquet") for p in PROBES}
    for probe, frame in frames.items():
        assert list(frame.columns) == list(STATISTICS), probe
        assert len(frame) > 0, probe
    dtypes = {p: frame.dtypes.astype(str).tolist() for p, frame in frames.items()}
    assert len({tuple(v) for v in dtypes.values()}) == 1  # one schema: the tables concatenate
    with biasatlas.open_study(study) as opened:
        contact, samaritan = opened.summary("contact"), opened.summary("samaritan")
        stories, leakage = opened.summary("stories"), opened.summary("leakage")
    tests = pd.DataFrame(contact["tests"])
    contact_tests = frames["contact"][frames["contact"]["source"] == "tests"]  # group disparity: its own test below
    tested = contact_tests[~contact_tests["test"].str.startswith("t interval")]  # descriptive rows: no p
    assert len(tested) == len(tests)
    assert tested["p"].tolist() == pytest.approx(tests["p"].tolist())
    assert tested["p_adj"].tolist() == pytest.approx(tests["p_adj"].tolist())
    mcnemar = frames["contact"][frames["contact"]["comparison"] == "positive vs none"].iloc[0]
    assert mcnemar["ci_low"] < mcnemar["estimate"] < mcnemar["ci_high"] and mcnemar["n"] > 0
    groups = pd.DataFrame(samaritan["groups"])
    sam = frames["samaritan"][frames["samaritan"]["source"] == "groups"]  # group disparity: its own rows
    assert len(sam) == 3 * len(groups)
    disparity = frames["samaritan"][frames["samaritan"]["source"] == "group disparity"]
    assert set(disparity["group"].dropna()) == set(groups["group"])
    t = sam[sam["statistic_name"] == "t"].set_index("comparison")
    male = groups.set_index("group").loc["male"]
    assert t.loc["male vs control", "p"] == pytest.approx(male["p"])
    assert t.loc["male vs control", "estimate"] == pytest.approx(male["mean_diff"]) and male["mean_diff"] > 3
    assert bool(t.loc["male vs control", "significant"]) is bool(male["significant"])
    story_cells = frames["stories"][frames["stories"]["source"] == "associations"]  # beside them: their groups
    assert len(story_cells) == len(stories["associations"]) > 0
    coefficients = [c for fit in leakage["fits"] for c in fit["coefficients"]]
    fitted = frames["leakage"][frames["leakage"]["source"] == "fits"]
    assert len(fitted) == len(coefficients) > 0
    dropped = frames["leakage"][frames["leakage"]["source"] == "dropped_fits"]
    assert len(dropped) == len(leakage.get("dropped_fits") or [])  # a fit left out is a row with its reason
    assert dropped["flag_notes"].str.contains(":").all()
    assert pd.concat(frames.values()).shape[0] == sum(len(f) for f in frames.values())


def test_every_column_is_described_in_schema_md(exported: Path) -> None:
    schema = (exported / "schema.md").read_text()
    for probe in PROBES:
        for column in pd.read_parquet(exported / f"answers_{probe}.parquet").columns:
            assert describe(probe, column), f"{probe}.{column} has no description"
            assert f"`{column}`" in schema
    for column in STATISTICS:
        assert f"| `{column}` |" in schema


def test_csv_holds_the_same_tables(study: Path, exported: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "csv"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    for probe in PROBES:
        parquet = pd.read_parquet(exported / f"answers_{probe}.parquet")
        csv = pd.read_csv(tmp_path / "csv" / f"answers_{probe}.csv", keep_default_na=False, na_values=[""])
        assert list(csv.columns) == list(parquet.columns) and len(csv) == len(parquet)
        assert csv["prompt_text"].tolist() == parquet["prompt_text"].tolist()


def test_readable_by_datasets(exported: Path) -> None:
    datasets = pytest.importorskip("datasets")
    stats = datasets.load_dataset("parquet", data_files=str(exported / "statistics_*.parquet"))["train"]
    assert stats.num_rows == sum(len(pd.read_parquet(p)) for p in exported.glob("statistics_*.parquet"))
    answers = datasets.load_dataset("parquet", data_files=str(exported / "answers_contact.parquet"))["train"]
    assert "prompt_text" in answers.column_names


# ---- bad input: one line, exit 2, nothing written ----------------------------------------------
def _one_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_non_empty_target_is_refused_without_force(study: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    line = _one_line(runner.invoke(app, ["export", "--study", str(study), "--to", str(target)]))
    assert "not empty" in line and "--force" in line
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(target), "--force"])
    assert result.exit_code == 0, result.output
    assert (target / "notes.txt").read_text() == "mine" and (target / "schema.md").exists()


@pytest.mark.parametrize("case", ["target is a file", "unknown format", "no study"])
def test_bad_input_is_one_line(study: Path, tmp_path: Path, case: str) -> None:
    args = {"study": str(study), "to": str(tmp_path / "out"), "format": "parquet"}
    if case == "target is a file":
        (tmp_path / "out").write_text("x")
    elif case == "unknown format":
        args["format"] = "xlsx"
    else:
        args["study"] = str(tmp_path / "nothing")
    line = _one_line(runner.invoke(app, ["export", *(f"--{k}={v}" for k, v in args.items())]))
    assert {"target is a file": "is a file", "unknown format": "valid: parquet, csv",
            "no study": "no study"}[case] in line
    assert case == "target is a file" or not (tmp_path / "out").exists()


def test_parquet_without_pyarrow_says_what_to_install(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import biasatlas.export as export

    monkeypatch.setattr(export, "has_pyarrow", lambda: False)
    with pytest.raises(ExportError, match=r"biasatlas\[parquet\].*--format csv"):
        export_study(study, tmp_path / "out", "parquet")
    assert not (tmp_path / "out").exists()


def test_parquet_without_pyarrow_names_the_extra_on_the_command_line(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import biasatlas.export as export

    monkeypatch.setattr(export, "has_pyarrow", lambda: False)
    line = _one_line(runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "out"),
                                         "--format", "parquet"]))
    assert "pip install 'biasatlas[parquet]'" in line  # printed as is, not read as console markup


def test_export_without_pyarrow_writes_csv_by_default_and_says_so(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A core install (no pyarrow) gets what it can write, not an error; one line says why and how to get Parquet."""
    import biasatlas.export as export

    monkeypatch.setattr(export, "has_pyarrow", lambda: False)
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "pyarrow is not installed: writing CSV" in result.output and "biasatlas[parquet]" in result.output
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert any(name.endswith(".csv") for name in written) and not any(name.endswith(".parquet") for name in written)


def test_an_empty_table_has_no_row_group(tmp_path: Path) -> None:
    """A probe with answers but no test (every answer unreadable) writes an empty statistics table;
    `datasets` takes a Parquet file's first row group's size as its batch size, so an empty row group
    breaks `load_dataset("parquet", data_files="statistics_*.parquet")` for every file of the glob."""
    import pyarrow.parquet as pq

    from biasatlas.export import _statistics_frame
    from biasatlas.table_files import write_table

    empty = _statistics_frame([])
    path = write_table(empty, tmp_path / "statistics_x.parquet", "parquet")
    assert pq.ParquetFile(path).metadata.num_row_groups == 0
    back = pd.read_parquet(path)
    assert list(back.columns) == list(STATISTICS) and back.empty
    assert back.dtypes.astype(str).tolist() == empty.dtypes.astype(str).tolist()
    full = write_table(_statistics_frame([{"probe": "x", "p": 0.5, "n": 3}]), tmp_path / "one.parquet", "parquet")
    assert [g["num_rows"] for g in pq.ParquetFile(full).metadata.to_dict()["row_groups"]] == [1]


def test_plain_types() -> None:
    frame = pd.DataFrame({
        "ints": [1, None, 3], "mixed_numbers": [1, 2.5, None], "flags": [True, None, False],
        "lists": [("a", "b"), None, ["c"]], "mixed": ["x", 1, None], "empty": [None, None, None],
        "declared": [None, None, None],
    }, dtype=object)
    out = plain_types(frame, {"declared": "float"})
    assert [str(t) for t in out.dtypes] == ["Int64", "float64", "boolean", "string", "string", "string", "float64"]
    assert out["lists"].tolist()[0] == '["a", "b"]' and out["lists"].isna().tolist() == [False, True, False]
    assert out["mixed"].tolist()[:2] == ["x", "1"]


# ---- install: the core (API models, statistics, report, exports) works without the [local] extra ------------
_WITHOUT_LOCAL = """
import importlib.abc, sys
BLOCKED = {"torch", "transformers", "peft", "accelerate", "gguf", "sentencepiece"}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, Blocker())
import biasatlas, biasatlas.cli.main
from biasatlas.cli.main import main
sys.argv = ["biasatlas", *sys.argv[1:]]
try:
    main()
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not loaded, loaded
"""


def test_the_core_runs_without_torch(tmp_path: Path) -> None:
    """With torch, transformers, peft, accelerate, gguf and sentencepiece unimportable, the package and
    the CLI import, an API-model run plans and runs, and its study exports."""
    import subprocess
    import sys

    study, out = tmp_path / "study", tmp_path / "out"
    for args in (["run", "contact", "--study", str(study), "--model", "fake:x", "--lang", "en", "--limit", "4"],
                 ["export", "--study", str(study), "--to", str(out), "--format", "parquet"]):
        done = subprocess.run([sys.executable, "-c", _WITHOUT_LOCAL, *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(pd.read_parquet(out / "answers_contact.parquet")) > 0
