"""The profile's API keys section: make a named key (its secret shown this once), revoke one.
Every key here is the signed-in user's: another's id is a 404."""

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from profiles import views
from profiles.forms import ApiKeyForm
from profiles.keys import key_create, key_revoke
from profiles.models import ApiKey
from web.access import login_required
from web.fragments import render_page_or_fragment
from web.requests import AuthenticatedHttpRequest


def _render(request: AuthenticatedHttpRequest, **extra) -> HttpResponse:
    # Never a redirect after a creation: the secret is shown in this response and nowhere else.
    response = render_page_or_fragment(
        request, views.TEMPLATE, views._context(request, **extra), "api_keys"
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required(default_next=views.PAGE)
@require_POST
@vary_on_headers("HX-Request")
def key_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST)
    if form.is_valid():
        try:
            made = key_create(user=request.user, name=form.cleaned_data["name"])
        except ValidationError as error:
            form.add_error(None, error)
        else:
            return _render(request, new_key=made)
    return _render(request, key_form=form)


@login_required(default_next=views.PAGE)
@require_POST
@vary_on_headers("HX-Request")
def key_revoke_view(request: AuthenticatedHttpRequest, key_id: int) -> HttpResponse:
    key = get_object_or_404(ApiKey, pk=key_id, user=request.user)
    key_revoke(key=key, actor=request.user)
    if request.htmx:
        return _render(request, key_revoked=key)
    return redirect(reverse(views.PAGE) + "#api-keys")
