"""Domains: which subject a message is about, and what it says about the writer's proficiency.

Pure Python (no Django), deterministic, offline. ``analyse_domains(text)`` returns, for each
domain the message is about, a ``DomainEvidence``: a reading in 0 (beginner) .. 1 (expert), or
``None`` when the message names the domain without saying anything about the writer's level,
and a weight (1 for a message, ``STRONG_WEIGHT`` for a self-description). ``estimate`` folds a
reading into a domain's running score; ``level_for`` turns a score into a level, moving only on
enough evidence.

The domains (``DOMAINS``), each with everyday words that name it, jargon a practitioner uses,
the people who practise it and the verbs of doing it:

programming, cooking, finance, medicine, law, music, mathematics, fitness, gardening,
photography; and ``other``, everything else: no level is learned for it (the general technical
level of ``profiles.style`` covers it).

A domain is recognised from one of its words or phrases in the user's own prose. Not the user's
own vocabulary, so not read: fenced code blocks, quoted lines ("> ..."), indented lines and log
or traceback lines (a paste); a code block still says the message is about programming.

The reading, per domain (j: distinct jargon terms used, n: beginner signals):

- beginner signals: a definitional question about a domain term ("what is a roux?", "what does
  amortization mean"), and phrases such as "I don't understand", "in simple terms", "where do
  I start", "the basics". A term asked about is not counted as jargon used.
  Reading ``0.2 + 0.15 j - 0.1 (n - 1)`` (at least 0).
- no signal, no jargon, everyday words only and 6 words or more: 0.35 (plain talk). Fewer
  words: no evidence.
- jargon without beginner signals: ``0.45 + 0.2 j`` (1 term 0.65, 2 terms 0.85, 3 or more 1).
- self-descriptions (strong evidence, weight ``STRONG_WEIGHT``): "I'm new to X", "I've never
  cooked", "I know nothing about X", "I'm a beginner at X" read 0.05; "I know the basics of X",
  "I'm learning X" 0.5; "I'm a doctor", "I work as a lawyer", "I've been coding for 10 years",
  "I'm an expert in X" 0.95.

Learning: ``estimate`` is a running mean from a prior of 0.5 worth ``PRIOR_WEIGHT`` units of
evidence (a message is one unit, a self-description ``STRONG_WEIGHT``), an exponential moving
average after ``HORIZON`` units. ``level_for``: no level before ``MIN_EVIDENCE`` units; then
beginner at or below ``BEGINNER_MAX``, expert at or above ``EXPERT_MIN``, intermediate between;
a level already held moves only when the score is ``HYSTERESIS`` past the boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- the domains -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Domain:
    slug: str
    label: str
    words: frozenset[str]  # everyday words and phrases that name the domain
    jargon: frozenset[str]  # terms a practitioner uses
    people: frozenset[str]  # "I'm a ..." / "I work as a ..." -> expert
    verbs: frozenset[str]  # "I've never ..." -> beginner


def _terms(text: str) -> frozenset[str]:
    """Terms separated by commas; a one-word term also matches with a plural "s"."""
    return frozenset(term.strip() for term in text.split(",") if term.strip())


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "programming",
        "Programming",
        _terms(
            "programming, program, programs, code, coding, coder, python, javascript, java, "
            "html, css, software, app, website, bug, script, function, variable, loop, "
            "computer, developer, github, error message, command line, terminal"
        ),
        _terms(
            "api, endpoint, async, await, concurrency, mutex, deadlock, race condition, "
            "polymorphism, inheritance, refactor, refactoring, orm, sql, schema, migration, "
            "transaction, index, docker, kubernetes, microservice, regex, compiler, runtime, "
            "recursion, hashmap, closure, decorator, generator, iterator, coroutine, callback, "
            "dependency injection, memory leak, garbage collection, event loop, type hints, "
            "unit test, ci, pipeline, rebase, merge conflict, stack trace, traceback, segfault, "
            "pointer, heap, big o, idempotent, serialization, websocket, middleware, django, "
            "react, typescript, rust, golang, pytest, linter, generics, monad, thread pool, "
            "connection pool, load balancer, latency, throughput, cache invalidation, "
            "postgres, redis, kafka, grpc, graphql, oauth, jwt, lambda, interface, namespace"
        ),
        _terms(
            "programmer, developer, software engineer, software developer, web developer, "
            "backend developer, frontend developer, data engineer, devops engineer, "
            "sysadmin, coder"
        ),
        _terms("coded, programmed, written code, written a program, used a computer, code"),
    ),
    Domain(
        "cooking",
        "Cooking",
        _terms(
            "cook, cooking, cooked, recipe, bake, baking, baked, kitchen, oven, pasta, sauce, "
            "dinner, meal, chicken, bread, cake, soup, fry, frying, boil, boiling, roast, "
            "stove, pan, pot, knife, onion, garlic, rice, egg, dough, flour, butter, salt, "
            "vegetables, steak, food, dish, cookies"
        ),
        _terms(
            "roux, deglaze, deglazing, emulsify, emulsion, mise en place, maillard, brunoise, "
            "julienne, chiffonade, sous vide, blanch, blanching, braise, braising, confit, "
            "reduction, fond, beurre blanc, mother sauce, bechamel, hollandaise, "
            "tempering, proofing, autolyse, hydration, levain, sear, searing, caramelization, "
            "brine, dry brine, chiffon, mirepoix, sofrito, bain marie, "
            "gelatinization, baker's percentage, crumb structure, fond de veau, nappe, "
            "pan sauce, carryover cooking, dutch oven, cast iron seasoning"
        ),
        _terms("chef, cook, baker, pastry chef, line cook, sous chef, caterer"),
        _terms("cooked, baked, made bread, made pasta, boiled, fried, used an oven, cook, bake"),
    ),
    Domain(
        "finance",
        "Finance",
        _terms(
            "money, invest, investing, invested, investment, stock, stocks, shares, savings, "
            "budget, loan, mortgage, bank account, credit card, retirement, pension, tax, "
            "taxes, salary, debt, interest rate, crypto, bitcoin, fund, funds, broker, "
            "finance, financial"
        ),
        _terms(
            "etf, index fund, expense ratio, dividend yield, p/e ratio, price to earnings, "
            "diversification, asset allocation, rebalancing, dollar cost averaging, "
            "amortization, compound interest, capital gains, tax loss harvesting, bond yield, "
            "convexity, yield curve, basis points, liquidity, volatility, "
            "sharpe ratio, hedge, hedging, derivatives, call option, put "
            "option, short selling, ebitda, discounted cash flow, dcf, "
            "net present value, npv, irr, roth ira, 401k, apr, market cap, arbitrage"
        ),
        _terms(
            "accountant, financial analyst, financial advisor, trader, banker, "
            "portfolio manager, investment banker, economist, actuary, cpa"
        ),
        _terms("invested, saved, traded, bought a stock, bought stocks, invest, budgeted"),
    ),
    Domain(
        "medicine",
        "Medicine",
        _terms(
            "doctor, medicine, medical, health, symptom, symptoms, pain, fever, disease, "
            "illness, hospital, medication, pill, pills, blood pressure, diagnosis, "
            "prescription, headache, infection, vaccine, cough, allergy, treatment"
        ),
        _terms(
            "differential diagnosis, pathophysiology, etiology, prognosis, contraindication, "
            "contraindicated, pharmacokinetics, half-life, titrate, titration, comorbidity, "
            "comorbidities, tachycardia, bradycardia, hypertension, myocardial infarction, "
            "ecg, ekg, troponin, creatinine, egfr, sepsis, anticoagulant, anticoagulation, "
            "ace inhibitor, beta blocker, ssri, nsaid, intubation, auscultation, biopsy, "
            "idiopathic, prophylaxis, iv fluids, mg/kg, dosage adjustment, renal clearance, "
            "hba1c, metformin, insulin resistance, immunosuppression, metastasis"
        ),
        _terms(
            "doctor, physician, nurse, surgeon, pharmacist, paramedic, gp, "
            "cardiologist, oncologist, anesthesiologist, dentist, medical student, clinician"
        ),
        _terms("been to a doctor, studied medicine, taken medication"),
    ),
    Domain(
        "law",
        "Law",
        _terms(
            "law, legal, lawyer, contract, lease, landlord, tenant, court, judge, sue, "
            "lawsuit, police, illegal, copyright, divorce, custody"
        ),
        _terms(
            "tort, negligence, plaintiff, defendant, jurisdiction, statute of limitations, "
            "precedent, case law, indemnity, indemnification, liability clause, force majeure, "
            "breach of contract, estoppel, injunction, subpoena, deposition, "
            "summary judgment, habeas corpus, mens rea, due diligence, "
            "fiduciary duty, arbitration clause, severability, affidavit, probate, "
            "intellectual property, gdpr, data controller, lawful basis, statutory, "
            "pleading, appellate, voir dire, tortious"
        ),
        _terms(
            "lawyer, attorney, solicitor, barrister, paralegal, judge, legal counsel, "
            "law student, notary"
        ),
        _terms("signed a contract, been to court, read a contract, studied law"),
    ),
    Domain(
        "music",
        "Music",
        _terms(
            "music, song, songs, guitar, piano, violin, drums, sing, singing, band, "
            "instrument, melody, chords, chord, play music, concert, "
            "musician, lyrics, album, rhythm"
        ),
        _terms(
            "arpeggio, arpeggios, modulation, counterpoint, voice leading, cadence, "
            "dominant seventh, tritone substitution, circle of fifths, mixolydian, dorian, "
            "pentatonic, time signature, syncopation, polyrhythm, legato, staccato, "
            "fingerpicking, barre chord, inversion, inversions, secondary dominant, "
            "ii v i, diminished, augmented, suspended chord, sus4, transpose, key signature, "
            "ostinato, timbre, equalization, compression ratio, daw, reverb tail"
        ),
        _terms(
            "musician, pianist, guitarist, violinist, drummer, singer, composer, "
            "music teacher, conductor"
        ),
        _terms("played an instrument, played guitar, played piano, sung, played music"),
    ),
    Domain(
        "mathematics",
        "Mathematics",
        _terms(
            "math, maths, mathematics, equation, equations, algebra, geometry, fraction, "
            "fractions, percentage, calculate, formula, numbers, multiply, divide, "
            "statistics, probability, graph"
        ),
        _terms(
            "derivative, integral, eigenvalue, eigenvector, matrix, determinant, "
            "vector space, linear map, topology, homomorphism, isomorphism, group theory, "
            "manifold, differential equation, taylor series, convergence, bayes theorem, "
            "posterior, likelihood, variance, standard deviation, hypothesis test, "
            "p-value, proof by induction, modular arithmetic, prime factorization, "
            "lemma, theorem, corollary, bijection, cardinality"
        ),
        _terms("mathematician, statistician, math teacher, physicist"),
        _terms("studied math, done algebra, understood math"),
    ),
    Domain(
        "fitness",
        "Fitness",
        _terms(
            "gym, workout, exercise, lifting, weights, muscle, muscles, fitness, cardio, "
            "stretching, lose weight, push ups, squats, jog, jogging, marathon, treadmill, "
            "personal best, 5k, 10k"
        ),
        _terms(
            "progressive overload, hypertrophy, deload, rpe, one rep max, 1rm, periodization, "
            "vo2 max, lactate threshold, zone 2, tempo run, tdee, "
            "caloric deficit, compound lift, deadlift, romanian deadlift, hip hinge, "
            "eccentric, concentric, time under tension, mobility work, supersets"
        ),
        _terms("personal trainer, coach, athlete, physiotherapist, powerlifter, marathoner"),
        _terms("worked out, been to a gym, exercised, lifted weights, run"),
    ),
    Domain(
        "gardening",
        "Gardening",
        _terms(
            "garden, gardening, flowers, seeds, seedlings, growing, soil, watering, "
            "tomato plants, weeds, lawn, houseplant, houseplants, flower bed, greenhouse, "
            "fertiliser, fertilizer, potted plant"
        ),
        _terms(
            "hardening off, companion planting, crop rotation, ph level, mulch, mulching, "
            "compost tea, npk, nitrogen fixing, deadheading, pinching out, propagation, "
            "cuttings, rootstock, grafting, perennials, annuals, hardiness zone, "
            "overwintering, damping off, aphids, chlorosis, loam, vermiculite, perlite"
        ),
        _terms("gardener, horticulturist, landscaper, farmer, botanist"),
        _terms("grown anything, planted anything, gardened, kept a plant alive"),
    ),
    Domain(
        "photography",
        "Photography",
        _terms(
            "photo, photos, photography, camera, lens, photograph, "
            "phone camera, selfie, portrait, edit photos"
        ),
        _terms(
            "aperture, shutter speed, iso, depth of field, bokeh, focal length, prime lens, "
            "exposure triangle, histogram, white balance, raw files, dynamic range, "
            "bracketing, golden hour, rule of thirds, crop factor, full frame, "
            "manual mode, aperture priority, f-stop, stops of light, nd filter, lightroom"
        ),
        _terms("photographer, photojournalist, videographer, cinematographer"),
        _terms("used a camera, taken photos, taken a photo"),
    ),
)
OTHER = "other"
DOMAIN_SLUGS: tuple[str, ...] = (*(d.slug for d in DOMAINS), OTHER)
DOMAIN_LABELS: dict[str, str] = {d.slug: d.label for d in DOMAINS} | {OTHER: "Other"}
_BY_SLUG = {d.slug: d for d in DOMAINS}

LEVELS = ("beginner", "intermediate", "expert")

# -- learning ----------------------------------------------------------------------------------

PRIOR = 0.5
PRIOR_WEIGHT = 1
HORIZON = 50
STRONG_WEIGHT = 4
MIN_EVIDENCE = 3
BEGINNER_MAX = 0.4
EXPERT_MIN = 0.66
HYSTERESIS = 0.05

STRONG_READINGS = {"beginner": 0.05, "intermediate": 0.5, "expert": 0.95}
PLAIN_READING = 0.35
PLAIN_MIN_WORDS = 6
MAX_DOMAINS = 2  # the message's main domains: the prompt names at most this many


@dataclass(frozen=True, slots=True)
class DomainEvidence:
    """What one message says about one domain."""

    domain: str
    hits: int  # words and terms of the domain in the message
    reading: float | None = None  # 0 beginner .. 1 expert; None: no evidence of level
    weight: int = 0  # units of evidence (0 when reading is None)
    reason: str = ""  # why, in words: "self-description", "2 jargon terms", ...


def estimate(score: float, evidence: int, reading: float, weight: int = 1) -> float:
    """The running score after a reading worth ``weight`` units; ``evidence`` units are in it."""
    seen = PRIOR_WEIGHT + min(max(evidence, 0), HORIZON)
    value = score + weight * (reading - score) / (seen + weight)
    return min(1.0, max(0.0, value))


def level_for(score: float, evidence: int, current: str = "") -> str:
    """The level a score shows ("" before ``MIN_EVIDENCE`` units); a level held moves only
    when the score is ``HYSTERESIS`` past its boundary."""
    if evidence < MIN_EVIDENCE:
        return current if current in LEVELS else ""
    if score <= BEGINNER_MAX:
        banded = "beginner"
    elif score >= EXPERT_MIN:
        banded = "expert"
    else:
        banded = "intermediate"
    if current not in LEVELS or banded == current:
        return banded
    if current == "beginner" and score <= BEGINNER_MAX + HYSTERESIS:
        return current
    if current == "expert" and score >= EXPERT_MIN - HYSTERESIS:
        return current
    if current == "intermediate" and (BEGINNER_MAX - HYSTERESIS < score < EXPERT_MIN + HYSTERESIS):
        return current
    return banded


# -- reading one message -----------------------------------------------------------------------

WORD_RE = re.compile(r"\w+(?:['/-]\w+)*")
_FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# A pasted line: quoted, indented, a traceback or a log line.
_PASTE_LINE_RE = re.compile(
    r"^(?:\s*>|    |\t|\s*(?:Traceback|File \"|at [\w.$]+\(|\d{4}-\d\d-\d\d[ T]\d\d:|"
    r"\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\b))"
)


def _index() -> tuple[dict[str, list[tuple[str, str]]], int]:
    """term -> [(domain, kind)], kind "word" or "jargon"; and the longest term in words.
    Also fills ``_STARTS``: word -> the lengths of the terms it starts, longest first."""
    index: dict[str, list[tuple[str, str]]] = {}
    longest = 1
    for domain in DOMAINS:
        for kind, terms in (("word", domain.words), ("jargon", domain.jargon)):
            for term in terms:
                key = " ".join(WORD_RE.findall(term.lower()))
                longest = max(longest, key.count(" ") + 1)
                index.setdefault(key, []).append((domain.slug, kind))
                first, size = key.split(" ", 1)[0], key.count(" ") + 1
                _STARTS[first] = tuple(sorted({*_STARTS.get(first, ()), size, 1}, reverse=True))
                if " " not in key and not key.endswith("s") and len(key) > 2:
                    index.setdefault(key + "s", []).append((domain.slug, kind))
    return index, longest


_STARTS: dict[str, tuple[int, ...]] = {}
_INDEX, _LONGEST = _index()

_DEFINITION_RE = re.compile(
    r"\b(?:what(?:'s| is| are| does| do| exactly is)|what's an?|what is an?|define|"
    r"meaning of|explain(?: to me)?(?: what)?|never heard of|heard (?:the term|of))\s+"
    r"(?:an? |the )?([^?.!,;\n]{1,60})"
)
_BEGINNER_RE = re.compile(
    r"\b(?:i don'?t understand|i'?m (?:so |really |a bit |totally )?confused|"
    r"in simple terms|simple explanation|explain like i'?m|eli5|for dummies|"
    r"where (?:do|should) i (?:even )?start|the basics|basic question|stupid question|"
    r"dumb question|step by step|no idea (?:how|what)|is it normal (?:that|to)|"
    r"what does (?:that|this|it) mean|how do i even)\b"
)
_ADJ = r"(?:(?:completely|totally|very|quite|pretty|really|fairly|relatively|absolutely|brand) )*"
_SELF_BEGINNER_RE = re.compile(
    rf"\b(?:i'?m|i am) {_ADJ}(?:new to"
    rf"|a {_ADJ}(?:beginner|novice|newbie|noob)(?: (?:at|in|with|to))?"
    rf"|clueless about|hopeless at|terrible at)\s+(?P<x>[^.!?,;\n]{{1,40}})"
    rf"|\bi (?:know|understand) (?:nothing|very little|little) about\s+(?P<y>[^.!?,;\n]{{1,40}})"
    rf"|\bi don'?t know (?:anything|much) about\s+(?P<z>[^.!?,;\n]{{1,40}})"
    rf"|\bi(?:'ve| have) never\s+(?P<never>[^.!?,;\n]{{1,40}})"
    rf"|\b(?:first time|just (?:started|starting|getting into))\s+(?P<first>[^.!?,;\n]{{1,40}})"
)
_SELF_MIDDLE_RE = re.compile(
    r"\bi (?:know|understand) the basics of\s+(?P<x>[^.!?,;\n]{1,40})"
    r"|\b(?:i'?m|i am) (?:learning|studying|getting better at|an intermediate(?: in| at)?)\s+"
    r"(?P<y>[^.!?,;\n]{1,40})"
)
_SELF_EXPERT_RE = re.compile(
    r"(?:\b(?:i'?m|i am|i work as|i'?ve worked as|i have worked as)|(?:^|[.!?\n]\s*)as) "
    r"(?:a |an )?"
    r"(?:(?:senior|professional|practising|practicing|qualified|licensed|certified|"
    r"experienced|retired|lead|staff|principal|full-time|trained) )*"
    r"(?P<role>[a-z]+(?:[ -][a-z]+){0,3})"
    r"|\b(?:i'?m|i am) an? expert (?:in|at|on|with)\s+(?P<x>[^.!?,;\n]{1,40})"
    r"|\bi(?:'ve| have) been (?P<doing>[a-z]+ing|a [a-z ]{2,30}?) for (?:over |more than |about )?"
    r"(?:\d+|many|several|a few|ten|twenty|fifteen|five|six|seven|eight|nine) years"
    r"|\bi (?:teach|practise|practice)\s+(?P<teach>[^.!?,;\n]{1,40})"
    r"|\bi work in\s+(?P<field>[^.!?,;\n]{1,40})"
)
# Words without which a pattern cannot match: most messages skip the patterns.
_DEFINITION_HINTS = frozenset(
    {"what", "what's", "whats", "define", "meaning", "explain", "heard", "never"}
)
_BEGINNER_HINTS = frozenset(
    {"understand", "confused", "simple", "eli5", "dummies", "where", "basics", "basic"}
    | {"stupid", "dumb", "step", "idea", "normal", "mean", "even", "explain"}
)
_SELF_HINTS = frozenset({"i", "i'm", "im", "i've", "as", "first", "just"})
# "I work in finance": the field's own name.
_FIELDS = {
    "finance": "finance", "banking": "finance", "accounting": "finance",
    "medicine": "medicine", "healthcare": "medicine", "a hospital": "medicine",
    "law": "law", "a law firm": "law", "legal": "law",
    "software": "programming", "tech": "programming", "it": "programming",
    "music": "music", "a restaurant": "cooking", "a kitchen": "cooking", "restaurants": "cooking",
}  # fmt: skip


# "What is the best pan ...", "what is my budget ...": not asking what a term means.
_NOT_DEFINITIONAL = frozenset(
    {"best", "good", "right", "wrong", "better", "worst", "my", "your", "our", "their"}
    | {"this", "that", "it", "going", "happening", "safest", "easiest", "fastest", "cheapest"}
    | {"point"}
)


def own_prose(text: str) -> tuple[str, bool]:
    """The user's own prose, without pasted code, quotes and logs; and whether code was pasted."""
    has_code = "```" in text
    if has_code:
        text = _FENCE_RE.sub("\n", text)
    if "\n" in text:
        lines = text.split("\n")
        kept = [line for line in lines if not _PASTE_LINE_RE.match(line)]
        if len(kept) < len(lines):
            has_code = has_code or len(lines) - len(kept) >= 3
            text = "\n".join(kept)
    return text, has_code


