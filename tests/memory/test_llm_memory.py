"""The model-backed paths of memory: structured-output summaries and embeddings, against the
local OpenAI-compatible server through the real openai client."""

import json

import pytest

from chat.services import NewMessage, message_create_many
from memory import services
from memory.models import Embedding, Fact, Summary, SummaryRun
from memory.search import embeddings, search
from tests.support.tasks import run_pending_tasks

pytestmark = pytest.mark.django_db


def extraction_json(body):
    return {
        "summary": "Sam planned the launch and chose PostgreSQL.",
        "topics": ["launch"],
        "decisions": [
            {
                "what": "Use PostgreSQL",
                "context": "launch",
                "rationale": "scales",
                "alternatives": ["MySQL"],
                "stakeholders": ["Sam"],
                "status": "decided",
                "message_index": 0,
            }
        ],
        "action_items": [
            {
                "what": "Book the venue",
                "owner": "Sam",
                "due_date": "2026-12-01",
                "status": "open",
                "depends_on": [],
                "message_index": 1,
            }
        ],
        "facts": [
            {
                "category": "personal",
                "subject": "name",
                "text": "The user is Sam.",
                "importance": 0.9,
                "message_index": 0,
            }
        ],
        "open_questions": ["Which city?"],
    }


def test_a_summary_run_uses_one_structured_llm_call(conversation, fake_llm):
    """One chat completion with a JSON schema; its result becomes the summary and memories."""
    fake_llm.behaviour.json_reply = extraction_json
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "I'm Sam; we use PostgreSQL."),
            NewMessage("assistant", "Noted."),
        ],
    )
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    assert run.status == "done"
    request = fake_llm.chat_requests()[-1]["body"]
    assert request["response_format"]["type"] == "json_schema"
    payload = json.loads(request["messages"][1]["content"])
    assert [m["content"] for m in payload["messages"]] == ["I'm Sam; we use PostgreSQL.", "Noted."]
    summary = Summary.objects.get(is_current=True)
    assert summary.text.startswith("Sam planned") and summary.model == "gpt-4o"
    assert summary.open_questions == ["Which city?"]
    assert Fact.objects.get().text == "The user is Sam."


def test_a_malformed_model_answer_falls_back_and_says_so(conversation, fake_llm):
    """Not the schema, every time: nothing of the answer is kept; the offline extractor folds
    the batch, and the run records what failed and what answered."""
    fake_llm.behaviour.json_reply = lambda body: {"unexpected": True}
    message_create_many(conversation=conversation, messages=[NewMessage("user", "hello")])
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    assert run.status == "done" and run.method == "offline"
    assert "json_schema, 1 messages: the answer is not usable" in run.error
    assert "json_object, 1 messages" in run.error and "offline extractor" in run.error
    summary = Summary.objects.get(is_current=True)
    assert summary.model == "offline" and "unexpected" not in summary.text


@pytest.mark.django_db(transaction=True)
def test_embeddings_are_stored_and_used_when_configured(alice, settings, fake_llm):
    """With OPENAI_EMBEDDING_MODEL set, a job stores vectors and search blends them in."""
    from chat.services import conversation_create

    settings.OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
    # Two conversations: a neighbour in the same one could join the hit as its context.
    for text in ("My dog Rex loves the beach", "The quarterly budget review is on Monday"):
        message_create_many(
            conversation=conversation_create(user=alice), messages=[NewMessage("user", text)]
        )
    assert services.embeddings_schedule()
    run_pending_tasks()
    assert Embedding.objects.filter(user=alice).count() == 2
    hits = search(user=alice, query="dog beach")
    assert hits[0].text == "My dog Rex loves the beach"
    assert "text" in hits[0].why
    assert (
        embeddings.similarities(user=alice, query="dog beach", keys=[("message", hits[0].id)])[
            ("message", hits[0].id)
        ]
        > 0.5
    )
    assert SummaryRun.objects.count() == 0
