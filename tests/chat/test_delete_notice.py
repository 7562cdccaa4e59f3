"""After a conversation is deleted, the page it lands on says so (a notice, not a crash)."""

import pytest
from django.urls import reverse

from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def test_the_next_page_says_the_conversation_was_deleted(alice_client, alice):
    conversation = conversation_create(user=alice, title="Zanzibar plans")
    response = alice_client.post(reverse("chat:delete", args=[conversation.pk]))
    assert response.status_code == 302
    page = alice_client.get(response.headers["Location"]).content.decode()
    assert '<div id="page-notice" class="shown" role="status">Deleted “Zanzibar plans”.' in page
    again = alice_client.get("/").content.decode()
    assert "Zanzibar" not in again  # said once: not again on the next page