def _terms_in(tokens: list[str]) -> list[tuple[str, str, str]]:
    """(term, domain, kind) for every term found in ``tokens``, longest match first."""
    found: list[tuple[str, str, str]] = []
    n = len(tokens)
    i = 0
    while i < n:
        token = tokens[i]
        for size in _STARTS.get(token, (1,)):
            if size > n - i:
                continue
            key = token if size == 1 else " ".join(tokens[i : i + size])
            hits = _INDEX.get(key)
            if hits:
                found.extend((key, slug, kind) for slug, kind in hits)
                i += size
                break
        else:
            i += 1
    return found


def domains_in(text: str) -> list[str]:
    """The domains a short span names ("cooking", "a chef", "cooked pasta"), most named first."""
    tokens = WORD_RE.findall(text.lower())[:6]
    phrase = " ".join(tokens)
    counts: dict[str, int] = {}
    for _term, slug, _kind in _terms_in(tokens):
        counts[slug] = counts.get(slug, 0) + 1
    for domain in DOMAINS:
        if any(phrase == v or phrase.startswith(v + " ") for v in domain.verbs | domain.people):
            counts[domain.slug] = counts.get(domain.slug, 0) + 2
    return sorted(counts, key=lambda slug: -counts[slug])


def _role_domain(role: str) -> str:
    """The domain of a role named at the start of ``role`` ("nurse on a ward" -> medicine)."""
    role = " ".join(WORD_RE.findall(role.lower()))
    best, best_len = "", 0
    for domain in DOMAINS:
        for person in domain.people:
            if (role == person or role.startswith(person + " ")) and len(person) > best_len:
                best, best_len = domain.slug, len(person)
    return best


