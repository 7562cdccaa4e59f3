# ruff: noqa: S608 — SQL built from constants; ids are parameters.
"""A message hit is the exchange around it: the evidence is often the reply next to the turn
that matched, or the question before it.

``neighbours`` reads, in one statement, the two messages before and after each of many
messages in their conversation (by time; failed, empty and the app's own offline replies are
skipped). ``attach`` gives a hit the neighbours that match the query too (scored at least as
well as the k-th best candidate) and, between two people's short turns, the other half of
its exchange whether it matches or not, a question apart (``short_talk``), walking outward
from the matching turn, two on each side at most, within ``MAX_CHARS``; after a short
question (the hit or a neighbour that joined it), the other person's short reply joins as its
answer (``answers``); a message another hit already shows is not shown again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from django.db import connection

from llm import OFFLINE_MODEL
from memory.prompts import quotes_memory

SPAN = 2  # neighbours on each side, at most
PERSON_WORDS = 60  # a turn of up to this many words is a person's, not a generated answer
MAX_CHARS = 6000  # an exchange's text (about 1,500 tokens); the matching turn is always shown


@dataclass(frozen=True)
class Neighbour:
    id: int
    role: str


@dataclass
class Around:
    before: list[Neighbour] = field(default_factory=list)  # nearest first
    after: list[Neighbour] = field(default_factory=list)  # nearest first


# SQLite: one statement whatever the number of pivots (their ids travel as one JSON array), so
# its text never changes: parsed and planned once, and Django's placeholder rewrite runs over a
# short text (a UNION ALL of a subquery per pivot and side cost twice as much). Each side is a
# correlated walk of msg_conv_latest from the pivot's time.
_SQLITE_SIDE = (
    "SELECT p.id, {side}, m.id, m.role, m.created_at FROM chat_message p JOIN chat_message m "
    "ON m.id IN ("
    "SELECT x.id FROM chat_message x WHERE x.conversation_id = p.conversation_id "
    "AND (x.created_at, x.id) {op} (p.created_at, p.id) "
    f"AND x.status <> 'failed' AND x.content <> '' AND x.model <> '{OFFLINE_MODEL}' "
    "AND x.hidden_by_id IS NULL "  # the branch shown (chat.branches)
    "ORDER BY x.created_at {order}, x.id {order} LIMIT {span}) "
    "WHERE p.id IN (SELECT value FROM json_each(%s))"
)
_SQLITE_NEIGHBOURS = " UNION ALL ".join(
    _SQLITE_SIDE.format(side=side, op=op, order=order, span=SPAN)
    for side, op, order in ((0, "<", "DESC"), (1, ">", "ASC"))
)


# PostgreSQL: a LATERAL subquery per side takes each pivot's conversation and time as
# constants, so every pivot is one short walk of msg_conv_latest (0.1 ms). Joined without
# LATERAL, its planner read and sorted the pivot's whole conversation for every subquery
# (2.4 ms each, 90 ms a search at 100k messages).
_PG_SIDE = (
    "SELECT p.id, {side}, s.id, s.role, s.created_at FROM chat_message p CROSS JOIN LATERAL ("
    "SELECT m.id, m.role, m.created_at FROM chat_message m "
    "WHERE m.conversation_id = p.conversation_id "
    "AND (m.created_at, m.id) {op} (p.created_at, p.id) "
    f"AND m.status <> 'failed' AND m.content <> '' AND m.model <> '{OFFLINE_MODEL}' "
    "AND m.hidden_by_id IS NULL "
    "ORDER BY m.created_at {order}, m.id {order} LIMIT {span}) s WHERE p.id = ANY(%s)"
)
_PG_NEIGHBOURS = " UNION ALL ".join(
    _PG_SIDE.format(side=side, op=op, order=order, span=SPAN)
    for side, op, order in ((0, "<", "DESC"), (1, ">", "ASC"))
)


def neighbours(message_ids: list[int]) -> dict[int, Around]:
    """Each message's neighbours in its conversation, nearest first on each side."""
    around: dict[int, Around] = {int(i): Around() for i in message_ids}
    with connection.cursor() as cursor:
        rows = _neighbour_rows(cursor, list(around))
    # By time then id, as the statement walks them (its rows come in no set order).
    rows.sort(key=lambda row: (row[4], row[2]))
    for pivot, side, message_id, role, _ in rows:
        entry = around[pivot]
        (entry.after if side else entry.before).append(Neighbour(message_id, role))
    for entry in around.values():
        entry.before.reverse()  # nearest first
    return around


def _neighbour_rows(cursor, pivots: list[int]) -> list[tuple]:
    if not pivots:
        return []
    if connection.vendor == "postgresql":
        cursor.execute(_PG_NEIGHBOURS, [pivots, pivots])
    else:
        pivots_json = json.dumps(pivots)
        cursor.execute(_SQLITE_NEIGHBOURS, [pivots_json, pivots_json])
    return cursor.fetchall()


