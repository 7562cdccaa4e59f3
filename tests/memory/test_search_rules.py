"""The rules of memory search (issue #12), on whichever database the run uses."""

from datetime import datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from chat.services import NewMessage, conversation_create, message_create, message_create_many
from llm import OFFLINE_MODEL
from memory.prompts import MEMORY_HEADER
from memory.search import index, search

pytestmark = pytest.mark.django_db


def ago(days):
    return timezone.now() - timedelta(days=days)


def test_term_statistics_come_from_the_users_own_rows(alice, bob, say):
    """Bob writing a word a thousand times changes nothing in Alice's ranking."""
    say("The quince tree by the garden wall", created_at=ago(3))
    say("A walnut and a quince for the pie", created_at=ago(2))
    say("Walnut oil for the salad", created_at=ago(1))
    before = [(h.id, round(h.score, 6)) for h in search(user=alice, query="quince walnut")]
    other = conversation_create(user=bob)
    message_create_many(
        conversation=other, messages=[NewMessage("user", f"quince number {i}") for i in range(300)]
    )
    after = [(h.id, round(h.score, 6)) for h in search(user=alice, query="quince walnut")]
    assert after == before
    stats = index.user_stats(alice.pk, ["quince"])
    assert (stats.rows, stats.df["quince"]) == (3, 2)


def test_an_old_matching_turn_beats_new_turns_that_match_less(alice, say):
    """Two years old and matching every word, it outranks yesterday's partial matches."""
    old = say("My passport number is stored in the blue folder", created_at=ago(730))
    for i in range(30):
        say(f"The folder for project {i} is on the shared drive", created_at=ago(1))
    hits = search(user=alice, query="where is my passport number stored?")
    assert hits[0].id == old.pk


def test_an_old_matching_turn_stays_a_candidate_under_many_common_rows(alice, say, monkeypatch):
    """Candidates are bounded by the index, not by age: the oldest rare match is kept."""
    monkeypatch.setattr(index, "COMMON_MATCHES", 20)
    monkeypatch.setattr(index, "POOL", 10)
    old = say("The locksmith said the spare key hides under the geranium", created_at=ago(900))
    for i in range(60):
        say(f"Another key idea number {i} for the key plan", created_at=ago(1))
    hits = search(user=alice, query="key under the geranium", k=5)
    assert hits[0].id == old.pk


def test_a_restated_fact_ranks_its_newest_statement_first(alice, say):
    """The same fact told twice, then changed: the newest version comes first."""
    say("My favourite colour is blue", created_at=ago(60))
    say("My favourite colour is blue, I said that before", created_at=ago(30))
    newest = say("My favourite colour is green now", created_at=ago(2))
    assert search(user=alice, query="what is my favourite colour?")[0].id == newest.pk
    assert search(user=alice, query="my latest favourite colour")[0].id == newest.pk


def test_a_summary_question_ranks_turns_on_one_topic_by_how_well_they_match(alice):
    """Asked for a summary, turns holding the same words are not restatements of each other:
    the one that matches best comes first, not the newest."""
    apart = [conversation_create(user=alice) for _ in range(3)]
    best = message_create(
        conversation=apart[0],
        role="user",
        content="My resume for the job, resume first",
        created_at=ago(90),
    )
    message_create(
        conversation=apart[1],
        role="user",
        content="A resume tweak for the job fair",
        created_at=ago(2),
    )
    message_create(conversation=apart[2], role="user", content="Lunch was nice", created_at=ago(1))
    asked = "resume job"
    assert search(user=alice, query=asked)[0].id != best.pk  # a fact told again: newest first
    summary = search(user=alice, query=f"Can you summarize my {asked}?")  # summarize: not a term
    assert summary[0].id == best.pk


