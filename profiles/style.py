"""Communication style: read one message, learn a user's style from many.

Pure Python (no Django), deterministic, and cheap (see ``bench/style.py``). ``analyse(text)``
scores one message on each metric, each in 0..1, or ``None`` when the message carries no
evidence for that metric; ``blend`` folds a reading into a running average.

The signals, metric by metric (word lists are English; in another language a message still
yields its length, structure, code and emoji signals):

formality (0 casual .. 1 formal)
    Formal points: salutations and sign-offs ("Dear", "Good morning", "Kind regards"),
    forms of address ("Sir", "Madam"), politeness ("please", "kindly", "thank you",
    "could you", "would it be possible"), formal vocabulary ("regarding", "require",
    "furthermore"), and a capitalised, punctuated sentence.
    Casual points: casual greetings ("hey", "yo", "hiya"), slang and chat abbreviations
    ("gonna", "lol", "btw", "thx"), contractions ("I'm", "don't"; at most 1.5 points), repeated
    "!!" or "?!", ASCII emoticons (":)", ":D"), emoji, and an all-lowercase unpunctuated message.
    Each word or phrase marker counts once per message, however often it is repeated.
    Score: ``(formal + 1) / (formal + casual + 2)`` (0.5 when there is no signal either way).
    No evidence: a message with neither words nor emoji.

technical_level (0 beginner .. 1 expert)
    Points: everyday computing words ("python", "code", "bug") 0.3 each; domain vocabulary
    ("api", "implementation", "concurrency", "dependency injection") 1 each (distinct terms);
    identifiers in prose (``snake_case``, ``camelCase``, ``obj.method()``, ``file.py``,
    ``ValueError``, ``--flag``) and inline code spans 1 each; fenced code blocks 3 each.
    Score: ``points / (points + 2)``.
    No evidence: no points and fewer than 8 words ("thanks, that worked!" says nothing about
    expertise and must not drag an expert towards beginner).

verbosity (0 terse .. 1 lengthy)
    Length of the prose (fenced code is not prose: a pasted traceback is not verbosity) on a log
    scale, 4 words -> 0 and 250 words -> 1, plus 0.05 per structural element (extra paragraph,
    list item, heading), at most 0.2.
    No evidence: no prose words.

emoji_use (0 never .. 1 always)
    Emoji counted by Unicode code point ranges (pictographs, emoticons, transport, dingbats,
    miscellaneous symbols, regional-indicator flags...), one per sequence: skin-tone modifiers,
    variation selectors and zero-width-joined families count once. 0 emoji -> 0, 1 -> 0.6,
    2 -> 0.8, 3 or more -> 1.
    No evidence: an empty message.

humour (0 never .. 1 always)
    Markers, each counted once: laughter ("haha", "lol", "lmao", "hehe"), joking words
    ("kidding", "jk", "joke", "pun"), playful phrases ("no pun intended", "plot twist", "famous
    last words", "you had one job") and winking emoticons (";)", ":P", "xD"). Emoji are not
    humour here (they are emoji_use). 0 markers -> 0, 1 -> 0.6, 2 -> 0.8, 3 or more -> 1.
    No evidence: fewer than 4 words and no marker.

references_professional, references_academic, references_pop (0 never .. 1 every message)
    Whether the message makes a reference of that kind: business and workplace terms ("KPI",
    "stakeholders", "Q3", "circle back", "as per"); scholarly ones ("et al", "peer-reviewed",
    "studies show", "Kant", "Darwin"); popular culture (films, series, games, music, memes:
    "Star Wars", "Harry Potter", "Marvel", "The Office", "Minecraft", "Taylor Swift", "may the
    force"). 1 when present, else 0. No evidence: fewer than 6 words and no reference.

pace (0 quick short exchanges .. 1 long considered messages)
    The rhythm of the exchange, which the text alone cannot tell: the gap between the end of
    the assistant's previous reply in the same conversation and this message, on a log scale
    (10 s -> 0, 5 min -> 1), weighted 0.7, plus the message's verbosity weighted 0.3 (a long
    message takes long to write; a one-line answer after a pause is still a pause). Quick
    back-and-forth scores near 0, long messages after a considered pause near 1. Unlike
    verbosity, a long message sent seconds after the reply (a paste) is not slow, and a short
    one after minutes of reading is not quick.
    No evidence: no gap known (the first message of a conversation, or a caller with no
    times), a gap over 30 minutes (the user left and came back: that says nothing about how
    they talk), or no prose words.

Learning: ``blend`` is a running mean that starts from a prior worth ``PRIOR_WEIGHT`` messages,
so one message moves a metric by at most ``1 / (PRIOR_WEIGHT + 1)`` of the way to its reading and
a hundred consistent messages bring it within 5% of them. After ``HORIZON`` messages the weight
of a new message stops shrinking (an exponential moving average over about ``HORIZON`` messages),
so a style that changes over months is followed instead of frozen.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from itertools import pairwise

METRICS = (
    "formality",
    "technical_level",
    "verbosity",
    "emoji_use",
    "humour",
    "references_professional",
    "references_academic",
    "references_pop",
    "pace",
)
REFERENCE_KINDS = ("professional", "academic", "pop")

# Where a metric starts before any message, and how many messages that prior is worth.
PRIORS = {
    "formality": 0.5,
    "technical_level": 0.5,
    "verbosity": 0.4,
    "emoji_use": 0.1,
    "humour": 0.1,
    "references_professional": 0.0,
    "references_academic": 0.0,
    "references_pop": 0.0,
    "pace": 0.5,
}
PRIOR_WEIGHT = 5
HORIZON = 200


@dataclass(frozen=True, slots=True)
class StyleReading:
    """One message's scores; ``None`` means the message says nothing about that metric."""

    formality: float | None = None
    technical_level: float | None = None
    verbosity: float | None = None
    emoji_use: float | None = None
    humour: float | None = None
    references_professional: float | None = None
    references_academic: float | None = None
    references_pop: float | None = None
    pace: float | None = None

    @property
    def has_evidence(self) -> bool:
        return any(getattr(self, name) is not None for name in METRICS)

    def as_dict(self) -> dict[str, float | None]:
        return asdict(self)