def _self_descriptions(lower: str, prose: str) -> dict[str, tuple[str, str]]:
    """domain -> (level, what was said) for each self-description in ``lower`` (the prose in
    lower case; what was said is quoted from ``prose`` when the two line up)."""

    def said(match: re.Match) -> str:
        if len(lower) == len(prose):
            return prose[match.start() : match.end()]
        return match.group(0)

    found: dict[str, tuple[str, str]] = {}
    for match in _SELF_EXPERT_RE.finditer(lower):
        if match.group("role"):
            slug = _role_domain(match.group("role"))
        elif match.group("field"):
            field = " ".join(WORD_RE.findall(match.group("field").lower())[:3])
            slug = next(
                (d for k, d in _FIELDS.items() if field == k or field.startswith(k + " ")), ""
            )
        else:
            span = match.group("x") or match.group("doing") or match.group("teach") or ""
            slug = _role_domain(span) or next(iter(domains_in(span)), "")
        if slug:
            found.setdefault(slug, ("expert", said(match)))
    for pattern, level in ((_SELF_MIDDLE_RE, "intermediate"), (_SELF_BEGINNER_RE, "beginner")):
        for match in pattern.finditer(lower):
            span = next(group for group in match.groups() if group)
            for slug in domains_in(span)[:1]:
                found[slug] = (level, said(match))  # modest words outrank "as a ..."
    return found


