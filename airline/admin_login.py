"""Back-office login throttling (docs/operators/back-office.md): django-axes's database handler
with two limits where axes has one.

Axes counts failures per entry of AXES_LOCKOUT_PARAMETERS and compares the largest with
one AXES_FAILURE_LIMIT. A wrong password for one username from one address is common (a
typo); many usernames from one address is password spraying, which a per-username count
never sees (30 usernames, one guess each: 30 answers of 200). So a username is locked at
an address after AXES_FAILURE_LIMIT failures, and the whole address, for every username,
after ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT failures of any usernames.
"""

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum


class UserAndAddressLimits(AxesDatabaseHandler):
    """Axes's database handler; a failure count that reaches the lockout limit when the
    username at the address, or the address alone, has reached its own limit."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        # One queryset per entry of AXES_LOCKOUT_PARAMETERS, in its order (settings.py):
        # [["username", "ip_address"], "ip_address"].
        by_user, by_address = (
            attempts.aggregate(failures=Sum("failures_since_start"))["failures"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        )
        if by_address >= settings.ADMIN_LOGIN_ADDRESS_FAILURE_LIMIT:
            return max(by_user, settings.AXES_FAILURE_LIMIT)
        return by_user
