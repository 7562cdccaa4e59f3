"""Text helpers shared by the extractors: normalisation, contractions, words and names.

``normalise_key`` is the key facts, decisions and actions are deduplicated by (it is also
public). Contractions are expanded before any pattern runs; stopwords and number words
serve topics, content-word matching and counts; names are capitalised words that are not
sentence starters, days or months. ``third_person`` rewrites first and second person from
the point of view of the speaker (see ``summary``).
"""

from __future__ import annotations

import re
import unicodedata

from memory.extraction.types import KEY_MAX

# -- small helpers --------------------------------------------------------------------------

I = re.IGNORECASE  # noqa: E741 (re.I by its short name)


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


ARTICLES = frozenset({"a", "an", "the"})


def normalise_key(text: str) -> str:
    """Lowercase, no punctuation or articles, single spaces, at most 255 characters."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = re.sub(r"['\u2019`]", "", text)
    text = re.sub(r"[\W_]+", " ", text)
    words = [w for w in text.split() if w not in ARTICLES]
    return " ".join(words)[:KEY_MAX].rstrip()


def squash(text: str) -> str:
    return " ".join(text.split())


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def strip_end(text: str) -> str:
    return text.strip().strip(" \t,;:.!-\u2013\u2014\"'()[]").strip()


def short(text: str, limit: int) -> str:
    text = squash(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" ,;:") + "\u2026"


def sentence(text: str) -> str:
    """Capitalised, ending with one full stop unless it already ends a sentence."""
    text = squash(text).rstrip(" ,;:")
    if not text:
        return ""
    if text[-1] not in ".!?\u2026":
        text += "."
    return cap(text)


# -- contractions ---------------------------------------------------------------------------

_CONTRACTIONS = {
    "i'm": "I am",
    "im": "I am",
    "i've": "I have",
    "i'd": "I would",
    "i'll": "I will",
    "we're": "we are",
    "we've": "we have",
    "we'll": "we will",
    "we'd": "we would",
    "you're": "you are",
    "you've": "you have",
    "you'll": "you will",
    "you'd": "you would",
    "they're": "they are",
    "they've": "they have",
    "they'll": "they will",
    "don't": "do not",
    "dont": "do not",
    "doesn't": "does not",
    "doesnt": "does not",
    "didn't": "did not",
    "didnt": "did not",
    "can't": "cannot",
    "won't": "will not",
    "isn't": "is not",
    "aren't": "are not",
    "wasn't": "was not",
    "weren't": "were not",
    "haven't": "have not",
    "havent": "have not",
    "hasn't": "has not",
    "hadn't": "had not",
    "shouldn't": "should not",
    "wouldn't": "would not",
    "couldn't": "could not",
    "mustn't": "must not",
    "it's": "it is",
    "that's": "that is",
    "what's": "what is",
    "where's": "where is",
    "who's": "who is",
    "there's": "there is",
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "have to",
    "i": "I",
}
_CONTRACTION_RE = re.compile(
    r"(?<![\w'])("
    + "|".join(re.escape(k) for k in sorted(_CONTRACTIONS, key=len, reverse=True))
    + r")(?![\w'])",
    I,
)


def expand(text: str) -> str:
    """Straight quotes, expanded contractions, "i" -> "I"; everything else unchanged."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')

    def repl(m: re.Match) -> str:
        word = m.group(1)
        out = _CONTRACTIONS[word.lower()]
        if word[0].isupper() and out[0].islower():
            out = cap(out)
        return out

    return _CONTRACTION_RE.sub(repl, text)


# -- words ----------------------------------------------------------------------------------

_WORD_RE = re.compile(r"[^\W\d_][\w'-]*")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


STOPWORDS = wordset(
    """
a about above actually after again against ago all almost along already also although always am
among an and another any anybody anyone anything anyway anyways are around as ask asked at away
back be became because become been before being below best better between both but by came can
cannot could did do does doing done down during each either else enough etc even ever every
everyone everything exactly few find first for from fine get gets getting give given go goes
going gone good got great had has have having he her here hers herself him himself his how
however i if in indeed instead into is isn it its itself just keep kind know known last later
least less let lets like likely little look looks lot lots made make makes many may maybe me
might mine more most much must my myself need needs never new next no nobody none nor not
nothing now of off often oh ok okay on once one only or other others otherwise our ours
ourselves out over own perhaps please pretty probably put quite rather really right said same
say says see seem seems set shall she should show since so some somebody someone something
sometimes soon still such sure take tell than thank thanks that the their theirs them
themselves then there these they thing things think this those though thought through thus to
today together tomorrow too took toward try trying two under until up upon us use used using
very want wanted wants was way we well went were what whatever when where whether which while
who whole whom whose why will with within without would yeah yes yet you your yours yourself
yourselves hello hi hey cool nice sounds sound guess mean means able also lol btw fyi gonna
wanna got let's that's it's i'm i've i'd i'll don't can't won't didn't doesn't isn't you're
we're they're there's what's here's would've could've should've remember tell told answer
question questions reply help call called name user assistant via per day days week weeks
time times year years month months monday tuesday wednesday thursday friday saturday sunday
morning evening night tonight afternoon decided decide decision agreed agree todo action item
items remind reminder reason finished finish done need needed task tasks deadline guess okay
sorry wait thing stuff anything something really pretty write update read send call fix try
work works help helps explain show start keep getting makes talk bit cannot example examples
"""
)


