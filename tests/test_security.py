"""Security across the whole site: every URL's access rules, CSRF on every POST, and stored
XSS through every place user, model or memory text is shown."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from chat.services import conversation_create, message_create, reply_finish
from memory.models import ActionItem, Decision, Fact, MemoryEvent
from memory.services import summary_run_start
from profiles.keys import key_create
from profiles.services import profile_update_preferences
from projects.services import project_create
from userdata.models import ChatImport

pytestmark = pytest.mark.django_db

# Every named URL, by who may use it. A new URL fails test_every_url_is_classified until it is
# added here (and so covered by the access and CSRF tests below).
PUBLIC = {
    "login",
    "logout",
    "signup",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "favicon",
    "healthz",  # counts and ages only (tests/jobs/test_health.py)
    "userdata:goodbye",
    "chat:shared",
}
SIGNED_IN = {
    "password_change",
    "password_change_done",
    "chat:home",
    "chat:new",
    "chat:search",
    "chat:sidebar_page",  # the requester's own list; another's ?current= is 404
    "profiles:profile",
    "profiles:preferences",
    "profiles:memory",
    "profiles:reset_style",
    "profiles:domains",
    "profiles:email",
    "profiles:email_confirm",
    "profiles:keys",
    "memory:page",
    "memory:add",
    "projects:list",
    "projects:new",
    "userdata:export",
    "userdata:forget_everything",
    "userdata:account_delete",
    "userdata:chat_import",
}
OWNED = {
    "chat:conversation",
    "chat:history",
    "chat:rename",
    "chat:archive",
    "chat:pin",
    "chat:delete",
    "chat:settings",
    "chat:model",
    "chat:reply_version",
    "chat:context_report",
    "chat:branch_keep",
    "chat:share",
    "chat:share_revoke",
    "chat:export",
    "memory:row",
    "memory:edit",
    "memory:pin",
    "memory:done",
    "memory:delete",
    "memory:keep",
    "memory:discard",
    "memory:move",
    "memory:event_undo",
    "userdata:forget_conversation",
    "userdata:forget_branch",
    "profiles:key_revoke",
    "projects:detail",
    "projects:edit",
    "projects:archive",
    "projects:delete",
    "projects:forget",
    "projects:knowledge",
    "projects:briefing",
    "projects:move",
    "userdata:chat_import_progress",
}


# Opened by a personal API key only (api.views): never by a session, so no CSRF surface.
KEY_ONLY = {"api:models", "api:chat_completions"}
# Served beside Django by the ASGI app (config.asgi.BESIDE_DJANGO), by a personal API key
# only (mcp_server.endpoint): the MCP server.
ASGI_KEY_ONLY = {"/mcp"}


def url_names() -> set[str]:
    names: set[str] = set()

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace == "admin":
                    continue  # Django's admin: staff/superuser checks of its own
                walk(
                    pattern.url_patterns,
                    f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix,
                )
            elif isinstance(pattern, URLPattern) and pattern.name:
                names.add(prefix + pattern.name)

    walk(get_resolver().url_patterns)
    return names


def staff_names() -> set[str]:
    return {n for n in url_names() if n.startswith("staff:")}


def test_every_url_is_classified():
    """No URL escapes the access tests: each is public, signed-in, owned or staff."""
    assert url_names() - PUBLIC - SIGNED_IN - OWNED - KEY_ONLY - staff_names() == set()


def test_every_path_served_beside_django_is_classified():
    """The ASGI app's own paths escape Django's URL list: each must be listed here too."""
    from config.asgi import BESIDE_DJANGO

    assert set(BESIDE_DJANGO) == ASGI_KEY_ONLY


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", sorted(ASGI_KEY_ONLY))
async def test_asgi_key_only_paths_refuse_anonymous_and_signed_in_sessions(alice, staff, path):
    """A session (even staff's) opens nothing there: 401, through the real ASGI app."""
    import httpx
    from asgiref.sync import sync_to_async

    from config.asgi import application

    @sync_to_async
    def cookie(user):
        web = Client()
        web.force_login(user)
        return {"Cookie": f"sessionid={web.cookies['sessionid'].value}"}

    transport = httpx.ASGITransport(app=application)
    for user in (None, alice, staff):
        headers = await cookie(user) if user else {}
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as web:
            for method in ("GET", "POST", "DELETE"):
                response = await web.request(method, path, headers=headers, json={})
                assert response.status_code == 401, (path, method, user)
                assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("name", sorted(KEY_ONLY))
def test_key_only_urls_refuse_anonymous_and_signed_in_sessions(client, alice, staff, name):
    """A session (even staff's) opens no key-only URL: 401 in OpenAI's shape, nothing done."""
    for user in (None, alice, staff):
        if user is not None:
            client.force_login(user)
        for response in (client.get(reverse(name)), client.post(reverse(name))):
            assert response.status_code == 401, (name, user)
            assert response.json()["error"]["code"] == "invalid_api_key"


@pytest.fixture
def world(alice, bob, staff):
    conversation = conversation_create(user=alice, title="Alice's plans")
    message = message_create(conversation=conversation, role="user", content="hello")
    fact = Fact.objects.create(user=alice, conversation=conversation, text="x", dedupe_key="x")
    fact.source_messages.add(message)
    event = MemoryEvent.objects.create(
        user=alice, conversation=conversation, message=message, items=[]
    )
    key = key_create(user=alice, name="laptop").key
    project = project_create(user=alice, name="Garden", instructions="Metric units.")
    chat_import = ChatImport.objects.create(user=alice, source="chatgpt", total=1)
    return {
        "project": project,
        "chat_import": chat_import,
        "conversation": conversation,
        "message": message,
        "fact": fact,
        "event": event,
        "key": key,
    }


def owned_url(name, world):
    if name == "profiles:email_confirm":
        return reverse(name, args=["token"])
    if name == "profiles:key_revoke":
        return reverse(name, args=[world["key"].pk])
    if name == "memory:event_undo":
        return reverse(name, args=[world["event"].pk])
    if name.startswith("projects:") and name != "projects:move":
        return reverse(name, args=[world["project"].pk])
    if name == "userdata:chat_import_progress":
        return reverse(name, args=[world["chat_import"].pk])
    if name.startswith("memory:"):
        return reverse(name, args=["fact", world["fact"].pk])
    if name == "chat:export":
        return reverse(name, args=[world["conversation"].pk, "markdown"])
    if name == "chat:reply_version":
        return reverse(name, args=[world["conversation"].pk, world["message"].pk, 1])
    if name == "userdata:forget_branch":
        return reverse(name, args=[world["conversation"].pk, world["message"].pk])
    if name in ("chat:context_report", "chat:branch_keep"):
        return reverse(name, args=[world["conversation"].pk, world["message"].pk])
    return reverse(name, args=[world["conversation"].pk])


@pytest.mark.parametrize("name", sorted(OWNED))
def test_another_user_gets_404_on_every_owned_url(client, bob, world, name):
    """Bob cannot see or change Alice's conversation by any URL or method."""
    client.force_login(bob)
    url = owned_url(name, world)
    assert client.get(url, {"before": 1}).status_code in (404, 405)
    assert client.post(url, {"title": "x"}).status_code in (404, 405)  # 405: GET-only page


@pytest.mark.parametrize("name", sorted(OWNED | SIGNED_IN - {"password_change_done"}))
def test_anonymous_visitors_are_sent_to_log_in(client, world, name):
    """Every page of a signed-in user redirects anonymous visitors to the login page."""
    url = (
        owned_url(name, world)
        if name in OWNED or name == "profiles:email_confirm"
        else reverse(name)
    )
    for response in (client.get(url, {"before": 1}), client.post(url)):
        assert response.status_code in (302, 405), (url, response.status_code)
        if response.status_code == 302:
            assert response.url.startswith("/accounts/login/")


def test_staff_pages_refuse_users_and_anonymous(client, alice, world):
    """The dashboard's entry points: login for anonymous, 403 for a plain user."""
    for name in ("staff:home", "staff:users", "staff:memories", "staff:changes", "staff:import"):
        url = reverse(name)
        assert client.get(url).url.startswith("/accounts/login/")
    client.force_login(alice)
    for name in ("staff:home", "staff:users", "staff:memories", "staff:changes", "staff:import"):
        assert client.get(reverse(name)).status_code == 403


def post_urls(world, alice, staff):
    """(user, url) for every URL that accepts POST."""
    conversation, fact = world["conversation"], world["fact"]
    run = summary_run_start(conversation=conversation)
    first = fact.history.earliest("history_date").history_id
    get_only = {
        "chat:history",
        "chat:conversation",
        "chat:reply_version",
        "chat:context_report",
        "chat:export",
        "memory:row",
        "projects:detail",
        "projects:knowledge",
        "projects:briefing",
    }
    urls = [(alice, owned_url(n, world)) for n in OWNED - get_only]
    urls += [
        (alice, reverse(n))
        for n in (
            "chat:new",
            "profiles:preferences",
            "profiles:memory",
            "profiles:reset_style",
            "profiles:domains",
            "profiles:keys",
            "memory:add",
            "projects:new",
            "profiles:email",
            "password_change",
            "userdata:forget_everything",
            "userdata:account_delete",
            "userdata:chat_import",
        )
    ]
    urls += [(None, reverse(n)) for n in ("login", "signup", "password_reset", "logout")]
    staff_args = {
        "staff:user_preferences": [alice.pk],
        "staff:user_style": [alice.pk],
        "staff:user_key_revoke": [alice.pk, world["key"].pk],
        "staff:user_data_delete": [alice.pk],
        "staff:user_password": [alice.pk],
        "staff:user_reset_link": [alice.pk],
        "staff:import": [],
        "staff:resummarise": [conversation.pk],
        "staff:project_resummarise": [world["project"].pk],
        "staff:memory_bulk_delete": ["fact"],
        "staff:memory_edit": ["fact", fact.pk],
        "staff:memory_delete": ["fact", fact.pk],
        "staff:memory_restore": ["fact", fact.pk, first],
        "staff:fact_pin": [fact.pk],
        "staff:fact_supersede": [fact.pk],
    }
    urls += [(staff, reverse(n, args=a)) for n, a in staff_args.items()]
    assert run
    return urls


def test_every_post_needs_a_csrf_token(alice, staff, world):
    """A forged cross-site POST is refused everywhere (403), signed in or not."""
    for user, url in post_urls(world, alice, staff):
        client = Client(enforce_csrf_checks=True)
        if user is not None:
            client.force_login(user)
        response = client.post(url, {"title": "forged"})
        assert response.status_code == 403, url


# -- stored XSS ---------------------------------------------------------------------------

PAYLOADS = [
    "<script>alert('xss')</script>",
    '<img src=x onerror="alert(1)">',
    '"><svg onload=alert(1)>',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">link</a>',
    "<iframe src=//evil.example></iframe>",
    "{{ request }} {% csrf_token %}",
]


class Unsafe(HTMLParser):
    """Collects anything executable that is not the app's own markup."""

    def __init__(self):
        super().__init__()
        self.problems: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}={value}>")
            if (
                name in ("href", "src")
                and value
                and value.strip().lower().startswith("javascript:")
            ):
                self.problems.append(f"<{tag} {name}={value}>")
        if tag in ("iframe", "svg", "object", "embed"):
            self.problems.append(f"<{tag}>")
        if tag == "script" and not dict(attrs).get("src"):
            self.problems.append("inline <script>")

    def handle_data(self, data):
        if "alert(" in data and self.lasttag == "script":
            self.problems.append(data)