def blend(current: float, count: int, reading: float) -> float:
    """The running average after one more reading; ``count`` readings are already in ``current``.

    Starting from ``PRIORS[metric]`` with ``count == 0`` this is the mean of the prior (weighted
    ``PRIOR_WEIGHT``) and every reading so far, until ``HORIZON`` readings; then an exponential
    moving average with weight ``1 / (PRIOR_WEIGHT + HORIZON + 1)``.
    """
    alpha = 1.0 / (PRIOR_WEIGHT + min(max(count, 0), HORIZON) + 1)
    value = current + alpha * (reading - current)
    return min(1.0, max(0.0, value))


# -- vocabulary ------------------------------------------------------------------------------

FORMAL_WORDS = {
    # salutations, sign-offs and forms of address
    "dear": 1.5,
    "greetings": 1.0,
    "regards": 1.5,
    "sincerely": 1.5,
    "respectfully": 1.5,
    "cordially": 1.5,
    "sir": 1.5,
    "madam": 1.5,
    "mr": 0.5,
    "mrs": 0.5,
    "ms": 0.5,
    "dr": 0.5,
    # politeness
    "please": 1.0,
    "kindly": 1.0,
    "appreciate": 0.5,
    "appreciated": 0.5,
    "grateful": 0.5,
    "apologies": 0.5,
    # formal vocabulary
    "require": 0.5,
    "requires": 0.5,
    "assistance": 0.5,
    "regarding": 0.5,
    "concerning": 0.5,
    "furthermore": 0.5,
    "moreover": 0.5,
    "therefore": 0.5,
    "nevertheless": 0.5,
    "consequently": 0.5,
    "accordingly": 0.5,
    "hereby": 0.5,
    "herewith": 0.5,
    "pursuant": 0.5,
    "inquire": 0.5,
    "enquire": 0.5,
    "shall": 0.5,
}
FORMAL_PHRASES = {
    ("good", "morning"): 1.5,
    ("good", "afternoon"): 1.5,
    ("good", "evening"): 1.5,
    ("thank", "you"): 1.0,
    ("could", "you"): 1.0,
    ("would", "you"): 1.0,
    ("may", "i"): 1.0,
    ("would", "it"): 0.5,
    ("i", "would"): 0.5,
    ("best", "regards"): 0.5,
    ("to", "whom"): 1.5,
}
CASUAL_WORDS = {
    # casual greetings
    "hey": 1.5,
    "heya": 1.5,
    "hiya": 1.5,
    "yo": 1.5,
    "sup": 1.5,
    "howdy": 1.5,
    "hi": 0.5,
    # slang and chat abbreviations
    "gonna": 1.0,
    "wanna": 1.0,
    "gotta": 1.0,
    "kinda": 1.0,
    "sorta": 1.0,
    "dunno": 1.0,
    "lemme": 1.0,
    "gimme": 1.0,
    "ya": 1.0,
    "yeah": 1.0,
    "yep": 1.0,
    "yup": 1.0,
    "nope": 1.0,
    "nah": 1.0,
    "cool": 0.5,
    "awesome": 0.5,
    "dude": 1.0,
    "bro": 1.0,
    "guys": 0.5,
    "lol": 1.0,
    "lmao": 1.0,
    "rofl": 1.0,
    "omg": 1.0,
    "haha": 1.0,
    "hahaha": 1.0,
    "btw": 1.0,
    "imo": 1.0,
    "imho": 1.0,
    "tbh": 1.0,
    "idk": 1.0,
    "thx": 1.0,
    "ty": 1.0,
    "pls": 1.0,
    "plz": 1.0,
    "u": 1.0,
    "ur": 1.0,
    "cuz": 1.0,
    "ok": 0.5,
    "okay": 0.5,
    "okie": 1.0,
    "yay": 1.0,
    "oops": 0.5,
    "ugh": 1.0,
    "meh": 1.0,
    "stuff": 0.5,
}
CASUAL_PHRASES = {("hey", "there"): 0.5, ("no", "worries"): 1.0, ("what", "up"): 1.0}
CONTRACTION_ENDINGS = ("n't", "'m", "'re", "'ll", "'ve", "'d")
CONTRACTIONS = {
    "it's",
    "that's",
    "what's",
    "there's",
    "here's",
    "let's",
    "who's",
    "how's",
    "where's",
    "he's",
    "she's",
    "y'all",
}

