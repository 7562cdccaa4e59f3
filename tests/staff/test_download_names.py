"""Download file names are built from safe characters only."""

import pytest
from django.contrib.auth import get_user_model

from staff.views.common import download_filename

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("memorychat", "zoë", "2026-01-02"), "memorychat-zoe-2026-01-02.json"),
        (("memorychat", 'a"b\r\nSet-Cookie: x=1', "d"), "memorychat-a-b-Set-Cookie-x-1-d.json"),
        (("memorychat", "../../etc/passwd"), "memorychat-etc-passwd.json"),
        (("memorychat", "用户"), "memorychat.json"),
        (("", "  "), "download.json"),
    ],
)
def test_names_keep_only_safe_characters(parts, expected):
    assert download_filename(*parts, extension="json") == expected


def test_the_export_of_a_user_with_an_odd_name_has_a_safe_file_name(staff_client):
    """A username written past the sign-up rules (an old import) cannot break the header."""
    odd = get_user_model().objects.create_user('zoë";x=.json')
    response = staff_client.get(f"/staff/users/{odd.pk}/export/")
    header = response["Content-Disposition"]
    assert header.startswith('attachment; filename="memorychat-zoe-x-json-')
    assert header.count('"') == 2 and header.endswith('.json"')


def test_report_downloads_have_safe_names(staff_client, world):
    response = staff_client.get(
        f"/staff/conversations/{world['conversation'].pk}/reports/minutes/download/"
    )
    assert response.status_code == 200
    name = response["Content-Disposition"].split('filename="', 1)[1].rstrip('"')
    assert all(ch.isascii() and (ch.isalnum() or ch in "-_.") for ch in name)
