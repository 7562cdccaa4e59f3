"""Every page of the site as a new user and a staff member see it, for the layout tests
(tests/e2e/test_layout.py) and the screenshot pass (tests/e2e/shots.py): a production-like
server (``DEBUG`` off, static files collected, so the friendly 403/404/500 pages are the real
ones), a staff member with memories and an edit history, and a plain user."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.live_server import ServerProcess, create_user, manage, project_env

STAFF, STAFF_PASSWORD = "sofia", "sofia-password-1"
PLAIN, PLAIN_PASSWORD = "nora", "nora-password-1"
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# A long reply with every block the renderer styles: headings, lists, a wide table, a quote,
# code with a long line, and a long unbroken word.
LONG_REPLY = """## A week in Lisbon

Here is a plan that keeps **mornings free** and puts the museums on rainy days.

1. **Book** the flights early: prices rise after the *first* week of March
2. Find a hotel near `Alfama`, or in Baixa if you want flat streets
3. Buy a Viva Viagem card for trams, buses and the ferry

- Pack light shoes
- Bring a rain jacket
  - a small one fits in a day bag

| Day | Morning | Afternoon | Evening | Cost (EUR) |
|:----|:--------|:----------|:--------|-----------:|
| Mon | Castelo de São Jorge | Alfama walk | Fado in a small tavern | 45.00 |
| Tue | Belém tower and monastery | Pastéis de Belém | Sunset at the river | 32.50 |
| Wed | Gulbenkian museum | Park Eduardo VII | Bairro Alto dinner | 60.00 |

> Remember the 28 tram is crowded after ten: take it early or walk.

```python
def total(prices: list[float], rate: float = 1.23) -> float:
    # every price with VAT, rounded to the cent for the receipt at the end of the trip
    return round(sum(price * rate for price in prices), 2)
```

A link without spaces: https://example.org/a/very/long/path/that/does/not/break/anywhere/at/all/ever

That is all: **enjoy the trip!**
"""

SEED = """
from django.contrib.auth import get_user_model
from memory.models import ActionItem, Decision, Fact
from memory.services.edits import memory_update
User = get_user_model()
sofia = User.objects.get(username={staff!r})
Fact.objects.get_or_create(user=sofia, text="Sofia lives in Porto.",
                           defaults={{"category": "personal"}})
Fact.objects.get_or_create(user=sofia, text="Sofia prefers window seats on long flights.",
                           defaults={{"category": "preference"}})
fact, _ = Fact.objects.get_or_create(user=sofia, text="Sofia is learning Portuguese.",
                                     defaults={{"category": "other"}})
memory_update(memory=fact, actor=sofia,
              changes={{"text": "Sofia is learning European Portuguese."}})
from datetime import date, timedelta
from chat.services import conversation_create, message_create
from projects.services import project_create
trip = project_create(user=sofia, name="Lisbon trip", description="A week in Lisbon in March.",
                      instructions="Prices in euros. Suggest walking routes over taxis.")
planning = conversation_create(user=sofia, title="Planning the Lisbon week", project=trip)
said = message_create(conversation=planning, role="user",
                      content="We fly in March: the flights are cheaper then.")
decision, _ = Decision.objects.get_or_create(user=sofia, what="Travel to Lisbon in March",
                               defaults={{"rationale": "Cheaper flights", "dedupe_key": "lisbon",
                                          "context": "Flights double in April",
                                          "alternatives": ["April", "June"],
                                          "stakeholders": ["Sofia", "Marco"],
                                          "project": trip, "conversation": planning}})
decision.source_messages.add(said)
book, _ = ActionItem.objects.get_or_create(user=sofia, what="Book the flights to Lisbon",
                                 defaults={{"owner": "Sofia", "dedupe_key": "book-flights",
                                            "project": trip, "conversation": planning,
                                            "due_date": date.today() + timedelta(days=7)}})
hotel, _ = ActionItem.objects.get_or_create(user=sofia, what="Book a hotel in Alfama",
                                 defaults={{"owner": "Marco", "dedupe_key": "hotel",
                                            "project": trip, "conversation": planning,
                                            "due_date": date.today() + timedelta(days=14)}})
hotel.depends_on.add(book)
Fact.objects.get_or_create(user=sofia, text="The trip is for two people.",
                           defaults={{"category": "project", "project": trip}})
from projects.models import Project
garden, _ = Project.objects.get_or_create(user=sofia, name="Garden")
Fact.objects.get_or_create(user=sofia, text="The tomatoes grow in the east bed.",
                           defaults={{"category": "project", "project": garden}})
from chat import branches
getting_around = conversation_create(user=sofia, title="Getting around Lisbon")
ferry = message_create(conversation=getting_around, role="user",
                       content="Is the ferry to Cacilhas worth it for the view?")
message_create(conversation=getting_around, role="assistant", reply_to=ferry,
               content="Yes: the crossing takes ten minutes and shows the whole waterfront.")
branches.hide_from(ferry)  # the question edited: the ferry's branch kept, hidden
trams = message_create(conversation=getting_around, role="user", branch_of_id=ferry.pk,
                       content="Which trams go from Baixa to Belém?")
