"""ChatGPT's export (``conversations.json``): a list of conversations, each a tree of messages.

A conversation: ``id`` (or ``conversation_id``), ``title``, ``create_time`` and
``update_time`` (Unix seconds), ``mapping`` (node id → ``{message, parent, children}``) and
``current_node``, the leaf of the branch the user last saw. That branch is what is imported:
from ``current_node`` up the ``parent`` links to the root, then read from the root down (an
edited message or a regenerated reply leaves its other branches out). Left out: system and
tool messages, an assistant's calls to a tool (``recipient`` other than "all"), messages
marked ``is_visually_hidden_from_conversation``, and every content but text (the text parts
of "text" and "multimodal_text"; images, code runs, browsing and reasoning are not). What
every format shares (title, id, dates, the order) is read by ``external.conversation``."""

from __future__ import annotations

from datetime import datetime

from userdata.transfer.external import (
    BadFile,
    ImportedMessage,
    Shape,
    epoch_date,
)

ROLES = {"user", "assistant"}
TEXT_CONTENT = {"text", "multimodal_text"}


def _messages(item: dict, at: str, created: datetime, now: datetime) -> list[ImportedMessage]:
    mapping = item["mapping"]
    if not isinstance(mapping, dict):
        raise BadFile(f"{at}: “mapping” must be an object (node id → node).")
    messages: list[ImportedMessage] = []
    last = created
    for node_id in _current_branch(mapping, item.get("current_node"), at):
        message = _message(mapping[node_id].get("message"), f"{at}, message {node_id!r}", now=now)
        if message is None:
            continue
        role, text, when = message
        last = when or last
        messages.append(ImportedMessage(role=role, text=text, created_at=last))
    return messages


def _node(mapping: dict, node_id, at: str) -> dict:
    node = mapping.get(node_id) if isinstance(node_id, str) else None
    if node is None:
        raise BadFile(f"{at}: the message tree names a node {node_id!r} it does not hold.")
    if not isinstance(node, dict):
        raise BadFile(f"{at}: node {node_id!r} must be an object.")
    return node


def _current_branch(mapping: dict, current, at: str) -> list[str]:
    """Node ids from the root to ``current`` (or, with none named, to the last child's
    last child from the root)."""
    if not mapping:
        return []
    if current is None:
        current = _last_leaf(mapping, at)
    branch, seen = [], set()
    node_id = current
    while node_id is not None:
        if node_id in seen:
            raise BadFile(f"{at}: the message tree loops (node {node_id!r} is its own ancestor).")
        seen.add(node_id)
        branch.append(node_id)
        node_id = _node(mapping, node_id, at).get("parent")
    branch.reverse()
    return branch


def _last_leaf(mapping: dict, at: str) -> str:
    roots = [k for k, v in mapping.items() if isinstance(v, dict) and v.get("parent") is None]
    if not roots:
        raise BadFile(f"{at}: the message tree has no root (every node has a parent).")
    node_id, seen = roots[0], set()
    while True:
        children = _node(mapping, node_id, at).get("children") or []
        if not isinstance(children, list):
            raise BadFile(f"{at}: node {node_id!r}: “children” must be a list.")
        if not children or node_id in seen:
            return node_id
        seen.add(node_id)
        node_id = children[-1]


def _message(message, at: str, *, now: datetime) -> tuple[str, str, datetime | None] | None:
    """(role, text, date) of a message the user saw, or None for one left out."""
    if message is None:
        return None
    if not isinstance(message, dict):
        raise BadFile(f"{at}: must be an object or null.")
    author = message.get("author")
    if not isinstance(author, dict) or not isinstance(author.get("role"), str):
        raise BadFile(f"{at}: has no author's role.")
    content = message.get("content")
    if not isinstance(content, dict):
        raise BadFile(f"{at}: “content” must be an object.")
    metadata = message.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise BadFile(f"{at}: “metadata” must be an object.")
    when = message.get("create_time")
    created = None if when is None else epoch_date(when, f"{at}: create_time", now=now)
    if author["role"] not in ROLES or metadata.get("is_visually_hidden_from_conversation"):
        return None
    if author["role"] == "assistant" and message.get("recipient") not in (None, "all"):
        return None  # a call to a tool (browsing, code): its result is left out too
    if content.get("content_type") not in TEXT_CONTENT:
        return None
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise BadFile(f"{at}: “parts” must be a list.")
    text = "\n\n".join(part for part in parts if isinstance(part, str) and part.strip())
    return author["role"], text, created


SHAPE = Shape(
    source="chatgpt",
    name="ChatGPT",
    title_key="title",
    id_keys=("conversation_id", "id"),
    created_key="create_time",
    updated_key="update_time",
    date=epoch_date,
    messages_key="mapping",
    messages=_messages,
)
