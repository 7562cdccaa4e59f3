"""Every ``next`` a staff page takes is checked with url_has_allowed_host_and_scheme before it
becomes a link or a redirect: another site falls back to the list."""

import pytest

pytestmark = pytest.mark.django_db

FOREIGN = ["https://evil.example/", "//evil.example/x", "javascript:alert(1)", "/\\evil.example"]


@pytest.mark.parametrize("foreign", FOREIGN)
def test_the_edit_pages_cancel_link_keeps_to_this_site(staff_client, world, foreign):
    """GET /edit/?next=<elsewhere>: neither Cancel nor the hidden field points there."""
    fact = world["fact"]
    page = staff_client.get(f"/staff/memories/fact/{fact.pk}/edit/", {"next": foreign})
    html = page.content.decode()
    assert page.status_code == 200
    assert "evil.example" not in html and "javascript:" not in html
    assert 'href="/staff/memories/?kind=fact' in html


def test_the_edit_page_keeps_a_local_next(staff_client, world):
    fact = world["fact"]
    page = staff_client.get(
        f"/staff/memories/fact/{fact.pk}/edit/", {"next": "/staff/memories/?kind=fact&page=2"}
    )
    assert 'href="/staff/memories/?kind=fact&amp;page=2"' in page.content.decode()


@pytest.mark.parametrize("foreign", FOREIGN)
def test_the_bulk_delete_confirmation_keeps_to_this_site(staff_client, world, foreign):
    """The confirmation page's Cancel and hidden next never carry another site."""
    page = staff_client.post(
        "/staff/memories/fact/bulk-delete/", {"ids": [world["fact"].pk], "next": foreign}
    )
    html = page.content.decode()
    assert page.status_code == 200 and "Cancel" in html
    assert "evil.example" not in html and "javascript:" not in html


@pytest.mark.parametrize("foreign", FOREIGN)
def test_the_delete_confirmation_and_redirects_keep_to_this_site(staff_client, world, foreign):
    fact = world["fact"]
    page = staff_client.get(f"/staff/memories/fact/{fact.pk}/delete/", {"next": foreign})
    assert "evil.example" not in page.content.decode()
    response = staff_client.post(f"/staff/memories/fact/{fact.pk}/delete/", {"next": foreign})
    assert response.status_code == 302 and response.url.startswith("/staff/memories/")