def test_a_summary_question_weighs_a_long_reply_down_as_any_question_does(alice):
    """Asked for a summary, the user's short turn on the topic comes before a long reply that
    elaborates on it, over and over, in all of the question's words: four or five such
    replies filled the memory share, and the user's turns that tell the story did not fit."""
    first, second = (conversation_create(user=alice) for _ in range(2))
    message_create(conversation=first, role="user", content="What next?", created_at=ago(30))
    elaboration = " ".join(
        f"Step {i}: keep the garden project on its watering schedule, and the schedule tidy."
        for i in range(10)
    )
    reply = message_create(
        conversation=first,
        role="assistant",
        content=elaboration,
        created_at=ago(30) + timedelta(seconds=30),
    )
    told = message_create(
        conversation=second,
        role="user",
        content="My garden project has a rain barrel for its watering schedule.",
        created_at=ago(3),
    )
    asked = "Can you summarize my garden project and watering schedule?"
    hits = search(user=alice, query=asked)
    assert [hit.id for hit in hits[:2]] == [told.pk, reply.pk]


def test_between_two_people_a_question_before_a_matching_reply_does_not_join_it(alice):
    """Two people's short turns: the other half of a matching turn's exchange joins it whether
    it matches or not, but not when it is a question (it says nothing of its own; the hits
    it pushed down hold more)."""
    asked, statement = (conversation_create(user=alice) for _ in range(2))
    question = message_create(
        conversation=asked, role="user", content="Did you try the climbing gym downtown?"
    )
    answer = message_create(
        conversation=asked, role="assistant", content="Yes, its bouldering wall has forty routes."
    )
    told = message_create(
        conversation=statement, role="user", content="I spent Sunday at the gym by the river."
    )
    reply = message_create(
        conversation=statement,
        role="assistant",
        content="Its bouldering wall had new routes this week.",
    )
    shown = {hit.id: hit.message_ids for hit in search(user=alice, query="bouldering routes")}
    assert shown[answer.pk] == [answer.pk]
    assert question.pk not in {m for ids in shown.values() for m in ids}
    assert shown[reply.pk] == [reply.pk, told.pk]


def test_a_message_hit_is_the_exchange_around_it(alice, say):
    """The matching turn first, its matching neighbours with it, never shown twice."""
    say("Unrelated chatter about the weather", created_at=ago(5))
    question = say("How long should sourdough bread proof?", created_at=ago(4))
    reply = say(
        "Sourdough bread usually proofs for 4 to 6 hours at room temperature.",
        role="assistant",
        created_at=ago(4) + timedelta(seconds=30),
    )
    say("Thanks, and what about the weather tomorrow?", created_at=ago(4) + timedelta(minutes=1))
    hits = search(user=alice, query="sourdough bread proof", k=10)
    assert hits[0].message_ids[0] in {question.pk, reply.pk}
    assert set(hits[0].message_ids) == {question.pk, reply.pk}
    assert "Sourdough bread usually proofs" in hits[0].text and "How long" in hits[0].text
    shown = [i for hit in hits for i in hit.message_ids]
    assert len(shown) == len(set(shown))
    assert all(len(hit.message_ids) <= 5 for hit in hits)


def test_the_same_words_said_in_two_conversations_are_recalled_once(alice, say):
    """Told again elsewhere (or pasted twice, spaced or cased otherwise), it is one memory:
    the newer saying, which the recency ranks first, naming both messages; other matches
    still follow it."""
    first = say("My sister Maud lives in Ghent", created_at=ago(40))
    again = say(
        "my sister  Maud lives in ghent",
        conversation=conversation_create(user=alice),
        created_at=ago(3),
    )
    other = say(
        "Maud sent a postcard from Ghent",
        conversation=conversation_create(user=alice),
        created_at=ago(20),
    )
    hits = search(user=alice, query="where does my sister Maud live?", k=10)
    assert [h.id for h in hits] == [again.pk, other.pk]
    assert hits[0].message_ids == [again.pk, first.pk]
    assert hits[0].text == "my sister  Maud lives in ghent"


