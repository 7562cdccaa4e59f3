# ruff: noqa: S608 — SQL built from constants; ids are parameters.
"""A message hit is the exchange around it: the evidence is often the reply next to the turn
that matched, or the question before it.

``neighbours`` reads, in one statement, the two messages before and after each of many
messages in their conversation (by time; failed, empty and the app's own offline replies are
skipped). ``attach`` gives a hit the neighbours that match the query too (scored at least as
well as the k-th best candidate), walking outward from the matching turn, two on each side at
most, within ``MAX_CHARS``; a message another hit already shows is not shown again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from llm import OFFLINE_MODEL

SPAN = 2  # neighbours on each side, at most
MAX_CHARS = 6000  # an exchange's text (about 1,500 tokens); the matching turn is always shown
PER_STATEMENT = 200  # subqueries in one UNION ALL


@dataclass(frozen=True)
class Neighbour:
    id: int
    role: str


@dataclass
class Around:
    before: list[Neighbour] = field(default_factory=list)  # nearest first
    after: list[Neighbour] = field(default_factory=list)  # nearest first


# SQLite: the pivot is a parameter, so a statement's text depends only on how many pivots it
# holds: the database's statement cache then parses and plans it once, not on every turn.
_SIDE = (
    "SELECT * FROM (SELECT p.id AS pivot, {side} AS side, m.id, m.role "
    "FROM chat_message m, chat_message p WHERE p.id = %s "
    "AND m.conversation_id = p.conversation_id AND (m.created_at, m.id) {op} (p.created_at, p.id) "
    f"AND m.status <> 'failed' AND m.content <> '' AND m.model <> '{OFFLINE_MODEL}' "
    "ORDER BY m.created_at {order}, m.id {order} LIMIT {span}) s{n}"
)


# PostgreSQL: a LATERAL subquery per side takes each pivot's conversation and time as
# constants, so every pivot is one short walk of msg_conv_latest (0.1 ms). Joined without
# LATERAL, its planner read and sorted the pivot's whole conversation for every subquery
# (2.4 ms each, 90 ms a search at 100k messages).
_PG_SIDE = (
    "SELECT p.id, {side}, s.id, s.role FROM chat_message p CROSS JOIN LATERAL ("
    "SELECT m.id, m.role FROM chat_message m WHERE m.conversation_id = p.conversation_id "
    "AND (m.created_at, m.id) {op} (p.created_at, p.id) "
    f"AND m.status <> 'failed' AND m.content <> '' AND m.model <> '{OFFLINE_MODEL}' "
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
        for rows in _neighbour_rows(cursor, list(around)):
            for pivot, side, message_id, role in rows:
                entry = around[pivot]
                (entry.after if side else entry.before).append(Neighbour(message_id, role))
    for entry in around.values():  # UNION ALL keeps each subquery's order, but say so
        entry.before.sort(key=lambda nb: -nb.id)
        entry.after.sort(key=lambda nb: nb.id)
    return around


def _neighbour_rows(cursor, pivots: list[int]):
    if not pivots:
        return
    if connection.vendor == "postgresql":
        cursor.execute(_PG_NEIGHBOURS, [pivots, pivots])
        yield cursor.fetchall()
        return
    parts, params = [], []
    for n, pivot in enumerate(pivots):
        for side, op, order in ((0, "<", "DESC"), (1, ">", "ASC")):
            parts.append(_SIDE.format(side=side, op=op, order=order, span=SPAN, n=2 * n + side))
            params.append(pivot)
    for start in range(0, len(parts), PER_STATEMENT):
        chunk = slice(start, start + PER_STATEMENT)
        cursor.execute(" UNION ALL ".join(parts[chunk]), params[chunk])
        yield cursor.fetchall()


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
        for nearest, neighbour in enumerate(side):
            if neighbour.id in shown:
                break
            other_half = (mine == "user") == (side is around.after) and neighbour.role != mine
            if score_of.get(neighbour.id, -1.0) < threshold and not (
                partner and nearest == 0 and other_half
            ):
                break
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
    hit.text = "\n".join(f"{text_of[m][0]}: {text_of[m][1]}" for m in ordered)


def _text(message_id: int) -> str:
    from chat.models import Message

    return Message.objects.filter(pk=message_id).values_list("content", flat=True).first() or ""
