"""Property-based tests (hypothesis): random text and random bytes fed to every reader, importer and config
loader. A reader of model answers never raises; an importer or loader raises nothing but its documented
one-line error (a ValueError subclass naming the file)."""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasatlas.audit.spec import AuditError, load_audit
from biasatlas.batch.formats import BadLine, OutputLine, parse_line
from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.parsing.answers import AnswerParser, choose_by_probability
from biasatlas.parsing.lexicon import scales
from biasatlas.parsing.numbers import RatingParser, parse_rating
from biasatlas.probes.contact.importer import RAJ_COLUMNS, DatasetImportError, import_dataset, read_descriptors
from biasatlas.probes.contact.read import parse_row
from biasatlas.probes.leakage.data import LeakageDataError
from biasatlas.probes.leakage.ratings import load_name_map, read_ratings
from biasatlas.probes.stories.extract import parse_extraction, vocabularies
from biasatlas.probes.stories.harm import parse_judge, read_human_csv
from biasatlas.probes.stories.importer import REQUIRED_COLUMNS, read_table
from biasatlas.probes.stories.read import is_refusal, story_text
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.records import Outcome

LANGUAGES = ("en", "de", "is")
#: Examples per test (the module runs in ~10 s on 2 cores); BIASATLAS_PROPERTY_SCALE=10 for a longer hunt.
SCALE = float(os.environ.get("BIASATLAS_PROPERTY_SCALE", "1"))
FAST = settings(max_examples=int(60 * SCALE), deadline=None, database=None, suppress_health_check=list(HealthCheck))
FILES = settings(max_examples=int(25 * SCALE), deadline=None, database=None, suppress_health_check=list(HealthCheck))
DIMS = vocabularies(load_seeds("en"))

# Text with what answers and files hold: words of the readers' lexicons, digits, JSON and CSV punctuation,
# reasoning tags, markdown, quotes, control characters, any unicode.
WORDS = st.sampled_from([
    "Yes", "No", "yes", "not", "likely", "Unlikely", "Ja", "Nein", "nicht", "Já", "Nei", "ekki", "Mostly", "rarely",
    "answer:", "Antwort:", "<think>", "</think>", "**", "\"", "'", "{", "}", "[", "]", ":", ",", "\n", "/5", "harm",
    "realistic", "100", "-1", "1e308", "NaN", "50.5", "fünfzig", "fifty", "I'm sorry", "—", "\u2019", "\x00", " ",
])
TEXT = st.one_of(st.text(), st.lists(st.one_of(WORDS, st.text(max_size=5)), max_size=40).map(" ".join))
BYTES = st.one_of(st.binary(), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))


def _file(data: bytes, suffix: str) -> Path:
    handle = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)  # noqa: SIM115 - closed at once
    with handle:
        handle.write(data)
    return Path(handle.name)


def _one_line(exc: Exception) -> None:
    assert str(exc) and "\n" not in str(exc).strip(), repr(exc)


