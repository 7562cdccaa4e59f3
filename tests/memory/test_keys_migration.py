"""memory 0017 (decisions and action items unique per user, scope and key) applies and
reverses on both databases, and the memory index's triggers on those tables hold through
SQLite's table remake."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from memory.models import ActionItem, Decision
from memory.search.schema import KIND_CODES
from projects.models import Project

BEFORE = [("memory", "0016_search_scoped")]
AFTER = [("memory", "0017_decision_action_keys_per_scope")]


def _indexed(kind: str, obj) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT scope FROM memory_search WHERE rowid = %s", [obj.pk * 8 + KIND_CODES[kind]]
        )
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_the_index_triggers_and_scopes_the_keys(alice):
    garden = Project.objects.create(user=alice, name="Garden")
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps.get_model("memory", "Decision")
        old.objects.create(user_id=alice.pk, what="Dig", dedupe_key="dig")
        with pytest.raises(IntegrityError), transaction.atomic():
            old.objects.create(user_id=alice.pk, project_id=garden.pk, what="Dig", dedupe_key="dig")
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    # Now one per scope: the same decision in the project too, not twice in one scope.
    in_garden = Decision.objects.create(user=alice, project=garden, what="Dig", dedupe_key="dig")
    with pytest.raises(IntegrityError), transaction.atomic():
        Decision.objects.create(user=alice, what="Dig", dedupe_key="dig")
    # The index's triggers on both tables still follow their rows (insert, move).
    assert _indexed("decision", in_garden) == (garden.pk,)
    item = ActionItem.objects.create(user=alice, what="Order seeds", dedupe_key="order seeds")
    assert _indexed("action_item", item) == (0,)
    ActionItem.objects.filter(pk=item.pk).update(project=garden)
    assert _indexed("action_item", item) == (garden.pk,)
    ActionItem.objects.filter(pk=item.pk).delete()
    assert _indexed("action_item", item) is None


@pytest.mark.django_db(transaction=True)
def test_the_migration_reverses(alice):
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(BEFORE)
        Decision_ = executor.loader.project_state(BEFORE).apps.get_model("memory", "Decision")
        row = Decision_.objects.create(user_id=alice.pk, what="Dig", dedupe_key="dig")
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    assert _indexed("decision", row) == (0,)
