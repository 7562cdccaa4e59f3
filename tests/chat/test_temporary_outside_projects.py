"""A temporary conversation is never in a project: the database refuses the row, whatever
path writes it (issue 37), and the migration that adds the rule takes any such row out of
its project first."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory.search.schema import KIND_CODES
from projects.services import project_create

BEFORE = [("chat", "0008_merge_branches_and_titles")]
AFTER = [("chat", "0009_temporary_outside_projects")]


@pytest.fixture
def garden(alice):
    return project_create(user=alice, name="Garden", description="The vegetable garden.")


@pytest.mark.django_db
def test_the_database_refuses_a_temporary_conversation_in_a_project(alice, garden):
    with pytest.raises(IntegrityError), transaction.atomic():
        Conversation.objects.create(user=alice, temporary=True, project=garden)
    kept = conversation_create(user=alice, project=garden)
    with pytest.raises(IntegrityError), transaction.atomic():
        Conversation.objects.filter(pk=kept.pk).update(temporary=True)
    assert Conversation.objects.get(pk=kept.pk).temporary is False


@pytest.mark.django_db
def test_a_temporary_conversation_outside_and_a_project_one_are_both_fine(alice, garden):
    conversation_create(user=alice, temporary=True)
    conversation_create(user=alice, project=garden)
    assert Conversation.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_migration_takes_a_temporary_conversation_out_of_its_project(alice, garden):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps.get_model("chat", "Conversation")
        row = old.objects.create(user_id=alice.pk, temporary=True, project_id=garden.pk)
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    moved = Conversation.objects.get(pk=row.pk)
    assert moved.temporary and moved.project_id is None
    # The memory index's triggers on and about conversations (SQLite remakes the table) hold.
    conversation = conversation_create(user=alice, title="Seeds")
    message = message_create(conversation=conversation, role="user", content="Sow the peas")
    assert _indexed_scope(message) == 0
    Conversation.objects.filter(pk=conversation.pk).update(project=garden)
    assert _indexed_scope(message) == garden.pk


def _indexed_scope(message):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT scope FROM memory_search WHERE rowid = %s",
            [message.pk * 8 + KIND_CODES["message"]],
        )
        return cursor.fetchone()[0]
