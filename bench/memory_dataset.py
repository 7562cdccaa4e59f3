"""A labelled retrieval set for ``bench/memory.py``: planted facts, paraphrased questions,
distractors. Deterministic: the same arguments give the same set on every machine and run.
The personas' texts are data: ``bench/data/personas.json`` (and ``acknowledgements.json``).

How it was built (written in full before anything was measured against it, and not tuned to
any retriever afterwards):

* **Four users** ("personas": family and home, an ops engineer, health and travel, a bakery
  owner), each with 13 **planted facts**: a user message that states the fact, the way people
  mention things in passing, sometimes inside a longer message.
* Each fact has **one or two questions** asked later, worded the way someone asks when they do
  not remember their own wording: synonyms ("dental checkup" for "dentist appointment"),
  other word forms, other phrasings ("my husband's mom" for "my mother-in-law"). Some share
  no content word with the statement at all; the benchmark reports that split.
* Each fact has two or three **near misses**: messages of the same user that share words with
  the question or the statement but do not state the fact ("My dentist says I should floss
  more"). They are hard negatives.
* The rest are **distractors** from ``bench/corpus.py`` (generic user/assistant chat about
  software, cooking, travel; a per-user seed), split over several conversations; planted
  statements and near misses are inserted at random positions (seeded), each followed by a
  short assistant acknowledgement that does not repeat it.
* Every planted fact also has a third-person **fact text** (as the memory extractor would
  write it); every other fact (even index within its persona) is stored as a ``Fact`` row
  whose source message is the planted message, beside **background facts**, decisions and
  action items that no question asks about (distractors of those kinds). Fact rows of both
  groups draw their importance from the same range.
* Timestamps spread over the last 180 days (conversations start on random days; messages are
  30-90 s apart); planted messages get the time of the position they land at.

A hit is **relevant** to a question when it is the planted message or the planted ``Fact``
row (whose source is the planted message): the kinds and ids are in ``Question.relevant`` once
``bench/memory.py`` has stored the set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from bench.corpus import chat_messages
from bench.data import load_json

DAYS = 180


@dataclass(frozen=True)
class Planted:
    statement: str  # the user message that states the fact
    questions: tuple[str, ...]  # asked later, in other words
    fact: str  # third-person text, for the Fact row
    near_misses: tuple[str, ...]  # same user, shared words, not the fact
    category: str = "personal"


@dataclass(frozen=True)
class Persona:
    name: str
    planted: tuple[Planted, ...]
    background_facts: tuple[str, ...]
    decisions: tuple[str, ...]
    action_items: tuple[str, ...]


def _persona(data: dict) -> Persona:
    planted = tuple(Planted(**fact) for fact in data["planted"])
    return Persona(**{**data, "planted": planted})


# The personas and the acknowledgements after a planted message: bench/data/*.json.
PERSONAS = tuple(_persona(data) for data in load_json("personas.json"))
ACKS = load_json("acknowledgements.json")


# -- the generated set ------------------------------------------------------------------------


@dataclass
class Msg:
    role: str
    content: str
    seconds_ago: int = 0
    planted: int | None = None  # index of the planted fact it states, within its persona


@dataclass
class Conv:
    title: str
    messages: list[Msg] = field(default_factory=list)


@dataclass
class FactRow:
    text: str
    category: str
    importance: float
    seconds_ago: int
    planted: int | None = None  # the planted fact it records (its source message), or None


@dataclass
class UserSet:
    persona: Persona
    conversations: list[Conv]
    facts: list[FactRow]
    decisions: list[tuple[str, int]]  # (text, seconds ago)
    action_items: list[tuple[str, int]]


@dataclass
class Question:
    user: int  # index into Dataset.users
    planted: int  # index of the planted fact
    text: str
    statement: str
    relevant: set[tuple[str, int]] = field(default_factory=set)  # filled once stored


@dataclass
class Dataset:
    users: list[UserSet]
    questions: list[Question]

    @property
    def message_count(self) -> int:
        return sum(len(c.messages) for u in self.users for c in u.conversations)


def _approx_tokens(text: str) -> int:
    # corpus.chat_messages only sizes its sentence pool with this; exact counts are not needed.
    return max(1, round(len(text) / 4))


def build(
    *, distractors_per_user: int = 3000, conversations_per_user: int = 8, seed: int = 4242
) -> Dataset:
    """The labelled set: for each persona, its conversations (distractor chat with the planted
    statements and near misses inserted), its Fact rows, and every question."""
    users: list[UserSet] = []
    questions: list[Question] = []
    for index, persona in enumerate(PERSONAS):
        rng = random.Random(seed * 100 + index)
        chat = chat_messages(distractors_per_user, _approx_tokens, seed=seed * 1000 + index)
        # Split the chat into conversations of random lengths (whole user/assistant pairs).
        pairs = [chat[i : i + 2] for i in range(0, len(chat) - 1, 2)]
        cuts = sorted(rng.sample(range(1, len(pairs)), conversations_per_user - 1))
        bounds = [0, *cuts, len(pairs)]
        convs = [
            Conv(
                title=f"{persona.name} chat {c + 1}",
                messages=[
                    Msg(role, text)
                    for pair in pairs[bounds[c] : bounds[c + 1]]
                    for role, text in pair
                ],
            )
            for c in range(conversations_per_user)
        ]
        # Insert planted statements and near misses (user turn + acknowledgement) at random
        # pair boundaries of random conversations.
        inserts: list[tuple[str, int | None]] = [
            (p.statement, i) for i, p in enumerate(persona.planted)
        ]
        inserts += [(text, None) for p in persona.planted for text in p.near_misses]
        rng.shuffle(inserts)
        for text, planted in inserts:
            conv = rng.choice(convs)
            at = 2 * rng.randint(0, len(conv.messages) // 2)
            conv.messages[at:at] = [
                Msg("user", text, planted=planted),
                Msg("assistant", rng.choice(ACKS)),
            ]
        # Timestamps: each conversation starts on a random day within DAYS, messages 30-90 s
        # apart, never in the future.
        for conv in convs:
            span = sum(rng.randint(30, 90) for _ in conv.messages)
            start = rng.randint(span, DAYS * 86400)
            for msg in conv.messages:
                msg.seconds_ago = start
                start = max(start - rng.randint(30, 90), 0)
        stated_at = {
            m.planted: m.seconds_ago for c in convs for m in c.messages if m.planted is not None
        }
        facts = [
            FactRow(p.fact, p.category, round(rng.uniform(0.4, 0.9), 2), stated_at[i], i)
            for i, p in enumerate(persona.planted)
            if i % 2 == 0
        ]
        facts += [
            FactRow(text, "other", round(rng.uniform(0.4, 0.9), 2), rng.randint(0, DAYS * 86400))
            for text in persona.background_facts
        ]
        decisions = [(text, rng.randint(0, DAYS * 86400)) for text in persona.decisions]
        actions = [(text, rng.randint(0, DAYS * 86400)) for text in persona.action_items]
        users.append(UserSet(persona, convs, facts, decisions, actions))
        for i, planted in enumerate(persona.planted):
            questions += [Question(index, i, q, planted.statement) for q in planted.questions]
    return Dataset(users=users, questions=questions)
