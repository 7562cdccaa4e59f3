"""Staff ask for a conversation to be re-summarised in the background. (Making a version
current again is ``memory.services.summary_make_current``.)"""

from __future__ import annotations

from django.db import transaction

from chat.models import Conversation
from memory.models import Summary, SummaryRun
from memory.selectors import summary_run_active
from memory.services import summary_run_start


def conversation_resummarise(*, conversation: Conversation, actor) -> SummaryRun:
    """Queue a full re-summarisation (the new version becomes current only when it completes).

    A run already queued or running for the conversation is returned instead of a second one.
    """
    with transaction.atomic():
        # Locked: two clicks at once find the same active run, not none each.
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        active = summary_run_active(conversation=conversation)
        if active is not None:
            return active
        return summary_run_start(
            conversation=conversation,
            mode=SummaryRun.Mode.FULL,
            source=Summary.Source.STAFF,
            requested_by=actor,
        )
