"""Chat pages over HTTP: sign-up and login, the sidebar, conversation actions, ownership."""

import pytest
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create, message_create, reply_finish

pytestmark = pytest.mark.django_db


def test_anonymous_visitors_are_sent_to_log_in(client, conversation):
    """The chat and conversation pages need a signed-in user."""
    for url in ("/", conversation.get_absolute_url()):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith("/accounts/login/")


def test_an_expired_session_sends_an_htmx_fragment_request_to_log_in(client, conversation):
    """Anonymous HTMX requests for the sidebar get HX-Redirect to the login page, with the page
    the browser shows as next, not the login form swapped into the sidebar."""
    page = conversation.get_absolute_url()
    htmx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": f"http://testserver{page}"}
    search = client.get(page, {"q": "x"}, HTTP_HX_TARGET="sidebar-list", **htmx)
    rename = client.post(reverse("chat:rename", args=[conversation.pk]), {"title": "x"}, **htmx)
    for response in (search, rename):
        assert response.status_code == 200
        assert response["HX-Redirect"] == f"/accounts/login/?next={page}"
        assert b"<form" not in response.content


def test_without_htmx_an_anonymous_fragment_request_still_gets_a_302(client, conversation):
    """The same URLs without HTMX redirect to log in and back to the URL asked for."""
    url = reverse("chat:rename", args=[conversation.pk])
    response = client.post(url, {"title": "x"})
    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={url}"
    assert not response.has_header("HX-Redirect")


def test_sign_up_creates_an_account_and_signs_in(client):
    """The sign-up form makes a user and lands on the chat."""
    response = client.post(
        "/accounts/signup/",
        {
            "username": "carol",
            "password1": "a-long-passphrase-1",
            "password2": "a-long-passphrase-1",
        },
    )
    assert response.status_code == 302 and response.url == "/"
    assert client.get("/").status_code == 200


def test_sign_up_shows_errors_inline(client):
    """Mismatched passwords are reported on the form."""
    response = client.post(
        "/accounts/signup/", {"username": "carol", "password1": "x1", "password2": "x2"}
    )
    assert response.status_code == 200
    assert "password" in response.content.decode().lower()


def test_the_login_page_is_at_accounts_login(client):
    """Django's login view serves /accounts/login/."""
    assert client.get("/accounts/login/").status_code == 200


def test_the_chat_page_has_the_accessible_controls(alice_client):
    """A textbox labelled Message, first after the header; a Send button (Stop while a reply
    streams); the textbox does not cut pasted text at the limit (the page counts and says)."""
    html = alice_client.get("/").content.decode()
    assert '<label for="message-input" class="visually-hidden">Message</label>' in html
    assert ">Send</button>" in html
    main = html[html.index("<main") :]
    assert main.index('id="message-input"') < main.index('id="sidebar"')
    textarea = main[main.index("<textarea") : main.index("</textarea>")]
    assert "maxlength" not in textarea and "autofocus" in textarea


def test_the_sidebar_lists_conversations_most_recent_first(alice_client, alice, bob):
    """Only the user's own conversations, newest activity first."""
    older = conversation_create(user=alice, title="Older")
    newer = conversation_create(user=alice, title="Newer")
    conversation_create(user=bob, title="Bob's secret")
    message_create(conversation=newer, role="user", content="hi")
    html = alice_client.get("/").content.decode()
    assert html.index("Newer") < html.index("Older")
    assert "Bob&#x27;s secret" not in html and "Bob's secret" not in html
    assert older.get_absolute_url() in html


