"""The assembled context: what the model sees on one turn, and a report of why.

``build(conversation=..., user_text=...)`` returns ``BuiltContext(messages, report)``. Blocks, in
the order sent, what changes least first so that a server's prompt cache reuses the prefix
(llama.cpp's slot cache, OpenAI's cached input tokens): the versioned system prompt; the
user's stated preferences; the project's instructions; the conversation's rolling summary;
as many recent messages as fit under the conversation's strategy; then the blocks that may
change between two turns, last before the message: the style learned from the user's
messages (its lines come and go as running averages cross their bands), the user's level in
the subjects the message names and long-term memory retrieved for it (quoted data with
dates and sources). Everything before the history changes only when the user (or staff)
changes something, or when a new summary version is made.

The whole request stays within the conversation's budget minus a reserve for the reply. Recent
messages are read newest-first with an indexed query, using their stored token counts, and the
read stops at the first message that does not fit: O(window), never O(history).

Counts are tiktoken's: exact for OpenAI's models, an estimate for any other (the report says
``tokens_estimated``). The server's reported prompt tokens are the truth: when the last replies
on this conversation's model show the server counting more than the estimate, the limit is
scaled down by that ratio (``token_scale``), so a long conversation does not overflow a
model whose tokenizer splits text finer than tiktoken. The server's own count, learned by
``llm.limits`` (its tokenizer asked at the probe, a refusal for length, a summary's usage),
scales it too, from the first turn: the larger of the two.

The report's shape is the contract in ``memory.report``; it is built only with its helpers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

from django.conf import settings
from django.db import connection

from chat.models import Conversation, Message
from contextwindow.tokens import (
    REPLY_PRIMING_TOKENS,
    encoding_for_model,
    get_encoding,
    message_overhead,
    tokenizer_known,
)
from contextwindow.window import MemoryStrategy, select_recent
from llm import limits, pinning
from llm.clients import chat_endpoint
from llm.messages import AfterTurns
from memory import recall, selectors
from memory.prompts import (
    MEMORY_HEADER,
    PREFERENCES_HEADER,
    PROJECT_HEADER,
    STYLE_HEADER,
    SUMMARY_HEADER,
)
from memory.report import (
    Block,
    ContextReport,
    MessageItem,
    MessagesLeftOut,
    block_item,
    duplicate_memory,
    expertise_item,
    left_out_memory,
    memory_item,
    message_item,
    messages_left_out,
    preferences_item,
    project_item,
    report_new,
    scope_item,
    summary_item,
)
from memory.search.exchange import exchange_text
from profiles.expertise import expertise_for_turn
from profiles.instructions import build_instructions
from profiles.selectors import profile_get

SLIDING_WINDOW_MESSAGES = 20
# When the history no longer fits, its oldest messages go a block at a time: the window keeps
# the oldest message the previous request held while it fits (the prefix a server cached
# stays the same), and when that one must go, it drops this many messages more (sliding
# window) or this share of the history's room (budget), so the new start holds for turns.
WINDOW_STEP_MESSAGES = 8
WINDOW_STEP_SHARE = 0.25
HISTORY_PAGE = 64  # rows read per query while filling the window
MEMORY_SHARE = 0.25  # at most this share of the budget goes to long-term memory
SUMMARY_SHARE = 0.25
# Sent after the history, so the prefix before them stays the same from turn to turn: the
# learned style (it moves with every message the user sends) and what is chosen for the
# turn's message.
PER_TURN_BLOCKS = frozenset({Block.STYLE, Block.EXPERTISE, Block.MEMORY})
MIN_REPLY_SHARE = 0.5  # the reserve never takes more than half the budget
LEFT_OUT_COUNT_CAP = 1000  # "messages left out" is counted up to this, to stay O(window)
SCALE_SAMPLES = 3  # recent replies whose reported prompt tokens correct the estimate
MAX_TOKEN_SCALE = 4.0


@dataclass
class BuiltContext:
    messages: list[dict[str, str]]
    report: ContextReport
    # Request fields for the server beside the messages (llama.cpp's ``id_slot``: llm.pinning).
    server_fields: dict = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.report["total_tokens"]


class _Budget:
    """Token accounting for one request, in chat-format tokens."""

    def __init__(self, model: str, limit: int, user_id: int):
        self.user_id = user_id  # keys the per-process token counts (see _tokens)
        self.encoding = encoding_for_model(model)
        self.model = model
        self.limit = limit
        self.used = REPLY_PRIMING_TOKENS
        self._overhead = {r: message_overhead(r, self.encoding) for r in Message.Role.values}

    def cost(self, role: str, text: str) -> int:
        return self._overhead[role] + len(self.encoding.encode_ordinary(text))

    def cost_repeated(self, role: str, text: str) -> int:
        """``cost`` of a text seen on many turns (a memory line, the system prompt)."""
        return self._overhead[role] + _tokens(self.user_id, self.encoding.name, text)

    def stored_cost(self, role: str, token_count: int) -> int:
        return self._overhead[role] + token_count

    @property
    def left(self) -> int:
        return self.limit - self.used


@lru_cache(maxsize=4096)
def _tokens(user_id: int, encoding_name: str, text: str) -> int:
    """Tokens of a text that comes back turn after turn: the count depends on the text and the
    encoding only, so it is kept (per process, bounded), per user (a hit is faster than a miss:
    a shared key would tell one user that another's memory holds the same text)."""
    return len(get_encoding(encoding_name).encode_ordinary(text))


def quote(text: str) -> str:
    """Memory text as a JSON string literal: data the model reads, never markup it obeys.
    Angle brackets are escaped too, so stored text cannot close the <memory> block."""
    return json.dumps(text, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


def format_memory_block(items: list[recall.Recalled]) -> str:
    lines = [MEMORY_HEADER, "<memory>"]
    for item in items:
        source = f" · from {quote(item.source)}" if item.source else ""
        lines.append(f"- [{item.kind} · {item.date}{source}] {quote(item.text)}")
    lines.append("</memory>")
    return "\n".join(lines)


def format_project_block(name: str, instructions: str) -> str:
    return (
        f"{PROJECT_HEADER}\n<project>\nname: {quote(name)}\n"
        f"instructions: {quote(instructions)}\n</project>"
    )


def format_summary_block(text: str) -> str:
    return f"{SUMMARY_HEADER}\n<summary>\n{quote(text)}\n</summary>"


def token_scale(rows, model: str, totals_of=None) -> float | None:
    """How many tokens the server counted per estimated token on this conversation's recent
    replies with ``model`` (their reported prompt tokens over their report's total), or None
    when no reply reported usage. Only a server counting more than estimated changes the
    budget: the largest recent ratio, capped at MAX_TOKEN_SCALE. ``rows``: the history's
    newest page (``_History.recent``): the replies it holds are the recent ones. Their
    reports' totals are read for the SCALE_SAMPLES newest that reported usage only: reading
    the total parses the whole report, which cost more than the rest of the page on SQLite."""
    replies = [
        row
        for row in rows
        if row.role == Message.Role.ASSISTANT and row.model == model and row.prompt_tokens
    ][:SCALE_SAMPLES]
    if not replies:
        return None
    totals = (totals_of or _report_totals)([row.id for row in replies])
    ratios = [row.prompt_tokens / totals[row.id] for row in replies if totals.get(row.id)]
    if not ratios:
        return None
    return round(min(max(ratios), MAX_TOKEN_SCALE), 3)


def build(
    *,
    conversation: Conversation,
    user_text: str,
    user_message: Message | None = None,
    tail: list[dict[str, str]] | None = None,
) -> BuiltContext:
    """Assemble the request for a turn. ``user_message`` is the stored message for
    ``user_text`` (history stops before it); without it, the whole history is eligible.
    ``tail``: messages sent after the new one (a continued reply and the request for its
    rest); their tokens are set aside first."""
    model = conversation.effective_model
    # Never more than the server takes (its context and token scale, learned by llm.limits).
    server = limits.server_size(chat_endpoint(), model)
    total_budget = server.budget(conversation.effective_budget)
    reserve = min(settings.MEMORYCHAT_REPLY_RESERVE, int(total_budget * MIN_REPLY_SHARE))
    strategy = MemoryStrategy(conversation.strategy)
    summary = None
    if strategy is MemoryStrategy.SUMMARY_BUFFER:
        summary = selectors.summary_current(conversation)
    if summary is not None and not summary.text.strip():
        # A blank version is what forgetting leaves (memory.services.forget): nothing to say,
        # and the conversation's own messages stay in the window.
        summary = None
    # The newest page of history, read first: its replies give the token scale.
    history = _History(conversation, user_message, strategy, summary)
    scale = token_scale(history.recent(), model, history.report_totals)
    if server.scale > (scale or 1.0):
        # The server's own count (its tokenizer at the probe, a refusal, a summary's usage)
        # says more: the first turn is sized in its tokens, and a refusal's lesson holds.
        scale = server.scale
    limit = total_budget - reserve
    if scale is not None and scale > 1.0:
        limit = int(limit / scale)
    budget = history.budget = _Budget(model, limit, conversation.user_id)
    history.total_budget = total_budget
    profile = profile_get(user=conversation.user)  # one read for the switch and the block
    memory_on = recall.memory_enabled(conversation, profile=profile)
    prompt = selectors.system_prompt_current()
    report = report_new(
        model=model,
        strategy=strategy.value,
        budget=total_budget,
        reserve=reserve,
        limit=budget.limit,
        temporary=conversation.temporary,
        memory_enabled=memory_on,
        system_prompt_version=prompt.version,
        tokens_estimated=not tokenizer_known(model),
        token_scale=scale,
    )
    head: list[dict[str, str]] = []
    late: list[dict[str, str]] = []  # the per-turn blocks: after the history (prefix caching)

    def add_block(name: Block, text: str, detail: str, *, cost: int | None = None) -> int:
        cost = budget.cost("system", text) if cost is None else cost
        budget.used += cost
        if name in PER_TURN_BLOCKS:
            late.append(AfterTurns(role="system", content=text))
        else:
            head.append({"role": "system", "content": text})
        report["blocks"].append(block_item(name, cost, detail))
        return cost

    # The system prompt and the new message are always sent.
    system_cost = budget.cost_repeated("system", prompt.text)
    add_block(Block.SYSTEM, prompt.text, f"system prompt v{prompt.version}", cost=system_cost)
    if user_message is not None and user_message.content == user_text:
        message_cost = budget.stored_cost("user", user_message.token_count)  # counted on store
    else:
        message_cost = budget.cost("user", user_text)
    budget.used += message_cost
    tail = tail or []
    tail_cost = sum(budget.cost(m["role"], m["content"]) for m in tail)
    budget.used += tail_cost

    # What the user stated goes before the history; the learned style, which may change after
    # any message (a running average crossing its band), after it (PER_TURN_BLOCKS).
    instructions = build_instructions(profile)
    sent: list[str] = []
    for name, part, header, kind in (
        (Block.PREFERENCES, instructions.stated, PREFERENCES_HEADER, "preference"),
        (Block.STYLE, instructions.learned, STYLE_HEADER, "metric"),
    ):
        if not part:
            continue
        text = f"{header}\n{part}"
        cost = budget.cost_repeated("system", text)
        if cost <= budget.left:
            rules = sum(1 for source in instructions.sources if source["kind"] == kind)
            add_block(name, text, f"{rules} rules", cost=cost)
            sent.append(part)
    if sent:
        report["preferences"] = preferences_item(
            text="\n\n".join(sent), sources=instructions.sources, skipped=instructions.skipped
        )
    project = selectors.project_instructions(conversation)
    report["scope"] = scope_item(
        project_id=project.id if project else None, name=project.name if project else ""
    )
    if project is not None and project.instructions.strip():
        text = format_project_block(project.name, project.instructions)
        cost = budget.cost_repeated("system", text)
        if cost <= budget.left:
            add_block(Block.PROJECT, text, project.name, cost=cost)
            report["project"] = project_item(
                project_id=project.id, name=project.name, instructions=project.instructions
            )
    expertise = expertise_for_turn(profile, user_text)  # the level in the message's domain(s)
    if expertise.text:
        cost = budget.cost("system", expertise.text)
        if cost <= budget.left:
            add_block(Block.EXPERTISE, expertise.text, f"{len(expertise.sources)} domains")
            report["expertise"] = expertise_item(
                text=expertise.text, sources=expertise.sources, skipped=expertise.skipped
            )

    if summary is not None:
        text = format_summary_block(summary.text)
        cost = budget.cost_repeated("system", text)
        if cost <= min(budget.left, int(budget.limit * SUMMARY_SHARE)):
            add_block(Block.SUMMARY, text, f"version {summary.version}", cost=cost)
            report["summary"] = summary_item(summary, cost)
        else:
            report["summary"] = summary_item(summary, cost, left_out="budget")
            # Rare: the history is read again, from before the summary.
            history = _History(conversation, user_message, strategy, None)
            history.budget, history.total_budget = budget, total_budget

    candidates = []
    memory_cap = min(budget.left, int(budget.limit * MEMORY_SHARE))
    if memory_on:
        candidates = recall.recall_for_turn(
            user=conversation.user,
            conversation=conversation,
            query=user_text,
            exclude_message_ids=frozenset([user_message.pk]) if user_message else frozenset(),
            # The newest page of history (read now, used by the fill below) tells whether
            # the conversation is past its first few messages: no query of its own for that.
            known_earlier=history.peek() if user_message is not None else 0,
            k=recall.search_k(memory_cap),
        )
        # Pinned facts and resume items may still come: this says the search found nothing.
        report["nothing_relevant"] = not any(c.relevance is not None for c in candidates)
    if not candidates:
        memory_cap = 0
    # Recent messages first (leaving room for memory), so memory need not repeat them; then
    # whatever memory did not use goes back to older messages.
    history.fill(budget.left - memory_cap)
    if candidates:
        in_window = {row.id for row, _ in history.kept}
        _add_memory(candidates, memory_cap, budget, add_block, report, in_window)
    history.fill(budget.left)
    history.settle()

    report["messages"], messages_out = history.sent()
    report["messages_left_out"] = history.left_out()
    history_item = block_item(Block.HISTORY, history.tokens, f"{len(messages_out)} messages")
    blocks = report["blocks"]  # as sent: the blocks that stay, the history, the per-turn ones
    report["blocks"] = [
        *(b for b in blocks if b["name"] not in PER_TURN_BLOCKS),
        history_item,
        *(b for b in blocks if b["name"] in PER_TURN_BLOCKS),
    ]
    report["blocks"].append(block_item(Block.MESSAGE, message_cost, "new message"))
    if tail:
        report["blocks"].append(block_item(Block.CONTINUATION, tail_cost, "the reply so far"))
    report["total_tokens"] = budget.used
    messages = [*head, *messages_out, *late, {"role": "user", "content": user_text}, *tail]
    fields = pinning.chat_fields(conversation.pk or 0)  # the same slot every turn
    return BuiltContext(messages=messages, report=report, server_fields=fields)


def _add_memory(candidates, cap, budget, add_block, report, in_window) -> None:
    """Fill the memory share by tokens: as many candidates as fit, best first, each line's
    cost counted (the block's own cost checked at the end, so the share is never exceeded).
    Nothing the window sends is repeated: a message hit the window holds is dropped, and an
    exchange shows only its messages the window does not hold. An exchange too long for the
    room left shows its matching message alone; the first few candidates, clipped, still fit
    a small share (``_clipped``). What does not fit is reported as left out for the budget."""
    frame = budget.cost_repeated("system", format_memory_block([]))
    room = cap - frame
    chosen: list[recall.Recalled] = []
    left_out: list[recall.Recalled] = []
    for rank, item in enumerate(candidates):
        item = _outside_window(item, in_window)
        if item is None:
            continue
        fitted = _fitting(item, room, budget) if room >= MIN_LINE_TOKENS else None
        if fitted is None and rank < BEST_FEW:
            fitted = _clipped(item, min(room, (cap - frame) // BEST_FEW), budget)
        if fitted is None:
            left_out.append(item)
            continue
        item, cost = fitted
        room -= cost
        chosen.append(item)
    text = format_memory_block(chosen)
    cost = budget.cost("system", text)
    while chosen and cost > cap:  # lines joined may count a token more than apart
        left_out.insert(0, chosen.pop())
        text = format_memory_block(chosen)
        cost = budget.cost("system", text)
    # The best of what was left out, listed (a long list would swell every stored report);
    # the block's detail counts them all.
    listed = left_out[:LEFT_OUT_LISTED]
    report["memories_left_out"] += [left_out_memory(item, "budget") for item in listed]
    # The near-duplicates of what was sent (``memory.duplicates``): the report says which.
    same = [(other, item) for item in chosen for other in item.duplicates][:LEFT_OUT_LISTED]
    report["memories_left_out"] += [duplicate_memory(other, of=item) for other, item in same]
    if chosen:
        detail = f"{len(chosen)} memories" + (f", {len(left_out)} left out" if left_out else "")
        add_block(Block.MEMORY, text, detail, cost=cost)
        report["memories"] = [memory_item(item) for item in chosen]


LEFT_OUT_LISTED = 20  # memories left out for the budget that the report lists
MIN_LINE_TOKENS = 12  # no memory line is shorter than this: less room left, the block is full
BEST_FEW = 3  # candidates clipped to fit when the share is too small for them whole
MIN_CLIPPED_TOKENS = 24  # a clipped line keeps at least this much of its text
CHARS_PER_TOKEN_MAX = 12  # English text averages 4-5 characters a token in o200k


def _line(item: recall.Recalled) -> str:
    return format_memory_block([item]).split("\n")[-2] + "\n"


def _line_cost(item: recall.Recalled, room: int, budget: _Budget) -> int | None:
    """The exact cost of the item's line, or None when it is longer than ``room`` (a line of
    more characters than CHARS_PER_TOKEN_MAX a token of the room is not encoded at all)."""
    line = _line(item)
    if len(line) > room * CHARS_PER_TOKEN_MAX:
        return None
    cost = _tokens(budget.user_id, budget.encoding.name, line)
    return cost if cost <= room else None


def _fitting(item: recall.Recalled, room: int, budget: _Budget):
    """(item, cost) for the item whole, else its matching message alone, else None."""
    cost = _line_cost(item, room, budget)
    if cost is not None:
        return item, cost
    if len(item.parts) > 1:
        alone = _with_parts(item, [p for p in item.parts if p[0] == item.id])
        cost = _line_cost(alone, room, budget)
        if cost is not None:
            return alone, cost
    return None


def _clipped(item: recall.Recalled, room: int, budget: _Budget):
    """(item, cost) with its matching text cut to fit ``room``, or None when too little room."""
    if len(item.parts) > 1:
        item = _with_parts(item, [p for p in item.parts if p[0] == item.id])
    frame = _tokens(budget.user_id, budget.encoding.name, _line(replace(item, text="")))
    keep = room - frame - 1  # the ellipsis
    if keep < MIN_CLIPPED_TOKENS:
        return None
    tokens = budget.encoding.encode_ordinary(item.text)
    if len(tokens) <= keep:
        return None  # short enough whole: it did not fit, so no room for it
    clipped = replace(item, text=budget.encoding.decode(tokens[:keep]) + "…")
    cost = _line_cost(clipped, room, budget)
    # Decoding and encoding again may count a token or two more: cut a little further.
    while cost is None and keep > MIN_CLIPPED_TOKENS:
        keep -= 2
        clipped = replace(item, text=budget.encoding.decode(tokens[:keep]) + "…")
        cost = _line_cost(clipped, room, budget)
    return (clipped, cost) if cost is not None else None


def _outside_window(item: recall.Recalled, in_window: set[int]) -> recall.Recalled | None:
    """The item without what the window sends: None for a message hit the window holds; an
    exchange keeps the messages the window does not hold."""
    if item.kind != "message":
        return item
    if item.id in in_window:
        return None
    if not item.parts or not any(p[0] in in_window for p in item.parts):
        return item
    return _with_parts(item, [p for p in item.parts if p[0] not in in_window])


def _with_parts(item: recall.Recalled, parts: list[tuple[int, str, str]]) -> recall.Recalled:
    """A message hit showing only ``parts`` (its matching message among them)."""
    if len(parts) == 1:
        return replace(item, text=parts[0][2], parts=[], message_ids=[parts[0][0]])
    ids = [item.id, *(p[0] for p in parts if p[0] != item.id)]  # the matching one first
    return replace(item, text=exchange_text(parts), parts=parts, message_ids=ids)


class _Row(NamedTuple):
    id: int
    role: str
    content: str
    token_count: int
    model: str
    prompt_tokens: int | None


# A page of history, newest first: every turn reads one before the model is called, so it is
# a plain statement on every vendor (the ORM's compiling of this one cost several times its
# running). The models' own table, no input in the text: S608 does not apply.
_WHERE = (
    f"FROM {Message._meta.db_table} "
    "WHERE conversation_id = %s AND NOT (status = %s) AND NOT (content = '') "
    # The branch shown only (chat.branches). "+": never by hidden_by's index, which SQLite
    # chose with an id range: every message of every conversation written after the summary
    # (a conversation resumed after 100k others' messages: 85 ms a turn instead of 0.1).
    "AND +hidden_by_id IS NULL "
    "AND {id} < %s AND {id} > %s ORDER BY created_at DESC, id DESC LIMIT %s OFFSET %s"
)
_COLUMNS = "SELECT id, role, content, token_count, model, prompt_tokens "
# SQLite plans the page by its id range (the conversation's index holds the row ids) and sorts
# the whole range: right when a summary bounds it, since the tail after a summary is short,
# but a conversation without one was sorted whole on every turn (5,100 messages: 1.5 ms a
# read). With no lower bound, "+id" keeps the ids out of the plan: the page is read down
# msg_conv_latest, newest first, and stops at its limit (63 µs).
_ID = {True: "id", False: "+id"}  # by the id range, or not (_by_id_range)
_PAGE = {by_range: _COLUMNS + _WHERE.format(id=column) for by_range, column in _ID.items()}
# What a long conversation leaves out, counted up to a cap: plain SQL on every vendor.
_LEFT_OUT = {
    by_range: "SELECT count(*) FROM (SELECT 1 " + _WHERE.format(id=column) + ") older"  # noqa: S608
    for by_range, column in _ID.items()
}


def _by_id_range(after: int) -> bool:
    """Whether a page's statement lets the database plan by the id range (see _PAGE)."""
    return after > 0 or connection.vendor != "sqlite"


# A reply's report total (token_scale), by each vendor's own JSON operator.
_REPORT_TOTAL = {
    "postgresql": "(context_report::jsonb ->> 'total_tokens')",
    "sqlite": "json_extract(context_report, '$.total_tokens')",
}
# The oldest history message a reply's request held (the window's anchor), and the budget
# it was built for.
_REPORT_START = {
    "postgresql": "(context_report::jsonb -> 'messages' -> 0 ->> 'id'), "
    "(context_report::jsonb ->> 'budget'), (context_report::jsonb ->> 'strategy')",
    "sqlite": "json_extract(context_report, '$.messages[0].id'), "
    "json_extract(context_report, '$.budget'), json_extract(context_report, '$.strategy')",
}
_NO_START = (None, None, None)


def _bounds(conversation_id: int, before: int | None, after: int, limit: int, offset: int):
    bound = before if before is not None else 2**62
    return [conversation_id, Message.Status.FAILED, bound, after, limit, offset]


def _history_page(
    conversation_id: int, before: int | None, after: int, offset: int, limit: int = HISTORY_PAGE
):
    """Rows of ``_Row`` newer than ``after`` and older than ``before`` (None: no bound)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _PAGE[_by_id_range(after)], _bounds(conversation_id, before, after, limit, offset)
        )
        return [_Row(*row) for row in cursor.fetchall()]


def _report_totals(reply_ids: list[int]) -> dict[int, int | None]:
    """Each reply's context report total (its estimate of the prompt's tokens)."""
    total = _REPORT_TOTAL.get(connection.vendor)
    if total is None:  # another backend: the ORM's JSON lookup
        found = Message.objects.filter(pk__in=reply_ids).values_list(
            "pk", "context_report__total_tokens"
        )
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, {total} FROM {Message._meta.db_table} "  # noqa: S608 (own table)
                f"WHERE id IN ({', '.join(['%s'] * len(reply_ids))})",
                reply_ids,
            )
            found = cursor.fetchall()
    # SQLite gives the JSON number; PostgreSQL's ->> gives its text.
    return {pk: json.loads(value) if isinstance(value, str) else value for pk, value in found}


def _totals_and_start(reply_ids: list[int], last_reply: int) -> tuple[dict, tuple]:
    """``_report_totals`` of ``reply_ids`` and the raw ``_REPORT_START`` (start, budget) of
    ``last_reply`` in one statement: both are read on every turn of a conversation whose
    replies reported usage."""
    total, start = _REPORT_TOTAL.get(connection.vendor), _REPORT_START.get(connection.vendor)
    if total is None or start is None:  # another backend: the ORM's JSON lookups
        return _report_totals(reply_ids), _start_of(last_reply)
    ids = list(dict.fromkeys([*reply_ids, last_reply]))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {total}, {start} "  # noqa: S608 (own table)
            f"FROM {Message._meta.db_table} WHERE id IN ({', '.join(['%s'] * len(ids))})",
            ids,
        )
        found = cursor.fetchall()
    wanted = set(reply_ids)
    totals = {
        pk: json.loads(value) if isinstance(value, str) else value
        for pk, value, *_ in found
        if pk in wanted
    }
    previous = next((tuple(rest) for pk, _, *rest in found if pk == last_reply), _NO_START)
    return totals, previous


def _start_of(reply_id: int) -> tuple:
    found = Message.objects.filter(pk=reply_id).values_list(
        "context_report__messages__0__id", "context_report__budget", "context_report__strategy"
    )
    return tuple(next(iter(found), _NO_START))


def _anchor(previous: tuple, budget: int, strategy: str) -> int | None:
    """The previous request's first message, from its report's (start, budget, strategy);
    None when that request had a smaller ``budget`` or another ``strategy`` (changed since:
    what now fits is sent)."""
    value, before, before_strategy = previous
    try:
        if before is not None and int(before) < budget:
            return None
        if before_strategy is not None and before_strategy != strategy:
            return None
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _previous_start(rows: list[_Row], budget: int, strategy: str) -> int | None:
    """The oldest history message the last reply's request held (``rows``: newest first);
    None when that request had a smaller ``budget`` or another ``strategy``."""
    reply = next((row for row in rows if row.role == Message.Role.ASSISTANT), None)
    if reply is None:
        return None
    start = _REPORT_START.get(connection.vendor)
    if start is None:  # another backend: the ORM's JSON lookup
        return _anchor(_start_of(reply.id), budget, strategy)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {start} FROM {Message._meta.db_table} WHERE id = %s",  # noqa: S608
            [reply.id],
        )
        row = cursor.fetchone()
    return _anchor(tuple(row) if row else _NO_START, budget, strategy)


class _History:
    """Stored messages read newest-first, a page at a time, while they fit; when they stop
    fitting, the start moves in steps (``WINDOW_STEP_*``), not a message a turn."""

    def __init__(self, conversation, user_message, strategy, summary):
        self.conversation_id = conversation.pk
        self.before = user_message.pk if user_message is not None else None
        self.after = summary.covered_through if summary is not None else 0
        self.summary = summary
        self.strategy = strategy.value  # as the report names it
        self.budget: _Budget | None = None  # set before fill
        self.total_budget = 0  # the request's budget (the report's), set before fill
        self.max_messages = (
            SLIDING_WINDOW_MESSAGES if strategy is MemoryStrategy.SLIDING_WINDOW else None
        )
        self.kept: list[tuple[_Row, int]] = []
        self.offset = 0  # rows consumed from the newest end
        self.stopped_by = ""
        self.exhausted = False
        self.tokens = 0
        self.anchor: int | None = None  # the previous request's oldest message (read on fill)
        self.anchored = False  # the window stopped at the anchor: the same start as before
        self.room: int | None = None  # the first fill's tokens: what the history surely has
        self._rows: list[_Row] = []  # read so far, newest first
        self._complete = False  # the last read came back short: nothing older
        self._previous: tuple | None = None  # the last report's (start, budget), with the totals

    def _read_more(self) -> None:
        # Each read after the first doubles what is held: a window of a thousand short
        # messages costs five reads, not sixteen, each walking past the ones read before.
        limit = max(HISTORY_PAGE, len(self._rows))
        rows = _history_page(self.conversation_id, self.before, self.after, len(self._rows), limit)
        self._rows += rows
        self._complete = len(rows) < limit

    def report_totals(self, reply_ids: list[int]) -> dict[int, int | None]:
        """``token_scale``'s report totals, read with the anchor in the same statement."""
        last = next((row.id for row in self.recent() if row.role == Message.Role.ASSISTANT), None)
        if last is None:
            return _report_totals(reply_ids)
        totals, self._previous = _totals_and_start(reply_ids, last)
        return totals

    def recent(self) -> list[_Row]:
        """The newest page (read once: fill starts from it)."""
        if not self._rows and not self._complete:
            self._read_more()
        return self._rows[:HISTORY_PAGE]

    def peek(self) -> int:
        """How many messages the newest page holds."""
        return len(self.recent())

    def fill(self, limit: int) -> None:
        """Add older messages while they fit in ``limit`` more tokens, down to the anchor."""
        budget = self.budget
        assert budget is not None, "the budget is set before the history is filled"
        if self.room is None:
            self.room = limit
            if self._previous is None:
                self.anchor = _previous_start(self.recent(), self.total_budget, self.strategy)
            else:
                self.anchor = _anchor(self._previous, self.total_budget, self.strategy)
        while not self.exhausted and not self.anchored:
            if self.offset >= len(self._rows) and not self._complete:
                self._read_more()
            page = self._rows[self.offset :]
            costs = [budget.stored_cost(row.role, row.token_count) for row in page]
            room = None if self.max_messages is None else self.max_messages - len(self.kept)
            fits = select_recent(costs, limit, room, keep_newest=False)
            ids = [row.id for row in page[:fits]]
            if self.anchor in ids:  # the previous start: the same prefix as before
                fits, self.anchored = ids.index(self.anchor) + 1, True
            for row, cost in zip(page[:fits], costs[:fits], strict=True):
                self.kept.append((row, cost))
                budget.used += cost
                self.tokens += cost
                limit -= cost
            self.offset += fits
            if self.anchored and (fits < len(page) or not self._complete):
                self.stopped_by = "sliding window" if self.max_messages else "budget"
                return
            if fits < len(page):
                full = room is not None and fits == room
                self.stopped_by = "sliding window" if full else "budget"
                return
            if self._complete:
                self.exhausted = True
                self.stopped_by = ""

    def settle(self) -> None:
        """After the last fill: a window that had to move past the previous request's start
        moves a step further, so that its new start holds for the next turns. (With no such
        start, or one the summary now covers, the prefix is new anyway: the newest that fit.)"""
        budget = self.budget
        if self.anchored or self.exhausted or not self.stopped_by or budget is None:
            return
        if self.anchor is None or self.anchor <= self.after:
            return
        if self.stopped_by == "sliding window" and self.max_messages is not None:
            keep_count, keep_tokens = self.max_messages - WINDOW_STEP_MESSAGES, self.tokens
        else:
            room = min(self.tokens, self.room or self.tokens)
            keep_count, keep_tokens = len(self.kept), int(room * (1 - WINDOW_STEP_SHARE))
        while len(self.kept) > 1 and (len(self.kept) > keep_count or self.tokens > keep_tokens):
            _, cost = self.kept.pop()  # the oldest kept
            budget.used -= cost
            self.tokens -= cost
            self.offset -= 1

    def sent(self) -> tuple[list[MessageItem], list[dict[str, str]]]:
        """The kept messages, oldest first: as the report lists them, and as they are sent."""
        ordered = list(reversed(self.kept))
        entries = [message_item(row.id, row.role, cost) for row, cost in ordered]
        return entries, [{"role": row.role, "content": row.content} for row, _ in ordered]

    def left_out(self) -> MessagesLeftOut:
        count, reason = 0, ""
        if not self.exhausted and self.stopped_by:
            bounds = _bounds(
                self.conversation_id, self.before, self.after, LEFT_OUT_COUNT_CAP, self.offset
            )
            with connection.cursor() as cursor:
                cursor.execute(_LEFT_OUT[_by_id_range(self.after)], bounds)
                count = cursor.fetchone()[0]
            reason = self.stopped_by
        through = self.summary.covered_through if self.summary is not None else None
        return messages_left_out(count=count, reason=reason, summarised_through=through)
