"""A link to a message of a hidden branch (a memory's source, ``?highlight=``; a search
result, ``?found=``) opens the conversation on the branch that holds it, a branch hidden inside
another included, and the conversation's open tabs swap it in as "1 / 2" would."""

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from chat.models import Message
from chat.services import conversation_create, turn_begin
from tests.chat.helpers import connected, frames_until
from tests.chat.test_branches import edit, shown, three_exchanges


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


@pytest.mark.django_db
@pytest.mark.parametrize("parameter", ["highlight", "found"])
def test_a_link_into_a_branch_hidden_inside_another_opens_on_it(conversation, alice, parameter):
    made = nested_branches(conversation)
    assert shown(conversation) == ["Plan a trip to Porto", "Porto has port wine."]
    client = Client()
    client.force_login(alice)
    target = made["tram_reply"]

    page = client.get(conversation.get_absolute_url(), {parameter: target.pk}).text

    assert shown(conversation) == [
        "Plan a trip to Lisbon",
        "Lisbon in spring is lovely.",
        "What about trams there?",
        "Tram 28 crosses the old town.",
        "And pastries?",
        "Try pastel de nata in Belem.",
    ]
    assert "is-source" in article(page, target)
    assert "Porto has port wine." not in page
    # Opened again, or on a message shown: nothing changes.
    client.get(conversation.get_absolute_url(), {parameter: target.pk})
    assert shown(conversation)[3] == "Tram 28 crosses the old town."


@pytest.mark.django_db
def test_a_link_to_a_message_of_another_conversation_switches_nothing(conversation, alice):
    made = nested_branches(conversation)
    other = conversation_create(user=alice)
    client = Client()
    client.force_login(alice)
    response = client.get(other.get_absolute_url(), {"highlight": made["tram_reply"].pk})
    assert response.status_code == 200
    assert shown(conversation) == ["Plan a trip to Porto", "Porto has port wine."]


@pytest.mark.django_db
def test_while_a_reply_streams_the_page_opens_on_the_branch_shown(conversation, alice):
    made = nested_branches(conversation)
    turn_begin(conversation=conversation, text="And in winter?")  # streaming
    client = Client()
    client.force_login(alice)
    response = client.get(conversation.get_absolute_url(), {"highlight": made["tram_reply"].pk})
    assert response.status_code == 200
    assert shown(conversation)[:2] == ["Plan a trip to Porto", "Porto has port wine."]


@pytest.mark.django_db(transaction=True)
async def test_the_open_tabs_swap_the_branch_in(aconversation, alice):
    made = await sync_to_async(nested_branches)(aconversation)
    tab = await connected(alice, aconversation.pk)
    client = Client()
    await sync_to_async(client.force_login)(alice)

    await sync_to_async(client.get)(
        aconversation.get_absolute_url(), {"highlight": made["tram_reply"].pk}
    )

    # One swap, from the outermost question on: the inner branch shown inside it.
    frame = (await frames_until(tab, "branch_shown"))[-1]
    assert frame["replaces"] == made["porto"].pk
    for text in ("Plan a trip to Lisbon", "Tram 28 crosses the old town.", "And pastries?"):
        assert text in frame["html"]
    assert "What about buses?" not in frame["html"]
    await tab.disconnect()
