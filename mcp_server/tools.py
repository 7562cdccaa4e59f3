"""The MCP server's tools: thin async functions over ``mcp_server.memories``, each run in a
database thread as the key's user (``mcp_server.endpoint`` put them in the request's state),
every history record it makes marked "through MCP"."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from audit import acting_as, through
from mcp_server import memories
from memory.forms import TEXT_MAX_CHARS

CHANNEL = "MCP"

INSTRUCTIONS = (
    "The long-term memory of one memorychat user (the owner of the API key): facts, "
    "decisions and action items learned from their conversations or added by them, and the "
    "conversations themselves. Search it before answering questions about the user's past; "
    "remember what they ask you to remember. Every change shows on their Memory page."
)

server = MCPServer(name="memorychat", instructions=INSTRUCTIONS)

Kind = Literal["fact", "decision", "action_item"]
Project = Annotated[
    str | None,
    Field(description="One of the user's projects, by id or name; none: everything."),
]
Limit = Annotated[int, Field(ge=1, le=memories.LIMIT_MAX)]
MemoryId = Annotated[int, Field(ge=1, description="The memory's id, as search or list gave it.")]
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def _request(ctx: Context):
    return ctx.request_context.request


async def _run(ctx: Context, work, **arguments) -> Any:
    """``work`` as the key's user in a database thread: its history records name the user
    and say they were made through MCP; a refusal becomes the tool's error, in words."""
    request = _request(ctx)
    user = request.state.user
    base_url = str(request.base_url)

    def as_the_user():
        with through(CHANNEL), acting_as(user):
            return work(user=user, base_url=base_url, **arguments)

    try:
        return await database_sync_to_async(as_the_user, thread_sensitive=False)()
    except memories.Refused as refused:
        raise ToolError(str(refused)) from None


@server.tool(annotations=READ)
async def search_memory(
    ctx: Context,
    query: Annotated[str, Field(description="What to look for, in words.", max_length=500)],
    project: Project = None,
    limit: Limit = 10,
) -> dict[str, Any]:
    """Search the user's memory as the chat recalls it: facts, decisions, action items,
    conversation summaries and messages, best first. Each result is dated and names the
    conversation and message it came from, with a link."""
    results = await _run(ctx, memories.memory_search, query=query, project=project, limit=limit)
    return {"results": results}


@server.tool(annotations=READ)
async def list_memories(
    ctx: Context,
    kind: Kind | None = None,
    project: Project = None,
    query: Annotated[
        str, Field(description="Only those holding these words.", max_length=500)
    ] = "",
    limit: Limit = 20,
) -> dict[str, Any]:
    """List the user's facts, decisions and action items, newest first, by kind, project and
    words. Suggestions waiting for the user have the state "suggested"."""
    found = await _run(
        ctx, memories.memory_list, kind=kind or "", project=project, query=query, limit=limit
    )
    return {"memories": found}


@server.tool(annotations=WRITE)
async def remember(
    ctx: Context,
    kind: Kind,
    text: Annotated[
        str, Field(description="The memory in one sentence.", max_length=TEXT_MAX_CHARS)
    ],
    category: Annotated[
        Literal["preference", "personal", "project", "schedule", "technical", "other"] | None,
        Field(description="A fact's category."),
    ] = None,
    project: Project = None,
    due_date: Annotated[str | None, Field(description="An action item's, YYYY-MM-DD.")] = None,
) -> dict[str, Any]:
    """Remember a fact, a decision or an action item for the user. In their memory mode
    "ask first" it waits as a suggestion for them to keep; with memory off it is refused."""
    return await _run(
        ctx,
        memories.memory_remember,
        kind=kind,
        text=text,
        category=category or "",
        project=project,
        due_date=due_date,
    )


@server.tool(annotations=WRITE)
async def update_memory(
    ctx: Context,
    kind: Kind,
    id: MemoryId,
    text: Annotated[
        str | None, Field(description="The corrected text.", max_length=TEXT_MAX_CHARS)
    ] = None,
    done: Annotated[bool | None, Field(description="An action item: done, or open.")] = None,
) -> dict[str, Any]:
    """Correct a memory's text (from then on it is the user's word, never changed by what
    the chat learns), or mark an action item done or open again."""
    memory = await _run(ctx, memories.memory_change, kind=kind, memory_id=id, text=text, done=done)
    return {"memory": memory}


@server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
async def forget_memory(ctx: Context, kind: Kind, id: MemoryId) -> dict[str, Any]:
    """Forget one memory: it is no longer recalled (its history keeps the record)."""
    return await _run(ctx, memories.memory_forget, kind=kind, memory_id=id)
