"""Ranking's term counts from a text analysed once: the same as scanning the text for words
that start like a query stem and stemming them, which ranking did per candidate before."""

import re

import pytest

from memory.search import terms
from memory.search.terms import analyse, analysed, stem


def scanned(query_stems: list[str], text: str) -> dict[str, int]:
    """The definition: words at a word boundary starting like a query stem, stemmed."""
    prefixes = sorted({s[:3] for s in query_stems}, key=len, reverse=True)
    words = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in prefixes) + r")[^\W_]*")
    tf: dict[str, int] = {}
    for word in words.findall(text.lower()):
        if stem(word) in query_stems:
            tf[stem(word)] = tf.get(stem(word), 0) + 1
    return tf


TEXTS = [
    "The deployment was deployed; deploying again tomorrow. Deploy!",
    "dying lying tying: the die is cast, a lie told, a tie worn",
    "snake_case words: foo_bar bar_foo __init__ and bar alone",
    "École, ÉCOLE and école; naïve façade; İstanbul",
    "3d printers and x2 numbers, 2024 in March, march on",
    "",
]
QUERIES = [
    ["deploy", "tomorrow"],
    ["die", "lie", "tie"],
    ["bar", "foo", "init"],
    ["école", "naïv", "façad"],
    ["3d", "2024", "march", "printer"],
    ["dy", "ly"],
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("query", QUERIES)
def test_it_counts_what_scanning_the_text_counts(text, query):
    """Same counts, in the query's order (a sum over them is the same in every process)."""
    query_stems = [stem(t) for t in query]
    expected = scanned(query_stems, text)
    prefixes = frozenset(s[:3] for s in query_stems)
    got = analyse(text).frequencies(dict.fromkeys(query_stems, 1.0), prefixes)
    assert got == expected
    assert list(got) == [s for s in dict.fromkeys(query_stems) if s in expected]


def test_a_word_that_does_not_start_like_its_stem_counts_only_for_a_matching_prefix():
    """'dying' stems to 'die': ranking finds it only when a query stem starts with 'dyi'."""
    text = analyse("dying")
    assert text.frequencies({"die": 1.0}, frozenset({"die"})) == {}
    assert text.frequencies({"die": 1.0, "dyi": 1.0}, frozenset({"die", "dyi"})) == {"die": 1}


def test_the_analysis_is_kept_per_text(monkeypatch):
    """A text ranked again is not analysed again; the cache stays bounded."""
    monkeypatch.setattr(terms, "ANALYSED_ENTRIES", 2)
    monkeypatch.setattr(terms, "_analysed", type(terms._analysed)())
    first = analysed("apples and pears")
    assert analysed("apples and " + "pears") is first
    analysed("plums")
    analysed("cherries")
    assert len(terms._analysed) == 2
    assert analysed("apples and pears") is not first  # evicted, analysed again


def test_the_analysis_of_one_users_row_is_not_anothers(monkeypatch):
    """Rows of the same text but different owners are analysed each for itself: how fast a
    search ranks does not depend on another user's rows (issue 40, low 3)."""
    monkeypatch.setattr(terms, "_analysed", type(terms._analysed)())
    mine = analysed("my salary is 90k", owner=("fact", 1))
    assert analysed("my salary is 90k", owner=("fact", 2)) is not mine
    assert analysed("my salary is 90k", owner=("fact", 1)) is mine


def test_stems_come_from_the_c_stemmer_and_match_the_pure_python_one():
    """PyStemmer (installed with the app) gives snowballstemmer's English stems, 18x faster."""
    import Stemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    words = ["deployment", "dying", "generously", "école", "running", "ponies", "2024"]
    terms._stemmers.__dict__.clear()
    assert [stem.__wrapped__(w) for w in words] == [EnglishStemmer().stemWord(w) for w in words]
    assert isinstance(terms._stemmers.english, Stemmer.Stemmer)


def test_a_month_without_a_year_is_the_latest_one_the_memory_reaches():
    """ "In June" asked of talk that ended in October 2023 is June 2023; asked of today's
    memory, the latest June up to today."""
    from datetime import date

    from memory.search.terms import DateRange, query_dates

    today = date(2026, 12, 6)
    june_2023 = DateRange(date(2023, 6, 1), date(2023, 7, 1))
    asked = "When did Melanie go camping in June?"
    assert query_dates(asked, today=today, latest=date(2023, 10, 2)) == [june_2023]
    assert query_dates(asked, today=today, latest=date(2023, 5, 2)) == [
        DateRange(date(2022, 6, 1), date(2022, 7, 1))
    ]
    assert query_dates(asked, today=today) == [DateRange(date(2026, 6, 1), date(2026, 7, 1))]
    assert query_dates(asked, today=today, latest=date(2027, 1, 1)) == [
        DateRange(date(2026, 6, 1), date(2026, 7, 1))
    ]


def test_a_day_or_a_year_the_query_names_is_a_date_range():
    """ "on 25 May, 2022", "October 13, 2023" name a day; "in 2023" a year; "31 June" none."""
    from datetime import date

    from memory.search.terms import DateRange, query_dates

    today = date(2026, 12, 6)
    day = DateRange(date(2022, 5, 25), date(2022, 5, 26))
    assert query_dates("What did Nate do on 25 May, 2022?", today=today) == [day]
    assert query_dates("What did he paint on May 25th 2022?", today=today) == [day]
    assert query_dates("How often did she swim in 2023?", today=today) == [
        DateRange(date(2023, 1, 1), date(2024, 1, 1))
    ]
    assert query_dates("What happened on 31 June, 2022?", today=today) == []
    assert day.is_day and not DateRange(date(2023, 1, 1), date(2024, 1, 1)).is_day
