"""A user acting on their own data: forget everything, export it, delete the account."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.utils import timezone

from chat.models import Conversation
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search.erase import user_index_erase
from memory.services import Forgotten, memories_erase, memories_forget_all
from profiles.services import profile_clear_preferences, profile_reset_style
from userdata.transfer.export import user_data_export
from web.downloads import download_filename

logger = logging.getLogger(__name__)


def forget_everything(*, user, reset_style: bool, clear_preferences: bool) -> Forgotten:
    """Every memory and summary of ``user``; with ``reset_style`` the style learned from their
    messages, with ``clear_preferences`` what they typed on their profile too."""
    with transaction.atomic():
        result = memories_forget_all(user=user, actor=user)
        if reset_style:
            profile_reset_style(user=user)
        if clear_preferences:
            profile_clear_preferences(user=user)
    return result


@dataclass(frozen=True)
class Download:
    filename: str
    body: str


def data_export(*, user) -> Download:
    """All of the user's data in the staff import's format (``userdata.transfer``)."""
    document = user_data_export(user=user, for_the_user=True)
    body = json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)
    name = download_filename(
        "memorychat", user.get_username(), timezone.localdate().isoformat(), extension="json"
    )
    return Download(filename=name, body=body)


def _conversation_ids(user) -> set[int]:
    """The user's conversations, and those deleted earlier that their history still names."""
    ids = set(Conversation.objects.filter(user=user).values_list("pk", flat=True))
    for model in (Fact, Decision, ActionItem):
        ids |= set(
            model.history.filter(user_id=user.pk)
            .exclude(conversation_id=None)
            .values_list("conversation_id", flat=True)
        )
    made = Summary.history.filter(created_by_id=user.pk)
    ids |= set(made.values_list("conversation_id", flat=True))
    return ids


def _history_erase(user_id: int, conversation_ids: set[int]) -> None:
    """History rows that name the user or their conversations: a row whose live model is
    deleted with them (CASCADE) is erased, a link that would be set null is set null."""
    targets = {get_user_model(): [user_id], Conversation: sorted(conversation_ids)}
    for model in apps.get_models():
        live = getattr(model, "instance_type", None)  # simple-history's historical models
        if live is None:
            continue
        for field in model._meta.concrete_fields:
            if field.name == "history_user" or field.related_model not in targets:
                continue
            rows = model._default_manager.filter(
                **{f"{field.attname}__in": targets[field.related_model]}
            )
            if live._meta.get_field(field.name).remote_field.on_delete is models.CASCADE:
                rows.delete()
            else:
                rows.update(**{field.attname: None})
        # Records the deletion itself made while the user was still the request's user.
        model._default_manager.filter(history_user_id=user_id).update(history_user=None)


def account_delete(*, user) -> None:
    """Delete the account and everything derived from it: conversations, messages, summaries,
    memories, embeddings, profile, their history, the search index's rows, sign-in records."""
    user_id, username = user.pk, user.get_username()
    with transaction.atomic():
        conversation_ids = _conversation_ids(user)
        memories_erase(user=user)  # first: in bulk, not one row and history record at a time
        user.delete()
        _history_erase(user_id, conversation_ids)
        user_index_erase(user_id=user_id)
        for model in (AccessAttempt, AccessLog, AccessFailureLog):
            model.objects.filter(username=username).delete()
        # What staff did to the account (profiles.account): it names the user.
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(user), object_id=str(user_id)
        ).delete()
    logger.info("account #%s deleted by its owner", user_id)
