"""GET /profile/: login, ownership, the learned style and its chart, escaping."""

import pytest
from django.urls import reverse

from profiles.models import UserProfile
from profiles.services import SNAPSHOT_EVERY, profile_update_preferences
from profiles.style import METRICS
from tests.profiles.samples import CASUAL, FORMAL

pytestmark = pytest.mark.django_db

URL = "/profile/"


def test_it_is_mounted_at_profile():
    """The app's URLs are included at /profile/."""
    assert reverse("profiles:profile") == URL


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("get", "profiles:profile"),
        ("post", "profiles:preferences"),
        ("post", "profiles:memory"),
        ("get", "profiles:reset_style"),
        ("post", "profiles:reset_style"),
    ],
)
def test_it_redirects_anonymous_users_to_login(client, method, name):
    """Every profile URL sends an anonymous visitor to the login page."""
    url = reverse(name)
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={url}"


def test_it_sends_an_expired_htmx_session_to_the_login_page(client):
    """An anonymous HTMX request gets a client redirect, not a login form inside a section."""
    response = client.post(reverse("profiles:preferences"), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={URL}"


def test_an_expired_htmx_session_comes_back_to_the_page_it_was_on(client):
    """The client redirect's next is the page the browser shows (HX-Current-URL)."""
    page = f"{URL}?tab=style"
    response = client.post(
        reverse("profiles:memory"),
        {"memory_mode": "off"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{page}",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={URL}%3Ftab%3Dstyle"


def test_without_htmx_an_expired_session_still_gets_a_302(client):
    """A plain form post from an anonymous visitor is redirected, not client-redirected."""
    response = client.post(reverse("profiles:memory"), {"memory_mode": "off"})
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={reverse('profiles:memory')}"
    assert not response.has_header("HX-Redirect")


def test_it_shows_defaults_without_creating_a_profile(alice_client, alice):
    """A first visit shows the page and writes nothing."""
    response = alice_client.get(URL)
    assert response.status_code == 200
    assert b"Learned communication style" in response.content
    assert b"Learned from 0 of your messages" in response.content
    assert not UserProfile.objects.filter(user=alice).exists()


def test_it_shows_only_the_signed_in_users_data(alice_client, alice, bob, observe):
    """Alice sees her own learned style and preferences, never Bob's."""
    observe(alice, CASUAL, times=3)
    observe(bob, FORMAL, times=7)
    profile_update_preferences(user=bob, preferences={"custom_instructions": "Bob's secret"})
    profile_update_preferences(user=alice, preferences={"custom_instructions": "Alice's note"})
    response = alice_client.get(URL)
    content = response.content.decode()
    assert "Learned from 3 of your messages" in content
    assert "Alice&#x27;s note" in content
    assert "Bob&#x27;s secret" not in content
    assert response.context["profile"].user == alice


def test_it_draws_each_metric_over_time(alice_client, alice, observe):
    """With snapshots, each metric gets a server-rendered SVG polyline."""
    observe(alice, FORMAL, times=SNAPSHOT_EVERY * 2)
    content = alice_client.get(URL).content.decode()
    style = content[content.index('id="learned-style"') : content.index('id="domains"')]
    assert style.count("<polyline") == len(METRICS)
    assert "<script" not in content.split("<main>")[1]


def test_it_says_when_there_is_no_history_yet(alice_client):
    """Without observed messages there is no chart, and the page says so."""
    content = alice_client.get(URL).content.decode()
    assert "<polyline" not in content
    assert "not enough history yet" in content


def test_it_shows_what_the_assistant_is_told(alice_client, alice, observe):
    """The prompt preview shows the instructions and where each line comes from."""
    observe(alice, CASUAL, times=10)
    profile_update_preferences(user=alice, preferences={"response_format": "bullets"})
    content = alice_client.get(URL).content.decode()
    assert "What the assistant is told" in content
    assert "Format: prefer bullet points." in content
    assert "learned formality" in content


def test_it_escapes_user_text(alice_client, alice):
    """Custom instructions are shown escaped, never as markup."""
    profile_update_preferences(
        user=alice, preferences={"custom_instructions": "<script>alert(1)</script>"}
    )
    content = alice_client.get(URL).content.decode()
    assert "<script>alert(1)</script>" not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content


def test_it_offers_the_forms_with_and_without_htmx(alice_client):
    """Each form posts normally (action) and through HTMX (hx-post) to the same URL."""
    content = alice_client.get(URL).content.decode()
    for name in ("profiles:preferences", "profiles:memory"):
        url = reverse(name)
        assert f'action="{url}"' in content
        assert f'hx-post="{url}"' in content
    assert f'hx-post="{reverse("profiles:reset_style")}"' in content
    assert "hx-confirm=" in content
