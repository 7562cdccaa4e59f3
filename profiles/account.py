"""Account recovery: the email address a password reset is sent to, and what staff may do for a
user who lost their password.

An address is stored only once its owner opened the link sent to it: the link carries a
signed token (``django.core.signing``) naming the account, the address, and the address the
account had when it was sent, so it cannot set an address nobody confirmed, be used for
another account, or undo a later change. Every mail sent here counts against the per-address
password-reset limit (the group ``chat.views.ThrottledPasswordReset`` counts in), so none of
these forms can flood an inbox. What staff do is recorded in Django's admin log (``LogEntry``),
which the staff user page lists.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.contenttypes.models import ContentType
from django.core import signing
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django_ratelimit.core import is_ratelimited

SALT = "profiles.account.email"
CONFIRM_DAYS = 3
# The group the public reset form counts an address typed in (chat.views).
RESET_GROUP = "password-reset-account"
CLIENT_GROUP = "password-reset-address"  # and per client address


class EmailLinkInvalid(Exception):
    """The link is damaged, too old, for another account, or overtaken by a later change."""


def normalise_email(address: str) -> str:
    return " ".join(address.split()).casefold()


def mail_limited(request, address: str, *, per_client: bool = False) -> bool:
    """True when ``address`` had PASSWORD_RESETS_PER_HOUR mails this hour, or (``per_client``)
    the client's network PASSWORD_RESETS_PER_ADDRESS; counts this one."""
    limited = False
    if limit := settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR:
        key = normalise_email(address)
        limited = is_ratelimited(
            request, group=RESET_GROUP, key=lambda group, request: key,
            rate=f"{limit}/h", increment=True,
        )  # fmt: skip
    if per_client and (limit := settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS):
        limited = (
            is_ratelimited(request, group=CLIENT_GROUP, key="ip", rate=f"{limit}/h", increment=True)
            or limited
        )
    return limited


def email_token(*, user, address: str) -> str:
    return signing.dumps({"u": user.pk, "e": address, "was": user.email}, salt=SALT)


def email_confirmation_send(request, *, user, address: str) -> bool:
    """Send the confirmation link for ``address``; False when the hourly limit refused it."""
    if mail_limited(request, address, per_client=True):
        return False
    token = email_token(user=user, address=address)
    link = request.build_absolute_uri(reverse("profiles:email_confirm", args=[token]))
    context = {"user": user, "link": link, "days": CONFIRM_DAYS, "site": request.get_host()}
    send_mail(
        subject=f"Confirm your email address on {request.get_host()}",
        message=render_to_string("registration/email_confirm_email.txt", context),
        from_email=None,
        recipient_list=[address],
    )
    return True


def email_confirm(*, user, token: str) -> str:
    """Store the address ``token`` confirms on ``user``; returns it."""
    try:
        data = signing.loads(token, salt=SALT, max_age=CONFIRM_DAYS * 86400)
    except signing.BadSignature as error:  # SignatureExpired is one
        raise EmailLinkInvalid from error
    if data.get("u") != user.pk or data.get("was") != user.email:
        raise EmailLinkInvalid
    user.email = data["e"]
    user.save(update_fields=["email"])
    return user.email


def _log(*, actor, target, message: str) -> None:
    LogEntry.objects.log_actions(
        user_id=actor.pk,
        queryset=[target],
        action_flag=CHANGE,
        change_message=message,
        single_object=True,
    )


def account_log(*, target, limit: int = 20) -> list[LogEntry]:
    """What staff did to ``target``'s account, newest first."""
    return list(
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(target), object_id=str(target.pk)
        )
        .select_related("user")
        .order_by("-action_time")[:limit]
    )


def staff_set_password(*, actor, target, password: str) -> None:
    """Staff set ``target``'s password (already validated by the form). The user's other
    sessions end with it: their session hash no longer matches."""
    target.set_password(password)
    target.save(update_fields=["password"])
    _log(actor=actor, target=target, message="Password set by staff.")


class _OneUserReset(PasswordResetForm):
    """Django's reset mail, for one account only (the form's own lookup takes every account
    with the address)."""

    def __init__(self, target):
        super().__init__(data={"email": target.email})
        self.target = target

    def get_users(self, email):
        if self.target.is_active and self.target.has_usable_password():
            yield self.target


@dataclass(frozen=True)
class ResetOutcome:
    sent: bool
    reason: str = ""


def staff_send_reset(request, *, actor, target) -> ResetOutcome:
    """Mail ``target`` Django's reset link, within the per-address hourly limit."""
    if not target.email:
        return ResetOutcome(False, "This account has no email address: set a password instead.")
    if not target.is_active:
        return ResetOutcome(False, "This account is inactive.")
    if mail_limited(request, target.email):
        return ResetOutcome(
            False, "Too many password reset mails for this address this hour. Try later."
        )
    form = _OneUserReset(target)
    form.is_valid()
    form.save(
        request=request,
        use_https=request.is_secure(),
        subject_template_name="registration/password_reset_subject.txt",
        email_template_name="registration/password_reset_email.html",
    )
    _log(actor=actor, target=target, message=f"Password reset link sent to {target.email}.")
    return ResetOutcome(True)


def email_link_notice(request, *, user, address: str) -> None:
    """Send the confirmation link and say so (or why not) on the next page."""
    if email_confirmation_send(request, user=user, address=address):
        messages.info(
            request,
            f"We sent a link to {address}: open it within {CONFIRM_DAYS} days to confirm the "
            "address. Until then your account has no email for a password reset.",
        )
    else:
        messages.error(
            request, f"Too many mails to {address} this hour: try again later from your profile."
        )
