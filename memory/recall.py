"""What the assistant remembers for one turn: retrieval plus session resumption.

The context engine asks ``recall_for_turn`` for ranked candidates and fits them in its budget.
Candidates come from the user's long-term memory (facts, decisions, action items, summaries and
messages of their other conversations, found by ``memory.search.search``) and, for a new
conversation, from what a new session should start knowing: pinned and important facts, open
action items, recent decisions. Never a suggestion still waiting for the user (memory mode
"ask first"): the index leaves them out, and so do the queries here.

A conversation recalls only the scopes it reads (``memory.search.scope.readable``): what was
said or learned outside any project, and, in a project, that project's own. Every read here
matches them in its statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from chat.models import Conversation
from memory import duplicates
from memory.models import OPEN_STATUSES, ActionItem, Decision, Fact, MemoryState
from memory.search import scope as scoping
from memory.search.scope import EVERYWHERE, Scopes
from profiles.models import UserProfile
from profiles.selectors import memory_enabled as user_memory_enabled
from profiles.selectors import memory_enabled_many as user_memory_enabled_many

RESUME_FACTS = 5
RESUME_ACTIONS = 5
RESUME_DECISIONS = 3
SEARCH_K = 12  # hits asked of the search at the least
SEARCH_K_MAX = 100  # ... and at the most
LINE_TOKENS = 40  # about what a short memory line costs: a memory share of N tokens asks N/40


@dataclass
class Recalled:
    kind: str  # fact, decision, action_item, summary, message
    id: int
    text: str
    score: float
    why: str
    date: str = ""
    source: str = ""  # title of the conversation it came from
    message_ids: list[int] = field(default_factory=list)
    relevance: float | None = None  # a search hit's share of the message it holds (0..1)
    # an exchange's messages in time order, (message id, role, text): the context can leave
    # out those its window holds, or keep the matching one (``id``) alone
    parts: list[tuple[int, str, str]] = field(default_factory=list)
    scope: int = EVERYWHERE  # the project it belongs to, or EVERYWHERE
    # near-duplicates of it left out for it (``memory.duplicates``), for the report
    duplicates: list[Recalled] = field(default_factory=list)


def memory_enabled(conversation: Conversation, *, profile: UserProfile | None = None) -> bool:
    """Memory is read and written unless the conversation is temporary or the user
    switched memory off. The one home of this rule; ``profile``: the user's profile when the
    caller has already read it (no query)."""
    return not conversation.temporary and user_memory_enabled(conversation.user, profile=profile)


def memory_enabled_many(conversations, *, profiles=None) -> dict[int, bool]:
    """``memory_enabled`` for several conversations at once (one query; none with
    ``profiles``, the users' profiles by user id): conversation id -> the rule."""
    switches = user_memory_enabled_many(
        {c.user_id: c.user for c in conversations}.values(), profiles=profiles
    )
    return {c.pk: not c.temporary and switches.get(c.user_id, False) for c in conversations}


def memory_enabled_count(conversations, *, user) -> int:
    """How many of ``conversations`` (a queryset of ``user``'s) ``memory_enabled`` allows,
    counted in SQL: none with the user's memory off, else those not temporary."""
    if not user_memory_enabled(user):
        return 0
    return conversations.filter(temporary=False).count()


def search_k(memory_tokens: int) -> int:
    """How many hits to ask for when the memory block may take ``memory_tokens``: enough to
    fill it with short lines (human talk: a turn is a line of 30-60 tokens), never fewer
    than SEARCH_K."""
    return max(SEARCH_K, min(SEARCH_K_MAX, memory_tokens // LINE_TOKENS))


def _date(value) -> str:
    return value.date().isoformat() if value else ""


def recall_for_turn(
    *,
    user,
    conversation: Conversation,
    query: str,
    exclude_message_ids: frozenset[int] = frozenset(),
    known_earlier: int = 0,
    k: int = SEARCH_K,
) -> list[Recalled]:
    """Ranked candidates for the memory block, best first, without duplicates (the same item,
    or near-duplicates of a kind: ``memory.duplicates``, the project's own kept): search hits,
    pinned facts and a new session's resume items compete on their score, no kind has a
    quota. ``k``: search hits asked for (``search_k``).
    ``known_earlier``: how many of the conversation's messages (other than the excluded
    ones) the caller has already seen; from RESUME_TURNS on, the conversation is known not to
    be new without asking the database."""
    from memory import search as retrieval

    scopes = scoping.readable(conversation.project_id)
    seen: set[tuple[str, int]] = set()
    results: list[Recalled] = []

    def add(item: Recalled) -> None:
        key = (item.kind, item.id)
        if key not in seen:
            seen.add(key)
            results.append(item)

    for hit in retrieval.search(
        user=user, query=query, k=k, exclude_message_ids=exclude_message_ids, scopes=scopes
    ):
        add(
            Recalled(
                kind=hit.kind,
                id=hit.id,
                text=hit.text,
                score=hit.score,
                why=f"matches this message ({hit.why}, relevance {hit.relevance:.2f})",
                date=hit.date,
                source=hit.source,
                message_ids=list(hit.message_ids),
                relevance=hit.relevance,
                parts=list(hit.parts),
                scope=hit.scope,
            )
        )
    if known_earlier < RESUME_TURNS and _early_in(conversation, exclude_message_ids):
        for item in resume_items(user=user, scopes=scopes):
            add(item)
    else:
        for item in pinned_facts(user=user, scopes=scopes):
            add(item)
    results.sort(key=lambda item: -item.score)  # stable: a tie keeps the search's order
    return duplicates.distinct(results)


RESUME_TURNS = 6  # messages before which a conversation still gets session resumption


def _early_in(conversation: Conversation, exclude_message_ids: frozenset[int]) -> bool:
    """A new session (its first few messages): what matters from earlier conversations comes
    unasked. Later, retrieval finds what is relevant, and pinned facts are always there.
    One plain statement (asked on a conversation's first turns, before the model is called:
    the ORM's compiling of it cost several times its running)."""
    from chat.models import Message

    # Integers only, written into the statement (as scoping.sql_in).
    excluded = ", ".join(str(int(pk)) for pk in sorted(exclude_message_ids))
    sql = (
        f"SELECT 1 FROM {Message._meta.db_table} "  # noqa: S608
        "WHERE conversation_id = %s AND hidden_by_id IS NULL "
        + (f"AND id NOT IN ({excluded}) " if excluded else "")
        + "ORDER BY id LIMIT 1 OFFSET %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [conversation.pk, RESUME_TURNS - 1])
        return cursor.fetchone() is None


# The models' own tables, no input in the text: S608 does not apply.
_PINNED_FACTS = (
    "SELECT f.id, f.text, f.updated_at, f.conversation_id, c.title, f.project_id "  # noqa: S608
    f"FROM {Fact._meta.db_table} f "
    f"LEFT JOIN {Conversation._meta.db_table} c ON c.id = f.conversation_id "
    "WHERE f.user_id = %s AND f.status = %s AND f.pinned = %s AND NOT (f.state = %s) "
    "AND {scoped} ORDER BY f.importance DESC, f.updated_at DESC LIMIT %s"
)


def _scoped_sql(column: str, scopes: Scopes) -> str:
    """The memories of these scopes: no project (everywhere) or one of the projects."""
    projects = [s for s in scopes if s != EVERYWHERE]
    parts = [f"{column} IS NULL"] if EVERYWHERE in scopes else []
    if projects:
        parts.append(scoping.sql_in(column, tuple(projects)))
    return "(" + (" OR ".join(parts) or "1 = 0") + ")"


def pinned_facts(*, user, scopes: Scopes = (EVERYWHERE,)) -> list[Recalled]:
    """Asked on every turn past the first few, before the model is called: one plain
    statement (the ORM's compiling of it cost ten times its running), no instances."""
    from memory.search.index import as_datetime

    with connection.cursor() as cursor:
        cursor.execute(
            _PINNED_FACTS.format(scoped=_scoped_sql("f.project_id", scopes)),
            [user.pk, Fact.Status.ACTIVE, True, MemoryState.SUGGESTED, RESUME_FACTS],
        )
        facts = cursor.fetchall()
    return [
        Recalled(
            kind="fact",
            id=pk,
            text=text,
            score=1.0,
            why="pinned fact",
            date=_date(as_datetime(updated_at)),
            source=Conversation(title=title or "").display_title if conversation_id else "",
            scope=scoping.of(project_id),
        )
        for pk, text, updated_at, conversation_id, title, project_id in facts
    ]


# The new session's resume items: the same plain statements as ``pinned_facts`` (asked on a
# conversation's first turns, before the model is called), the models' own tables.
_RESUME_FACTS = (
    "SELECT f.id, f.text, f.updated_at, f.conversation_id, c.title, f.pinned, "  # noqa: S608
    f"f.importance, f.project_id FROM {Fact._meta.db_table} f "
    f"LEFT JOIN {Conversation._meta.db_table} c ON c.id = f.conversation_id "
    "WHERE f.user_id = %s AND f.status = %s AND NOT (f.state = %s) AND {scoped} "
    "ORDER BY f.pinned DESC, f.importance DESC, f.updated_at DESC LIMIT %s"
)
_RESUME_ACTIONS = (
    "SELECT a.id, a.what, a.updated_at, a.conversation_id, c.title, a.owner, "  # noqa: S608
    f"a.due_date, a.project_id FROM {ActionItem._meta.db_table} a "
    f"LEFT JOIN {Conversation._meta.db_table} c ON c.id = a.conversation_id "
    "WHERE a.user_id = %s AND a.status IN {statuses} AND NOT (a.state = %s) AND {scoped} "
    "ORDER BY a.due_date ASC, a.updated_at DESC LIMIT %s"
)
_RESUME_DECISIONS = (
    "SELECT d.id, d.what, d.updated_at, d.conversation_id, c.title, "  # noqa: S608
    f"d.rationale, d.project_id FROM {Decision._meta.db_table} d "
    f"LEFT JOIN {Conversation._meta.db_table} c ON c.id = d.conversation_id "
    "WHERE d.user_id = %s AND NOT (d.status = %s) AND NOT (d.state = %s) AND {scoped} "
    "ORDER BY d.updated_at DESC LIMIT %s"
)


def resume_items(*, user, scopes: Scopes = (EVERYWHERE,)) -> list[Recalled]:
    """What a new session starts knowing: pinned/important facts, open actions, decisions,
    of the scopes the conversation reads. Plain statements, no instances (as
    ``pinned_facts``: the ORM's compiling of these cost several times their running)."""
    from memory.search.index import as_datetime

    def source(conversation_id, title) -> str:
        return Conversation(title=title or "").display_title if conversation_id else ""

    items: list[Recalled] = []
    with connection.cursor() as cursor:
        cursor.execute(
            _RESUME_FACTS.format(scoped=_scoped_sql("f.project_id", scopes)),
            [user.pk, Fact.Status.ACTIVE, MemoryState.SUGGESTED, RESUME_FACTS],
        )
        facts = cursor.fetchall()
        cursor.execute(
            _RESUME_ACTIONS.format(
                statuses="(" + ", ".join(["%s"] * len(OPEN_STATUSES)) + ")",
                scoped=_scoped_sql("a.project_id", scopes),
            ),
            [
                user.pk,
                *OPEN_STATUSES,
                MemoryState.SUGGESTED,
                RESUME_ACTIONS,
            ],
        )
        actions = cursor.fetchall()
        cursor.execute(
            _RESUME_DECISIONS.format(scoped=_scoped_sql("d.project_id", scopes)),
            [user.pk, Decision.Status.REVERSED, MemoryState.SUGGESTED, RESUME_DECISIONS],
        )
        decisions = cursor.fetchall()
    for pk, text, updated_at, conversation_id, title, pinned, importance, project_id in facts:
        why = "pinned fact" if pinned else f"important fact ({importance:.1f})"
        items.append(
            Recalled(
                kind="fact",
                id=pk,
                text=text,
                score=0.5 + importance / 2,
                why=why,
                date=_date(as_datetime(updated_at)),
                source=source(conversation_id, title),
                scope=scoping.of(project_id),
            )
        )
    for pk, what, updated_at, conversation_id, title, owner, due_date, project_id in actions:
        text = what
        if owner:
            text += f" (owner: {owner})"
        if due_date:
            text += f" (due {_iso_date(due_date)})"
        items.append(
            Recalled(
                kind="action_item",
                id=pk,
                text=text,
                score=0.6,
                why="open action item",
                date=_date(as_datetime(updated_at)),
                source=source(conversation_id, title),
                scope=scoping.of(project_id),
            )
        )
    for pk, what, updated_at, conversation_id, title, rationale, project_id in decisions:
        text = what + (f" — because {rationale}" if rationale else "")
        items.append(
            Recalled(
                kind="decision",
                id=pk,
                text=text,
                score=0.55,
                why="recent decision",
                date=_date(as_datetime(updated_at)),
                source=source(conversation_id, title),
                scope=scoping.of(project_id),
            )
        )
    return items


def _iso_date(value) -> str:
    """A date column as read raw: a ``date`` (PostgreSQL) or its ISO text (SQLite)."""
    return value if isinstance(value, str) else value.isoformat()