def test_search_filters_by_title(alice_client, alice):
    """The search box narrows the list (as an HTMX fragment)."""
    conversation_create(user=alice, title="Lisbon trip")
    conversation_create(user=alice, title="Tax return")
    response = alice_client.get(
        "/", {"q": "lisbon"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="sidebar-list"
    )
    html = response.content.decode()
    assert "Lisbon trip" in html and "Tax return" not in html
    assert "<html" not in html  # a fragment, not the whole page


def test_a_conversation_page_shows_its_history(alice_client, conversation):
    """User text is escaped; assistant Markdown is rendered and sanitised, code kept."""
    message_create(conversation=conversation, role="user", content="<b>bold?</b>")
    reply = message_create(
        conversation=conversation, role="assistant", content="", status="streaming"
    )
    reply_finish(
        reply=reply,
        status="complete",
        content=(
            "Here:\n\n```python\nprint('hi')\n```\n\n<script>alert(1)</script> "
            "[x](javascript:alert(1))"
        ),
    )
    html = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert "&lt;b&gt;bold?&lt;/b&gt;" in html
    assert 'data-role="user"' in html and 'data-role="assistant"' in html
    assert '<code class="language-python">' in html
    assert "<script>alert(1)</script>" not in html
    assert 'href="javascript' not in html


def test_starting_a_conversation_returns_its_url(alice_client, alice):
    """The page's script posts here on the first Send and pushes the URL it gets."""
    response = alice_client.post("/c/new/", HTTP_ACCEPT="application/json")
    assert response.status_code == 201
    conversation = Conversation.objects.get(user=alice)
    assert response.json() == {"id": conversation.pk, "url": f"/c/{conversation.pk}/"}


def test_a_temporary_conversation_can_be_started(alice_client, alice):
    """The temporary flag is kept."""
    response = alice_client.post("/c/new/", {"temporary": "on"})
    conversation = Conversation.objects.get(user=alice)
    assert response.url == conversation.get_absolute_url() and conversation.temporary


def test_rename_archive_and_delete(alice_client, conversation):
    """Each action changes the user's conversation."""
    alice_client.post(reverse("chat:rename", args=[conversation.pk]), {"title": "  Plans  "})
    conversation.refresh_from_db()
    assert conversation.title == "Plans"
    alice_client.post(reverse("chat:archive", args=[conversation.pk]), {"archived": "1"})
    conversation.refresh_from_db()
    assert conversation.archived
    assert "Plans" in alice_client.get("/", {"archived": "1"}).content.decode()
    confirm = alice_client.get(reverse("chat:delete", args=[conversation.pk]))
    assert "cannot be undone" in confirm.content.decode()
    alice_client.post(reverse("chat:delete", args=[conversation.pk]))
    assert not Conversation.objects.filter(pk=conversation.pk).exists()


def test_an_empty_title_is_refused_inline(alice_client, conversation):
    """Renaming to blanks keeps the old title and says why."""
    conversation.title = "Kept"
    conversation.save()
    response = alice_client.post(
        reverse("chat:rename", args=[conversation.pk]), {"title": "   "}, HTTP_HX_REQUEST="true"
    )
    conversation.refresh_from_db()
    assert conversation.title == "Kept"
    assert "cannot be empty" in response.content.decode() or "required" in (
        response.content.decode()
    )


@pytest.mark.parametrize("name", ["conversation", "history", "delete"])
def test_another_users_conversation_is_not_found_on_get(client, bob, conversation, name):
    """Bob gets 404 on Alice's conversation pages."""
    client.force_login(bob)
    url = reverse(f"chat:{name}", args=[conversation.pk])
    assert client.get(url, {"before": 1}).status_code == 404


@pytest.mark.parametrize("name", ["rename", "archive", "delete", "settings"])
def test_another_users_conversation_cannot_be_changed(client, bob, conversation, name):
    """Bob's POSTs to Alice's conversation change nothing."""
    client.force_login(bob)
    response = client.post(
        reverse(f"chat:{name}", args=[conversation.pk]),
        {"title": "pwned", "archived": "1", "strategy": "token_limit"},
    )
    assert response.status_code == 404
    conversation.refresh_from_db()
    assert conversation.title == "" and not conversation.archived
    assert conversation.strategy == "summary_buffer"


def test_settings_change_the_strategy_and_budget(alice_client, conversation):
    """The conversation's window strategy and budget are editable, and validated."""
    url = reverse("chat:settings", args=[conversation.pk])
    alice_client.post(url, {"strategy": "token_limit", "context_budget": "2000"})
    conversation.refresh_from_db()
    assert (conversation.strategy, conversation.context_budget) == ("token_limit", 2000)
    response = alice_client.post(
        url, {"strategy": "token_limit", "context_budget": "10"}, HTTP_HX_REQUEST="true"
    )
    assert "between 512" in response.content.decode()
    conversation.refresh_from_db()
    assert conversation.context_budget == 2000


def test_posts_need_a_csrf_token(conversation, alice):
    """CSRF protection is on for the chat's forms."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(reverse("chat:rename", args=[conversation.pk]), {"title": "x"})
    assert response.status_code == 403


def test_load_earlier_pages_through_long_histories(alice_client, conversation):
    """The page shows the newest 50; older ones come in pages."""
    for i in range(60):
        message_create(conversation=conversation, role="user", content=f"message {i}")
    html = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert "message 59" in html and "message 9<" not in html and "Load earlier" in html
    oldest_shown = conversation.messages.order_by("id")[10]
    older = alice_client.get(
        reverse("chat:history", args=[conversation.pk]), {"before": oldest_shown.pk}
    ).content.decode()
    assert "message 0" in older and "message 9" in older


def test_deleting_a_conversation_can_delete_its_own_memories(alice_client, alice, conversation):
    """The confirmation offers the memories that came only from this conversation."""
    from memory.models import Fact

    message = message_create(conversation=conversation, role="user", content="I like tea")
    fact = Fact.objects.create(
        user=alice, conversation=conversation, text="likes tea", dedupe_key="t"
    )
    fact.source_messages.add(message)
    url = reverse("chat:delete", args=[conversation.pk])
    page = alice_client.get(url).content.decode()
    assert "Also forget what was learned here" in page and "1 memory came only" in page
    alice_client.post(url, {"forget": "1"})
    assert not Fact.objects.exists()


def test_deleting_a_conversation_unticked_keeps_its_memories(alice_client, alice, conversation):
    """Without "forget too" the memories stay (no longer linked to the deleted conversation)."""
    from memory.models import Fact

    Fact.objects.create(user=alice, conversation=conversation, text="likes tea", dedupe_key="t")
    alice_client.post(reverse("chat:delete", args=[conversation.pk]))
    assert Fact.objects.get().conversation is None


def test_the_login_page_says_how_to_sign_in_to_the_demo_account_in_debug(client, settings):
    """DEBUG on: the demo account's name and password; DEBUG off: nothing of it."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("demo", password="demo-password")
    settings.DEBUG = True
    html = client.get("/accounts/login/").content.decode()
    assert "<strong>demo</strong>" in html and "<strong>demo-password</strong>" in html
    settings.DEBUG = False
    assert "demo-password" not in client.get("/accounts/login/").content.decode()


def test_error_pages_are_in_the_sites_layout(alice_client, settings):
    """A missing page is a friendly 404 with the site's header and a way back."""
    settings.DEBUG = False
    response = alice_client.get("/c/999999/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "This page is not here" in html and 'class="topbar"' in html
    assert "Back to your conversations" in html


def test_the_favicon_is_served(client):
    assert 'rel="icon"' in client.get("/accounts/login/").content.decode()
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response.url.endswith("favicon.svg")


def test_temporary_conversations_are_badged_and_not_created_before_the_first_message(
    alice_client, alice
):
    """ "New temporary conversation" opens a blank temporary page: nothing is stored until
    the first message; the list badges temporary conversations."""
    html = alice_client.get("/", {"temporary": "1"}).content.decode()
    assert "New temporary conversation</h1>" in html and 'data-temporary="1"' in html
    assert not Conversation.objects.exists()
    conversation_create(user=alice, title="Secret plan", temporary=True)
    html = alice_client.get("/").content.decode()
    item = html[html.index("Secret plan") :]
    assert item.index('class="badge temporary"') < item.index("</li>")


def test_the_sidebar_keeps_the_pages_links_after_an_action(alice_client, alice):
    """An HTMX archive from a conversation page returns the list with links to that page
    (not to the action's URL), highlighting it, in the view the user was looking at."""
    shown = conversation_create(user=alice, title="Shown")
    other = conversation_create(user=alice, title="Other")
    response = alice_client.post(
        reverse("chat:archive", args=[other.pk]),
        {"archived": "1", "archived_view": ""},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{shown.get_absolute_url()}",
    )
    html = response.content.decode()
    assert f'href="{shown.get_absolute_url()}?archived=1"' in html
    assert "/archive/" not in html.split('class="archive-toggle"')[1].split("</p>")[0]
    assert 'aria-current="page"' in html and "Other" not in html


def test_renaming_the_open_conversation_sends_its_heading_and_title(alice_client, alice):
    conversation = conversation_create(user=alice, title="Before")
    response = alice_client.post(
        reverse("chat:rename", args=[conversation.pk]),
        {"title": "After"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{conversation.get_absolute_url()}",
    )
    html = response.content.decode()
    assert '<h1 id="conversation-title" hx-swap-oob="true">After</h1>' in html
    assert "<title>After · memorychat</title>" in html
