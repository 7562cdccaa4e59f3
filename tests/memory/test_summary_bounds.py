"""A summary request to llama.cpp carries a bounded schema (every string and list has a
maximum its grammar enforces) and a cap sized to the server's context and to the longest
answer that schema allows, at a token a character (a small model under a grammar can spend
one a character), so a small model that never stops on its own still closes its JSON; no
other server gets the bounds."""

import json
from datetime import date

import pytest

from memory import summariser
from memory.extraction import acceptance
from memory.summariser import (
    BOUNDED_CAP,
    BOUNDED_SCHEMA,
    BOUNDS,
    CHARS_PER_ANSWER_TOKEN,
    JSON_SCHEMA,
    SCHEMA,
)
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


def summarise(max_tokens: int = 4096, messages=MESSAGES):
    return summariser.summarise(
        previous_summary="",
        messages=messages,
        model="fake-large",
        today=date(2026, 12, 7),
        max_tokens=max_tokens,
    )


def request_body(fake, max_tokens: int = 4096) -> dict:
    summarise(max_tokens)
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


def bounds(body) -> dict:
    """The schema sent, or for a json_object request (no schema) the narrowest bounded one:
    what a model that fills its answer writes."""
    sent = body["response_format"].get("json_schema")
    return sent["schema"] if sent else summariser._SCALED[-1][1]


def test_llama_cpp_gets_the_bounded_schema_and_a_cap_its_longest_answer_fits(fake_llm, settings):
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", 16384
    settings.SUMMARY_MAX_TOKENS = 8192
    body = request_body(fake_llm, 8192)
    schema = sent_schema(body)
    assert schema == BOUNDED_SCHEMA and maxima(schema) == ["maxLength", "maxItems"]
    assert schema["properties"]["summary"]["maxLength"] == BOUNDS["summary"]
    assert "Be brief" in body["messages"][0]["content"]
    prompt = sum(len(m["content"].split()) for m in body["messages"])  # the fake's tokens
    assert body["max_tokens"] == BOUNDED_CAP and prompt + BOUNDED_CAP <= 16384


@pytest.mark.parametrize(("n_ctx", "max_tokens"), [(4096, 4096), (8192, 3000)])
def test_less_room_narrows_the_schema_to_fit_the_cap(fake_llm, settings, n_ctx, max_tokens):
    """A small context, or a small SUMMARY_MAX_TOKENS: fewer and shorter items, so that the
    longest answer still fits the cap, which fits the context; the summary keeps its length."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", n_ctx
    settings.SUMMARY_MAX_TOKENS = max_tokens
    body = request_body(fake_llm, max_tokens)
    schema = sent_schema(body)
    prompt = sum(len(m["content"].split()) for m in body["messages"])
    assert body["max_tokens"] < BOUNDED_CAP and prompt + body["max_tokens"] <= n_ctx
    assert schema["properties"]["facts"]["maxItems"] < BOUNDS["facts"]
    assert schema["properties"]["summary"]["maxLength"] == BOUNDS["summary"]
    assert len(json.dumps(longest_answer(schema))) <= body["max_tokens"] * CHARS_PER_ANSWER_TOKEN


@pytest.mark.parametrize(("n_ctx", "max_tokens"), [(2048, 4096), (8192, 1024)])
def test_too_little_room_for_the_narrowest_schema_sends_it_with_what_is_left(
    fake_llm, settings, n_ctx, max_tokens
):
    """A 2,048-token server, or SUMMARY_MAX_TOKENS 1,024: even the narrowest schema's longest
    answer does not fit; it is sent with what is left (half the context at most for the
    answer, the prompt has the rest): a model that fills every bound would be cut there, and
    the run says so and goes on down its chain."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", n_ctx
    settings.SUMMARY_MAX_TOKENS = max_tokens
    body = request_body(fake_llm, max_tokens)
    prompt = sum(len(m["content"].split()) for m in body["messages"])
    assert sent_schema(body) == summariser._SCALED[-1][1]  # the narrowest
    assert body["max_tokens"] < summariser.NARROWEST_CAP and prompt + body["max_tokens"] <= n_ctx


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
    """A model that fills every field to its maximum, its JSON laid out on lines, still ends
    within BOUNDED_CAP (at CHARS_PER_ANSWER_TOKEN) and its answer parses and validates: a
    summary, not a cut answer."""
    answer = longest_answer(BOUNDED_SCHEMA)
    assert len(json.dumps(answer, indent=0)) <= BOUNDED_CAP * CHARS_PER_ANSWER_TOKEN
    result = summariser.parse_extraction(answer, 6, today=date(2026, 12, 7))
    assert result.summary == answer["summary"].strip()


def test_a_bounded_summary_can_hold_the_previous_one():
    """The summary's maximum leaves room for what acceptance asks of a rolling summary:
    half of a previous summary of the longest kind (300 words)."""
    floor = acceptance.summary_floor(input_words=2000, previous_words=300)
    assert floor * len("word ") <= BOUNDS["summary"]


@pytest.mark.parametrize("n_ctx", [4096, 3072])
def test_an_answer_at_a_token_a_character_is_not_cut(fake_llm, n_ctx):
    """Issue 42: on llama.cpp SmolLM2 ran at about a character a token under the grammar,
    against the 3 the cap assumed, and was cut at it (max_tokens 1,907 after 2,069
    characters): the run fell back to the offline extractor. A model that fills every bound
    of the schema it is sent, at a token a character, now closes its JSON within the cap and
    within the server's context: the model's own summary, no note of a cut."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = "llama.cpp", n_ctx
    fake_llm.behaviour.answer_chars_per_token = 1
    fake_llm.behaviour.json_reply = lambda body: json.dumps(longest_answer(bounds(body)), indent=0)
    done = summarise()
    assert (done.method, done.notes) == (JSON_SCHEMA, [])
    for request in fake_llm.chat_requests():
        body = request["body"]
        answer = json.dumps(longest_answer(bounds(body)), indent=0)
        prompt = sum(len(m["content"].split()) for m in body["messages"])
        assert len(answer) <= body["max_tokens"] and prompt + body["max_tokens"] <= n_ctx
