"""Delete everything the app holds about a user (the right to erasure), traceably."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.admin.models import CHANGE, LogEntry
from django.db import transaction
from django.utils import timezone

from audit import acting_as
from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Embedding, Fact, Summary, SummaryRun
from profiles.models import StyleSnapshot, UserProfile
from projects.models import Project

HISTORIED = (("facts", Fact), ("decisions", Decision), ("action_items", ActionItem))


@dataclass
class UserData:
    conversations: int
    messages: int
    summaries: int
    facts: int
    decisions: int
    action_items: int
    has_profile: bool
    projects: int = 0

    @property
    def memories(self) -> int:
        return self.facts + self.decisions + self.action_items

    def describe(self) -> str:
        parts = [
            f"{self.conversations} conversations",
            f"{self.messages} messages",
            f"{self.summaries} summary versions",
            f"{self.facts} facts",
            f"{self.decisions} decisions",
            f"{self.action_items} action items",
        ]
        if self.projects:
            parts.append(f"{self.projects} project{'s' if self.projects != 1 else ''}")
        if self.has_profile:
            parts.append("the profile")
        return ", ".join(parts)


def user_data_counts(*, user) -> UserData:
    return UserData(
        conversations=Conversation.objects.filter(user=user).count(),
        messages=Message.objects.filter(conversation__user=user).count(),
        summaries=Summary.objects.filter(conversation__user=user).count(),
        facts=Fact.objects.filter(user=user).count(),
        decisions=Decision.objects.filter(user=user).count(),
        action_items=ActionItem.objects.filter(user=user).count(),
        has_profile=UserProfile.objects.filter(user=user).exists(),
        projects=Project.objects.filter(user=user).count(),
    )


def user_data_delete(*, user, actor, erase_history: bool = False) -> UserData:
    """Delete the user's conversations (messages, summaries, runs), every memory derived from
    them, their embeddings, projects and profile. The account stays.

    The deletions are recorded as history naming ``actor``; with ``erase_history`` the history
    of the deleted rows is erased too. Either way an admin log entry on the user records who
    erased what, and when.
    """
    counts = user_data_counts(user=user)
    started = timezone.now()
    with transaction.atomic(), acting_as(actor):
        conversation_ids = list(Conversation.objects.filter(user=user).values_list("pk", flat=True))
        summary_ids = list(
            Summary.objects.filter(conversation_id__in=conversation_ids).values_list(
                "pk", flat=True
            )
        )
        profile_ids = list(UserProfile.objects.filter(user=user).values_list("pk", flat=True))
        memory_ids = {}
        for name, model in HISTORIED:
            memory_ids[name] = list(model.objects.filter(user=user).values_list("pk", flat=True))
            model.objects.filter(user=user).delete()  # per-object signals: one record each
        Embedding.objects.filter(user=user).delete()
        SummaryRun.objects.filter(conversation_id__in=conversation_ids).delete()
        Conversation.objects.filter(pk__in=conversation_ids).delete()
        Project.objects.filter(user=user).delete()  # after what points at them (RESTRICT)
        StyleSnapshot.objects.filter(profile_id__in=profile_ids).delete()
        UserProfile.objects.filter(pk__in=profile_ids).delete()
        reason = "user data erased by staff"
        for name, model in HISTORIED:
            history = model.history.model.objects.filter(id__in=memory_ids[name])
            if erase_history:
                history.delete()
            else:
                history.filter(history_type="-", history_date__gte=started).update(
                    history_change_reason=reason, history_user=actor
                )
        for tracked, ids in ((Summary, summary_ids), (UserProfile, profile_ids)):
            history = tracked.history.model.objects.filter(id__in=ids)
            if erase_history:
                history.delete()
            else:
                history.filter(history_type="-", history_date__gte=started).update(
                    history_change_reason=reason, history_user=actor
                )
        message = f"Erased the user's data: {counts.describe()}"
        if erase_history:
            message += ", and its edit history"
        LogEntry.objects.log_actions(
            user_id=actor.pk,
            queryset=[user],
            action_flag=CHANGE,
            change_message=message + ".",
            single_object=True,
        )
    return counts
