"""Claude's export (``conversations.json``): a list of conversations, each a list of messages.

A conversation: ``uuid``, ``name``, ``created_at`` and ``updated_at`` (ISO 8601),
``chat_messages``: ``{uuid, sender: "human" | "assistant", text, content, created_at}``. A
message's text is its ``content`` blocks of type "text" when it has them (tool calls, their
results and thinking are left out), else its ``text``. What every format shares (title, id,
dates, the order) is read by ``external.conversation``."""

from __future__ import annotations

from datetime import datetime

from userdata.transfer.external import BadFile, ImportedMessage, Shape, iso_date

ROLES = {"human": "user", "assistant": "assistant"}


def _messages(item: dict, at: str, created: datetime, now: datetime) -> list[ImportedMessage]:
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
    return messages


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


SHAPE = Shape(
    source="claude",
    name="Claude",
    title_key="name",
    id_keys=("uuid",),
    created_key="created_at",
    updated_key="updated_at",
    date=iso_date,
    messages_key="chat_messages",
    messages=_messages,
)
