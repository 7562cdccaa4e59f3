"""Claude's export (``conversations.json``): a list of conversations, each a list of messages.

A conversation: ``uuid``, ``name``, ``created_at`` and ``updated_at`` (ISO 8601),
``chat_messages``: ``{uuid, sender: "human" | "assistant", text, content, created_at}``. A
message's text is its ``content`` blocks of type "text" when it has them (tool calls, their
results and thinking are left out), else its ``text``."""

from __future__ import annotations

from datetime import datetime

from userdata.transfer.external import (
    BadFile,
    ImportedConversation,
    ImportedMessage,
    clean_title,
    in_order,
    iso_date,
    source_id,
    unique_ids,
    where,
)

ROLES = {"human": "user", "assistant": "assistant"}


def looks_like(item: dict) -> bool:
    return "chat_messages" in item


def parse(document: list, *, now: datetime) -> list[ImportedConversation]:
    conversations = [_conversation(item, n, now=now) for n, item in enumerate(document)]
    unique_ids(conversations)
    return conversations


def _conversation(item, n: int, *, now: datetime) -> ImportedConversation:
    if not isinstance(item, dict):
        raise BadFile(f"conversation {n + 1}: must be an object, as every item of the list.")
    at = where(n, item.get("name"))
    if "chat_messages" not in item:
        raise BadFile(f"{at}: has no “chat_messages” (a Claude conversation's messages).")
    title = clean_title(item.get("name"), at)
    ident = source_id(item.get("uuid"), at, "uuid")
    created = iso_date(item.get("created_at"), f"{at}: created_at", now=now)
    raw_updated = item.get("updated_at")
    updated = (
        created if raw_updated is None else iso_date(raw_updated, f"{at}: updated_at", now=now)
    )
    chat = item["chat_messages"]
    if not isinstance(chat, list):
        raise BadFile(f"{at}: “chat_messages” must be a list.")
    messages = []
    last = created
    for m, message in enumerate(chat):
        role, text, when = _message(message, f"{at}, message {m + 1}", now=now)
        last = when or last
        if role is not None:
            messages.append(ImportedMessage(role=role, text=text, created_at=last))
    ordered = in_order(messages)
    if ordered:
        updated = max(updated, ordered[-1].created_at)
    return ImportedConversation(
        source_id=ident,
        title=title,
        created_at=created,
        updated_at=max(updated, created),
        messages=ordered,
    )


def _message(message, at: str, *, now: datetime) -> tuple[str | None, str, datetime | None]:
    if not isinstance(message, dict):
        raise BadFile(f"{at}: must be an object.")
    sender = message.get("sender")
    if not isinstance(sender, str):
        raise BadFile(f"{at}: has no “sender”.")
    when = message.get("created_at")
    created = None if when is None else iso_date(when, f"{at}: created_at", now=now)
    content = message.get("content")
    if content is not None and not isinstance(content, list):
        raise BadFile(f"{at}: “content” must be a list of blocks.")
    if content:
        texts = []
        for block in content:
            if not isinstance(block, dict):
                raise BadFile(f"{at}: each “content” block must be an object.")
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        text = "\n\n".join(t for t in texts if t.strip())
    else:
        text = message.get("text") or ""
        if not isinstance(text, str):
            raise BadFile(f"{at}: “text” must be text.")
    return ROLES.get(sender), text, created
