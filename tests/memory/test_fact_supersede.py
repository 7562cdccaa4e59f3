"""memory.services.fact_supersede: retiring a fact, for the same user only, audited."""

import pytest
from django.core.exceptions import ValidationError

from memory.models import Fact
from memory.services import fact_supersede

pytestmark = pytest.mark.django_db


def fact(user, text, conversation=None):
    return Fact.objects.create(user=user, conversation=conversation, text=text, dedupe_key=text)


def test_it_retires_a_fact_and_links_the_one_that_replaces_it(alice):
    """Superseded, pointing at its replacement; the replacement stays active."""
    old, new = fact(alice, "Lives in Porto."), fact(alice, "Lives in Lisbon.")
    result = fact_supersede(fact=old, by=new)
    old.refresh_from_db()
    assert result.status == old.status == Fact.Status.SUPERSEDED
    assert old.superseded_by == new
    new.refresh_from_db()
    assert new.status == Fact.Status.ACTIVE


def test_it_retires_a_fact_without_a_replacement(alice):
    """``by`` is optional: a fact can simply stop being true."""
    old = fact(alice, "Has a cat.")
    assert fact_supersede(fact=old).superseded_by is None


def test_it_refuses_a_fact_of_another_user(alice, bob):
    """Alice's fact cannot be replaced by Bob's; nothing is saved."""
    old, bobs = fact(alice, "Lives in Porto."), fact(bob, "Lives in Lisbon.")
    with pytest.raises(ValidationError, match="same user"):
        fact_supersede(fact=old, by=bobs)
    old.refresh_from_db()
    assert old.status == Fact.Status.ACTIVE and old.superseded_by is None


def test_it_refuses_a_fact_superseding_itself(alice):
    """A fact is not its own replacement."""
    old = fact(alice, "Lives in Porto.")
    with pytest.raises(ValidationError):
        fact_supersede(fact=old, by=old)


def test_the_history_names_the_actor_and_the_reason(alice, staff):
    """With ``actor`` and ``reason``, the audit record says who and why."""
    old = fact(alice, "Lives in Porto.")
    fact_supersede(fact=old, by=fact(alice, "Lives in Lisbon."), actor=staff, reason="checked")
    record = old.history.latest("history_date")
    assert record.history_user == staff and record.history_change_reason == "checked"
    assert record.status == Fact.Status.SUPERSEDED


def test_without_an_actor_the_history_names_nobody(alice):
    """The automatic path (a contradicting fact) records no user and no reason."""
    old = fact(alice, "Lives in Porto.")
    fact_supersede(fact=old, by=fact(alice, "Lives in Lisbon."))
    record = old.history.latest("history_date")
    assert record.history_user is None and record.history_change_reason is None
