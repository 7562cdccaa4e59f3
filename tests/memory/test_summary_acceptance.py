"""Never worse: a model's summary replaces the current version only when it is a summary of what
it covers (memory.extraction.acceptance); the model's decisions and action items pass the
offline extractor's checks. The fixtures are the bad answers llama.cpp's small model gave
(issue 42): the summary "summary", greetings as a decision and an action item."""

import json

import pytest

from chat.services import NewMessage, message_create_many
from memory import services
from memory.extraction import ExtractedAction, Extraction, acceptance
from memory.models import ActionItem, Decision, Summary
from memory.prompts import DEFAULT_SYSTEM_PROMPT
from memory.summariser import INSTRUCTIONS
from tests.memory.test_llm_memory import extraction_json

pytestmark = pytest.mark.django_db

CONVERSATION = [
    ("user", "I'm Sam. We are planning the product launch in Lisbon for the spring."),
    ("assistant", "Great. Do you have a venue and a date in mind for the launch event?"),
    ("user", "Not yet. I need to book the venue by Friday; we chose PostgreSQL for the app."),
    ("assistant", "Noted: book the venue by Friday, and PostgreSQL for the app's database."),
]


def talk(conversation, turns=CONVERSATION):
    message_create_many(
        conversation=conversation, messages=[NewMessage(role, text) for role, text in turns]
    )


def run_once(conversation):
    return services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )


def answer(summary, **lists):
    def reply(body):
        data = extraction_json(body)
        data.update({"facts": [], "decisions": [], "action_items": [], **lists})
        data["summary"] = summary
        return data

    return reply


def good_first_version(conversation, fake_llm):
    """Version 1, the model's own: it holds the open action item "Book the venue"."""
    fake_llm.behaviour.json_reply = extraction_json
    talk(conversation)
    run = run_once(conversation)
    assert run.method == "json_schema", run.error
    return Summary.objects.get(is_current=True)


# -- the rules, on their own ------------------------------------------------------------------


def flaws(summary, *, previous="", messages=CONVERSATION, open_items=(), actions=()):
    return acceptance.summary_flaws(
        Extraction(summary=summary, action_items=list(actions)),
        previous=previous,
        messages=[{"role": r, "content": c} for r, c in messages],
        open_items=open_items,
        prompts=(DEFAULT_SYSTEM_PROMPT, INSTRUCTIONS),
    )


def test_one_word_for_a_conversation_is_no_summary():
    (flaw,) = flaws("summary")
    assert flaw.startswith("the summary is 1 word(s) for 56 words of input (at least 6")


def test_a_rolling_summary_keeps_at_least_half_of_the_previous_one():
    previous = " ".join(f"word{i}" for i in range(100))
    assert "(at least 50 expected)" in flaws("Sam books the venue by Friday.", previous=previous)[0]


def test_an_echo_of_the_prompts_is_no_summary():
    echo = "You are memorychat, a helpful assistant with long-term memory of this user."
    assert any("repeats the prompt" in f for f in flaws(echo))
    instructions = "You receive the previous rolling summary of a conversation and the messages"
    assert any("repeats the prompt" in f for f in flaws(instructions))
    assert any("repeats the prompt" in f for f in flaws('{"previous_summary": "", "x": 1} a b'))


def test_open_items_are_kept_reworded_listed_again_or_closed():
    summary = "Sam plans the spring launch in Lisbon and chose PostgreSQL for the app."
    (flaw,) = flaws(summary, open_items=["Book the venue by Friday"])
    assert "drops open item(s)" in flaw and "'Book the venue by Friday'" in flaw
    assert (
        flaws(summary + " The venue must be booked by Friday.", open_items=["Book the venue"]) == []
    )
    listed = ExtractedAction("book venue", status="open")
    assert flaws(summary, open_items=["Book the venue"], actions=[listed]) == []
    done = ExtractedAction("Booked the venue", status="done")
    assert flaws(summary, open_items=["Book the venue"], actions=[done]) == []


def test_a_fair_summary_passes():
    assert flaws("Sam plans the spring launch in Lisbon, must book the venue by Friday.") == []


# -- summary runs against a server that answers badly ------------------------------------------