def analyse_domains(text: str) -> dict[str, DomainEvidence]:
    """What ``text`` says about each domain it is about (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if "\u2019" in text:
        text = text.replace("\u2019", "'")
    prose, has_code = own_prose(text.strip())
    lower = prose.lower()
    tokens = WORD_RE.findall(lower)
    hits: dict[str, int] = {}
    jargon: dict[str, set[str]] = {}
    for term, slug, kind in _terms_in(tokens):
        hits[slug] = hits.get(slug, 0) + 1
        if kind == "jargon":
            jargon.setdefault(slug, set()).add(term)
    if has_code:
        hits["programming"] = hits.get("programming", 0) + 1

    words_used = set(tokens)
    selves = _self_descriptions(lower, prose) if words_used & _SELF_HINTS else {}
    if not hits and not selves:
        return {}
    novice: dict[str, int] = {}
    definitions = _DEFINITION_RE.finditer(lower) if words_used & _DEFINITION_HINTS else ()
    for match in definitions:
        words = WORD_RE.findall(match.group(1))
        if not words or words[0] in _NOT_DEFINITIONAL:
            continue
        asked = _terms_in(words[:4])
        for term, slug, _kind in asked[:2]:
            novice[slug] = novice.get(slug, 0) + 1
            jargon.get(slug, set()).discard(term)
    general_novice = len(_BEGINNER_RE.findall(lower)) if words_used & _BEGINNER_HINTS else 0

    evidence: dict[str, DomainEvidence] = {}
    for slug, (level, said) in selves.items():
        evidence[slug] = DomainEvidence(
            slug, hits.get(slug, 0) + 1, STRONG_READINGS[level], STRONG_WEIGHT,
            f"self-description ({level}): “{said.strip()[:60]}”",
        )  # fmt: skip
    for slug, count in hits.items():
        if slug in evidence:
            continue
        j = len(jargon.get(slug, ()))
        n = novice.get(slug, 0) + general_novice
        if n:
            reading = max(0.0, 0.2 + 0.15 * j - 0.1 * (n - 1))
            reason = f"{n} beginner question{'s' if n > 1 else ''} or phrase{'s' if n > 1 else ''}"
        elif j:
            reading = min(1.0, 0.45 + 0.2 * j)
            reason = f"{j} jargon term{'s' if j > 1 else ''} used"
        elif len(tokens) >= PLAIN_MIN_WORDS:
            reading, reason = PLAIN_READING, "everyday words only"
        else:
            evidence[slug] = DomainEvidence(slug, count)
            continue
        evidence[slug] = DomainEvidence(slug, count, round(reading, 3), 1, reason)
    return evidence


def main_domains(evidence: dict[str, DomainEvidence]) -> list[str]:
    """The message's main domains, at most ``MAX_DOMAINS``: a domain named once in a message
    mostly about another is left out."""
    if not evidence:
        return []
    ranked = sorted(evidence.values(), key=lambda e: (-(e.weight >= STRONG_WEIGHT), -e.hits))
    top = ranked[0].hits
    return [e.domain for e in ranked if e.weight >= STRONG_WEIGHT or e.hits * 2 >= top][
        :MAX_DOMAINS
    ]


def domain_label(slug: str) -> str:
    return DOMAIN_LABELS.get(slug, slug)


def domain(slug: str) -> Domain | None:
    return _BY_SLUG.get(slug)
