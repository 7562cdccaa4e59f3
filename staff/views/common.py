"""Small helpers shared by the staff views."""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme


def fragment(request: HttpRequest, template: str, partial: str) -> str:
    """The whole page, or only ``partial`` for an HTMX request."""
    return f"{template}#{partial}" if request.htmx else template


def render_partials(request: HttpRequest, template: str, context: dict, *names: str) -> str:
    """Several partials of one template, concatenated (the later ones swapped out of band)."""
    html = ""
    for index, name in enumerate(names):
        html += render_to_string(
            f"{template}#{name}", {**context, "oob": index > 0}, request=request
        )
    return html


def safe_next(request: HttpRequest, url: str | None, default: str) -> str:
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return default