def attach(
    hit,
    around: Around | None,
    score_of: dict,
    threshold: float,
    shown: set,
    text_of: dict,
    partner: bool = False,
):
    """Give a message hit its exchange: ``message_ids`` (matching turn first) and ``text``.
    ``partner``: the other half of the exchange (a user turn's reply, an assistant turn's
    question) joins whether it matches or not."""
    hit.message_ids = [hit.id]
    shown.add(hit.id)
    if around is None:
        return
    size = len(hit.text)
    before: list[int] = []
    after: list[int] = []
    mine = text_of[hit.id][0]
    for side, chosen in ((around.before, before), (around.after, after)):
        previous = hit.id  # the turn the walk comes from
        for nearest, neighbour in enumerate(side):
            if neighbour.id in shown:
                break
            other_half = (mine == "user") == (side is around.after) and neighbour.role != mine
            joins = nearest == 0 and other_half and (partner or short_talk(hit, neighbour, text_of))
            if side is around.after and not joins:
                joins = answers(previous, neighbour, text_of)
            if score_of.get(neighbour.id, -1.0) < threshold and not joins:
                break
            previous = neighbour.id
            if neighbour.id not in text_of:
                text_of[neighbour.id] = (neighbour.role, _text(neighbour.id))
            length = len(text_of[neighbour.id][1])
            if size + length > MAX_CHARS:
                break
            size += length
            chosen.append(neighbour.id)
    if not before and not after:
        return
    shown.update(before + after)
    hit.message_ids += before + after
    ordered = [*reversed(before), hit.id, *after]
    # Each message apart too, in time order: the context leaves out those its window holds.
    hit.parts = [(m, *text_of[m]) for m in ordered]
    hit.text = exchange_text(hit.parts)


def short_talk(hit, partner: Neighbour, text_of: dict) -> bool:
    """Two people talking: the turn and the other half of its exchange are both a person's
    length, so the answer is often in the reply that does not repeat the question's words (or
    in the turn before a reply that matched), unless that other half is a question. A long
    generated answer is not: its neighbours join only when they match the query too.
    (``partners_to_read`` has read the partner's text before: no statement here but for a hit
    it did not foresee.)"""
    if _words(text_of[hit.id][1]) > PERSON_WORDS:
        return False
    if partner.id not in text_of:
        text_of[partner.id] = (partner.role, _text(partner.id))
    text = text_of[partner.id][1]
    # A question says nothing of its own: seldom the evidence a query looks for (LoCoMo-dev:
    # 14 of the 1,276 questions joined this way to its top 10 turns, 1.1 %, below the 1.9 %
    # of the hits they pushed out); it still joins when it matches the query too.
    if _QUESTION.search(text):
        return False
    # A reply quoting the memory block back is the app's own words, never recalled (schema).
    return _words(text) <= PERSON_WORDS and not quotes_memory(text)


def answers(question_id: int, reply: Neighbour, text_of: dict) -> bool:
    """Two people talking: the other's short turn right after a short question is its
    answer, which rarely repeats the question's words ("Which team did you sign with?" -
    "The Minnesota Wolves!")."""
    role, text = text_of[question_id]
    if reply.role == role or _words(text) > PERSON_WORDS or not _QUESTION.search(text):
        return False
    if reply.id not in text_of:
        text_of[reply.id] = (reply.role, _text(reply.id))
    answer = text_of[reply.id][1]
    return _words(answer) <= PERSON_WORDS and not quotes_memory(answer)


# A turn that ends by asking (a photo's caption may follow the question mark).
_QUESTION = re.compile(r"\?[\s\"')]*(\[[^\]]*\][\s.]*)?$")


def _words(text: str) -> int:
    return text.count(" ") + 1  # as the index counts them (index.word_count)


def partners_to_read(pivots: list[int], around: dict, text_of: dict) -> list[int]:
    """The other halves of short pivots' exchanges whose text is not at hand yet: read in one
    statement (``texts``) before ``attach`` needs them, not one read a hit."""
    wanted = []
    for pivot in pivots:
        role, text = text_of[pivot]
        entry = around.get(pivot)
        if entry is None or _words(text) > PERSON_WORDS:
            continue
        side = entry.after if role == "user" else entry.before
        if side and side[0].role != role and side[0].id not in text_of:
            wanted.append(side[0].id)
    return wanted


def texts(message_ids: list[int]) -> dict[int, str]:
    """Messages' texts, one statement."""
    if not message_ids:
        return {}
    marks = ", ".join(["%s"] * len(message_ids))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, content FROM chat_message WHERE id IN ({marks})", message_ids)
        return {pk: content or "" for pk, content in cursor.fetchall()}


def exchange_text(parts: list[tuple[int, str, str]]) -> str:
    """An exchange as shown: each message on its own line after its role."""
    return "\n".join(f"{role}: {text}" for _, role, text in parts)


def _text(message_id: int) -> str:
    """A neighbour's text, when it is not among the candidates (a partner joining a summary
    question's hit): a plain statement, like the neighbours'."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT content FROM chat_message WHERE id = %s", [message_id])
        found = cursor.fetchone()
    return (found[0] if found else "") or ""
