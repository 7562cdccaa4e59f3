"""The result of ``extract`` (dataclasses) and the limits the extractor works within."""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field

CATEGORIES = ("preference", "personal", "project", "schedule", "technical", "other")
SUMMARY_MAX_WORDS = 300
MAX_TOPICS = 8
MAX_OPEN_QUESTIONS = 8
MAX_MESSAGE_CHARS = 8000
MAX_SENTENCES_PER_MESSAGE = 200
MAX_SENTENCE_CHARS = 600
MAX_UNIT_WORDS = 50
NEW_SHARE = 0.6  # the most of the summary budget new sentences may take
KEY_MAX = 255


@dataclass
class ExtractedFact:
    category: str  # one of CATEGORIES
    subject: str  # what the fact is about; "" if unclear. Same subject + new text = supersedes.
    text: str  # third-person statement about the user
    importance: float  # 0..1
    message_index: int


@dataclass
class ExtractedDecision:
    what: str
    context: str = ""
    rationale: str = ""
    alternatives: list[str] = field(default_factory=list)
    stakeholders: list[str] = field(default_factory=list)
    status: str = "decided"  # "decided" or "proposed"
    message_index: int = 0


@dataclass
class ExtractedAction:
    what: str
    owner: str = ""
    due_date: datetime.date | None = None
    status: str = "open"  # "open" or "done"
    depends_on: list[str] = field(default_factory=list)
    message_index: int = 0


@dataclass
class Extraction:
    summary: str
    topics: list[str] = field(default_factory=list)
    decisions: list[ExtractedDecision] = field(default_factory=list)
    action_items: list[ExtractedAction] = field(default_factory=list)
    facts: list[ExtractedFact] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """JSON-serialisable dict (due dates as ISO strings or None)."""
        data = asdict(self)
        for action in data["action_items"]:
            due = action["due_date"]
            action["due_date"] = due.isoformat() if due else None
        return data
