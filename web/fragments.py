"""Page or fragment: one view and one template (``{% partialdef %}``) serve both the full page
and the parts an HTMX request swaps in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from web.requests import HtmxHttpRequest


def render_fragments(
    request: HttpRequest, template: str, context: dict, partial: str, *oob: str
) -> HttpResponse:
    """``partial`` of ``template`` (swapped into the request's target), followed by the ``oob``
    partials rendered with ``oob`` set, which the template turns into ``hx-swap-oob``."""
    html = render_to_string(f"{template}#{partial}", context, request=request)
    for name in oob:
        html += render_to_string(f"{template}#{name}", {**context, "oob": True}, request=request)
    return HttpResponse(html)


def render_page_or_fragment(
    request: HtmxHttpRequest,
    template: str,
    context: dict,
    partial: str,
    *oob: str,
    target: str | None = None,
) -> HttpResponse:
    """The whole page; for an HTMX request, only its fragments (see ``render_fragments``).

    With ``target``, only an HTMX request aimed at that element id gets the fragments: others
    (a boosted link, a form swapping a different element) get the page."""
    if request.htmx and (target is None or request.htmx.target == target):
        return render_fragments(request, template, context, partial, *oob)
    return render(request, template, context)