def test_offline_replies_and_quoted_memory_are_never_retrieved(alice, say):
    """The app's own words are not the user's: neither its offline replies nor a quoted block."""
    say("I keep my bike in the cellar")
    say("(offline) You said: I keep my bike in the cellar", role="assistant", model=OFFLINE_MODEL)
    say(f'{MEMORY_HEADER}\n<memory>\n- [message] "bike in the cellar"\n</memory>', "assistant")
    hits = search(user=alice, query="where is my bike?", k=10)
    assert [h.text for h in hits] == ["I keep my bike in the cellar"]


def test_dates_the_query_names_are_matched_against_message_dates(alice, say):
    """'in March' prefers what was said in March over the same words another month."""
    year = timezone.now().year - 1
    in_march = say("We talked about the garden plan", created_at=datetime(year, 3, 10, tzinfo=UTC))
    say("We talked about the garden plan again", created_at=datetime(year, 6, 10, tzinfo=UTC))
    assert search(user=alice, query=f"the garden plan in March {year}")[0].id == in_march.pk


UTC = timezone.get_fixed_timezone(0)


def test_a_common_terms_count_is_reused_as_the_index_grows_and_recounted_after_a_deletion(
    alice, say, monkeypatch
):
    """Every turn adds a row: a common term is not recounted for each one, but a deletion
    (the user's rows shrink) counts again, so a forgotten conversation's words stop counting."""
    monkeypatch.setattr(index, "COMMON_MATCHES", 20)
    monkeypatch.setattr(index, "COUNT_GROWTH", 0.5)
    other = conversation_create(user=alice, title="Garden")
    message_create_many(
        conversation=other, messages=[NewMessage("user", f"garden note {i}") for i in range(30)]
    )
    for i in range(10):
        say(f"a garden row {i}")
    assert index.user_stats(alice.pk, ["garden"]).df["garden"] == 40
    say("one more garden row")  # grown by one row: the count is reused, not recounted
    calls = []
    monkeypatch.setattr(index, "_count", lambda *a: calls.append(a) or 0)
    assert index.user_stats(alice.pk, ["garden"]).df["garden"] == 40
    assert calls == []
    monkeypatch.undo()
    monkeypatch.setattr(index, "COMMON_MATCHES", 20)
    other.delete()  # 30 of the rows holding "garden" go
    stats = index.user_stats(alice.pk, ["garden"])
    assert stats.df["garden"] == 11
    assert stats.rowids["garden"]  # rare again: its rows are candidates once more


BROKEN_SEARCH_CACHE = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "search": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there: every call fails
    },
}


def test_search_works_while_its_cache_is_away(alice, say):
    """Redis down (scaled out) costs the search its shortcut, not its answer."""
    told = say("The spare key hides under the geranium pot")
    say("Something else entirely about the weather")
    with override_settings(CACHES=BROKEN_SEARCH_CACHE):
        hits = search(user=alice, query="where is the spare key?")
    assert hits[0].id == told.pk


def test_search_counts_cannot_evict_abuse_counters(alice, say, monkeypatch):
    """The counts live in their own cache: thousands of them leave the default cache's
    counters and websocket leases alone. Only common terms' counts are kept (a rare term's
    row ids, its count, are read on every search anyway)."""
    from django.core.cache import cache, caches
    from django.db import connection

    monkeypatch.setattr(index, "COMMON_MATCHES", 2)
    say("The spare key hides under the geranium pot")
    say("A spare tyre is in the boot")
    search(user=alice, query="spare key")
    common = f"fts-df:{connection.vendor}:{alice.pk}:0:spare"  # scope 0: everywhere
    assert caches["search"].get(common) == (2, 2)
    assert caches["search"].get(f"fts-df:{connection.vendor}:{alice.pk}:0:key") is None  # rare
    assert cache.get(common) is None
    cache.set("limit-counter", 7)
    caches["search"].set_many({f"fts-df:test:{i}": (i, 1) for i in range(5000)})
    assert cache.get("limit-counter") == 7


