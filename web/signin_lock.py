"""The sign-in lock (django-axes' database handler, AXES_HANDLER): failures are counted per
account at an address (AXES_FAILURE_LIMIT) and per address alone (a higher limit,
AXES_ADDRESS_FAILURE_LIMIT), and a good sign-in clears only that account's failures at that
address.

Axes compares one number with one limit, and on success deletes every attempt its lockout
parameters match, the address's failures against other accounts included: an attacker with an
account of their own could then alternate guesses at a victim with their own sign-in and never
be locked. Hence this handler: AXES_LOCKOUT_PARAMETERS lists the pair first, the address
second, and `get_failures` reports the address as at the limit once it reaches its own."""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


def _total(attempts) -> int:
    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0


class PairAndAddressHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials=None) -> int:
        pair, address = self.get_user_attempts(request, credentials)
        failures = _total(pair)
        if _total(address) >= settings.AXES_ADDRESS_FAILURE_LIMIT:
            return max(failures, get_failure_limit(request, credentials))
        return failures

    def reset_user_attempts(self, request, credentials=None) -> int:
        """On a good sign-in: this account's failures from this address, nothing else."""
        count, _ = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
        ).delete()
        return count
