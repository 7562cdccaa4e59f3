"""A generated title follows a switch of the first question's branch ("1 / 2"): each branch
keeps the title made for it (``Message.branch_title``); a branch not titled yet gets its own;
a title the user chose is never replaced."""

import pytest

from chat import branches, services, titles
from chat.models import Conversation, Message
from chat.services import reply_finish, turn_begin, turn_edit
from tests.support.tasks import run_pending_tasks

pytestmark = pytest.mark.django_db

LISBON = "Can you help me plan a trip to Lisbon with two kids?"
PORTO = "What should we see in Porto in two days?"


def answered(conversation, start) -> Message:
    """The reply stored, then the after-turn titling (chat.turn.after) on the same object."""
    reply_finish(reply=start.reply, content="Here is a plan.", status=Message.Status.COMPLETE)
    titles.title_after_first_exchange(conversation, start.user_message)
    return start.user_message


def two_exchanges(conversation) -> Message:
    """The first question, answered and titled, then a second: an edit of the first now
    starts a branch (the last question is edited in place)."""
    first = answered(conversation, turn_begin(conversation=conversation, text=LISBON))
    answered(conversation, turn_begin(conversation=conversation, text="And the trams?"))
    return first


def title_of(conversation) -> tuple[str, str]:
    conversation.refresh_from_db()
    return conversation.title, conversation.title_source


def test_each_branch_of_the_first_question_shows_its_own_title(conversation):
    lisbon = two_exchanges(conversation)
    assert title_of(conversation) == ("Plan a trip to Lisbon", "generated")

    start = turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    assert start.new_title == services.title_from_text(PORTO)  # its stand-in until answered
    porto = answered(conversation, start)
    assert title_of(conversation) == ("What to see in Porto", "generated")

    switched = branches.branch_switch(conversation=conversation, message_id=lisbon.pk)
    assert switched.new_title == "Plan a trip to Lisbon"
    assert title_of(conversation) == ("Plan a trip to Lisbon", "generated")
    frames = branches.switched_frames(conversation=conversation, switched=switched)
    assert {"type": "title", "title": "Plan a trip to Lisbon"} in frames

    switched = branches.branch_switch(conversation=conversation, message_id=porto.pk)
    assert switched.new_title == "What to see in Porto"
    assert title_of(conversation)[0] == "What to see in Porto"


def test_a_title_the_user_chose_stays_on_every_branch(conversation):
    lisbon = two_exchanges(conversation)
    porto = answered(
        conversation, turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    )
    services.conversation_rename(conversation=conversation, title="Holidays")
    for question in (lisbon, porto):
        switched = branches.branch_switch(conversation=conversation, message_id=question.pk)
        assert switched.new_title == ""
        assert title_of(conversation) == ("Holidays", "user")


def test_a_later_question_switched_leaves_the_title_alone(conversation):
    answered(conversation, turn_begin(conversation=conversation, text=LISBON))
    second = answered(conversation, turn_begin(conversation=conversation, text="And trams?"))
    answered(
        conversation,
        turn_edit(conversation=conversation, user_message_id=second.pk, text="And pastries?"),
    )
    switched = branches.branch_switch(conversation=conversation, message_id=second.pk)
    assert switched.new_title == ""
    assert title_of(conversation) == ("Plan a trip to Lisbon", "generated")


def test_a_branch_titled_before_titles_were_kept_per_branch_gets_one_on_the_switch(conversation):
    """Offline: made at once; the other branch keeps the title it showed."""
    lisbon = two_exchanges(conversation)
    porto = answered(
        conversation, turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    )
    Message.objects.filter(pk__in=[lisbon.pk, porto.pk]).update(branch_title="")

    switched = branches.branch_switch(conversation=conversation, message_id=lisbon.pk)
    assert switched.new_title == "Plan a trip to Lisbon" and switched.title_job is None
    assert title_of(conversation) == ("Plan a trip to Lisbon", "generated")
    porto.refresh_from_db()
    assert porto.branch_title == "What to see in Porto"


@pytest.mark.django_db(transaction=True)
def test_with_a_model_an_untitled_branch_is_titled_by_a_job_the_tabs_hear_of(
    conversation, fake_llm, settings
):
    """The stand-in at once; the job's title (watched on the in-memory layer) after."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    fake_llm.behaviour.json_reply = lambda body: "Lisbon with children"
    lisbon = two_exchanges(conversation)
    run_pending_tasks()
    assert title_of(conversation) == ("Lisbon with children", "generated")
    fake_llm.behaviour.json_reply = lambda body: "Two days in Porto"
    start = turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    answered(conversation, start)
    run_pending_tasks()
    assert title_of(conversation) == ("Two days in Porto", "generated")

    Message.objects.filter(pk=lisbon.pk).update(branch_title="")
    fake_llm.behaviour.json_reply = lambda body: "Lisbon for a family"
    switched = branches.branch_switch(conversation=conversation, message_id=lisbon.pk)
    assert switched.new_title == services.title_from_text(LISBON)
    assert switched.title_job is not None  # the in-memory layer: the tabs must be told
    run_pending_tasks()
    assert title_of(conversation) == ("Lisbon for a family", "generated")
    assert Conversation.objects.get(pk=conversation.pk).title == "Lisbon for a family"


def test_the_only_question_edited_in_place_is_titled_again(conversation):
    """No branch (the last question is edited in place): its old title gives way to the new
    wording's stand-in, then to the title made after the new reply."""
    lisbon = answered(conversation, turn_begin(conversation=conversation, text=LISBON))
    assert title_of(conversation)[0] == "Plan a trip to Lisbon"
    start = turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    assert start.user_message.pk == lisbon.pk and start.branched_from is None
    assert start.new_title == services.title_from_text(PORTO)
    answered(conversation, start)
    assert title_of(conversation) == ("What to see in Porto", "generated")

    services.conversation_rename(conversation=conversation, title="Holidays")
    start = turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=LISBON)
    assert start.new_title == ""
    answered(conversation, start)
    assert title_of(conversation) == ("Holidays", "user")


def test_a_later_question_edited_in_place_leaves_the_title_alone(conversation):
    answered(conversation, turn_begin(conversation=conversation, text=LISBON))
    second = answered(conversation, turn_begin(conversation=conversation, text="And trams?"))
    start = turn_edit(conversation=conversation, user_message_id=second.pk, text="And pastries?")
    assert start.new_title == ""
    answered(conversation, start)
    assert title_of(conversation) == ("Plan a trip to Lisbon", "generated")


def test_a_title_chosen_since_a_tab_connected_stays_on_its_switch(conversation):
    """A tab's consumer holds the conversation as it was when it connected: a rename made by
    the page since (another request) is the user's choice all the same."""
    lisbon = two_exchanges(conversation)
    answered(
        conversation, turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO)
    )
    tab = Conversation.objects.get(pk=conversation.pk)  # loaded before the rename
    services.conversation_rename(conversation=conversation, title="Holidays")

    switched = branches.branch_switch(conversation=tab, message_id=lisbon.pk)

    assert switched.new_title == ""
    assert title_of(conversation) == ("Holidays", "user")


def test_a_title_chosen_since_a_tab_connected_stays_on_its_edit(conversation):
    lisbon = answered(conversation, turn_begin(conversation=conversation, text=LISBON))
    tab = Conversation.objects.get(pk=conversation.pk)  # loaded before the rename
    services.conversation_rename(conversation=conversation, title="Holidays")

    start = turn_edit(conversation=tab, user_message_id=lisbon.pk, text=PORTO)

    assert start.new_title == ""
    assert title_of(conversation) == ("Holidays", "user")
