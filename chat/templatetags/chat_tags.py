from django import template
from django.urls import reverse
from django.utils.safestring import mark_safe

from chat.rendering import render_stored
from memory.report import BlockItem, ContextReport, report_read

register = template.Library()


@register.filter
def markdown(text: str, conversation_id=None) -> str:
    """A stored message's Markdown rendered and sanitised by nh3 (see chat.rendering), so
    safe to insert; `conversation_id` keys its per-process cache."""
    return mark_safe(render_stored(text, conversation_id))  # noqa: S308 — sanitised by nh3


@register.filter
def percent(used, limit) -> int:
    try:
        return max(0, min(100, round(100 * int(used) / int(limit))))
    except (TypeError, ValueError, ZeroDivisionError):
        return 0


BLOCK_LABELS = {
    "system": "System prompt",
    "preferences": "Your preferences",
    "style": "Your learned style",
    "project": "Project instructions",
    "expertise": "Your level in this subject",
    "summary": "Rolling summary",
    "memory": "Memories",
    "history": "Earlier messages",
    "message": "Your message",
}
KIND_LABELS = {"action_item": "action item", "message": "earlier exchange"}


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """ "1 rule", "3 rules": words for people."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


@register.filter
def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, str(kind).replace("_", " "))


def _block_detail(block: BlockItem, report: ContextReport) -> str:
    name = block.get("name")
    if name in ("preferences", "style"):
        # "N rules", the block's own count (a report before the style had its own block
        # counted the learned lines under the preferences)
        number = "".join(ch for ch in str(block.get("detail", "")) if ch.isdigit())
        return counted(int(number), "rule") if number else ""
    expertise = report.get("expertise")
    if name == "expertise" and expertise:
        return ", ".join(
            f"{s.get('label')}: {s.get('level')}" for s in expertise.get("sources") or []
        )
    if name == "memory" and report.get("memories") is not None:
        return counted(len(report["memories"]), "memory", "memories")
    if name == "history":
        return counted(len(report.get("messages") or []), "message")
    if name == "message":
        return "the new message"
    if name in ("system", "summary"):
        number = "".join(ch for ch in str(block.get("detail", "")) if ch.isdigit())
        return f"version {number}" if number else ""
    return str(block.get("detail", ""))


@register.inclusion_tag("chat/_context_report.html")
def context_report(stored: dict | None, conversation=None) -> dict:
    """The "what the model saw" fragment, for a stored report of any schema version, in
    words for people (no internal names)."""
    return report_view(stored, conversation)


@register.inclusion_tag("chat/_context_report_body.html")
def context_report_body(stored: dict | None, conversation=None) -> dict:
    """The fragment's body alone: what the chat page fetches when its summary is opened."""
    return report_view(stored, conversation)


@register.inclusion_tag("chat/_context_report_lazy.html")
def context_report_lazy(message, number: int, total: int) -> dict:
    """The chat page's summary of a reply's report, the body loaded on demand from
    chat:context_report (an earlier version's report by its number)."""
    url = reverse("chat:context_report", args=[message.conversation_id, message.pk])
    return {"url": url if number == total else f"{url}?version={number}"}


def report_view(stored: dict | None, conversation=None) -> dict:
    """The report in words; given the ``conversation`` as it is now, ``view.scope`` says
    where the reply was written when that matters (a project, or a conversation moved since):
    a report is a record of what the model saw then, never rewritten by a later move."""
    from chat.models import Conversation

    report = report_read(stored)
    view: dict[str, object] = {}  # template context
    if report:
        view["scope"] = _scope_view(report, conversation)
        strategy = report.get("strategy", "")
        try:
            view["strategy"] = Conversation.Strategy(strategy).label.lower()
        except ValueError:
            view["strategy"] = str(strategy).replace("_", " ")
        view["blocks"] = [
            {
                "label": BLOCK_LABELS.get(block.get("name"), str(block.get("name", ""))),
                "tokens": block.get("tokens", 0),
                "detail": _block_detail(block, report),
            }
            for block in report.get("blocks", [])
        ]
    return {"report": report, "view": view}


def _scope_view(report, conversation) -> dict | None:
    scope = report.get("scope")
    if scope is None:
        return None  # an older report: where it was written was not recorded
    view = {"then": scope["name"] if scope["id"] is not None else "", "moved": False}
    if conversation is not None and conversation.project_id != scope["id"]:
        project = conversation.project
        view.update(moved=True, now=project.name if project is not None else "")
    return view if view["then"] or view["moved"] else None


@register.filter
def minutes(duration) -> int:
    """A timedelta in whole minutes, rounded up (the sign-in lockout page)."""
    return -(-int(duration.total_seconds()) // 60) if duration else 0


@register.inclusion_tag("chat/_shared_links.html")
def shared_links(user):
    """The user's shared conversations, each with its link and Stop sharing (the profile's
    "Your data")."""
    from chat.sharing import shares_of

    return {"shares": shares_of(user=user)}


@register.filter
def list_group(conversation) -> str:
    """The heading a conversation is listed under: Pinned, Today, Yesterday, Previous 7 days,
    then its month ("November 2026"), by its last activity in the current time zone."""
    from django.utils import timezone

    if conversation.pinned_at:
        return "Pinned"
    today = timezone.localdate()
    day = timezone.localdate(conversation.updated_at)
    age = (today - day).days
    if age <= 0:
        return "Today"
    if age == 1:
        return "Yesterday"
    if age <= 7:
        return "Previous 7 days"
    return day.strftime("%B %Y")
