"""Every importer turns a value into a score by one rule (`corpus_writer.score_of`): one word
table, so a word means one score whatever the tool, and one message form for a value that
is no score."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from judges.corpus.importers.corpus_writer import SCORE_FORMS, SCORE_WORDS, score_of
from judges.corpus.importers.inspect_log import score_value
from judges.corpus.importers.mlflow_traces import feedback_value
from judges.corpus.importers.otel import VALUE
from judges.corpus.importers.otel import _score as otel_score
from judges.corpus.importers.promptfoo import _score as promptfoo_score
from judges.corpus.importers.tabular import number
from judges.corpus.manifest import CorpusError


def _tabular(value: Any) -> tuple[float | None, str | None]:
    return number(value, "log.jsonl:1", "score")


READERS: dict[str, Callable[[Any], tuple[float | None, str | None]]] = {
    "inspect": score_value,
    "mlflow": feedback_value,
    "otel value": lambda v: otel_score({VALUE: v}, {}),
    "promptfoo": lambda v: promptfoo_score({"score": v}),
    "jsonl/csv": _tabular,
}
WORDS = [*SCORE_WORDS, " PASS ", "Correct", "FALSE", "Incorrect"]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("word", WORDS)
def test_every_reader_reads_every_word_as_the_table_says(reader: str, word: str) -> None:
    assert READERS[reader](word) == (SCORE_WORDS[word.strip().lower()], None)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("value", "score"), [(True, 1.0), (False, 0.0), (3, 3.0), (0.25, 0.25), (" 0.75 ", 0.75)]
)
def test_every_reader_reads_numbers_and_booleans_alike(
    reader: str, value: Any, score: float
) -> None:
    assert READERS[reader](value) == (score, None)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("value", "why"),
    [
        (math.nan, "score NaN in the log"),
        ("NaN", "score NaN in the log"),
        (math.inf, "score Infinity in the log"),
        ("-inf", "score -Infinity in the log"),
    ],
)
def test_a_non_finite_score_says_so_in_one_form(reader: str, value: Any, why: str) -> None:
    assert READERS[reader](value) == (None, why)


@pytest.mark.parametrize("reader", [r for r in READERS if r != "jsonl/csv"])
@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("maybe", f"value 'maybe' is not a score ({SCORE_FORMS})"),
        ([1, 0], f"a list value is not a score ({SCORE_FORMS})"),
        ({"a": 1}, f"a dict value is not a score ({SCORE_FORMS})"),
    ],
)
def test_a_value_that_is_no_score_is_named_in_one_form(reader: str, value: Any, why: str) -> None:
    assert READERS[reader](value) == (None, why)


def test_a_table_reads_such_a_value_as_a_refusal_with_the_same_words() -> None:
    with pytest.raises(CorpusError) as refused:
        _tabular("maybe")
    assert str(refused.value) == (
        f"log.jsonl:1: score value 'maybe' is not a score ({SCORE_FORMS}); map the column "
        "that holds the score (--map score=COLUMN)"
    )


def test_a_tools_own_literals_come_before_the_shared_words() -> None:
    assert [score_value(v)[0] for v in ("C", "P", "I", "N")] == [1.0, 0.5, 0.0, 0.0]
    # Only Inspect reads its literals; to the others "C" is no score.
    assert feedback_value("C")[0] is None
    assert score_of("good", {"good": 0.75}) == (0.75, None)
