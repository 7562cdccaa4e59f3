"""The sidebar lists a page of conversations at a time (a user with thousands, e.g. after an
import): pinned first, the next page on scroll or "Show more", each project's few under it."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from chat.models import Conversation
from chat.selectors import PROJECT_GROUP_SIZE, SIDEBAR_PAGE_SIZE
from projects.services import project_create

pytestmark = pytest.mark.django_db
MORE = reverse("chat:sidebar_page")


def many(user, count, **fields):
    now = timezone.now()
    return Conversation.objects.bulk_create(
        Conversation(
            user=user,
            title=f"Chat {n:04d}",
            updated_at=now - timedelta(hours=n),
            **fields,
        )
        for n in range(count)
    )


def listed(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<li class="[^"]*" data-conversation="(\d+)"', html)]


def next_url(html: str) -> str | None:
    found = re.search(r'<p class="sidebar-more"><a class="button" href="([^"]+)"', html)
    return found.group(1).replace("&amp;", "&") if found else None


def test_the_first_page_is_bounded_and_more_brings_the_rest_without_gaps(alice_client, alice):
    made = many(alice, SIDEBAR_PAGE_SIZE * 2 + 7)
    pinned = Conversation.objects.filter(pk__in=[made[-1].pk, made[-2].pk])
    pinned.update(pinned_at=timezone.now())
    page = alice_client.get("/").text
    first = listed(page)
    assert len(first) == SIDEBAR_PAGE_SIZE
    assert set(first[:2]) == {made[-1].pk, made[-2].pk}  # pinned first
    assert first.index(made[-1].pk) < first.index(made[0].pk)
    seen, url = list(first), next_url(page)
    pages = 1
    while url:
        fragment = alice_client.get(url, headers={"HX-Request": "true"})
        assert fragment.status_code == 200
        seen += listed(fragment.text)
        url, pages = next_url(fragment.text), pages + 1
        assert pages < 10
    assert pages == 3
    assert len(seen) == len(set(seen)) == len(made)  # no duplicate, no gap
    newest_first = [c.pk for c in sorted(made[:-2], key=lambda c: c.updated_at, reverse=True)]
    assert seen[2:] == newest_first
    # A heading is not repeated across pages: "Pinned" once, each date group once.
    assert page.count('<h2 class="list-group">Pinned</h2>') == 1


def test_the_title_search_pages_too(alice_client, alice):
    many(alice, SIDEBAR_PAGE_SIZE + 3)
    page = alice_client.get("/", {"q": "Chat 00"}).text  # Chat 0000-0052: 53 matches
    assert len(listed(page)) == SIDEBAR_PAGE_SIZE
    rest = alice_client.get(next_url(page), headers={"HX-Request": "true"}).text
    assert len(listed(rest)) == 3 and next_url(rest) is None


def test_a_project_lists_its_first_few_with_a_link_to_the_rest(alice_client, alice):
    garden = project_create(user=alice, name="Garden")
    many(alice, PROJECT_GROUP_SIZE + 4, project=garden)
    page = alice_client.get("/").text
    group = page[page.index(f'data-project="{garden.pk}"') :]
    assert len(listed(group[: group.index("</ul>")])) == PROJECT_GROUP_SIZE
    assert f'<a href="{garden.get_absolute_url()}">4 more in Garden</a>' in group
    assert listed(page) == listed(group[: group.index("</ul>")])  # none again outside it
    total = PROJECT_GROUP_SIZE + 4
    assert f'{total}<span class="visually-hidden"> conversations</span>' in group


def test_a_conversation_bumped_mid_scroll_neither_shifts_nor_repeats_the_rest(alice_client, alice):
    """Keyset paging: the next page starts after the last one listed, wherever the rows above
    it went meanwhile (an offset would repeat the last one when a later one moves up, and
    skip one when a listed one is deleted)."""
    made = many(alice, SIDEBAR_PAGE_SIZE * 2)
    page = alice_client.get("/").text
    first = listed(page)
    # While the user scrolls: a conversation of the next page gets a reply (to the top), and
    # a pinned one from far below.
    bumped, pinned = made[SIDEBAR_PAGE_SIZE + 3], made[-1]
    Conversation.objects.filter(pk=bumped.pk).update(updated_at=timezone.now())
    Conversation.objects.filter(pk=pinned.pk).update(pinned_at=timezone.now())
    rest = listed(alice_client.get(next_url(page), headers={"HX-Request": "true"}).text)
    assert not set(first) & set(rest)  # nothing listed twice
    expected = [c.pk for c in made[SIDEBAR_PAGE_SIZE:] if c.pk not in (bumped.pk, pinned.pk)]
    assert rest == expected  # none skipped: the two moved above, where a reload shows them


def test_paging_goes_on_inside_the_pinned_ones(alice_client, alice):
    made = many(alice, SIDEBAR_PAGE_SIZE + 10)
    now = timezone.now()
    for n, conversation in enumerate(made[: SIDEBAR_PAGE_SIZE + 5]):
        conversation.pinned_at = now - timedelta(minutes=n % 3)  # ties: by activity then id
    Conversation.objects.bulk_update(made, ["pinned_at"])
    page = alice_client.get("/").text
    seen, url = listed(page), next_url(page)
    while url:
        fragment = alice_client.get(url, headers={"HX-Request": "true"}).text
        seen, url = seen + listed(fragment), next_url(fragment)
    ordered = Conversation.objects.filter(user=alice).order_by(
        F("pinned_at").desc(nulls_last=True), "-updated_at", "-id"
    )
    assert seen == [c.pk for c in ordered]


def test_a_malformed_cursor_is_refused(alice_client, alice):
    for bad in ("12", "x.1.2", "-1.2.3", "1.2.x", "1." + "9" * 40 + ".3", "\u0661.2.3"):
        assert alice_client.get(MORE, {"after": bad}).status_code == 400


def test_another_users_page_shows_none_of_theirs(alice_client, alice, bob):
    theirs = many(bob, SIDEBAR_PAGE_SIZE + 5)
    after = f".{10**17}.1"  # a cursor in the year 5138: every row of theirs is after it
    response = alice_client.get(MORE, {"after": after})
    assert response.status_code == 200 and listed(response.text) == []
    assert alice_client.get(MORE, {"current": theirs[0].pk}).status_code == 404
    assert alice_client.get(MORE, {"current": "x"}).status_code == 404


def test_the_project_groups_read_as_often_with_many_projects_as_with_two(
    alice, django_assert_num_queries
):
    from chat.selectors import sidebar_groups

    def groups():
        return sidebar_groups(user=alice, query="", archived=False, current_project_id=None)

    def add_projects(start, count):
        for n in range(start, start + count):
            project = project_create(user=alice, name=f"Project {n}")
            many(alice, PROJECT_GROUP_SIZE + 2, project=project)

    add_projects(0, 2)
    with django_assert_num_queries(3):  # the counts, the projects, their first conversations
        listed_two = groups()[0]
    add_projects(2, 5)
    with django_assert_num_queries(3):
        listed_seven = groups()[0]
    assert len(listed_two) == 2 and len(listed_seven) == 7
    for group in listed_seven:
        assert len(group.conversations) == PROJECT_GROUP_SIZE
        assert group.total == PROJECT_GROUP_SIZE + 2
        assert {c.project_id for c in group.conversations} == {group.project.pk}
        # each group's newest first, as the list is ordered
        assert [c.title for c in group.conversations] == [
            f"Chat {n:04d}" for n in range(PROJECT_GROUP_SIZE)
        ]


def test_the_projects_a_conversation_may_move_to_are_one_statement(
    alice, django_assert_num_queries
):
    from chat.selectors import move_targets

    for n in range(4):
        project_create(user=alice, name=f"Project {n}")
    with django_assert_num_queries(1):
        targets = move_targets(user=alice)
    assert [t.name for t in targets] == [f"Project {n}" for n in range(4)]
