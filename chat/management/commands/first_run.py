"""Say how to sign in on a fresh database (and, in DEBUG, create a demo account)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-password"  # noqa: S105 (development only, printed to the console)


class Command(BaseCommand):
    help = "On a database with no users: create a demo account (DEBUG) or say how to add one."

    def handle(self, *args, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        if settings.DEBUG and settings.MEMORYCHAT_CREATE_DEMO_USER:
            # Staff (the back office), not superuser: a well-known password must not also
            # open the Django admin's every model and permission.
            User.objects.create_user(DEMO_USERNAME, password=DEMO_PASSWORD, is_staff=True)
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created a demo staff account, not a superuser (DEBUG is on): "
                    f"username '{DEMO_USERNAME}', password '{DEMO_PASSWORD}'."
                )
            )
        else:
            self.stdout.write(
                "No accounts yet. Create the first (staff) account with:\n"
                "  .venv/bin/python manage.py createsuperuser\n"
                "or sign up at /accounts/signup/."
            )
