from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chat.jobs import queue_state
from chat.models import Conversation
from memory.models import ActionItem, Decision, Fact, SummaryRun
from staff.selectors.history import recent_changes
from web.access import staff_required


@staff_required
@require_GET
def home(request):
    """An overview: totals, the job queue and its worker, summary runs in progress or failed
    lately, the latest changes."""
    runs = (
        SummaryRun.objects.exclude(status=SummaryRun.Status.DONE)
        .select_related("conversation__user", "requested_by")
        .order_by("-created_at")[:10]
    )
    counts = (
        (get_user_model().objects.count(), "user", "users"),
        (Conversation.objects.count(), "conversation", "conversations"),
        (Fact.objects.count(), "fact", "facts"),
        (Decision.objects.count(), "decision", "decisions"),
        (ActionItem.objects.count(), "action item", "action items"),
    )
    context = {
        "totals": [(n, one if n == 1 else many) for n, one, many in counts],
        "runs": runs,
        "changes": recent_changes(limit=10),
        "jobs": queue_state(),
    }
    return render(request, "staff/home.html", context)