BASIC_TECH = {
    "code",
    "coding",
    "program",
    "programming",
    "programmer",
    "python",
    "javascript",
    "java",
    "html",
    "css",
    "software",
    "computer",
    "app",
    "website",
    "bug",
    "bugs",
    "error",
    "install",
    "script",
    "function",
    "variable",
    "loop",
    "database",
    "server",
    "data",
    "browser",
    "spreadsheet",
    "excel",
    "linux",
    "windows",
    "string",
    "file",
    "technical",
}
BASIC_TECH |= {f"{word}s" for word in BASIC_TECH}
ADVANCED_TECH = {
    "api",
    "apis",
    "endpoint",
    "implementation",
    "implement",
    "algorithm",
    "complexity",
    "latency",
    "throughput",
    "concurrency",
    "concurrent",
    "async",
    "asynchronous",
    "await",
    "thread",
    "threads",
    "mutex",
    "deadlock",
    "polymorphism",
    "inheritance",
    "encapsulation",
    "abstraction",
    "refactor",
    "refactoring",
    "schema",
    "migration",
    "migrations",
    "query",
    "queries",
    "index",
    "indexes",
    "transaction",
    "transactions",
    "orm",
    "sql",
    "nosql",
    "postgres",
    "postgresql",
    "mysql",
    "sqlite",
    "redis",
    "kafka",
    "docker",
    "kubernetes",
    "microservice",
    "microservices",
    "serialization",
    "serialize",
    "deserialize",
    "regex",
    "compiler",
    "runtime",
    "interpreter",
    "bytecode",
    "recursion",
    "recursive",
    "hashmap",
    "cache",
    "caching",
    "protocol",
    "http",
    "https",
    "tcp",
    "udp",
    "dns",
    "tls",
    "ssl",
    "jwt",
    "oauth",
    "websocket",
    "websockets",
    "json",
    "yaml",
    "graphql",
    "restful",
    "grpc",
    "middleware",
    "framework",
    "django",
    "flask",
    "fastapi",
    "react",
    "typescript",
    "rust",
    "golang",
    "kotlin",
    "git",
    "rebase",
    "deployment",
    "pipeline",
    "terraform",
    "aws",
    "gcp",
    "kernel",
    "syscall",
    "pointer",
    "pointers",
    "heap",
    "tensor",
    "gradient",
    "embedding",
    "embeddings",
    "transformer",
    "inference",
    "tokenizer",
    "benchmark",
    "profiler",
    "profiling",
    "idempotent",
    "idempotency",
    "immutable",
    "mutable",
    "closure",
    "decorator",
    "generator",
    "iterator",
    "coroutine",
    "callback",
    "monad",
    "interface",
    "namespace",
    "dependency",
    "dependencies",
    "sdk",
    "cli",
    "backend",
    "frontend",
    "traceback",
    "stacktrace",
    "exception",
    "segfault",
    "boolean",
    "integer",
    "array",
    "struct",
    "enum",
    "generics",
    "linter",
    "pytest",
    "unittest",
    "regression",
    "ci",
    "webhook",
    "payload",
    "quantization",
    "vectorization",
}
ADVANCED_PHRASES = {
    ("dependency", "injection"): 1.5,
    ("race", "condition"): 1.5,
    ("memory", "leak"): 1.5,
    ("garbage", "collection"): 1.5,
    ("unit", "tests"): 1.0,
    ("unit", "test"): 1.0,
    ("machine", "learning"): 1.0,
    ("big", "o"): 1.5,
    ("type", "hints"): 1.5,
    ("event", "loop"): 1.5,
    ("connection", "pool"): 1.5,
    ("load", "balancer"): 1.5,
    ("context", "window"): 1.0,
}

