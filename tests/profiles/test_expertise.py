"""profiles.expertise: the level per domain learned, set by the user, and told to the model."""

import pytest
from django.core.exceptions import ValidationError

from profiles.expertise import (
    HIDDEN,
    SNAPSHOT_EVERY,
    domains_set,
    expertise_for_turn,
)
from profiles.models import DomainLevel, DomainSnapshot, UserProfile
from profiles.selectors import profile_get
from profiles.services import (
    profile_observe_message,
    profile_reset_style,
    profile_set_memory,
    profiles_observe_messages,
)

EXPERT_CODE = [
    "My asyncio event loop stalls when a coroutine awaits a thread pool future.",
    "Is a race condition likely if two coroutines share the connection pool?",
    "I refactored the ORM queries behind the API endpoint; latency is still high.",
    "Would a mutex around the cache invalidation fix the deadlock?",
    "The migration adds an index but the transaction holds a lock too long.",
]
NOVICE_COOKING = [
    "What is a roux? My recipe says to make one.",
    "How long do I boil pasta for? I don't understand the packet.",
    "What does it mean to deglaze a pan?",
    "Is it normal that my bread is flat? I followed the recipe step by step.",
    "What is blanching vegetables?",
]


def level(user, slug):
    return DomainLevel.objects.get(profile__user=user, domain=slug)


@pytest.mark.django_db
def test_expert_in_one_domain_beginner_in_another(alice):
    for text in EXPERT_CODE + NOVICE_COOKING:
        profile_observe_message(user=alice, text=text)
    assert level(alice, "programming").level == "expert"
    assert level(alice, "cooking").level == "beginner"
    profile = profile_get(user=alice)
    code = expertise_for_turn(profile, "Why would my coroutine deadlock on the mutex?")
    assert "expert in programming" in code.text and "skip the basics" in code.text
    cooking = expertise_for_turn(profile, "How do I make a sauce for pasta tonight?")
    assert "new to cooking" in cooking.text and "analogies" in cooking.text
    assert cooking.sources[0]["origin"] == "learned"


@pytest.mark.django_db
def test_a_domain_without_evidence_says_nothing(alice):
    profile = profile_get(user=alice)
    block = expertise_for_turn(profile, "The stock market fell; should I sell my shares?")
    assert not block and block.text == ""
    assert block.skipped[0]["domain"] == "finance"
    assert "too little evidence" in block.skipped[0]["reason"]
    assert not expertise_for_turn(profile, "hello there")


@pytest.mark.django_db
def test_the_messages_own_self_description_counts_at_once(alice):
    block = expertise_for_turn(profile_get(user=alice), "I've never cooked; how do I boil eggs?")
    assert "new to cooking" in block.text
    assert not DomainLevel.objects.exists()  # stored only after the turn


@pytest.mark.django_db
def test_explicit_level_wins_and_hidden_learns_nothing(alice):
    for text in NOVICE_COOKING:
        profile_observe_message(user=alice, text=text)
    domains_set(user=alice, settings={"cooking": "expert", "finance": HIDDEN})
    profile = profile_get(user=alice)
    block = expertise_for_turn(profile, "What is a roux? The recipe asks for one.")
    assert "expert in cooking" in block.text
    assert block.sources[0]["origin"] == "set by the user"
    profile_observe_message(user=alice, text="I'm new to investing; what is an ETF?")
    assert level(alice, "finance").evidence == 0
    block = expertise_for_turn(profile_get(user=alice), "I'm new to investing, what is an ETF?")
    assert not block and block.skipped[0]["reason"] == "hidden from learning by the user"
    domains_set(user=alice, settings={"cooking": "", "finance": ""})
    assert level(alice, "cooking").explicit_level == ""
    assert level(alice, "cooking").level == "beginner"  # learned all along


@pytest.mark.django_db
def test_bad_settings_are_refused(alice):
    with pytest.raises(ValidationError) as error:
        domains_set(user=alice, settings={"cooking": "wizard"})
    assert "cooking" in error.value.message_dict
    with pytest.raises(ValidationError):
        domains_set(user=alice, settings={"astrology": "expert"})
    assert not DomainLevel.objects.exists()