message_create(conversation=getting_around, role="assistant", reply_to=trams,
               content="The 15E from Praça da Figueira, every ten minutes or so.")
by_ferry, _ = Fact.objects.get_or_create(user=sofia, text="Sofia wants to cross to Cacilhas.",
                                         defaults={{"category": "preference",
                                                    "conversation": getting_around}})
by_ferry.source_messages.add(ferry)  # learned only in the hidden branch
print("FACT", fact.pk, "USER", sofia.pk, "PROJECT", trip.pk,
      "BRANCHED", getting_around.pk, "QUESTION", ferry.pk)
"""


@dataclass
class Site:
    server: ServerProcess
    env: dict[str, str]
    staff_id: int
    fact_id: int
    project_id: int
    branched_id: int  # a conversation with an edited question: two branches
    branch_question_id: int  # the question of its hidden branch, with a fact learned there

    @property
    def url(self) -> str:
        return self.server.url


def start_site(upstream_url: str, work: Path | None = None) -> Site:
    """Migrate, collect static files, seed the users and start daphne with ``DEBUG`` off."""
    work = Path(work or tempfile.mkdtemp(prefix="memorychat-site-"))
    env = project_env(
        strip=("DATABASE_URL", "REDIS_", "SECRET_KEY", "DEBUG"),
        DEBUG="false",
        SECRET_KEY="layout-tests-secret-key-" + "x" * 40,
        DATABASE_URL=f"sqlite:///{work / 'site.sqlite3'}",
        STATIC_ROOT=str(work / "static"),
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        SECURE_HSTS_SECONDS="0",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=upstream_url,
        OPENAI_MAX_RETRIES="0",
    )
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", "-v0", env=env)
    create_user(env, STAFF, STAFF_PASSWORD, staff=True)
    create_user(env, PLAIN, PLAIN_PASSWORD)
    out = manage("shell", "-c", SEED.format(staff=STAFF), env=env)
    found = re.search(r"FACT (\d+) USER (\d+) PROJECT (\d+) BRANCHED (\d+) QUESTION (\d+)", out)
    server = ServerProcess(env, log_path=work / "server.log").start()
    return Site(
        server=server,
        env=env,
        staff_id=int(found[2]),
        fact_id=int(found[1]),
        project_id=int(found[3]),
        branched_id=int(found[4]),
        branch_question_id=int(found[5]),
    )


def log_in(page, site: Site, username: str = STAFF, password: str = STAFF_PASSWORD) -> None:
    page.goto(f"{site.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{site.url}/")


def staff_pages(site: Site, conversation_id: int) -> dict[str, str]:
    """The staff pages, by a name for people, to their paths."""
    user, fact = site.staff_id, site.fact_id
    return {
        "staff-home": "/staff/",
        "staff-users": "/staff/users/",
        "staff-user": f"/staff/users/{user}/",
        "staff-memories": "/staff/memories/",
        "staff-memory-edit": f"/staff/memories/fact/{fact}/edit/",
        "staff-memory-history": f"/staff/memories/fact/{fact}/history/",
        "staff-conversation": f"/staff/conversations/{conversation_id}/",
        "staff-changes": "/staff/changes/",
        "staff-report": f"/staff/users/{user}/reports/briefing/",
        "staff-import": "/staff/import/",
    }


def user_pages(site: Site, conversation_id: int) -> dict[str, str]:
    """The signed-in user's own pages beyond the chat, by a name for people, to their paths."""
    project_id, branched, question = site.project_id, site.branched_id, site.branch_question_id
    return {
        "projects": "/projects/",
        "project": f"/projects/{project_id}/",
        "project-knowledge": f"/projects/{project_id}/knowledge/",
        "project-edit": f"/projects/{project_id}/edit/",
        "project-delete": f"/projects/{project_id}/delete/",
        "project-forget": f"/projects/{project_id}/forget/",
        "project-new-chat": f"/?project={project_id}",
        "profile": "/profile/",
        "memory": "/memory/",
        "conversation-delete": f"/c/{conversation_id}/delete/",
        "conversation-forget": f"/c/{conversation_id}/forget/",
        "forget-everything": "/account/forget/",
        "account-delete": "/account/delete/",
        "import": "/account/import/",
        "search": "/search/?q=week+lisbon",
        "share": f"/c/{conversation_id}/share/",
        "forget-branch": f"/c/{branched}/branch/{question}/forget/",
        "branch-link": f"/c/{branched}/?highlight={question}#m{question}",  # "Keep this branch"
    }


def server_error_html(site: Site) -> str:
    """The 500 page exactly as Django's handler renders it (no URL of the site fails on
    purpose): ``django.views.defaults.server_error`` run in the site's own settings."""
    code = (
        "from django.test import RequestFactory; from django.views.defaults import server_error; "
        "import sys; sys.stdout.write('<<' + server_error(RequestFactory().get('/'))"
        ".content.decode() + '>>')"
    )
    out = manage("shell", "-c", code, env=site.env)
    return out[out.index("<<") + 2 : out.rindex(">>")]
