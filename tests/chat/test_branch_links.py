"""A link to a message of a hidden branch (a memory's source, ``?highlight=``; a search
result, ``?found=``) opens the conversation on the branch that holds it, a branch hidden inside
another included, for that page alone: opening a link writes nothing. "Keep this branch" (a
POST) then shows it for good, and the conversation's open tabs swap it in as "1 / 2" would."""

import re

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from django.urls import reverse

from chat.models import Message
from chat.services import conversation_create, turn_begin
from tests.chat.helpers import connected, frames_until
from tests.chat.test_branches import THREE_EXCHANGES_SHOWN, edit, shown, three_exchanges

PORTO = ["Plan a trip to Porto", "Porto has port wine."]


def nested_branches(conversation) -> dict[str, Message]:
    """Lisbon → trams → pastries, the second question then edited (buses), the first then
    edited (Porto): the trams branch is hidden inside the hidden Lisbon one."""
    exchanges = three_exchanges(conversation)
    edit(conversation, exchanges[1][0], "What about buses?", "Buses go everywhere.")
    porto, _ = edit(conversation, exchanges[0][0], "Plan a trip to Porto", "Porto has port wine.")
    return {"lisbon": exchanges[0][0], "tram_reply": exchanges[1][1], "porto": porto}


def article(page: str, message: Message) -> str:
    start = page.index(f'id="m{message.pk}"')
    return page[page.rindex("<article", 0, start) : page.index("</article>", start)]


def message_ids(page: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<article class="message[^"]*" id="m(\d+)"', page)]


def keep_url(conversation, message: Message) -> str:
    return reverse("chat:branch_keep", args=[conversation.pk, message.pk])


@pytest.fixture
def client(alice):
    client = Client()
    client.force_login(alice)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("parameter", ["highlight", "found"])
def test_a_link_into_a_branch_hidden_inside_another_shows_it_and_writes_nothing(
    conversation, client, parameter
):
    made = nested_branches(conversation)
    assert shown(conversation) == PORTO
    target = made["tram_reply"]

    page = client.get(conversation.get_absolute_url(), {parameter: target.pk}).text

    assert [Message.objects.get(pk=pk).content for pk in message_ids(page)] == THREE_EXCHANGES_SHOWN
    assert "is-source" in article(page, target)
    assert "Porto has port wine." not in page
    assert f'action="{keep_url(conversation, target)}"' in page and "Keep this branch" in page
    assert ('name="found"' in page) == (parameter == "found")  # kept, the same note shows
    assert shown(conversation) == PORTO  # stored: the branch the user left


@pytest.mark.django_db
@pytest.mark.parametrize("parameter", ["highlight", "found"])
def test_keep_this_branch_shows_for_good_what_the_link_showed(conversation, client, parameter):
    made = nested_branches(conversation)
    target = made["tram_reply"]
    url = conversation.get_absolute_url()
    previewed = message_ids(client.get(url, {parameter: target.pk}).text)

    data = {"found": "1"} if parameter == "found" else {}
    response = client.post(keep_url(conversation, target), data)

    assert response.status_code == 302
    assert response.url == f"{url}?{parameter}={target.pk}#m{target.pk}"
    assert shown(conversation) == THREE_EXCHANGES_SHOWN
    page = client.get(response.url).text
    assert message_ids(page) == previewed
    assert "is-source" in article(page, target) and "Keep this branch" not in page
    # Kept again, or a message shown: nothing changes.
    client.post(keep_url(conversation, target), data)
    assert shown(conversation) == THREE_EXCHANGES_SHOWN


@pytest.mark.django_db
def test_a_link_to_a_message_of_another_conversation_shows_and_keeps_nothing(
    conversation, alice, client
):
    made = nested_branches(conversation)
    other = conversation_create(user=alice)
    target = made["tram_reply"]
    response = client.get(other.get_absolute_url(), {"highlight": target.pk})
    assert response.status_code == 200 and "Keep this branch" not in response.text
    client.post(keep_url(other, target))
    assert shown(conversation) == PORTO


@pytest.mark.django_db
def test_only_the_owner_keeps_a_branch(conversation, bob):
    made = nested_branches(conversation)
    client = Client()
    client.force_login(bob)
    response = client.post(keep_url(conversation, made["tram_reply"]))
    assert response.status_code == 404
    assert shown(conversation) == PORTO


@pytest.mark.django_db
def test_while_a_reply_streams_the_link_shows_the_branch_and_keeping_it_waits(conversation, client):
    made = nested_branches(conversation)
    turn_begin(conversation=conversation, text="And in winter?")  # streaming
    target = made["tram_reply"]
    page = client.get(conversation.get_absolute_url(), {"highlight": target.pk}).text
    assert "is-source" in article(page, target)

    response = client.post(keep_url(conversation, target), follow=True)

    assert shown(conversation)[:2] == PORTO
    assert "Keep this branch" in response.text and 'id="page-notice"' in response.text


@pytest.mark.django_db(transaction=True)
async def test_the_open_tabs_swap_the_branch_in_when_it_is_kept(aconversation, alice):
    made = await sync_to_async(nested_branches)(aconversation)
    tab = await connected(alice, aconversation.pk)
    client = Client()
    await sync_to_async(client.force_login)(alice)
    target = made["tram_reply"]

    await sync_to_async(client.get)(aconversation.get_absolute_url(), {"highlight": target.pk})
    assert await tab.receive_nothing(timeout=0.5)  # a link alone changes no tab
    await sync_to_async(client.post)(keep_url(aconversation, target))

    # One swap, from the outermost question on: the inner branch shown inside it.
    frame = (await frames_until(tab, "branch_shown"))[-1]
    assert frame["replaces"] == made["porto"].pk
    for text in ("Plan a trip to Lisbon", "Tram 28 crosses the old town.", "And pastries?"):
        assert text in frame["html"]
    assert "What about buses?" not in frame["html"]
    await tab.disconnect()
