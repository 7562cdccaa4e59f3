"""Reports for a conversation or a user: shown (rendered, sanitised) and downloadable."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from chat.rendering import render_markdown
from staff.reports import REPORTS, ReportKind
from staff.selectors.conversations import conversation_get
from staff.selectors.reports import report_data_for_conversation, report_data_for_user
from staff.selectors.users import user_get
from staff.views.common import attachment, download_filename
from web.access import staff_required


def _report(slug: str) -> ReportKind:
    if slug not in REPORTS:
        raise Http404("No such report.")
    return REPORTS[slug]


def _download(markdown: str, filename: str) -> HttpResponse:
    return attachment(markdown, content_type="text/markdown; charset=utf-8", filename=filename)


def _filename(report: ReportKind, scope: str) -> str:
    return download_filename(report.slug, scope, timezone.localdate().isoformat(), extension="md")


def _page(request, report: ReportKind, markdown: str, **context) -> HttpResponse:
    return render(
        request,
        "staff/report.html",
        {
            "report": report,
            "reports": REPORTS.values(),
            "markdown": markdown,
            # render_markdown escapes raw HTML and sanitises the result with nh3.
            "html": mark_safe(render_markdown(markdown)),  # noqa: S308
            **context,
        },
    )


@staff_required
@require_GET
def conversation_report(request, conversation_id: int, report: str):
    report_kind = _report(report)
    conversation = conversation_get(conversation_id=conversation_id)
    markdown = report_kind.build(report_data_for_conversation(conversation=conversation))
    return _page(request, report_kind, markdown, conversation=conversation)


@staff_required
@require_GET
def conversation_report_download(request, conversation_id: int, report: str):
    report_kind = _report(report)
    conversation = conversation_get(conversation_id=conversation_id)
    markdown = report_kind.build(report_data_for_conversation(conversation=conversation))
    return _download(markdown, _filename(report_kind, f"conversation-{conversation.pk}"))


@staff_required
@require_GET
def user_report(request, user_id: int, report: str):
    report_kind = _report(report)
    target = user_get(user_id=user_id)
    markdown = report_kind.build(report_data_for_user(user=target))
    return _page(request, report_kind, markdown, target=target)


@staff_required
@require_GET
def user_report_download(request, user_id: int, report: str):
    report_kind = _report(report)
    target = user_get(user_id=user_id)
    markdown = report_kind.build(report_data_for_user(user=target))
    return _download(markdown, _filename(report_kind, f"user-{target.pk}"))