HUMOUR_WORDS = frozenset(
    {"haha", "hahaha", "hahahaha", "hehe", "hehehe", "lol", "lolol", "lmao", "lmfao", "rofl"}
    | {"kidding", "jk", "joke", "joking", "jokes", "pun", "puns", "punny", "lulz", "xd"}
)
HUMOUR_PHRASES = (
    "no pun intended", "pun intended", "just kidding", "plot twist", "famous last words",
    "you had one job", "spoiler alert", "what could possibly go wrong", "i'm dying",
    "send help", "asking for a friend", "said no one ever", "because reasons",
)  # fmt: skip
WINK_RE = re.compile(r"(?<!\S)(?:;-?\)|:-?[pP]|[xX][dD])(?!\w)")
REFERENCE_WORDS = {
    "professional": frozenset(
        {"kpi", "kpis", "roi", "okr", "okrs", "stakeholder", "stakeholders", "deliverable"}
        | {"deliverables", "q1", "q2", "q3", "q4", "synergy", "synergies", "sla", "slas"}
        | {"onboarding", "roadmap", "headcount", "quarterly", "b2b", "saas", "compliance"}
    ),
    "academic": frozenset(
        {"peer-reviewed", "hypothesis", "thesis", "dissertation", "citation", "citations"}
        | {"journal", "empirical", "meta-analysis", "kant", "darwin", "einstein", "freud"}
        | {"plato", "aristotle", "nietzsche", "foucault", "descartes", "hegel", "popper"}
    ),
    "pop": frozenset(
        {"netflix", "marvel", "pokemon", "pokémon", "minecraft", "fortnite", "zelda", "mario"}
        | {"hogwarts", "gandalf", "yoda", "batman", "superman", "avengers", "simpsons", "meme"}
        | {"memes", "tiktok", "beyonce", "beyoncé", "spongebob", "shrek", "barbie", "sitcom"}
    ),
}
REFERENCE_PHRASES = {
    "professional": (
        "circle back", "as per", "per our", "action items", "best practices", "board meeting",
        "industry standard", "touch base", "going forward", "bottom line", "key stakeholders",
    ),
    "academic": (
        "et al", "studies show", "research shows", "according to research", "the literature",
        "a study", "a paper", "the paper", "peer reviewed", "in theory", "the theory of",
    ),
    "pop": (
        "star wars", "harry potter", "game of thrones", "lord of the rings", "the office",
        "star trek", "breaking bad", "stranger things", "the matrix", "taylor swift",
        "may the force", "winter is coming", "one does not simply", "i'll be back",
        "spider-man", "spiderman", "the simpsons", "doctor who", "the godfather",
    ),
}  # fmt: skip
REFERENCE_MIN_WORDS = 6
HUMOUR_MIN_WORDS = 4

