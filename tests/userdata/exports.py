"""ChatGPT and Claude exports, shaped as the real ones: small ones for the import tests, and
the building blocks of the generated one ``bench/import_chatgpt.py`` times."""

from __future__ import annotations

import io
import json
import zipfile

T0 = 1_700_000_000.0  # 2023-11-14


def chatgpt_message(node_id, role, text, *, at, parent, children=(), **extra):
    content = extra.pop("content", {"content_type": "text", "parts": [text]})
    message = {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": extra.pop("metadata", {}),
        "recipient": extra.pop("recipient", "all"),
    }
    return {"id": node_id, "message": message, "parent": parent, "children": list(children)}


def chatgpt_tree() -> dict:
    """A conversation's ``mapping`` as ChatGPT starts it: a root, then a hidden system
    message ("sys"), under which the turns go (``chatgpt_add``)."""
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["sys"]}}
    mapping["sys"] = chatgpt_message(
        "sys",
        "system",
        "",
        at=None,
        parent="root",
        metadata={"is_visually_hidden_from_conversation": True},
    )
    return mapping


def chatgpt_add(mapping, node_id, role, text, *, at, parent, left_behind=False, **extra):
    """A message under ``parent``; ``left_behind``: before its other children, as a reply
    regenerated since (the branch the export's current node does not follow)."""
    mapping[node_id] = chatgpt_message(node_id, role, text, at=at, parent=parent, **extra)
    children = mapping[parent]["children"]
    children.insert(0, node_id) if left_behind else children.append(node_id)


def chatgpt_document(ident, title, *, start, end, mapping, current) -> dict:
    """One conversation of ``conversations.json``: its tree and the node it ends on."""
    return {
        "title": title,
        "create_time": start,
        "update_time": end,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": ident,
        "conversation_template_id": None,
        "id": ident,
    }


def chatgpt_conversation(ident="c-1", title="Trip to Lyon", start=T0, turns=None):
    """A root, a hidden system message, then the turns (user, assistant, ...) in one branch."""
    turns = turns or [
        ("user", "My daughter's name is Zenobia."),
        ("assistant", "Noted: Zenobia."),
    ]
    mapping = chatgpt_tree()
    parent = "sys"
    for n, (role, text) in enumerate(turns):
        node = f"{ident}-n{n}"
        chatgpt_add(mapping, node, role, text, at=start + 60 * n, parent=parent)
        parent = node
    end = start + 60 * len(turns)
    return chatgpt_document(ident, title, start=start, end=end, mapping=mapping, current=parent)


def claude_conversation(ident="u-1", name="Garden plans", turns=None):
    turns = turns or [
        ("human", "I live in Grenoble and grow tomatoes."),
        ("assistant", "Tomatoes like Grenoble's summers."),
    ]
    return {
        "uuid": ident,
        "name": name,
        "created_at": "2024-03-01T09:00:00.000000Z",
        "updated_at": "2024-03-01T09:10:00.000000Z",
        "account": {"uuid": "acct"},
        "chat_messages": [
            {
                "uuid": f"{ident}-m{n}",
                "text": text,
                "content": [{"type": "text", "text": text}],
                "sender": sender,
                "created_at": f"2024-03-01T09:0{n}:00.000000Z",
                "updated_at": f"2024-03-01T09:0{n}:00.000000Z",
                "attachments": [],
                "files": [],
            }
            for n, (sender, text) in enumerate(turns)
        ],
    }


def as_json(document) -> bytes:
    return json.dumps(document).encode()


def as_zip(document, name="conversations.json") -> bytes:
    """The export's zip: the conversations beside the other files an export holds."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, json.dumps(document))
        archive.writestr("user.json", "{}")
        archive.writestr("chat.html", "<html></html>")
    return buffer.getvalue()