@pytest.mark.django_db
def test_memory_off_stops_learning_and_use(alice):
    for text in EXPERT_CODE:
        profile_observe_message(user=alice, text=text)
    profile_set_memory(user=alice, enabled=False)
    profile_observe_message(user=alice, text=NOVICE_COOKING[0])
    assert not DomainLevel.objects.filter(domain="cooking").exists()
    block = expertise_for_turn(profile_get(user=alice), EXPERT_CODE[0])
    assert not block and block.skipped[0]["reason"] == "memory is off"


@pytest.mark.django_db
def test_history_snapshots_and_reset(alice):
    for text in EXPERT_CODE * 2:
        profile_observe_message(user=alice, text=text)
    snapshots = list(DomainSnapshot.objects.filter(domain="programming"))
    assert len(snapshots) >= 10 // SNAPSHOT_EVERY
    assert snapshots[-1].level == "expert"
    assert [s.evidence for s in snapshots] == sorted(s.evidence for s in snapshots)
    domains_set(user=alice, settings={"music": "beginner"})
    profile_reset_style(user=alice)
    assert not DomainSnapshot.objects.exists()
    assert list(DomainLevel.objects.values_list("domain", "explicit_level", "evidence")) == [
        ("music", "beginner", 0)
    ]


@pytest.mark.django_db
def test_after_turn_batch_learns_once_per_user(alice, bob):
    profiles_observe_messages(
        observations=[(alice, t) for t in EXPERT_CODE] + [(bob, NOVICE_COOKING[0])],
        profiles={},
    )
    assert level(alice, "programming").evidence == len(EXPERT_CODE)
    assert level(bob, "cooking").evidence == 1
    assert UserProfile.objects.count() == 2


@pytest.mark.django_db
def test_the_batch_path_is_one_read_and_conditional_updates(alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from profiles.expertise import domains_observe
    from profiles.selectors import profiles_get_many

    profile_observe_message(user=alice, text=EXPERT_CODE[0])  # the row exists
    profile = profiles_get_many([alice])[alice.pk]
    with CaptureQueriesContext(connection) as queries:
        assert domains_observe(user=alice, texts=[EXPERT_CODE[1]], profile=profile) == 1
    sql = [q["sql"] for q in queries.captured_queries]
    assert not any("FOR UPDATE" in q or 'userprofile" WHERE' in q.split("EXISTS")[0] for q in sql)
    assert level(alice, "programming").evidence == 2


@pytest.mark.django_db
def test_a_row_changed_since_the_read_loses_nothing(alice, bob, monkeypatch):
    """Another process learned between the rows' read and the update: both readings count."""
    from profiles import expertise

    for user in (alice, bob):
        profile_observe_message(user=user, text=EXPERT_CODE[0])
    stale = UserProfile.objects.get(user=alice)
    stale_rows = list(DomainLevel.objects.filter(profile=stale))
    profile_observe_message(user=alice, text=EXPERT_CODE[1])  # meanwhile, elsewhere
    monkeypatch.setattr(expertise._LEVELS_OF, "read", lambda profile_id: stale_rows)
    expertise.domains_observe(user=alice, texts=[EXPERT_CODE[2]], profile=stale)
    for text in EXPERT_CODE[1:3]:
        profile_observe_message(user=bob, text=text)
    mine, theirs = level(alice, "programming"), level(bob, "programming")
    assert (mine.evidence, mine.score) == (theirs.evidence, theirs.score) == (3, theirs.score)


@pytest.mark.django_db
def test_memory_switched_off_since_the_read_learns_nothing(alice):
    from profiles.expertise import domains_observe

    profile_observe_message(user=alice, text=EXPERT_CODE[0])
    stale = UserProfile.objects.get(user=alice)
    profile_set_memory(user=alice, enabled=False)
    assert domains_observe(user=alice, texts=[EXPERT_CODE[1]], profile=stale) == 0
    assert level(alice, "programming").evidence == 1


@pytest.mark.django_db
def test_after_a_turn_a_temporary_chat_teaches_nothing(alice):
    from chat.services import conversation_create, message_create
    from chat.turn.after import after_turns

    for temporary, expected in ((True, 0), (False, 1)):
        conversation = conversation_create(user=alice, temporary=temporary)
        message = message_create(conversation=conversation, role="user", content=EXPERT_CODE[0])
        after_turns([(conversation, message)])
        found = DomainLevel.objects.filter(profile__user=alice, domain="programming").first()
        assert (found.evidence if found else 0) == expected
