"""Branches over the websocket, on the real ASGI stack and channel layer: an earlier question
edited swaps in the new branch in every tab; switch_branch shows the other; another user's
ids are not found; a busy conversation refuses clearly."""

import pytest

from chat.models import Message
from tests.chat.conftest import acreate_conversation
from tests.chat.helpers import connected, frames_until, turn

pytestmark = pytest.mark.django_db(transaction=True)


async def three_exchanges(socket, fake_llm) -> list[int]:
    questions = []
    for question, answer in (
        ("Plan a trip to Lisbon", "Lisbon in spring."),
        ("What about trams?", "Tram 28."),
        ("And pastries?", "Pastel de nata."),
    ):
        fake_llm.behaviour.reply = answer
        frames = await turn(socket, question)
        questions.append(frames[-1]["reply_to"])
    return questions


async def test_editing_the_first_question_swaps_in_a_new_branch_in_every_tab(
    aconversation, alice, fake_llm
):
    socket = await connected(alice, aconversation.pk)
    first, _, _ = await three_exchanges(socket, fake_llm)
    other_tab = await connected(alice, aconversation.pk)

    fake_llm.behaviour.reply = "Porto has port wine."
    await socket.send_json_to({"type": "edit", "message_id": first, "text": "Plan a trip to Porto"})
    frames = await frames_until(socket, "reply_end")
    seen_elsewhere = await frames_until(other_tab, "reply_end")

    for got in (frames, seen_elsewhere):
        branch = next(f for f in got if f["type"] == "branch_shown")
        assert branch["replaces"] == first
        assert "Plan a trip to Porto" in branch["html"] and "2 / 2" in branch["html"]
        assert any(f["type"] == "title" and f["title"] == "Plan a trip to Porto" for f in got)
        assert "Porto has port wine." in got[-1]["html"]
    assert await Message.objects.filter(hidden_by_id=first).acount() == 6

    new_question = frames[-1]["reply_to"]
    await socket.send_json_to({"type": "switch_branch", "message_id": first})
    back = await frames_until(socket, "branch_shown")
    assert back[-1]["replaces"] == new_question
    for text in ("Plan a trip to Lisbon", "Tram 28.", "Pastel de nata.", "1 / 2"):
        assert text in back[-1]["html"]
    assert back[-1]["context"]["used"]  # the meter: the branch's newest reply's figures
    assert (await frames_until(other_tab, "branch_shown"))[-1]["replaces"] == new_question

    await socket.send_json_to({"type": "switch_branch", "message_id": new_question})
    forth = await frames_until(socket, "branch_shown")
    assert forth[-1]["replaces"] == first and "Porto has port wine." in forth[-1]["html"]
    await socket.disconnect()
    await other_tab.disconnect()


async def test_another_users_question_is_not_found(aconversation, alice, bob, fake_llm):
    socket = await connected(alice, aconversation.pk)
    first, _, _ = await three_exchanges(socket, fake_llm)
    await socket.disconnect()
    bobs = await acreate_conversation(bob)
    bob_socket = await connected(bob, bobs.pk)

    for frame in (
        {"type": "switch_branch", "message_id": first},
        {"type": "edit", "message_id": first, "text": "Mine now"},
    ):
        await bob_socket.send_json_to(frame)
        error = await bob_socket.receive_json_from()
        assert (error["type"], error["code"]) == ("error", "not_found")
    await bob_socket.disconnect()
    assert not await Message.objects.filter(hidden_by__isnull=False).aexists()


async def test_editing_while_a_reply_streams_is_refused_clearly(aconversation, alice, fake_llm):
    socket = await connected(alice, aconversation.pk)
    first, _, _ = await three_exchanges(socket, fake_llm)
    fake_llm.behaviour.reply = "A long answer " * 40
    fake_llm.behaviour.interval = 0.05
    await socket.send_json_to({"type": "send", "text": "Tell me more"})
    await frames_until(socket, "reply_start")

    await socket.send_json_to({"type": "edit", "message_id": first, "text": "Porto"})
    frames = await frames_until(socket, "error")
    assert frames[-1]["code"] == "busy" and "still being written" in frames[-1]["message"]
    await socket.send_json_to({"type": "switch_branch", "message_id": first})
    assert (await frames_until(socket, "error"))[-1]["code"] == "busy"
    await socket.send_json_to({"type": "stop"})
    await frames_until(socket, "reply_end")
    await socket.disconnect()
    assert not await Message.objects.filter(hidden_by__isnull=False).aexists()


async def test_the_only_question_edited_in_place_retitles_every_tab(aconversation, alice):
    """Offline: the new wording's stand-in at once, then the title made after the new reply."""
    socket = await connected(alice, aconversation.pk)
    question = (await turn(socket, "Can you help me plan a trip to Lisbon?"))[-1]["reply_to"]
    # The title made after that reply, sent after its end: taken here, not among the edit's.
    assert (await frames_until(socket, "title"))[-1]["title"] == "Plan a trip to Lisbon"
    other_tab = await connected(alice, aconversation.pk)
    await socket.send_json_to(
        {"type": "edit", "message_id": question, "text": "What should we see in Porto?"}
    )
    for tab in (socket, other_tab):
        titles = [f["title"] for f in await frames_until(tab, "reply_end") if f["type"] == "title"]
        assert titles[0] == "What should we see in Porto?"
        if len(titles) == 1:  # the made title comes after the reply's end
            titles += [(await frames_until(tab, "title"))[-1]["title"]]
        assert titles[-1] == "What to see in Porto"
    await socket.disconnect()
    await other_tab.disconnect()
