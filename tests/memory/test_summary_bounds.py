"""A summary request to llama.cpp carries a bounded schema (every string and list has a
maximum its grammar enforces) and a cap sized to the server's context and to the longest
answer that schema allows, so a small model that never stops on its own still closes its
JSON; no other server gets the bounds."""

import json
from datetime import date

import pytest

from memory import summariser
from memory.extraction import acceptance
from memory.summariser import BOUNDED_CAP, BOUNDED_SCHEMA, BOUNDS, CHARS_PER_TOKEN, SCHEMA
from tests.memory.test_llm_memory import extraction_json

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"I'm Sam; message {i} " * 5}
    for i in range(6)
]


@pytest.fixture
def fake_llm(fake_llm):
    """The shared model server (tests/memory/conftest.py), answering summary runs."""
    fake_llm.behaviour.json_reply = extraction_json
    return fake_llm


def request_body(fake) -> dict:
    summariser.summarise(
        previous_summary="", messages=MESSAGES, model="fake-large", today=date(2026, 12, 7)
    )
    return fake.chat_requests()[0]["body"]


def maxima(schema) -> list[str]:
    """Every maxLength / maxItems keyword in ``schema``."""
    text = json.dumps(schema)
    return [k for k in ("maxLength", "maxItems") if k in text]


def longest_answer(schema):
    """An answer filling every bound of ``schema`` (what a model that never stops writes)."""
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v)))
    if "properties" in schema:
        return {k: longest_answer(v) for k, v in schema["properties"].items()}
    kind = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "array" in kind:
        return [longest_answer(schema["items"]) for _ in range(schema["maxItems"])]
    if "string" in kind:
        return ("word " * schema["maxLength"])[: schema["maxLength"]]
    return 123456789 if "integer" in kind else 0.5


def sent_schema(body) -> dict:
    return body["response_format"]["json_schema"]["schema"]


def test_llama_cpp_gets_the_bounded_schema_and_a_cap_its_longest_answer_fits(fake_llm):
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", 4096
    body = request_body(fake_llm)
    schema = sent_schema(body)
    assert schema == BOUNDED_SCHEMA and maxima(schema) == ["maxLength", "maxItems"]
    assert schema["properties"]["summary"]["maxLength"] == BOUNDS["summary"]
    assert "Be brief" in body["messages"][0]["content"]
    prompt = sum(len(m["content"].split()) for m in body["messages"])  # the fake's tokens
    assert body["max_tokens"] == BOUNDED_CAP and prompt + BOUNDED_CAP <= 4096


@pytest.mark.parametrize(("n_ctx", "max_tokens"), [(2048, 4096), (8192, 1024)])
def test_less_room_narrows_the_schema_to_fit_the_cap(fake_llm, settings, n_ctx, max_tokens):
    """A small context, or a small SUMMARY_MAX_TOKENS: fewer and shorter items, so that the
    longest answer still fits the cap, which fits the context; the summary keeps its length."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", n_ctx
    settings.SUMMARY_MAX_TOKENS = max_tokens
    summariser.summarise(
        previous_summary="",
        messages=MESSAGES,
        model="fake-large",
        today=date(2026, 12, 7),
        max_tokens=max_tokens,
    )
    body = fake_llm.chat_requests()[0]["body"]
    schema = sent_schema(body)
    prompt = sum(len(m["content"].split()) for m in body["messages"])
    assert body["max_tokens"] < BOUNDED_CAP and prompt + body["max_tokens"] <= n_ctx
    assert schema["properties"]["facts"]["maxItems"] < BOUNDS["facts"]
    assert schema["properties"]["summary"]["maxLength"] == BOUNDS["summary"]
    assert len(json.dumps(longest_answer(schema))) <= body["max_tokens"] * CHARS_PER_TOKEN


@pytest.mark.parametrize("style", ["", "vllm"])
def test_other_servers_get_the_schema_as_it_is(fake_llm, style):
    """OpenAI's strict mode refuses maxLength: no bounds, and the cap sized to the batch."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = style, 8192
    body = request_body(fake_llm)
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert maxima(SCHEMA) == []
    assert body["max_tokens"] == summariser.answer_cap(len(MESSAGES), 4096)
    assert "Be brief" not in body["messages"][0]["content"]


def test_the_longest_bounded_answer_fits_the_cap_and_is_usable():
    """A model that fills every field to its maximum still ends within BOUNDED_CAP (at
    CHARS_PER_TOKEN) and its answer parses and validates: a summary, not a cut answer."""
    answer = longest_answer(BOUNDED_SCHEMA)
    text = json.dumps(answer)
    assert len(text) <= BOUNDED_CAP * CHARS_PER_TOKEN
    result = summariser.parse_extraction(answer, 6, today=date(2026, 12, 7))
    assert result.summary == answer["summary"].strip()


def test_a_bounded_summary_can_hold_the_previous_one():
    """The summary's maximum leaves room for what acceptance asks of a rolling summary:
    half of a previous summary of the longest kind (300 words)."""
    floor = acceptance.summary_floor(input_words=2000, previous_words=300)
    assert floor * len("word ") <= BOUNDS["summary"]
