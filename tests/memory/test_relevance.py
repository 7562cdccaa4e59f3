"""A hit's absolute relevance (memory.search.relevance) and what the context report says when
memory holds nothing for the message; on whichever database the run uses."""

import pytest
from django.template import Context, Template

from chat.services import conversation_create, message_create
from memory.context import build
from memory.search import index, search
from memory.search.relevance import held_share, query_weights


def test_held_share_weighs_each_query_stem_by_its_weight():
    weights = {"garden": 1.0, "tip": 3.0}
    assert held_share(["Three tips for your gardens"], weights) == 1.0
    assert held_share(["My garden is small"], weights) == 0.25
    assert held_share(["Nothing of it here"], weights) == 0.0
    assert held_share([""], weights) == held_share([], weights) == 0.0
    assert held_share(["anything"], {}) == 0.0


def test_an_exchange_holds_what_its_parts_hold_together():
    """Read piece by piece (each message analysed once, as ranking reads it), an exchange
    holds the same as its shown text: each message after its role."""
    weights = {"garden": 1.0, "tip": 3.0, "user": 0.5}
    parts = ["user", "My garden is small", "assistant", "Three tips, then"]
    assert held_share(parts, weights) == 1.0
    assert held_share(parts[2:], weights) == pytest.approx(3.0 / 4.5)


def test_a_word_the_user_never_wrote_weighs_more_than_one_they_write_often():
    stats = index.Stats(rows=40, average_words=10.0, df={"garden": 30, "tips": 0})
    weights = query_weights(["garden", "tips"], stats)
    assert weights["tip"] > 4 * weights["garden"] > 0


@pytest.mark.django_db
def test_each_hit_carries_how_much_of_the_query_its_exchange_holds(alice, say):
    apart = [conversation_create(user=alice) for _ in range(3)]  # no exchange joins them
    say("The quince tree by the garden wall flowers in April", conversation=apart[0])
    say("I planted a walnut tree last year", conversation=apart[1])
    reply_partner = say("What should I feed the lemon tree?", conversation=apart[2])
    say("Citrus feed every two weeks in summer", role="assistant", conversation=apart[2])
    hits = {h.id: h for h in search(user=alice, query="quince tree flowers")}
    full = next(h for h in hits.values() if "quince" in h.text)
    assert full.relevance == pytest.approx(1.0)
    walnut = next(h for h in hits.values() if "walnut" in h.text)
    assert 0 < walnut.relevance < 0.5  # "tree" only, the commonest of the three words
    citrus = search(user=alice, query="lemon tree citrus feed")
    assert citrus[0].id == reply_partner.pk
    assert citrus[0].relevance == pytest.approx(1.0)  # "citrus feed" is in the reply it shows


@pytest.mark.django_db
def test_a_question_about_something_never_said_recalls_nothing(alice):
    earlier = conversation_create(user=alice, title="Cooking")
    message_create(conversation=earlier, role="user", content="I bake sourdough on Sundays.")
    now = conversation_create(user=alice, title="New")
    built = build(conversation=now, user_text="Which vaccinations did my parrot get?")
    assert built.report["nothing_relevant"] is True
    assert built.report["memories"] == []
    assert "memory" not in [b["name"] for b in built.report["blocks"]]
    html = Template("{% load chat_tags %}{% context_report_body report %}").render(
        Context({"report": built.report})
    )
    assert "Nothing relevant to this message was found in memory" in html


@pytest.mark.django_db
def test_a_question_about_something_said_recalls_it_with_its_relevance(alice):
    earlier = conversation_create(user=alice, title="Pets")
    told = message_create(
        conversation=earlier, role="user", content="My parrot Kiwi got her vaccinations in May."
    )
    now = conversation_create(user=alice, title="New")
    built = build(conversation=now, user_text="Which vaccinations did my parrot get?")
    assert built.report["nothing_relevant"] is False
    memory = built.report["memories"][0]
    assert memory["id"] == told.pk and memory["relevance"] == pytest.approx(1.0)
    html = Template("{% load chat_tags %}{% context_report_body report %}").render(
        Context({"report": built.report})
    )
    assert "Nothing relevant" not in html and "relevance 1.00" in html
