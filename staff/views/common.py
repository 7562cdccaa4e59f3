"""Small helpers shared by the staff views (page-or-fragment rendering is ``web.fragments``)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme

from web.downloads import attachment, download_filename

__all__ = ["attachment", "download_filename", "safe_next"]


def safe_next(request: HttpRequest, url: str | None, default: str) -> str:
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return default
