"""The requests the views see, typed: Django's, plus what django-htmx's middleware sets on every
request (``HtmxMiddleware`` in settings.MIDDLEWARE), as django-htmx's docs suggest; and, behind
``web.access.login_required``, a signed-in user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

if TYPE_CHECKING:  # the auth models are not importable before the apps are ready
    from django.contrib.auth.models import User


class HtmxHttpRequest(HttpRequest):
    """For annotations only: a view receives a plain ``HttpRequest`` carrying ``htmx``."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """For annotations only: what a view behind ``login_required`` receives."""

    user: User