def test_a_history_too_short_for_a_common_term_never_asks_the_cache(alice, say, monkeypatch):
    """Only counts of terms held by COMMON_MATCHES rows are kept; a user with fewer rows has
    none to find, so their search costs no cache call (a Redis round trip when scaled out),
    and a user past that size still gets the kept count."""
    asked = []
    real = index._cached_counts
    monkeypatch.setattr(index, "_cached_counts", lambda keys: asked.append(keys) or real(keys))
    monkeypatch.setattr(index, "COMMON_MATCHES", 3)
    told = say("The spare key hides under the geranium pot")
    say("A spare tyre is in the boot")
    assert search(user=alice, query="spare key")[0].id == told.pk
    assert asked == []
    say("The spare room is painted blue")
    search(user=alice, query="spare key")
    assert len(asked) == 1


def test_a_recalled_action_item_says_its_owner_apart_from_its_text(alice, conversation):
    """Indexed as "what owner" so the name is found, shown as "what (owner: name)"."""
    from memory.models import ActionItem

    ActionItem.objects.create(
        user=alice,
        conversation=conversation,
        what="Book the flights to Lisbon",
        owner="Sofia",
        dedupe_key="flights",
    )
    (hit,) = search(user=alice, query="who books the flights to Lisbon? Sofia?")
    assert hit.text == "Book the flights to Lisbon (owner: Sofia)"


def test_a_recalled_decision_says_its_context_and_reason_apart(alice, conversation):
    """Indexed as "what context rationale", shown with each part said as one."""
    from memory.models import Decision

    Decision.objects.create(
        user=alice,
        conversation=conversation,
        what="Travel to Lisbon in March",
        context="before the busy season",
        rationale="Cheaper flights",
        dedupe_key="lisbon-march",
    )
    (hit,) = search(user=alice, query="when do we travel to Lisbon?")
    assert hit.text == "Travel to Lisbon in March (before the busy season) (why: Cheaper flights)"


def test_a_short_reply_weighs_as_a_persons_turn_and_a_long_one_half(alice, say):
    """Two people talking: the other speaker's short turn holding the question's words ranks
    with the user's; a long generated answer holding them as often ranks below. (Each in a
    conversation of its own: no hit shows another as its neighbour.)"""

    def alone(text, role):
        return say(text, role=role, conversation=conversation_create(user=alice))

    short = alone("Melanie: I painted a lake sunrise last week", "assistant")
    mine = alone("Caroline: I painted a lake sunrise too", "user")
    long_reply = alone(
        "Here is a long answer about a painted lake sunrise. " + "Colour theory matters. " * 40,
        "assistant",
    )
    scores = {h.id: h.score for h in search(user=alice, query="painted lake sunrise", k=10)}
    assert scores[short.pk] >= 0.9 * scores[mine.pk]
    assert scores[long_reply.pk] < 0.7 * scores[mine.pk]


def test_between_short_turns_the_reply_joins_even_without_the_querys_words(alice, say):
    """Two people's short turns: the reply carrying the answer comes with the matching turn;
    after a long turn, a reply that does not match stays out."""
    other = conversation_create(user=alice, title="Friends")
    asked = say("Caroline: which book did you read on the trip?", conversation=other)
    reply = say("Melanie: The Alchemist, loved it", role="assistant", conversation=other)
    hit = next(h for h in search(user=alice, query="book on the trip", k=5) if h.id == asked.pk)
    assert hit.message_ids == [asked.pk, reply.pk]
    assert "The Alchemist" in hit.text

    essay = conversation_create(user=alice, title="Essay")
    long_turn = say("A long musing about a pottery class. " + "clay " * 80, conversation=essay)
    say("Sounds good", role="assistant", conversation=essay)
    hit = next(h for h in search(user=alice, query="pottery class", k=5) if h.id == long_turn.pk)
    assert hit.message_ids == [long_turn.pk]