def content_tokens(text: str) -> set[str]:
    out = set()
    for word in words(text.lower()):
        word = word.strip("'-")
        if len(word) < 3 or word in STOPWORDS:
            continue
        # a crude stem: "migration" and "migrate" meet at "migrat"; identifiers stay whole
        out.add(word[:6] if word.isalpha() else word)
    return out


def similar_tokens(a: set[str], b: set[str], threshold: float = 0.5) -> bool:
    """Whether two content-token sets overlap by ``threshold`` (Jaccard) or more."""
    return bool(a and b) and len(a & b) / len(a | b) >= threshold


# -- numbers and names ----------------------------------------------------------------------

NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "no": 0,
    "zero": 0,
}

# Capitalised words that are not people (sentence starters, pronouns, days, months, ...).
_NOT_NAMES = wordset(
    """
I We You They He She It The A An This That These Those Then So And But Or If When Also Finally
Everyone Everybody Nobody Someone Team Today Tomorrow Yesterday Monday Tuesday Wednesday Thursday
Friday Saturday Sunday January February March April May June July August September October
November December Please Maybe Perhaps Actually Now Ok Okay Yes No Hi Hey Hello Thanks After
Before Once Next Last First Our My Your Their His Her Its Let Lets Todo TODO Action Decision
Note Remember Because Since As Both All Who What Where Why How Which There Here Well Oh Just
Still Then Later Soon Sure Great Good Fine Also Again Someone Anyone Everyone Management
Engineering Product Design Marketing Sales Legal Support
"""
)


def is_name(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?", word)) and word not in _NOT_NAMES


NAMES = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:(?:\s*,\s*|\s+and\s+|\s*&\s*|,\s+and\s+)[A-Z][a-z]+)*"
NAME_SEP = re.compile(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+|\s*&\s*")


def names_in(text: str) -> list[str]:
    return [w for w in NAME_SEP.split(text) if is_name(w)]


# -- third person ---------------------------------------------------------------------------

_NO_CONJ = wordset(
    """will would can could should shall may might must did had was cannot used to and or
the a an not that this it so too both all only also never ever just always then there here
too am"""
)
_IRREGULAR = {"am": "is", "are": "is", "have": "has", "do": "does", "were": "was", "go": "goes"}
_ADVERBS = (
    r"really|also|just|still|usually|always|never|often|actually|already|definitely|absolutely|"
    r"sometimes|now|currently|only|mostly|generally|both|all|totally|honestly|no\s+longer"
)
_SUBJECT_RE = re.compile(
    rf"\b(?P<p>I|we|you)\b(?P<adv>(?:\s+(?:{_ADVERBS}))*)(?:(?P<sp>\s+)(?P<v>[a-z]+)\b)?", I
)
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[.,;:!?(\-\u2013\u2014\"]|\b(?:and|but|or|if|that|when|because|since|as|so|then|"
    r"where|which|while|until|unless|after|before|once|though|although))\s*$",
    I,
)
_OBJECT_RE = re.compile(r"\b(me|my|mine|myself|us|our|ours|ourselves|your|yours|yourself)\b", I)


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    past = low.endswith("ed") and not low.endswith("eed") and low not in ("embed", "shred")
    if low in _NO_CONJ or past or len(low) < 2:
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str, role: str = "user") -> str:
    """Rewrite first/second person into third person from the point of view of ``role``."""
    me, you = ("the user", "the assistant") if role == "user" else ("the assistant", "the user")
    we = "the team" if role == "user" else "the user and the assistant"
    plural_we = role != "user"

    def subject(m: re.Match) -> str:
        pron = m.group("p").lower()
        if pron == "we" and m.group("p") == "WE":
            return m.group(0)
        noun = {"i": me, "we": we, "you": you}[pron]
        verb = m.group("v")
        is_subject = pron == "i" or bool(_SUBJECT_BEFORE.search(m.string[: m.start()]))
        if pron == "you" and not is_subject:
            return noun + (m.group("adv") or "") + ((m.group("sp") or "") + verb if verb else "")
        if verb and is_subject and not (pron == "we" and plural_we):
            verb = _conjugate(verb)
        return noun + (m.group("adv") or "") + ((m.group("sp") or "") + verb if verb else "")

    def obj(m: re.Match) -> str:
        word = m.group(1)
        low = word.lower()
        if low == "us" and word == "US":
            return word
        if low in ("me", "myself"):
            return me
        if low in ("my", "mine"):
            return me + "'s"
        if low in ("us", "ourselves"):
            return we
        if low in ("our", "ours"):
            return we + "'s" if not plural_we else "their"
        if low == "yourself":
            return you
        return you + "'s"

    text = _SUBJECT_RE.sub(subject, text)
    return _OBJECT_RE.sub(obj, text)