def test_the_one_word_summary_never_replaces_a_good_version(conversation, fake_llm):
    """The answer seen on llama.cpp: summary "summary". The run falls back to the offline
    extractor and says why; the new version is a real summary and still holds the open item."""
    first = good_first_version(conversation, fake_llm)
    assert first.action_items == ["Book the venue"]
    fake_llm.behaviour.json_reply = answer("summary")
    talk(conversation)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "offline" and run.stage == "done, fell back"
    assert "json_schema, 4 messages: the answer is no summary of what it covers" in run.error
    assert "the summary is 1 word(s)" in run.error and "offline extractor" in run.error
    current = Summary.objects.get(is_current=True)
    assert current.version == 2 and current.text != "summary" and len(current.text.split()) > 10
    assert "venue" in current.text.lower()
    assert "Book the venue" in current.action_items  # checked again by the next version


def test_an_answer_dropping_an_open_item_falls_back(conversation, fake_llm):
    good_first_version(conversation, fake_llm)
    fake_llm.behaviour.json_reply = answer(
        "Sam is planning the spring product launch in Lisbon and chose PostgreSQL for the app."
    )
    talk(conversation, [("user", "The launch party needs a DJ."), ("assistant", "Noted.")])
    run = run_once(conversation)
    assert run.method == "offline"
    assert "drops open item(s) of the version it replaces: 'Book the venue'" in run.error
    assert "Book the venue" in Summary.objects.get(is_current=True).text


def test_an_item_the_conversation_closed_may_go(conversation, fake_llm):
    """Marked done by the user (the Memory page) or by the answer itself: not required."""
    good_first_version(conversation, fake_llm)
    ActionItem.objects.update(status=ActionItem.Status.DONE)
    fake_llm.behaviour.json_reply = answer(
        "Sam is planning the spring product launch in Lisbon and chose PostgreSQL for the app."
    )
    talk(conversation, [("user", "The launch party needs a DJ."), ("assistant", "Noted.")])
    run = run_once(conversation)
    assert run.method == "json_schema" and run.error == ""
    assert Summary.objects.get(is_current=True).action_items == []


def test_an_echo_of_the_system_prompt_falls_back(conversation, fake_llm):
    fake_llm.behaviour.json_reply = answer(DEFAULT_SYSTEM_PROMPT)
    talk(conversation)
    run = run_once(conversation)
    assert run.method == "offline" and "the summary repeats the prompt" in run.error
    assert "helpful assistant" not in Summary.objects.get(is_current=True).text


def test_greetings_and_the_system_prompt_are_no_decision_or_action_item(conversation, fake_llm):
    """The answer's summary is fine, its greeting decision and action item are dropped (as the
    offline extractor's would be), and a context echoing the system prompt is left empty."""
    fake_llm.behaviour.json_reply = answer(
        "Sam plans the spring launch in Lisbon, must book the venue by Friday, chose PostgreSQL.",
        decisions=[
            {"what": "Hello! How can I help you today?", "status": "decided", "message_index": 1},
            {
                "what": "Use PostgreSQL for the app",
                "context": "You are memorychat, a helpful assistant with long-term memory",
                "rationale": "",
                "alternatives": [],
                "stakeholders": [],
                "status": "decided",
                "message_index": 2,
            },
        ],
        action_items=[
            {"what": "Hi there! Nice to meet you.", "status": "open", "message_index": 1},
            {"what": DEFAULT_SYSTEM_PROMPT, "status": "open", "message_index": 1},
            {"what": "Book the venue", "status": "open", "due_date": None, "message_index": 2},
        ],
    )
    talk(conversation)
    run = run_once(conversation)
    assert run.method == "json_schema" and run.error == ""
    decision = Decision.objects.get()
    assert decision.what == "Use PostgreSQL for the app" and decision.context == ""
    assert list(ActionItem.objects.values_list("what", flat=True)) == ["Book the venue"]
    assert Summary.objects.get(is_current=True).decisions == ["Use PostgreSQL for the app"]


def test_each_half_of_a_split_batch_is_checked(conversation, fake_llm):
    """A cut whole batch, then halves: a half whose summary is one word is refused too."""

    def reply(body):
        size = len(json.loads(body["messages"][-1]["content"])["messages"])
        if size > 2:
            return "{" + '"summary": "cut' * 5
        return answer("summary")(body)

    fake_llm.behaviour.json_reply = reply
    talk(conversation)
    run = run_once(conversation)
    assert run.method == "offline"
    assert "json_schema, 4 messages: the answer is not JSON" in run.error
    assert "json_schema, 2 messages: the answer is no summary" in run.error
