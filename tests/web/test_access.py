"""web.access: login_required and staff_required, for pages and HTMX fragments."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails

from web.access import login_required, staff_required


def _request(user=None, *, path="/fragment/", method="get", **headers):
    request = getattr(RequestFactory(), method)(path, **headers)
    request.user = user or AnonymousUser()
    request.htmx = HtmxDetails(request)
    return request


@login_required
def view(request):
    return HttpResponse("the view")


@staff_required
def staff_view(request):
    return HttpResponse("staff only")


HTMX = {"HTTP_HX_REQUEST": "true"}


def test_it_runs_the_view_for_a_signed_in_user(alice):
    """Signed in: the view's own response."""
    assert view(_request(alice)).content == b"the view"


def test_it_redirects_an_anonymous_page_request_to_log_in():
    """Without HTMX: Django's 302 to the login page, next = the URL asked for."""
    response = view(_request(path="/fragment/?a=1"))
    assert response.status_code == 302
    assert response.url == "/accounts/login/?next=/fragment/%3Fa%3D1"


def test_it_client_redirects_an_anonymous_htmx_request_back_to_its_page():
    """With HTMX: HX-Redirect to the login page, next = the page the browser shows."""
    request = _request(**HTMX, HTTP_HX_CURRENT_URL="http://testserver/page/")
    response = view(request)
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/accounts/login/?next=/page/"


def test_it_ignores_a_current_url_on_another_site():
    """A foreign HX-Current-URL is never a next (no open redirect): the request's URL is."""
    response = view(_request(**HTMX, HTTP_HX_CURRENT_URL="https://evil.example/page/"))
    assert response["HX-Redirect"] == "/accounts/login/?next=/fragment/"


def test_default_next_stands_in_when_the_request_does_not_say():
    """An HTMX request without HX-Current-URL comes back to ``default_next``."""
    decorated = login_required(default_next="profiles:profile")(view)
    assert decorated(_request(method="post", **HTMX))["HX-Redirect"] == (
        "/accounts/login/?next=/profile/"
    )


def test_staff_required_sends_anonymous_visitors_to_log_in():
    """Built on login_required: the same redirects, for pages and fragments."""
    assert staff_view(_request()).status_code == 302
    assert staff_view(_request(**HTMX)).has_header("HX-Redirect")


@pytest.mark.parametrize("htmx", [{}, HTMX])
def test_staff_required_refuses_other_users(alice, htmx):
    """Signed in without is_staff: 403, page or fragment."""
    with pytest.raises(PermissionDenied):
        staff_view(_request(alice, **htmx))


def test_staff_required_lets_staff_in(staff):
    """Active staff get the view."""
    assert staff_view(_request(staff)).content == b"staff only"


def test_staff_required_refuses_inactive_staff(staff):
    """is_staff on a deactivated account is not enough."""
    staff.is_active = False
    with pytest.raises(PermissionDenied):
        staff_view(_request(staff))