# -- patterns ----------------------------------------------------------------------------------

# A word: letters and digits (any script), optionally joined by apostrophes ("don't").
WORD_RE = re.compile(r"\w+(?:'\w+)*")
# File extensions that make a dotted word a file name (``views.py``).
CODE_EXTENSIONS = frozenset(
    {"py", "js", "ts", "tsx", "jsx", "json", "yml", "yaml", "toml", "sql", "html", "css", "go"}
    | {"rs", "java", "rb", "sh", "cfg", "ini", "md", "csv"}
)
_EDGE_PUNCTUATION = "`\"'.,;:!?[]{}<>"
EMOTICON_RE = re.compile(r"(?<!\S)(?:[:;=8][-']?[()DPp3/\\|\]\[]|<3|[xX]D)(?!\w)")
LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|#{1,6})\s+", re.MULTILINE)
PUNCTUATED_RE = re.compile(r"[.!?…:)]\W*$")

# Emoji: one cluster per match. A base pictograph, then any modifiers, variation selectors and
# zero-width-joined pictographs; or a pair of regional indicators (a flag).
_EMOJI_BASE = (
    "\u231a\u231b\u23e9-\u23f3\u23f8-\u23fa"  # watch, hourglass, media buttons
    "\u2600-\u27bf"  # miscellaneous symbols, dingbats
    "\u2b1b\u2b1c\u2b50\u2b55"  # large squares, star, circle
    "\U0001f004\U0001f0cf\U0001f170-\U0001f251"  # mahjong, playing card, enclosed supplement
    "\U0001f300-\U0001f3fa"  # pictographs (skin-tone modifiers 1f3fb-1f3ff excluded)
    "\U0001f400-\U0001f64f"  # pictographs, emoticons
    "\U0001f680-\U0001f6ff"  # transport and map
    "\U0001f7e0-\U0001f7eb"  # coloured circles and squares
    "\U0001f90c-\U0001f9ff"  # supplemental symbols and pictographs
    "\U0001fa70-\U0001faff"  # symbols and pictographs extended-A
)
_ASCII_RUN_RE = re.compile(r"[\x00-\x7f]+")
_EMOJI_MODIFIER = "\ufe0f\u20e3\U0001f3fb-\U0001f3ff"
EMOJI_RE = re.compile(
    rf"[\U0001f1e6-\U0001f1ff]{{2}}"
    rf"|[{_EMOJI_BASE}][{_EMOJI_MODIFIER}]*(?:\u200d[{_EMOJI_BASE}][{_EMOJI_MODIFIER}]*)*"
)

VERBOSITY_MIN_WORDS = 4
VERBOSITY_MAX_WORDS = 250
TECH_HALF_POINTS = 2.0
TECH_MIN_WORDS = 8
_LOG_SPAN = math.log(VERBOSITY_MAX_WORDS / VERBOSITY_MIN_WORDS)
# Pace: the gap from the previous reply's end, in seconds (see the module docstring).
PACE_QUICK_SECONDS = 10.0
PACE_SLOW_SECONDS = 300.0
PACE_AWAY_SECONDS = 1800.0
PACE_GAP_WEIGHT = 0.7
_PACE_SPAN = math.log(PACE_SLOW_SECONDS / PACE_QUICK_SECONDS)


def count_emoji(text: str) -> int:
    """Emoji in ``text``, one per sequence (a family or a flag counts once)."""
    if text.isascii():
        return 0
    # No emoji is ASCII: scanning only what is left is several times faster.
    return len(EMOJI_RE.findall(_ASCII_RUN_RE.sub(" ", text)))