def assert_safe(html: str, where: str):
    parser = Unsafe()
    parser.feed(html)
    assert parser.problems == [], (where, parser.problems)


@pytest.fixture
def poisoned(alice, staff):
    """Alice's data with every payload in every field that pages show."""
    text = "\n\n".join(PAYLOADS)
    conversation = conversation_create(user=alice, title=PAYLOADS[2])
    message = message_create(conversation=conversation, role="user", content=text)
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="",
        status="streaming",
        reply_to=message,
    )
    report = {
        "total_tokens": 10,
        "limit": 100,
        "budget": 200,
        "reserve": 100,
        "model": "m",
        "strategy": "token_limit",
        "blocks": [{"name": PAYLOADS[0], "tokens": 1, "detail": PAYLOADS[1]}],
        "memories": [
            {
                "kind": "fact",
                "text": text,
                "score": 1,
                "why": PAYLOADS[2],
                "date": "",
                "source": PAYLOADS[0],
                "message_ids": [],
            }
        ],
        "preferences": {"text": text, "sources": []},
        "messages": [],
        "messages_left_out": {"count": 0, "reason": ""},
    }
    reply_finish(reply=reply, content=text, status="complete", context_report=report)
    fact = Fact.objects.create(
        user=alice, conversation=conversation, text=text, subject=PAYLOADS[1], dedupe_key="p"
    )
    waiting = Fact.objects.create(
        user=alice, conversation=conversation, text=text, state="suggested", dedupe_key="s"
    )
    MemoryEvent.objects.create(
        user=alice,
        conversation=conversation,
        message=reply,
        items=[
            {"kind": "fact", "id": pk, "action": "added", "text": text, "before": None, "after": 1}
            for pk in (fact.pk, waiting.pk, 10**9)
        ],
    )
    Decision.objects.create(
        user=alice, conversation=conversation, what=text, rationale=PAYLOADS[0], dedupe_key="p"
    )
    ActionItem.objects.create(
        user=alice, conversation=conversation, what=text, owner=PAYLOADS[1], dedupe_key="p"
    )
    profile_update_preferences(
        user=alice, preferences={"custom_instructions": PAYLOADS[0], "terminology": PAYLOADS[1]}
    )
    project = project_create(
        user=alice, name=PAYLOADS[2][:100], description=text, instructions=text
    )
    in_project = conversation_create(user=alice, title=PAYLOADS[1], project=project)
    Decision.objects.create(
        user=alice, conversation=in_project, project=project, what=text, context=PAYLOADS[1],
        alternatives=PAYLOADS, stakeholders=PAYLOADS, dedupe_key="q",
    )  # fmt: skip
    ActionItem.objects.create(
        user=alice, conversation=in_project, project=project, what=text, owner=PAYLOADS[0],
        dedupe_key="q",
    )  # fmt: skip
    Fact.objects.create(
        user=alice, conversation=in_project, project=project, text=text, dedupe_key="q"
    )
    conversation.poisoned_project = project
    return conversation


