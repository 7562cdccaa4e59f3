"""Account recovery for a user who lost their password: staff set a new one or mail Django's
reset link (``profiles.account``; each recorded in the admin log the user page lists)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from profiles.account import staff_send_reset, staff_set_password
from staff.selectors import users as selectors
from staff.views.users import TEMPLATE, user_page_context
from web.access import staff_required


@staff_required
@require_POST
def user_password(request, user_id: int):
    target = selectors.user_get(user_id=user_id)
    form = SetPasswordForm(target, request.POST)
    if not form.is_valid():
        context = user_page_context(request, target, password_form=form)
        return render(request, TEMPLATE, context, status=400)
    staff_set_password(
        actor=request.user, target=target, password=form.cleaned_data["new_password1"]
    )
    messages.success(request, f"Password set for {target.get_username()}. Tell them in person.")
    return redirect(f"{reverse('staff:user', args=[target.pk])}#account")


@staff_required
@require_POST
def user_reset_link(request, user_id: int):
    target = selectors.user_get(user_id=user_id)
    outcome = staff_send_reset(request, actor=request.user, target=target)
    if outcome.sent:
        messages.success(request, f"A reset link was mailed to {target.email}.")
    else:
        messages.error(request, outcome.reason)
    return redirect(f"{reverse('staff:user', args=[target.pk])}#account")
