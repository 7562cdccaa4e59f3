"""Which parts of a user's memory a conversation reads: its scopes.

A row of the index (``schema``) and a stored vector carry a scope: the project they belong to,
or ``EVERYWHERE`` (0) for what was said or learned outside any project. A conversation outside
any project reads ``(EVERYWHERE,)``; one in a project reads ``(EVERYWHERE, project)``. Every
read of the index matches these in its own statement, so nothing of another scope is fetched.
"""

from __future__ import annotations

from django.db.models import Q

EVERYWHERE = 0
# Not a scope: "every row of the user", what the index statements match when the scopes a
# conversation reads hold all of the user's rows (``index.user_stats``): one posting list (or
# no scope filter) instead of one per scope.
ALL = -1

Scopes = tuple[int, ...]


def readable(project_id: int | None) -> Scopes:
    """The scopes a conversation of ``project_id`` (None: outside any project) reads."""
    return (EVERYWHERE,) if not project_id else (EVERYWHERE, int(project_id))


def of(project_id: int | None) -> int:
    """The scope of what is said or learned in a conversation of ``project_id``."""
    return int(project_id) if project_id else EVERYWHERE


def sql_in(column: str, scopes: Scopes) -> str:
    """``column IN (...)`` for these scopes: integers only, so written into the statement
    (a statement per scope set keeps its plan; a parameter list would not)."""
    return f"{column} IN ({', '.join(str(int(s)) for s in scopes)})"


def owner_tokens(user_id: int, scopes: Scopes) -> str:
    """SQLite: the FTS5 filter on the owner column for the user's rows in these scopes."""
    if scopes == (ALL,):
        return f'owner : ("u{int(user_id)}")'
    tokens = " OR ".join(f'"u{int(user_id)}p{int(s)}"' for s in scopes)
    return f"owner : ({tokens})"


def memories_in(scopes: Scopes) -> Q:
    """The ORM's filter for memories (facts, decisions, action items) of these scopes."""
    projects = [s for s in scopes if s != EVERYWHERE]
    found = Q(project__isnull=True) if EVERYWHERE in scopes else Q(pk__in=[])
    return (found | Q(project_id__in=projects)) if projects else found