def analyse(text: str, *, gap_seconds: float | None = None) -> StyleReading:
    """Score one message on the metrics (see the module docstring for the signals).
    ``gap_seconds``: the time since the end of the assistant's previous reply in the same
    conversation (None when there is none or it is unknown): the pace's evidence."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    text = text.strip()
    if not text:
        return StyleReading()
    if "\u2019" in text:
        text = text.replace("\u2019", "'")

    code_blocks = 0
    prose = text
    if "```" in text:
        parts = text.split("```")
        code_blocks = len(parts) // 2
        prose = "\n".join(parts[0::2]).strip()

    emoji = count_emoji(prose)
    lower = WORD_RE.findall(prose.lower())
    distinct = set(lower)
    pairs = set(pairwise(lower))
    markers = _markers(prose, distinct)
    verbosity = _verbosity(prose, len(lower))

    return StyleReading(
        formality=_formality(prose, lower, distinct, pairs, emoji),
        technical_level=_technical_level(prose, len(lower), distinct, pairs, code_blocks),
        verbosity=verbosity,
        emoji_use=_emoji_use(emoji),
        humour=_humour(prose, len(lower), markers.get("humour", 0)),
        **_references(len(lower), markers),
        pace=pace_score(gap_seconds, verbosity),
    )


def _formality(
    prose: str,
    lower: list[str],
    distinct: set[str],
    pairs: set[tuple[str, str]],
    emoji: int,
) -> float | None:
    if not lower and not emoji:
        return None
    formal = sum(FORMAL_WORDS[word] for word in FORMAL_WORDS.keys() & distinct)
    formal += sum(FORMAL_PHRASES[pair] for pair in FORMAL_PHRASES.keys() & pairs)
    casual = sum(CASUAL_WORDS[word] for word in CASUAL_WORDS.keys() & distinct)
    casual += sum(CASUAL_PHRASES[pair] for pair in CASUAL_PHRASES.keys() & pairs)
    if "'" in prose:
        contractions = sum(
            1
            for word in distinct
            if "'" in word and (word in CONTRACTIONS or word.endswith(CONTRACTION_ENDINGS))
        )
        casual += min(0.5 * contractions, 1.5)
    casual += min(emoji * 0.5, 2.0)
    if "!!" in prose or "?!" in prose or "!?" in prose:
        casual += 0.5
    if ":" in prose or ";" in prose or "<3" in prose or "xD" in prose or "XD" in prose:
        casual += min(len(EMOTICON_RE.findall(prose)), 2)
    first = WORD_RE.search(prose)
    if first:
        capitalised = first.group()[0].isupper()
        punctuated = PUNCTUATED_RE.search(prose) is not None
        if capitalised and punctuated:
            formal += 0.25
        elif not capitalised and not punctuated and prose == prose.lower():
            casual += 0.5
    return (formal + 1.0) / (formal + casual + 2.0)


def _technical_level(
    prose: str,
    n_words: int,
    distinct: set[str],
    pairs: set[tuple[str, str]],
    code_blocks: int,
) -> float | None:
    points = 3.0 * code_blocks
    points += len(ADVANCED_TECH & distinct) + 0.3 * len(BASIC_TECH & distinct)
    points += sum(ADVANCED_PHRASES[pair] for pair in ADVANCED_PHRASES.keys() & pairs)
    if "`" in prose:
        points += prose.count("`") // 2  # inline code spans
    points += _identifiers(prose)
    if points == 0 and n_words < TECH_MIN_WORDS:
        return None
    return points / (points + TECH_HALF_POINTS)


def _identifiers(prose: str) -> int:
    """Distinct code-like tokens: snake_case, camelCase, call(), file.py, ValueError, --flag."""
    found: set[str] = set()
    for raw in prose.split():
        if len(raw) < 3:
            continue
        if raw.isalpha():
            # camelCase (lower first, an inner capital) or an exception class name.
            if raw.islower() or raw.isupper() or raw.istitle():
                continue
            if raw[0].islower() or raw.endswith(("Error", "Exception", "Warning")):
                found.add(raw)
            continue
        token = raw.strip(_EDGE_PUNCTUATION)
        if len(token) < 3:
            continue
        if token.startswith("--"):
            if token[2:3].isalpha():
                found.add(token)
            continue
        token = token.lstrip("(")
        if "_" in token and any(char.isalpha() for char in token):
            found.add(token)
        elif "(" in token:
            head = token.split("(", 1)[0]
            if head and (head[-1].isalnum() or head[-1] == "_"):
                found.add(token)
        elif "." in token:
            stem, _, extension = token.rpartition(".")
            if stem and extension.lower() in CODE_EXTENSIONS:
                found.add(token)
        elif token.isalpha() and token[0].islower() and not token.islower():
            found.add(token)
    return len(found)


def _verbosity(prose: str, n_words: int) -> float | None:
    if not n_words:
        return None
    length = math.log(max(n_words, VERBOSITY_MIN_WORDS) / VERBOSITY_MIN_WORDS) / _LOG_SPAN
    structure = 0.0
    if "\n" in prose:
        paragraphs = sum(1 for block in prose.split("\n\n") if block.strip())
        structure = 0.05 * (max(paragraphs - 1, 0) + len(LIST_ITEM_RE.findall(prose)))
    return min(1.0, min(length, 1.0) + min(structure, 0.2))


def pace_score(gap_seconds: float | None, verbosity: float | None) -> float | None:
    """The pace of one message from its gap and its verbosity (module docstring)."""
    if gap_seconds is None or verbosity is None or gap_seconds > PACE_AWAY_SECONDS:
        return None
    gap = math.log(max(gap_seconds, PACE_QUICK_SECONDS) / PACE_QUICK_SECONDS) / _PACE_SPAN
    return PACE_GAP_WEIGHT * min(gap, 1.0) + (1 - PACE_GAP_WEIGHT) * verbosity


def _emoji_use(emoji: int) -> float:
    if not emoji:
        return 0.0
    return min(1.0, 0.4 + 0.2 * emoji)


def _first_word(phrase: str) -> str:
    found = WORD_RE.match(phrase)
    if found is None:
        raise ValueError(f"a marker phrase starts with a word: {phrase!r}")
    return found.group()


def _marker_index() -> dict[str, tuple[tuple[str, str | None], ...]]:
    """word -> (what it marks: "humour" or a reference kind, the phrase it starts or None)."""
    index: dict[str, tuple[tuple[str, str | None], ...]] = {}

    def add(word: str, entry: tuple[str, str | None]) -> None:
        index[word] = (*index.get(word, ()), entry)

    for word in HUMOUR_WORDS:
        add(word, ("humour", None))
    for phrase in HUMOUR_PHRASES:
        add(_first_word(phrase), ("humour", phrase))
    for kind in REFERENCE_KINDS:
        for word in REFERENCE_WORDS[kind]:
            add(word, (kind, None))
        for phrase in REFERENCE_PHRASES[kind]:
            add(_first_word(phrase), (kind, phrase))
    return index


_MARKERS = _marker_index()


def _markers(prose: str, distinct: set[str]) -> dict[str, int]:
    """Humour markers and references by kind in one pass over the message's words: a phrase
    is searched for only when the message has its first word."""
    counts: dict[str, int] = {}
    lowered = None
    for word in distinct:
        entries = _MARKERS.get(word)
        if entries is None:
            continue
        for what, phrase in entries:
            if phrase is not None:
                lowered = lowered or prose.lower()
                if phrase not in lowered:
                    continue
            counts[what] = counts.get(what, 0) + 1
    return counts


def _humour(prose: str, n_words: int, markers: int) -> float | None:
    if ";" in prose or ":" in prose or "x" in prose or "X" in prose:
        markers += min(len(WINK_RE.findall(prose)), 1)
    if not markers:
        return 0.0 if n_words >= HUMOUR_MIN_WORDS else None
    return min(1.0, 0.4 + 0.2 * markers)


def _references(n_words: int, counts: dict[str, int]) -> dict[str, float | None]:
    absent = 0.0 if n_words >= REFERENCE_MIN_WORDS else None
    return {f"references_{kind}": 1.0 if counts.get(kind) else absent for kind in REFERENCE_KINDS}
