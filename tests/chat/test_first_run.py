"""`make run`'s first_run: the demo account is staff, never superuser."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from chat.management.commands.first_run import DEMO_USERNAME

pytestmark = pytest.mark.django_db


def test_the_demo_account_is_staff_not_superuser(settings, capsys):
    settings.DEBUG = True
    settings.MEMORYCHAT_CREATE_DEMO_USER = True
    call_command("first_run")
    demo = get_user_model().objects.get(username=DEMO_USERNAME)
    assert demo.is_staff and not demo.is_superuser
    assert demo.check_password("demo-password")
    assert "not a superuser" in capsys.readouterr().out


def test_it_creates_nothing_without_debug(settings):
    settings.DEBUG = False
    call_command("first_run")
    assert not get_user_model().objects.exists()
