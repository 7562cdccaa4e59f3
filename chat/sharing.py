"""Share and export a conversation.

A share is a read-only copy for anyone with its link: the conversation's title and its
messages up to the newest one when it was shared (``ConversationShare.through_message_id``),
a reply as the chat renders it; nothing of the memory, of what the model saw, nor of any
other conversation. Revoking deletes the share: its link is then a 404.

An export is the conversation's messages as Markdown or as JSON, for its owner.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from chat.models import Conversation, ConversationShare, Message

# What a copy or an export shows: the exchange of the branch shown, not the app's system rows
# nor a reply still being written.
_SHOWN_ROLES = (Message.Role.USER, Message.Role.ASSISTANT)


def _shown(conversation: Conversation) -> QuerySet:
    return (
        Message.objects.filter(
            conversation=conversation, role__in=_SHOWN_ROLES, hidden_by__isnull=True
        )
        .exclude(status=Message.Status.STREAMING)
        .exclude(content="")
        .order_by("created_at", "id")
    )


def share_create(*, conversation: Conversation) -> ConversationShare:
    """Share the conversation as it is now; sharing it again keeps the link and brings the
    copy up to date."""
    newest = _shown(conversation).order_by("-id").values_list("id", flat=True).first() or 0
    with transaction.atomic():
        share, created = ConversationShare.objects.select_for_update().get_or_create(
            conversation=conversation, defaults={"through_message_id": newest}
        )
        if not created:
            share.through_message_id = newest
            share.save(update_fields=["through_message_id"])
    return share


def share_revoke(*, conversation: Conversation) -> bool:
    deleted, _ = ConversationShare.objects.filter(conversation=conversation).delete()
    return bool(deleted)


def share_of(conversation: Conversation) -> ConversationShare | None:
    return ConversationShare.objects.filter(conversation=conversation).first()


def shares_of(*, user) -> list[ConversationShare]:
    return list(
        ConversationShare.objects.filter(conversation__user=user)
        .select_related("conversation")
        .order_by("-created_at", "-id")
    )


def shared_get(*, token: str) -> ConversationShare:
    """The share with this token, or 404 (never a hint whether it existed)."""
    return get_object_or_404(ConversationShare.objects.select_related("conversation"), token=token)


def shared_messages(share: ConversationShare) -> list[Message]:
    return list(
        _shown(share.conversation)
        .filter(id__lte=share.through_message_id)
        .only("id", "role", "content", "created_at")
    )


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def conversation_markdown(conversation: Conversation) -> str:
    """The conversation as a Markdown document: each message under who said it and when, its
    text as written."""
    lines = [f"# {conversation.display_title}", ""]
    lines += [f"Exported from memorychat on {_when(timezone.now())}.", ""]
    for message in _shown(conversation):
        who = "You" if message.role == Message.Role.USER else "Assistant"
        lines += [f"## {who} · {_when(message.created_at)}", "", message.content.strip(), ""]
    return "\n".join(lines)


def conversation_json(conversation: Conversation) -> str:
    document = {
        "format": "memorychat-conversation",
        "version": 1,
        "title": conversation.display_title,
        "created_at": conversation.created_at.isoformat(),
        "exported_at": timezone.now().isoformat(),
        "messages": [
            {
                "role": m.role,
                "content": m.content,
                "created_at": m.created_at.isoformat(),
                "status": m.status,
                "model": m.model,
            }
            for m in _shown(conversation)
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2)