def test_payloads_are_inert_on_every_page_that_shows_them(client, alice, staff, poisoned):
    """User text, model text, memory text, titles and profile fields render as text."""
    client.force_login(alice)
    reply = poisoned.messages.get(role="assistant")
    report = reverse("chat:context_report", args=[poisoned.pk, reply.pk])
    pages = ["/", poisoned.get_absolute_url(), reverse("profiles:profile"), reverse("memory:page")]
    project = poisoned.poisoned_project
    pages += [reverse("projects:list"), project.get_absolute_url()]
    pages += [reverse("projects:knowledge", args=[project.pk])]
    pages += [
        reverse("projects:edit", args=[project.pk]),
        reverse("projects:delete", args=[project.pk]),
        reverse("projects:forget", args=[project.pk]),
    ]
    pages += [f"/?project={project.pk}", project.conversations.get().get_absolute_url()]
    for url in pages:
        assert_safe(client.get(url).content.decode(), url)
    for headers in ({}, {"HX-Request": "true"}):  # the report's page and its fetched fragment
        response = client.get(report, headers=headers)
        assert response.status_code == 200 and "report-totals" in response.text
        assert_safe(response.content.decode(), report)
    client.force_login(staff)
    staff_pages = [
        reverse("staff:users"),
        reverse("staff:user", args=[alice.pk]),
        reverse("staff:conversation", args=[poisoned.pk]),
        reverse("staff:memories"),
        reverse("staff:memories") + "?kind=decision",
        reverse("staff:memories") + "?kind=action_item",
        reverse("staff:changes"),
        reverse("staff:conversation_report", args=[poisoned.pk, "minutes"]),
        reverse("staff:user_report", args=[alice.pk, "briefing"]),
    ]
    for url in staff_pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_safe(response.content.decode(), url)