def _csv(header: tuple[str, ...], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8", "surrogatepass")


# ---- readers of model answers: never raise ---------------------------------------------------------------
@FAST
@given(text=st.one_of(st.none(), TEXT), scale=st.sampled_from(scales()), language=st.sampled_from(LANGUAGES))
def test_the_answer_reader_reads_anything(text: str | None, scale: str, language: str) -> None:
    outcome = AnswerParser(scale, language).parse(text)
    assert isinstance(outcome, Outcome) and (outcome.value is None) == (outcome.reason is not None)


@FAST
@given(text=st.one_of(st.none(), TEXT), language=st.sampled_from(LANGUAGES))
def test_the_rating_reader_reads_anything(text: str | None, language: str) -> None:
    outcome = parse_rating(text, language)
    assert isinstance(outcome, Outcome)
    assert outcome.value is None or 1 <= float(outcome.value) <= 100
    assert isinstance(RatingParser(language).parse(text), Outcome)


PROBS = st.dictionaries(st.sampled_from(["Yes", "No", "Maybe", ""]), st.floats(allow_nan=True, allow_infinity=True))


@FAST
@given(probs=st.one_of(st.none(), PROBS), text=st.one_of(st.none(), TEXT), mode=st.sampled_from(["choice", "generate"]),
       scale=st.sampled_from(scales()), language=st.sampled_from(LANGUAGES))
def test_contact_reads_any_stored_answer(probs: dict[str, float] | None, text: str | None, mode: str, scale: str,
                                         language: str) -> None:
    outcome = parse_row(mode, scale, language, text, probs, ("Yes", "No"))
    assert isinstance(outcome, Outcome)
    assert isinstance(choose_by_probability(probs, ("Yes", "No")), Outcome)


@FAST
@given(text=st.one_of(st.none(), TEXT, st.dictionaries(st.sampled_from(list(DIMS)), TEXT).map(repr)))
def test_the_stories_readers_read_anything(text: str | None) -> None:
    extraction = parse_extraction(text, DIMS, story=text or "")
    assert extraction is not None
    harm, realism = parse_judge(text)
    assert harm is None or 1 <= harm <= 5
    assert realism in (None, "yes", "no", "not sure")
    assert isinstance(is_refusal(text, ("i'm sorry", "i cannot")), bool)
    story = story_text(text)
    assert story is None or isinstance(story, str)
    assert story_text(math.nan) is not None


@FAST
@given(raw=BYTES, number=st.integers(1, 10**6))
def test_a_batch_output_line_is_read_or_named_bad(raw: bytes, number: int) -> None:
    assert isinstance(parse_line(Path("out.jsonl"), number, raw), OutputLine | BadLine)


# ---- importers and config loaders: only their one-line error -------------------------------------------
@FILES
@given(data=BYTES, suffix=st.sampled_from([".csv", ".xlsx", ".txt", ""]))
def test_the_contact_importer_takes_any_bytes(data: bytes, suffix: str) -> None:
    path = _file(data, suffix)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ContactImportWarning: a descriptor that does not fit its slot
            for read in (import_dataset, read_descriptors):
                try:
                    read(path)
                except DatasetImportError as exc:
                    _one_line(exc)
    finally:
        path.unlink()


@FILES
@given(rows=st.lists(st.lists(TEXT, min_size=len(RAJ_COLUMNS), max_size=len(RAJ_COLUMNS)), max_size=6),
       raj=st.booleans())
def test_the_contact_importer_takes_any_table(rows: list[list[str]], raj: bool) -> None:
    header = RAJ_COLUMNS if raj else ("question", "action", "scenario", "principle", "axis", "x", "y", "z", "w")
    path = _file(_csv(header, rows), ".csv")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                import_dataset(path, language="en")
            except DatasetImportError as exc:
                _one_line(exc)
    finally:
        path.unlink()


@FILES
@given(data=BYTES, suffix=st.sampled_from([".csv", ".tsv", ".parquet"]))
def test_the_stories_table_reader_takes_any_bytes(data: bytes, suffix: str) -> None:
    path = _file(data, suffix)
    try:
        read_table(path)
    except ValueError as exc:
        _one_line(exc)
    finally:
        path.unlink()


@FILES
@given(rows=st.lists(st.lists(TEXT, min_size=len(REQUIRED_COLUMNS), max_size=len(REQUIRED_COLUMNS)), max_size=5))
def test_the_stories_table_reader_takes_any_table(rows: list[list[str]]) -> None:
    path = _file(_csv(REQUIRED_COLUMNS, rows), ".csv")
    try:
        assert len(read_table(path)) == len(rows)
    except ValueError as exc:
        _one_line(exc)
    finally:
        path.unlink()


@FILES
@given(data=st.one_of(BYTES, st.lists(st.lists(TEXT, min_size=4, max_size=4), max_size=5).map(
    lambda rows: _csv(("association", "rater", "harm", "realism"), rows))))
def test_the_human_ratings_reader_takes_any_bytes(data: bytes) -> None:
    path = _file(data, ".csv")
    try:
        read_human_csv(path)
    except ValueError as exc:
        _one_line(exc)
    finally:
        path.unlink()


AUDIT_TEXT = st.one_of(
    TEXT,
    st.builds(lambda title, model, probe, extra: f"title: {title}\nmodels:\n  - model: {model}\nprobes:\n"
              f"  {probe}: {{limit: 3}}\n{extra}", TEXT, TEXT, st.sampled_from(["contact", "x", "stories"]), TEXT),
)


@FILES
@given(text=AUDIT_TEXT, suffix=st.sampled_from([".yaml", ".toml"]))
def test_the_audit_loader_takes_any_text(text: str, suffix: str) -> None:
    path = _file(text.encode("utf-8", "surrogatepass"), suffix)
    try:
        load_audit(path)
    except AuditError as exc:
        _one_line(exc)
    finally:
        path.unlink()


@FILES
@given(data=BYTES)
def test_the_data_file_loader_takes_any_bytes(data: bytes) -> None:
    path = _file(data, ".yaml")
    try:
        load_yaml(path)
    except DataFileError as exc:
        assert str(exc)
    finally:
        path.unlink()


@FILES
@given(data=st.one_of(BYTES, st.dictionaries(TEXT, st.one_of(TEXT, st.integers(), st.none())).map(
    lambda d: repr(d).encode("utf-8", "surrogatepass"))), suffix=st.sampled_from([".json", ".yaml"]))
def test_the_leakage_ratings_and_name_map_readers_take_any_bytes(data: bytes, suffix: str) -> None:
    path = _file(data, suffix)
    try:
        for read in (read_ratings, load_name_map):
            try:
                read(path)
            except LeakageDataError as exc:
                _one_line(exc)
    finally:
        path.unlink()
