"""The request the views see, typed: Django's, plus what django-htmx's middleware sets on every
request (``HtmxMiddleware`` in settings.MIDDLEWARE), as django-htmx's docs suggest."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """For annotations only: a view receives a plain ``HttpRequest`` carrying ``htmx``."""

    htmx: HtmxDetails
