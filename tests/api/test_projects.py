"""/v1 in a project, through the real openai client: the ``project`` field (or the
X-Memorychat-Project header) starts a conversation in the user's project, whose instructions
and memory reach the prompt; a history continues only a conversation in the same project;
another user's, an unknown or an archived project and a temporary one are refused."""

import openai
import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from chat import live
from chat.models import Conversation, Message
from memory.models import Decision
from projects.services import project_create, project_set_archived
from tests.api.conftest import client, http, rows

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = settings.OPENAI_MODEL
INSTRUCTIONS = "Always give quantities in metric units."


@pytest.fixture
def garden(alice):
    return project_create(user=alice, name="Garden", instructions=INSTRUCTIONS)


@pytest.fixture
def kitchen(alice):
    return project_create(user=alice, name="Kitchen")


def prompt_of(fake_llm) -> str:
    """What the last turn sent the model (the memory block opens the last user turn)."""
    messages = fake_llm.chat_requests()[-1]["body"]["messages"]
    return " ".join(str(m["content"]) for m in messages)


async def ask(secret, text, history=(), **extra):
    messages = [*history, {"role": "user", "content": text}]
    return await client(secret).chat.completions.create(
        model=MODEL, messages=messages, extra_body=extra or None
    )


async def test_what_is_told_in_a_project_is_recalled_there_and_not_outside(
    alice, alice_key, garden, fake_llm
):
    await ask(alice_key, "We decided to plant tomatoes along the south fence.", project="garden")
    await live.settle()
    [told] = await rows(Conversation, user=alice)
    assert told.project_id == garden.pk  # the name, in any case
    [decision] = await rows(Decision, user=alice)
    assert "south fence" in decision.what and decision.project_id == garden.pk

    # A new Garden conversation (named by id, in the header) recalls it ...
    async with http(alice_key, {"X-Memorychat-Project": str(garden.pk)}) as raw:
        response = await raw.post(
            "/chat/completions",
            json={
                "model": MODEL,
                "messages": [{"role": "user", "content": "Where do the tomatoes go?"}],
            },
        )
    assert response.status_code == 200
    assert "south fence" in prompt_of(fake_llm)
    recalled = await Conversation.objects.aget(pk=response.headers["X-Memorychat-Conversation"])
    assert recalled.project_id == garden.pk
    # ... and so does the web chat's context build for a Garden conversation.
    from chat.services import conversation_create
    from memory.context import build

    in_garden = await sync_to_async(conversation_create)(user=alice, project=garden)
    built = await sync_to_async(build)(
        conversation=in_garden, user_text="Where do the tomatoes go?"
    )
    assert "south fence" in str(built.messages)

    # A conversation outside every project does not.
    await ask(alice_key, "Where do the tomatoes go?")
    assert "south fence" not in prompt_of(fake_llm)


async def test_the_projects_instructions_reach_the_prompt_and_its_report(
    alice, alice_key, garden, fake_llm
):
    await ask(alice_key, "How deep do I sow beans?", project="Garden")
    assert INSTRUCTIONS in prompt_of(fake_llm)
    [reply] = await rows(Message, conversation__user=alice, role="assistant")
    assert reply.context_report["project"]["name"] == "Garden"
    assert INSTRUCTIONS in reply.context_report["project"]["instructions"]


async def test_a_history_continues_only_a_conversation_in_the_same_project(
    alice, alice_key, garden, kitchen, fake_llm
):
    first = await ask(alice_key, "Plan the beds.", project=garden.pk)
    history = [
        {"role": "user", "content": "Plan the beds."},
        {"role": "assistant", "content": first.choices[0].message.content},
    ]
    await ask(alice_key, "And the paths?", history, project="Kitchen")
    await ask(alice_key, "And the paths?", history)  # no project: outside every project
    await ask(alice_key, "And the fence?", history, project="GARDEN")
    in_garden = await rows(Conversation, user=alice, project=garden)
    assert len(in_garden) == 1
    said = await rows(Message, conversation=in_garden[0], role="user")
    assert [m.content for m in said] == ["Plan the beds.", "And the fence?"]
    assert len(await rows(Conversation, user=alice, project=kitchen)) == 1
    assert len(await rows(Conversation, user=alice, project__isnull=True)) == 1


async def refused(secret, status, **extra):
    with pytest.raises(openai.APIStatusError) as caught:
        await ask(secret, "Hello", **extra)
    assert caught.value.status_code == status
    return caught.value.body


async def test_another_users_or_an_unknown_project_is_not_found(
    alice, bob, alice_key, bob_key, garden, fake_llm
):
    for value in (garden.pk, "Garden", "Nowhere", 987654321):
        body = await refused(bob_key, 404, project=value)
        assert body["code"] == "project_not_found" and body["param"] == "project"
    async with http(bob_key, {"X-Memorychat-Project": "Garden"}) as raw:
        response = await raw.post(
            "/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "Hello"}]},
        )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "project_not_found"
    assert await rows(Conversation) == []


async def test_an_archived_project_a_temporary_one_and_a_bad_value_are_refused(
    alice, alice_key, garden, fake_llm
):
    body = await refused(alice_key, 400, project="Garden", temporary=True)
    assert body["param"] == "project"
    async with http(alice_key, {"X-Memorychat-Temporary": "true"}) as raw:
        response = await raw.post(
            "/chat/completions",
            json={
                "model": MODEL,
                "project": "Garden",
                "messages": [{"role": "user", "content": "Hello"}],
            },
        )
    assert response.status_code == 400
    for value in (True, ["Garden"], {"id": 1}):
        assert (await refused(alice_key, 400, project=value))["param"] == "project"
    await sync_to_async(project_set_archived)(project=garden, archived=True)
    body = await refused(alice_key, 400, project="Garden")
    assert body["code"] == "project_archived"
    assert await rows(Conversation) == []
