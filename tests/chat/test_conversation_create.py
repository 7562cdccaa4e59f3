"""A new conversation is checked field by field and stored without reading its user again
(the caller just read it: a session's, a key's; the foreign key holds it anyway)."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat.models import Conversation
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def test_a_new_conversation_does_not_read_its_user_again(alice):
    with CaptureQueriesContext(connection) as queries:
        conversation = conversation_create(user=alice, model="gpt-4o")
    assert not [q["sql"] for q in queries.captured_queries if '"auth_user"' in q["sql"]]
    assert Conversation.objects.get(pk=conversation.pk).user == alice


def test_a_field_out_of_its_choices_is_still_refused(alice):
    with pytest.raises(ValidationError) as refused:
        conversation_create(user=alice, strategy="nonsense")
    assert "strategy" in refused.value.message_dict
    assert not Conversation.objects.filter(user=alice).exists()


def test_a_new_conversation_is_one_insert_and_a_temporary_one_stays_outside_projects(alice):
    from projects.services import project_create

    with CaptureQueriesContext(connection) as queries:
        conversation_create(user=alice)
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["INSERT"]
    garden = project_create(user=alice, name="Garden")
    with pytest.raises(ValidationError):  # Conversation.clean's rule, the constraint's too
        conversation_create(user=alice, temporary=True, project=garden)
